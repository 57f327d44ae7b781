/* cmd_report.c — `gpuledger report DB...`: the one-screen summary (text),
 * the full answer as JSON (a dossier per database, dossier.c, rendered by
 * render_text.c / render_json.c), or the interactive HTML page
 * (html_app.c); with --at WHEN, the ledger at that moment (moment.c).
 * One database at a time (cli.h, one_at_a_time): the memory is that of
 * the largest, however many are named. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "dossier.h"
#include "help.h"
#include "html_app.h"
#include "json.h"

static const char *at_when;

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    (void)cli;
    (void)key;
    at_when = arg;
    return 0;
}

static void reset(void)
{
    at_when = NULL;
}

/* The event of the --at moment, for the load to read; without one, the
 * text and JSON report read a live-only load: the records live at the
 * moments its ledgers are taken, the pools replayed for their holes, the
 * growth gathered by stack (model.h, GL_LOAD_MOMENTS), so that its memory
 * is the live set's, not the run's. */
static int check(struct gl_cli *cli)
{
    if (at_when)
        (void)gl_moment_lookup(at_when, &cli->load); /* the first: never full */
    else if (!gl_cli_format(cli, "html"))
        cli->load.parts |= GL_LOAD_LIVE_ONLY | GL_LOAD_MOMENTS | GL_LOAD_HOLES;
    return 0;
}

static const struct option opts[] = {{"at", required_argument, NULL, 'a'}, {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_report_spec = {
    .usage = gl_usage_report, .formats = "text|json|html", .top = 10, .opts = opts, .opt = opt, .check = check,
    .reset = reset, .loads = GL_LOAD_HEAPS, .one_at_a_time = 1};

/* One process of the text or JSON report: its dossier built, rendered,
 * added to the totals and freed. */
static void dossier(struct gl_cli *cli, struct gl_run *r, const struct gl_moment *at, size_t i, struct gl_json *j,
                    struct gl_report_totals *t)
{
    struct gl_dossier d;
    struct gl_dossier_opts o = {cli->device, &cli->rules, at};
    if (gl_dossier_build(&d, r, &o))
        fprintf(stderr, "gpuledger: %s\n", d.heaps.err);
    if (gl_cli_format(cli, "json"))
        gl_render_json_process(j, &d, cli->top);
    else
        gl_render_text_process(cli->out, &d, i, cli->top);
    gl_report_totals_add(t, &d);
    gl_dossier_free(&d);
}

/* One process of the HTML page: 0, or 2 (out of memory). */
static int html(struct gl_cli *cli, struct gl_run *r, const struct gl_moment *at, size_t i)
{
    struct gl_html_opts ho = {&cli->rules, cli->device, at, 0, 0};
    struct gl_html_view v;
    int rc = gl_html_view(&v, r, &ho);
    if (!rc)
        gl_render_html_process(cli->out, &v, i);
    gl_html_view_free(&v);
    return rc ? 2 : 0;
}

/* Each database in turn: loaded, its --at moment found, its part of the
 * report built, written and freed, then the run freed; the page's or the
 * document's head once the first run was read (a bad --at or database
 * gives exit 2 before anything is written), its end and the totals last. */
int cmd_report(struct gl_cli *cli)
{
    int json = gl_cli_format(cli, "json"), page = gl_cli_format(cli, "html"), rc = 0;
    struct gl_report_totals t = {0, 0, 0};
    struct gl_json j = {0};
    char err[GL_ERR_MAX];
    for (int i = 0; i < cli->npaths && !rc; i++) {
        struct gl_run *r = gl_cli_run(cli, i);
        struct gl_moment m;
        if (!r)
            return 2;
        if (at_when && gl_moment_at(r, at_when, &m, err, sizeof err))
            return gl_cli_fail(cli, "%s", err);
        if (i == 0 && page)
            gl_render_html_begin(cli->out, cli->npaths == 1 ? r : NULL);
        else if (i == 0 && json)
            gl_render_json_begin(&j, cli->out);
        if (page)
            rc = html(cli, r, at_when ? &m : NULL, (size_t)i);
        else
            dossier(cli, r, at_when ? &m : NULL, (size_t)i, &j, &t);
        gl_cli_release(cli, i);
    }
    if (page)
        gl_render_html_end(cli->out);
    else if (json)
        gl_render_json_end(&j, &t);
    else
        gl_render_text_end(cli->out, &t);
    return rc;
}
