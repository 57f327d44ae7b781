/* cmd_holes.c — `gpuledger holes DB...`: hole density of stream-ordered
 * pools and reserved VA ranges (method in docs/report.md, `holes`); one
 * database at a time (cli.h, one_at_a_time). */
#include <errno.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "help.h"
#include "render.h"
#include "render_heaps.h"

static uint64_t pool; /* with have_pool: only this pool (0: the default pool) or reservation */
static int have_pool, series;

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    char *end;
    if (key == 's') {
        series = 1;
        return 0;
    }
    errno = 0;
    pool = strtoull(arg, &end, 0);
    if (!*arg || *end || errno || *arg == '-')
        return gl_cli_fail(cli, "--pool wants a pool handle like 0x55d0c0a3e2a0 (0: the default pool), not '%s'",
                           arg);
    have_pool = 1;
    return 0;
}

static void reset(void)
{
    have_pool = series = 0;
}

static const struct option opts[] = {
    {"pool", required_argument, NULL, 'p'}, {"series", no_argument, NULL, 's'}, {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_holes_spec = {
    .usage = gl_usage_holes,
    .formats = "text|json",
    .top = 10,
    .opts = opts,
    .opt = opt,
    .reset = reset,
    .loads = GL_LOAD_HEAPS | GL_LOAD_LIVE_ONLY | GL_LOAD_HOLES, /* the pools replayed in the scan */
    .one_at_a_time = 1,
};

int cmd_holes(struct gl_cli *cli)
{
    int json = gl_cli_format(cli, "json");
    struct gl_json j;
    if (json)
        gl_jw_begin_processes(&j, cli->out);
    for (int i = 0; i < cli->npaths; i++) {
        struct gl_pool_holes *h;
        size_t nh;
        struct gl_heaps_view hv;
        struct gl_run *r = gl_cli_run(cli, i);
        if (!r)
            return 2;
        if (gl_heaps_view(&hv, r)) {
            int rc = gl_cli_fail(cli, "%s", hv.err);
            gl_heaps_view_free(&hv);
            return rc;
        }
        gl_holes(r, have_pool ? &pool : NULL, &h, &nh);
        if (json) {
            gl_render_holes_json(&j, r, h, nh);
            gl_heaps_json(&j, "heaps", &hv, cli->top);
            gl_jw_end(&j);
        } else {
            gl_render_holes_text(cli->out, r, h, nh, hv.n, series);
            gl_heaps_text(cli->out, &hv, cli->top, series, 1);
        }
        gl_heaps_view_free(&hv);
        gl_holes_free(h, nh);
        gl_cli_release(cli, i);
    }
    if (json)
        gl_jw_end_processes(&j);
    return 0;
}
