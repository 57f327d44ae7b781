/* cmd_export.c — `gpuledger export DB --format FORMAT`: the run for the
 * viewers people already use: folded stacks, CSV (export.c), a Perfetto
 * trace (export_perfetto.c), PyTorch's memory snapshot pickle
 * (export_memviz.c), speedscope's format (export_speedscope.c), and the
 * database itself as a row per event or packed (store/convert.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "convert.h"

#include "budget_notes.h"
#include "cli.h"
#include "commands.h"
#include "help.h"
#include "out.h"
#include "render.h"
#include "trace_downsample.h"

static const char *what; /* NULL: not given (folded: peak; csv: allocs) */
/* PyTorch's snapshot examples record _record_memory_history(max_entries=100000) */
#define DEFAULT_MAX_ENTRIES 100000ULL
static unsigned long long max_entries = DEFAULT_MAX_ENTRIES; /* 0: all */
static int fold; /* --fold-allocator */
/* perfetto's counter tracks: time buckets a track is cut to (a screen's
 * width or so; trace_downsample.h), 0: every point */
static unsigned long long buckets = GL_TRACE_DEFAULT_BUCKETS;
static int buckets_given;
static int pack; /* --pack (sqlite) */

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    if (key == 'w') {
        what = arg;
        return 0;
    }
    if (key == 'f') {
        fold = 1;
        return 0;
    }
    if (key == 'p') {
        pack = 1;
        return 0;
    }
    if (key == 'c') {
        buckets_given = 1;
        if (!strcmp(arg, "all"))
            buckets = 0;
        else if (gl_parse_size(arg, &buckets) || !buckets || buckets > (1ULL << 24))
            return gl_cli_fail(cli, "--counter-buckets wants a number from 1 to 16777216 or 'all', not '%s'", arg);
        return 0;
    }
    if (!strcmp(arg, "all")) {
        max_entries = 0;
        return 0;
    }
    if (gl_parse_size(arg, &max_entries) || !max_entries)
        return gl_cli_fail(cli, "--max-entries wants a positive number or 'all', not '%s'", arg);
    return 0;
}

static void reset(void)
{
    what = NULL;
    max_entries = DEFAULT_MAX_ENTRIES;
    fold = 0;
    buckets = GL_TRACE_DEFAULT_BUCKETS;
    buckets_given = 0;
    pack = 0;
}

/* The formats that show every event or allocation, where a bounded
 * recording's folded pairs are missing; the peak's live set and what was
 * never freed (folded and csv `--what peak|leaks`, speedscope) are a full
 * recording's. */
static int shows_every_event(struct gl_cli *cli)
{
    if (gl_cli_format(cli, "perfetto") || gl_cli_format(cli, "memory_viz"))
        return 1;
    if (gl_cli_format(cli, "folded"))
        return what && !strcmp(what, "allocs");
    return gl_cli_format(cli, "csv") && (!what || !strcmp(what, "allocs"));
}

static int check(struct gl_cli *cli)
{
    if (what && strcmp(what, "peak") && strcmp(what, "leaks") && strcmp(what, "allocs"))
        return gl_cli_fail(cli, "--what wants peak, leaks or allocs");
    if (what && !gl_cli_format(cli, "folded") && !gl_cli_format(cli, "csv"))
        return gl_cli_fail(cli, "--what chooses the allocations of folded and csv; %s shows the whole run",
                           cli->format);
    if (fold && !gl_cli_format(cli, "folded") && !gl_cli_format(cli, "speedscope"))
        return gl_cli_fail(cli, "--fold-allocator applies to folded and speedscope, not %s", cli->format);
    if (buckets_given && !gl_cli_format(cli, "perfetto"))
        return gl_cli_fail(cli, "--counter-buckets applies to perfetto, not %s", cli->format);
    if (pack && !gl_cli_format(cli, "sqlite"))
        return gl_cli_fail(cli, "--pack applies to sqlite, not %s", cli->format);
    if (gl_cli_format(cli, "sqlite") && (!cli->output || !strcmp(cli->output, "-")))
        return gl_cli_fail(cli, "sqlite writes a database file: name it with -o FILE");
    if (gl_cli_format(cli, "memory_viz") && (!cli->output || !strcmp(cli->output, "-")) && isatty(STDOUT_FILENO))
        return gl_cli_fail(cli, "memory_viz is a binary pickle: write it to a file with -o FILE");
    if (gl_cli_format(cli, "memory_viz"))
        cli->load.parts |= GL_LOAD_BLOCK_FACTS | GL_LOAD_MAP_DEVICES;
    else if (gl_cli_format(cli, "perfetto"))
        cli->load.parts |= GL_LOAD_BLOCK_FACTS;
    else if (!shows_every_event(cli)) /* the peaks' live sets, what was never freed (model.h) */
        cli->load.parts |= GL_LOAD_LIVE_ONLY | GL_LOAD_MOMENTS;
    return 0;
}

