/* cmd_leaks.c — `gpuledger leaks DB...`: leak chains. Allocations never
 * freed, grouped by the stack that made them, biggest first; memory still
 * held by a caching allocator at exit is listed apart. --lifetime-ms adds
 * long-lived allocations; --steps finds stacks whose live bytes grow step
 * after step. One database at a time (cli.h, one_at_a_time). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "help.h"
#include "out.h"
#include "render.h"

static struct gl_leaks_query q;
static int steps_bare; /* --steps without =N */

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    unsigned long long v;
    if (key == 'm' && gl_parse_size(arg, &v))
        return gl_cli_fail(cli, "--min-bytes wants a size like 4096, 64K or 1.5G, not '%s'", arg);
    if (key == 'm')
        q.min_bytes = v;
    if (key == 'l' && (q.lifetime_ms = atof(arg)) <= 0)
        return gl_cli_fail(cli, "--lifetime-ms wants a positive number of milliseconds");
    if (key == 's' && (q.steps = arg ? atoi(arg) : 10) < 2)
        return gl_cli_fail(cli, "--steps wants at least 2 steps");
    if (key == 's')
        steps_bare = !arg;
    return 0;
}

/* `--steps 3 a.db`: the count of an optional argument goes with `=`, so 3
 * would be a database; said as a usage error, not "3: No such file". */
static int check(struct gl_cli *cli)
{
    for (int i = 0; steps_bare && i < cli->npaths; i++) {
        const char *p = cli->paths[i];
        size_t digits = strspn(p, "0123456789");
        if (digits && !p[digits] && access(p, F_OK) != 0)
            return gl_cli_fail(cli, "--steps takes its count as --steps=%s ('%s' is no database)", p, p);
    }
    if (q.lifetime_ms <= 0) /* what is live at the end, and the steps' groups gathered as it is read (model.h) */
        cli->load.parts |= GL_LOAD_LIVE_ONLY | (q.steps ? GL_LOAD_GROWTH : 0);
    return 0;
}

static void reset(void)
{
    memset(&q, 0, sizeof q);
    steps_bare = 0;
}

static const struct option opts[] = {{"min-bytes", required_argument, NULL, 'm'},
                                     {"lifetime-ms", required_argument, NULL, 'l'},
                                     {"steps", optional_argument, NULL, 's'},
                                     {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_leaks_spec = {
    .usage = gl_usage_leaks,
    .formats = "text|json",
    .top = 20,
    .opts = opts,
    .opt = opt,
    .check = check,
    .reset = reset,
    .loads = GL_LOAD_HEAPS,
    .one_at_a_time = 1,
};

int cmd_leaks(struct gl_cli *cli)
{
    struct gl_json j;
    int json = gl_cli_format(cli, "json");
    if (json)
        gl_jw_begin_processes(&j, cli->out);
    q.device = cli->device;
    q.rules = &cli->rules;
    for (int i = 0; i < cli->npaths; i++) {
        struct gl_leaks_view v;
        struct gl_run *r = gl_cli_run(cli, i);
        if (!r)
            return 2;
        gl_leaks_view(&v, r, &q);
        if (v.heaps.err[0])
            fprintf(stderr, "gpuledger leaks: %s\n", v.heaps.err);
        if (json)
            gl_render_leaks_json(&j, &v);
        else
            gl_render_leaks_text(cli->out, &v, cli->top);
        gl_leaks_view_free(&v);
        gl_cli_release(cli, i);
    }
    if (json)
        gl_jw_end_processes(&j);
    return 0;
}
