/* cmd_report.c — `gpuledger report DB...`: the one-screen summary (text),
 * the full answer as JSON (a dossier per database, dossier.c, rendered by
 * render_text.c / render_json.c), or the interactive HTML page
 * (html_app.c); with --at WHEN, the ledger at that moment (moment.c). */
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "dossier.h"
#include "help.h"
#include "html_app.h"

static const char *at_when;

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    (void)cli;
    (void)key;
    at_when = arg;
    return 0;
}

/* The event of the --at moment, for the load to read. */
static int check(struct gl_cli *cli)
{
    if (at_when)
        (void)gl_moment_lookup(at_when, &cli->load); /* the first: never full */
    return 0;
}

static const struct option opts[] = {{"at", required_argument, NULL, 'a'}, {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_report_spec = {
    .usage = gl_usage_report, .formats = "text|json|html", .top = 10, .opts = opts, .opt = opt, .check = check,
    .loads = GL_LOAD_HEAPS};

/* The --at moment of every run: 0, or 2 after saying why. */
static int moments(struct gl_cli *cli, struct gl_moment *m)
{
    char err[GL_ERR_MAX];
    for (int i = 0; at_when && i < cli->npaths; i++)
        if (gl_moment_at(cli->runs[i], at_when, &m[i], err, sizeof err))
            return gl_cli_fail(cli, "%s", err);
    return 0;
}

/* The HTML page: each run's view built and written in turn. 0, or 2 (out
 * of memory). */
static int html(struct gl_cli *cli, const struct gl_moment *const *at, size_t n)
{
    int rc = 0;
    gl_render_html_begin(cli->out, cli->runs, n);
    for (size_t i = 0; i < n && !rc; i++) {
        struct gl_html_opts ho = {&cli->rules, cli->device, at[i], 0, 0};
        struct gl_html_view v;
        rc = gl_html_view(&v, cli->runs[i], &ho);
        if (!rc)
            gl_render_html_process(cli->out, &v, i);
        gl_html_view_free(&v);
    }
    gl_render_html_end(cli->out);
    return rc ? 2 : 0;
}

int cmd_report(struct gl_cli *cli)
{
    size_t n = (size_t)cli->npaths;
    struct gl_moment *m = calloc(n, sizeof *m);
    const struct gl_moment **at = calloc(n, sizeof(void *)); /* pointers into m */
    struct gl_dossier *ds = calloc(n, sizeof *ds);
    int rc = !m || !at || !ds ? 2 : moments(cli, m);
    for (size_t i = 0; !rc && at_when && i < n; i++)
        at[i] = &m[i];
    if (!rc && gl_cli_format(cli, "html")) {
        rc = html(cli, at, n);
    } else if (!rc) {
        for (size_t i = 0; i < n; i++) {
            struct gl_dossier_opts o = {cli->device, &cli->rules, at[i]};
            if (gl_dossier_build(&ds[i], cli->runs[i], &o))
                fprintf(stderr, "gpuledger: %s\n", ds[i].heaps.err);
        }
        if (gl_cli_format(cli, "json"))
            gl_render_json(cli->out, ds, n, cli->top);
        else
            gl_render_text(cli->out, ds, n, cli->top);
        for (size_t i = 0; i < n; i++)
            gl_dossier_free(&ds[i]);
    }
    free(ds);
    free(at);
    free(m);
    return rc;
}