static const struct option opts[] = {{"what", required_argument, NULL, 'w'},
                                      {"max-entries", required_argument, NULL, 'm'},
                                      {"fold-allocator", no_argument, NULL, 'f'},
                                      {"counter-buckets", required_argument, NULL, 'c'},
                                      {"pack", no_argument, NULL, 'p'},
                                      {NULL, 0, NULL, 0}};

/* sqlite copies the file itself: nothing loaded */
static int opens_itself(const struct gl_cli *cli)
{
    return gl_cli_format(cli, "sqlite");
}

const struct gl_cmd_spec gl_export_spec = {
    .usage = gl_usage_export,
    .formats = "folded|perfetto|memory_viz|speedscope|csv|sqlite",
    .opens_itself = opens_itself,
    .format_required = 1,
    .opts = opts,
    .opt = opt,
    .check = check,
    .reset = reset,
};

static int folded(FILE *out, struct gl_run *r)
{
    struct gl_folded_view v;
    int rc = gl_folded_view(&v, r, what ? what : "peak");
    if (!rc)
        gl_export_folded(out, &v, fold);
    gl_folded_view_free(&v);
    return rc;
}

static int csv(FILE *out, struct gl_run *r)
{
    struct gl_csv_view v;
    int rc = gl_csv_view(&v, r, what ? what : "allocs");
    if (!rc)
        gl_export_csv(out, &v);
    gl_csv_view_free(&v);
    return rc;
}

static int speedscope(FILE *out, struct gl_run *r)
{
    struct gl_speedscope_view v;
    int rc = gl_speedscope_view(&v, r, fold);
    if (!rc)
        gl_export_speedscope(out, &v);
    gl_speedscope_view_free(&v);
    return rc;
}

static int memviz(FILE *out, struct gl_run *r)
{
    struct gl_memviz_view v;
    int rc = gl_memviz_view(&v, r, (size_t)max_entries);
    if (!rc)
        gl_export_memviz(out, &v);
    gl_memviz_view_free(&v);
    return rc;
}

static int perfetto(FILE *out, struct gl_run *r, const struct gl_rules *rules)
{
    struct gl_perfetto_view v;
    int rc = gl_perfetto_view(&v, r, rules, (size_t)buckets) || gl_export_perfetto(out, &v) ? -1 : 0;
    gl_perfetto_view_free(&v);
    return rc;
}

static void progress(int64_t done, int64_t total, void *arg)
{
    (void)arg;
    fprintf(stderr, "\rgpuledger export: %lld of %lld events copied", (long long)done, (long long)total);
    if (done >= total)
        fputc('\n', stderr);
}

static void mib(char *buf, size_t sz, int64_t bytes)
{
    snprintf(buf, sz, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
}

/* The database itself, a row per event (any SQLite tool reads it) or
 * packed (--pack): 0, or 2 after saying why. */
static int sqlite_copy(struct gl_cli *cli)
{
    struct gl_convert_stats st;
    char err[GL_ERR_MAX], a[32], b[32];
    if (gl_db_convert(cli->paths[0], cli->output, pack, &st, isatty(STDERR_FILENO) ? progress : NULL, NULL, err,
                      sizeof err))
        return gl_cli_fail(cli, "%s", err);
    mib(a, sizeof a, st.in_bytes);
    mib(b, sizeof b, st.out_bytes);
    fprintf(stderr, "gpuledger export: %s (schema %d, %s) -> %s (schema %d, %s%s): %lld events, %lld tables\n",
            cli->paths[0], st.from_version, a, cli->output, st.to_version, b,
            pack ? ", packed: sqlite3 and Python read it after .load libgpuledger_sql" : ", a row per event",
            (long long)st.events, (long long)st.tables);
    return 0;
}

int cmd_export(struct gl_cli *cli)
{
    if (gl_cli_format(cli, "sqlite"))
        return sqlite_copy(cli);
    struct gl_run *r = cli->runs[0];
    int rc = 0;
    if (gl_cli_format(cli, "folded"))
        rc = folded(cli->out, r);
    else if (gl_cli_format(cli, "perfetto"))
        rc = perfetto(cli->out, r, &cli->rules);
    else if (gl_cli_format(cli, "memory_viz"))
        rc = memviz(cli->out, r);
    else if (gl_cli_format(cli, "speedscope"))
        rc = speedscope(cli->out, r);
    else
        rc = csv(cli->out, r);
    if (rc)
        return gl_cli_fail(cli, "%s: out of memory", r->path);
    char note[512];
    if (shows_every_event(cli) && *gl_budget_note(r, note, sizeof note)) /* what a bounded recording folded */
        fprintf(stderr, "gpuledger export: %s: %s\n", r->path, note);
    return 0;
}
