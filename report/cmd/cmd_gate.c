/* cmd_gate.c — `gpuledger gate`: the CI leak gate. Exit 0 within limits,
 * 1 when a limit is broken (the offending chains are printed), 2 on bad
 * input. Optional JUnit XML for CI systems. One database at a time (cli.h,
 * one_at_a_time): each run's checks are made as it is loaded, and only
 * their results are kept. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "help.h"
#include "out.h"
#include "render.h"

#define MAX_IGNORE 32

static regex_t ignore[MAX_IGNORE];
static struct gl_gate_query q = {.ignore = ignore};
static int allow_unfinished;
static const char *junit;

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    unsigned long long v = 0;
    switch (key) {
    case 'l':
    case 'p':
        if (gl_parse_size(arg, &v))
            return gl_cli_fail(cli, "%s wants a size like 0, 4096, 64K or 2G, not '%s'",
                               key == 'l' ? "--max-leak-bytes" : "--max-peak-bytes", arg);
        *(key == 'l' ? &q.max_leak : &q.max_peak) = v;
        *(key == 'l' ? &q.have_leak : &q.have_peak) = 1;
        return 0;
    case 'i':
        if (q.nignore == MAX_IGNORE || regcomp(&ignore[q.nignore], arg, REG_EXTENDED | REG_NOSUB))
            return gl_cli_fail(cli, "--ignore '%s' is not a valid extended regex (or too many)", arg);
        q.nignore++;
        return 0;
    case 'c':
        q.count_cached = 1;
        return 0;
    case 'u':
        allow_unfinished = 1;
        return 0;
    default: /* --junit */
        junit = arg;
        return 0;
    }
}

/* The options of an earlier call in this process forgotten (regexes a
 * failed parse compiled freed). */
static void reset(void)
{
    for (int i = 0; i < q.nignore; i++)
        regfree(&ignore[i]);
    q = (struct gl_gate_query){.ignore = ignore};
    allow_unfinished = 0;
    junit = NULL;
}

static int check(struct gl_cli *cli)
{
    cli->load.parts |= GL_LOAD_LIVE_ONLY; /* the peaks and what is live at the end (model.h) */
    if (q.have_leak || q.have_peak)
        return 0;
    gl_cli_fail(cli, "wants --max-leak-bytes N, --max-peak-bytes M, or both");
    fputs(cli->cmd->spec->usage, stderr);
    return 2;
}

static const struct option opts[] = {
    {"max-leak-bytes", required_argument, NULL, 'l'}, {"max-peak-bytes", required_argument, NULL, 'p'},
    {"ignore", required_argument, NULL, 'i'},         {"junit", required_argument, NULL, 'j'},
    {"count-cached", no_argument, NULL, 'c'},         {"allow-unfinished", no_argument, NULL, 'u'},
    {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_gate_spec = {
    .usage = gl_usage_gate, .opts = opts, .opt = opt, .check = check, .reset = reset, .one_at_a_time = 1,
    .writes_at_end = 1};

/* Run r checked and what the verdict needs of it kept in v: 0, or -1 out of
 * memory. */
static int check_run(struct gl_gate_view *v, struct gl_run *r)
{
    struct gl_gate_check g;
    int rc = gl_gate_check(&g, r, &q);
    char *chains = !rc && q.have_leak ? gl_render_gate_chains(&g) : NULL;
    if (!rc && q.have_leak && !chains)
        rc = -1;
    if (!rc)
        rc = gl_gate_view_add(v, &g, chains);
    else
        free(chains);
    gl_gate_check_free(&g);
    return rc;
}

/* An unfinished recording's live allocations are no leak verdict: exit 2
 * naming each such database (refused, in the order named), unless
 * --allow-unfinished (0). */
static int refuse_unfinished(struct gl_cli *cli, char **refused, int n)
{
    char buf[2 * PATH_MAX];
    int rc = 0;
    for (int i = 0; i < n; i++)
        rc = gl_cli_fail(cli,
                         "%s: " GL_UNFINISHED_TEXT ": what was live when it stopped is no leak verdict "
                         "(--allow-unfinished to gate it anyway)",
                         gl_text_buf(refused[i], buf, sizeof buf));
    return rc;
}

/* Every database read, each checked and freed in turn (once one is refused
 * as unfinished, the rest are only read: a bad one is said first, as when
 * every database is loaded before anything is checked): 0, or 2 after
 * saying why. */
static int check_runs(struct gl_cli *cli, struct gl_gate_view *v)
{
    char **refused = calloc((size_t)cli->npaths + 1, sizeof *refused);
    if (!refused)
        return gl_cli_fail(cli, "out of memory");
    int nrefused = 0, rc = 0;
    for (int i = 0; !rc && i < cli->npaths; i++) {
        struct gl_run *r = gl_cli_run(cli, i);
        if (!r)
            rc = 2;
        else if (r->unfinished && !allow_unfinished)
            rc = (refused[nrefused++] = strdup(r->path)) ? 0 : gl_cli_fail(cli, "out of memory");
        else if (!nrefused && check_run(v, r))
            rc = gl_cli_fail(cli, "out of memory");
        gl_cli_release(cli, i);
    }
    if (!rc && nrefused)
        rc = refuse_unfinished(cli, refused, nrefused);
    for (int i = 0; i < nrefused; i++)
        free(refused[i]);
    free(refused);
    return rc;
}

int cmd_gate(struct gl_cli *cli)
{
    struct gl_gate_view v;
    q.rules = &cli->rules;
    int rc = gl_gate_view_begin(&v, cli->npaths, &q) ? gl_cli_fail(cli, "out of memory") : check_runs(cli, &v);
    FILE *jf = !rc && junit ? gl_open_out(junit) : NULL;
    if (!rc && junit && !jf)
        rc = 2;
    int early = rc; /* no verdict to print */
    if (!rc && jf) {
        gl_render_gate_junit(jf, &v);
        rc = gl_close_out(jf, 0) ? 2 : 0;
    }
    if (!early) /* also when writing the JUnit file failed (exit 2) */
        gl_render_gate_text(cli->out, &v);
    int fail = v.fail;
    gl_gate_view_free(&v);
    for (int i = 0; i < q.nignore; i++)
        regfree(&ignore[i]);
    q.nignore = 0;
    return rc ? rc : fail ? 1 : 0;
}
