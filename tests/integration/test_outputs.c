/* test_outputs.c — what the report verbs say, and where they write it, on
 * the inputs of issue 27: an unfinished recording (every verb says so, the
 * gate refuses to judge it), write errors (exit 2, no partial file), the
 * same database named twice, failed frees, and the small promises of the
 * command line. The launcher's Python path is here too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static struct run_result r;

static void make(const char *db, const char *scenario)
{
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", db, PROG("misc"), scenario));
    assert_int_equal(r.status, 0);
}

static int exists(const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", h_dir(), name);
    return access(p, F_OK) == 0;
}

/* A recording killed after everything was stored (misc killed: 4 MiB in 2
 * allocations live, then SIGKILL): its live allocations are what
 * was live when the recording stopped, in every output; gate exits 2
 * without a verdict (and writes no JUnit), unless --allow-unfinished. */
static void test_unfinished_recording(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "k.db", PROG("misc"), "killed"));
    assert_int_equal(r.status, 137);
    make("l3.db", "leaks3"); /* finished: 7 MiB never freed */
    h_run(&r, NULL, ARGV(GL, "summary", "k.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "gpuledger: k.db: 4 events, peak 5.00 MiB on device 0, 2 allocations (4.00 MiB) live "
                               "when the recording stopped; the recording did not finish (killed, disk full, or "
                               "still running)\n");
    h_run(&r, NULL, ARGV(GL, "report", "k.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "  4 events over ");
    h_expect(r.out, " s, the recording did not finish (killed, disk full, or still running)\n");
    h_expect(r.out, "\n  live when the recording stopped (it did not finish: not known to be leaks): 4.00 MiB — see "
                    "'gpuledger leaks'\n");
    assert_null(strstr(r.out, "never freed"));
    h_run(&r, NULL, ARGV(GL, "leaks", "k.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\nWARNING: the recording did not finish (killed, disk full, or still running): these chains "
                    "were live when it stopped, not known to be leaks\n4.00 MiB live when the recording stopped in 1 "
                    "chain\n");
    assert_null(strstr(r.out, "never freed"));
    /* JSON (report, leaks) and the HTML page's data */
    static const char *const json[][4] = {{"report", "--format", "json"}, {"leaks", "--format", "json"},
                                          {"report", "--format", "html"}};
    for (int k = 0; k < 3; k++) {
        h_run(&r, NULL, ARGV(GL, json[k][0], json[k][1], json[k][2], "k.db"));
        assert_int_equal(r.status, 0);
        assert_int_equal(h_count_lines(r.out, "\"finished\":false"), 1);
        h_run(&r, NULL, ARGV(GL, json[k][0], json[k][1], json[k][2], "l3.db"));
        assert_int_equal(h_count_lines(r.out, "\"finished\":true"), 1);
    }
    h_run(&r, NULL, ARGV(GL, "export", "--format", "speedscope", "k.db"));
    h_expect(r.out, "\"name\":\"live when the recording stopped (4.00 MiB in 2 allocations)\"");
    h_run(&r, NULL, ARGV(GL, "diff", "l3.db", "k.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "note: B (k.db): the recording did not finish (killed, disk full, or still running): its 'never "
                    "freed' is what was live when it stopped\n");
    /* the gate: no verdict, no JUnit file */
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "--junit", "g.xml", "l3.db", "k.db"));
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "gpuledger gate: k.db: the recording did not finish (killed, disk full, or still "
                               "running): what was live when it stopped is no leak verdict (--allow-unfinished to "
                               "gate it anyway)\n");
    assert_false(exists("g.xml"));
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "100M", "--allow-unfinished", "k.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "gpuledger gate: pass — 4.00 MiB never freed (limit 100.00 MiB) in 1 database\n"
                               "  note: k.db: the recording did not finish (killed, disk full, or still running): "
                               "what was live when it stopped counts as never freed\n");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "--allow-unfinished", "k.db"));
    assert_int_equal(r.status, 1);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "l3.db")); /* finished: as before */
    assert_int_equal(r.status, 1);
    h_expect(r.out, "gpuledger gate: FAIL — 7.00 MiB never freed (limit 0 B) in 1 database\n");
    assert_null(strstr(r.out, "note:"));
}

static void save(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static const char *slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Every verb's stdout on /dev/full: exit 2 and one line, not 0. */
static void test_stdout_full(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    make("l3.db", "leaks3");
    static const char *const verbs[][5] = {
        {"report", "l3.db"},          {"report", "--format", "json", "l3.db"}, {"leaks", "l3.db"},
        {"holes", "l3.db"},           {"summary", "l3.db"},                    {"gate", "--max-leak-bytes", "0", "l3.db"},
        {"diff", "l3.db", "l3.db"},   {"export", "--format", "folded", "l3.db"}, {"--help"},
        {"report", "--help"},         {"--version"}};
    for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "exec '%s' %s %s %s %s %s >/dev/full", GL, verbs[v][0], verbs[v][1] ? verbs[v][1] : "",
                 verbs[v][2] ? verbs[v][2] : "", verbs[v][3] ? verbs[v][3] : "", verbs[v][4] ? verbs[v][4] : "");
        h_run(&r, NULL, ARGV("/bin/sh", "-c", cmd));
        if (r.status != 2 || strcmp(r.err, "gpuledger: writing the output failed: No space left on device\n"))
            fail_msg("gpuledger %s %s > /dev/full: exit %d, stderr '%s'", verbs[v][0], verbs[v][1], r.status, r.err);
    }
}

/* The tmpfs of test_output_file_errors, unmounted whatever happened (the
 * scratch directory cannot be removed otherwise). */
static int teardown_mount(void **state)
{
    char mnt[300];
    snprintf(mnt, sizeof mnt, "%s/small", h_dir());
    umount(mnt);
    return h_teardown(state);
}

/* -o FILE on a file system that fills up (a 64 KiB tmpfs, where mount is
 * allowed) and over a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored):
 * exit 2 with one line, the file that was there untouched, no partial
 * file, no temporary left; what fits is written whole, with the mode a
 * file gets (an existing one's own), through a link to its target. */
static void test_output_file_errors(void **state)
{
    (void)state;
    make("l3.db", "leaks3");
    char mnt[300], p[400];
    snprintf(mnt, sizeof mnt, "%s/small", h_dir());
    assert_int_equal(mkdir(mnt, 0755), 0);
    if (getuid() == 0 && mount("tmpfs", mnt, "tmpfs", 0, "size=64k") == 0) {
        h_run(&r, NULL, ARGV(GL, "report", "--format", "html", "-o", "small/r.html", "l3.db")); /* > 64 KiB */
        assert_int_equal(r.status, 2);
        assert_string_equal(r.err, "gpuledger: cannot write small/r.html: No space left on device (no file written)\n");
        assert_string_equal(h_listing(mnt, 1), "");
        snprintf(p, sizeof p, "%s/r.html", mnt);
        save(p, "before\n", 7);
        h_run(&r, NULL, ARGV(GL, "report", "--format", "html", "-o", "small/r.html", "l3.db"));
        assert_int_equal(r.status, 2);
        assert_string_equal(r.err, "gpuledger: cannot write small/r.html: No space left on device (the file is left "
                                   "as it was)\n");
        assert_string_equal(slurp(p), "before\n");
        /* fill it, then an export and a JUnit file that no longer fit */
        static char filler[60 << 10];
        snprintf(p, sizeof p, "%s/filler", mnt);
        save(p, filler, sizeof filler);
        h_run(&r, NULL, ARGV(GL, "export", "--format", "perfetto", "-o", "small/p.json", "l3.db"));
        assert_int_equal(r.status, 2);
        assert_string_equal(r.err, "gpuledger: cannot write small/p.json: No space left on device (no file written)\n");
        h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "--junit", "small/j.xml", "l3.db"));
        assert_int_equal(r.status, 2);
        assert_string_equal(r.err, "gpuledger: cannot write small/j.xml: No space left on device (no file written)\n");
        assert_string_equal(h_listing(mnt, 1), "filler r.html");
        assert_int_equal(umount(mnt), 0);
    }
    /* a file-size limit: EFBIG */
    h_run(&r, NULL, ARGV("/bin/sh", "-c", "ulimit -f 16; trap '' XFSZ; exec \"$0\" report --format html -o r.html l3.db",
                         GL));
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "gpuledger: cannot write r.html: File too large (no file written)\n");
    assert_string_equal(h_listing(h_dir(), 1), ".stderr .stdout l3.db small");
    /* a verb that fails writes nothing either */
    h_run(&r, NULL, ARGV(GL, "report", "--at", "#999", "-o", "r.txt", "l3.db"));
    assert_int_equal(r.status, 2);
    assert_false(exists("r.txt"));
    /* what fits: whole, 0666 less the umask for a new file, an existing
     * file's own mode, a link followed to its file */
    h_run(&r, NULL, ARGV("/bin/sh", "-c", "umask 022; exec \"$0\" report -o r.txt l3.db", GL));
    assert_int_equal(r.status, 0);
    struct stat st;
    snprintf(p, sizeof p, "%s/r.txt", h_dir());
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    h_run(&r, NULL, ARGV(GL, "report", "l3.db"));
    assert_string_equal(slurp(p), r.out);
    assert_int_equal(chmod(p, 0640), 0);
    char link[400];
    snprintf(link, sizeof link, "%s/link.txt", h_dir());
    assert_int_equal(symlink("r.txt", link), 0);
    h_run(&r, NULL, ARGV(GL, "leaks", "-o", "link.txt", "l3.db"));
    assert_int_equal(r.status, 2); /* leaks has no -o */
    h_run(&r, NULL, ARGV(GL, "export", "--format", "csv", "-o", "link.txt", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    h_expect(slurp(p), "id,device,api,kind,addr,size,");
    assert_string_equal(h_listing(h_dir(), 1), ".stderr .stdout l3.db link.txt r.txt small");
}

/* What the job's Python sees: its module m, its sys.path, where the
 * gpuledger package came from, and whether a child Python has it too. */
#define PY_SHOW                                                                                                    \
    "import json, m, subprocess, sys\n"                                                                            \
    "print(m.where)\n"                                                                                             \
    "print(json.dumps(sys.path))\n"                                                                                \
    "g = sys.modules.get('gpuledger')\n"                                                                           \
    "print(g and g.__file__, 'gpuledger.autoload' in sys.modules)\n"                                               \
    "sys.stdout.flush()\n"                                                                                         \
    "subprocess.run([sys.executable, '-c', 'import sys; print(\"gpuledger.autoload\" in sys.modules)'])\n"

/* gpuledger run adds the package and nothing else to a job's Python path:
 * the package's directory (here a site-packages of its own holding a
 * module m too, as pip's user site or another Python's would) comes before
 * neither a venv's packages nor the job's PYTHONPATH, and sys.path is the
 * job's own, entry for entry; the package is loaded (autoload installed),
 * in a child Python too. */
static void test_python_path(void **state)
{
    (void)state;
    static struct run_result bare;
    char site[300], venv[300], user[300], cmd[4096], py[350], env[3][500];
    snprintf(site, sizeof site, "%s/site", h_dir());
    snprintf(venv, sizeof venv, "%s/venv", h_dir());
    snprintf(user, sizeof user, "%s/user", h_dir());
    if (access("/usr/bin/python3", X_OK) != 0)
        skip();
    h_run(&r, NULL, ARGV("/usr/bin/python3", "-m", "venv", "--without-pip", venv));
    if (r.status != 0) /* no python3-venv */
        skip();
    snprintf(py, sizeof py, "%s/bin/python", venv);
    snprintf(cmd, sizeof cmd,
             "set -e; mkdir -p '%s' '%s'; cp -r '%s/python/gpuledger' '%s/'; echo \"where = 'install'\" > '%s/m.py';"
             " echo \"where = 'pythonpath'\" > '%s/m.py';"
             " echo \"where = 'venv'\" > \"$('%s' -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/m.py\"",
             site, user, getenv("GL_SOURCE_ROOT"), site, site, user, py);
    h_run(&r, NULL, ARGV("/bin/sh", "-c", cmd));
    assert_int_equal(r.status, 0);
    snprintf(env[0], sizeof env[0], "GPULEDGER_PYTHONPATH=%s", site);
    snprintf(env[1], sizeof env[1], "PYTHONPATH=%s", user);
    snprintf(env[2], sizeof env[2], "LD_LIBRARY_PATH=%s", h_build("tests/fakecuda"));
    char want[700];
    snprintf(want, sizeof want, "%s/gpuledger/__init__.py True\nTrue\n", site);
    for (int with_pythonpath = 0; with_pythonpath < 2; with_pythonpath++) {
        const char *pp = with_pythonpath ? env[1] : "PYTHONPATH=";
        h_run(&bare, ENV(pp), ARGV(py, "-c", PY_SHOW));
        assert_int_equal(bare.status, 0);
        h_expect(bare.out, with_pythonpath ? "pythonpath\n" : "venv\n");
        h_run(&r, ENV(env[0], pp, env[2]), ARGV(GL, "run", "-q", "-o", "py.db", "--", py, "-c", PY_SHOW));
        assert_int_equal(r.status, 0);
        assert_string_equal(r.err, "");
        /* m and sys.path as without gpuledger */
        char *third = strchr(strchr(r.out, '\n') + 1, '\n') + 1, *bare_third = strchr(strchr(bare.out, '\n') + 1, '\n') + 1;
        if ((size_t)(third - r.out) != (size_t)(bare_third - bare.out) || strncmp(r.out, bare.out, (size_t)(third - r.out)))
            fail_msg("under gpuledger run:\n%s\nwithout it:\n%s", r.out, bare.out);
        assert_string_equal(third, want);
    }
}

/* Calls that failed (misc failed: 1 MiB on device 0 freed; on device 1 a
 * cudaMalloc that fails and two cudaFree that fail): the device with no
 * successful allocation has no peak time (it read "peak 0 B at
 * +-4972.474198s (event 0)"), the failed frees are shown (they appeared
 * nowhere) and are not a device -1. */
static void test_failed_calls(void **state)
{
    (void)state;
    h_run(&r, ENV("FAKECUDA_FAIL_ALLOC=2"), ARGV(GL, "run", "-q", "-o", "f.db", PROG("misc"), "failed"));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "report", "f.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\n  calls: cudaMalloc 2 cudaFree 3\n  failed frees: 2 calls returned an error (nothing freed, "
                    "not in the ledger):\n    cudaFree(0x7f00dead0000) at +");
    h_expect(r.out, " (event 4, error 1, device 1): main\n");
    h_expect(r.out, " (event 5, error 1, device 1): main\n");
    h_expect(r.out, "\n\ndevice 1: nothing allocated (peak 0 B), 0 B live at the end\n  OUT OF MEMORY at +");
    assert_null(strstr(r.out, "+-"));
    assert_null(strstr(r.out, "device -1"));
    assert_int_equal(h_count_lines(r.out, ": peak ") + h_count_lines(r.out, ": nothing allocated"), 2); /* one section per device */
    h_run(&r, NULL, ARGV(GL, "summary", "f.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "gpuledger: f.db: 5 events, peak 1.00 MiB on device 0, 0 allocations (0 B) never "
                               "freed, 1 out-of-memory failure, 2 failed frees\n");
}

/* The same database named twice (or by another name) is counted once,
 * with a note: report's "total over 2 processes" and gate's leak total
 * doubled. */
static void test_same_db_twice(void **state)
{
    (void)state;
    make("l3.db", "leaks3"); /* 7 MiB never freed */
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "8M", "l3.db", "l3.db", "./l3.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "gpuledger gate: note: l3.db is named twice: counted once\n"
                               "gpuledger gate: note: ./l3.db is l3.db again: counted once\n");
    h_expect(r.out, "7.00 MiB never freed");
    h_expect(r.out, " in 1 database");
    h_run(&r, NULL, ARGV(GL, "report", "l3.db", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "gpuledger report: note: l3.db is named twice: counted once\n");
    assert_int_equal(h_count_lines(r.out, "== l3.db"), 1);
    assert_null(strstr(r.out, "total over"));
    h_run(&r, NULL, ARGV(GL, "summary", "l3.db", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.out, "gpuledger: l3.db"), 1);
    /* diff of one database with itself is a question with an answer */
    h_run(&r, NULL, ARGV(GL, "diff", "l3.db", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
}

/* The small promises of the command line (misc leaks3: 7 MiB never freed
 * in 7 allocations, peak 14 MiB): what --min-bytes left out is said (it
 * read "0 B never freed in 0 leak chains"); `--steps 3` is a usage error
 * (it read "3: No such file or directory"); sizes with a space, as the
 * pytest plugin takes them ("--min-bytes wants a size ... not '2 MiB'");
 * --max-peak-bytes alone gates ("--max-leak-bytes is required"); a limit
 * that reads as the figure is said in bytes (it read "7.00 MiB never
 * freed (limit 7.00 MiB)"). */
static void test_cli_promises(void **state)
{
    (void)state;
    make("l3.db", "leaks3");
    h_run(&r, NULL, ARGV(GL, "leaks", "--min-bytes", "1G", "l3.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\n0 B never freed in 0 leak chains; left out by --min-bytes 1.00 GiB: 7.00 MiB in 7 "
                    "allocations\n");
    h_run(&r, NULL, ARGV(GL, "leaks", "--steps", "3", "l3.db"));
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "gpuledger leaks: --steps takes its count as --steps=3 ('3' is no database)\n");
    assert_string_equal(r.out, "");
    h_run(&r, NULL, ARGV(GL, "leaks", "--steps=3", "l3.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\ngrowing step after step (3 slices of ");
    h_run(&r, NULL, ARGV(GL, "leaks", "--min-bytes", " 2 MiB ", "l3.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "left out by --min-bytes 2.00 MiB: ");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "7 MiB", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "gpuledger gate: pass — 7.00 MiB never freed (limit 7.00 MiB) in 1 database\n");
    h_run(&r, NULL, ARGV(GL, "export", "--format", "memory_viz", "--max-entries", "1 K", "-o", "s.pickle", "l3.db"));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "7340031", "l3.db"));
    assert_int_equal(r.status, 1);
    h_expect(r.out, "gpuledger gate: FAIL — 7340032 bytes never freed (limit 7340031 bytes) in 1 database\n");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "2097151", "l3.db"));
    h_expect(r.out, "gpuledger gate: FAIL — 7.00 MiB never freed (limit 2.00 MiB) in 1 database\n");
    /* a peak limit alone */
    h_run(&r, NULL, ARGV(GL, "gate", "--max-peak-bytes", "14M", "--junit", "j.xml", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "gpuledger gate: pass — peaks within the limit of 14.00 MiB in 1 database (never "
                               "freed: 7.00 MiB, not gated)\n");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-peak-bytes", "14680063", "--junit", "j.xml", "l3.db"));
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "gpuledger gate: FAIL — peaks above the limit of 14.00 MiB in 1 database (never "
                               "freed: 7.00 MiB, not gated)\n  peak 14680064 bytes > 14680063 bytes in l3.db\n");
    h_run(&r, NULL, ARGV("/bin/cat", "j.xml"));
    assert_string_equal(r.out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                               "<testsuites name=\"gpuledger gate\" tests=\"1\" failures=\"1\" errors=\"0\">\n"
                               "  <testsuite name=\"gpuledger gate\" tests=\"1\" failures=\"1\" errors=\"0\" "
                               "skipped=\"0\">\n"
                               "    <testcase classname=\"gpuledger.peak\" name=\"peak of l3.db &lt;= 14680063 "
                               "bytes\"><failure type=\"peak\" message=\"peak 14680064 bytes on device 0 (limit "
                               "14680063)\"/></testcase>\n"
                               "  </testsuite>\n</testsuites>\n");
    h_run(&r, NULL, ARGV(GL, "gate", "l3.db"));
    assert_int_equal(r.status, 2);
    h_expect(r.err, "gpuledger gate: wants --max-leak-bytes N, --max-peak-bytes M, or both\n");
}

/* -o naming something that is no regular file: `run -o /dev/null` wrote
 * "/dev/null exists already; writing /dev/null.1 instead" and made a file
 * in /dev; now refused in one line before the job starts (a FIFO too). The
 * report verbs write /dev/null as it is. */
static void test_output_not_regular(void **state)
{
    (void)state;
    char fifo[400];
    snprintf(fifo, sizeof fifo, "%s/fifo", h_dir());
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *const bad[] = {"/dev/null", fifo};
    for (int i = 0; i < 2; i++) {
        h_run(&r, NULL, ARGV(GL, "run", "-o", bad[i], "--", PROG("misc"), "exit", "0"));
        assert_int_equal(r.status, 2);
        char want[600];
        snprintf(want, sizeof want,
                 "gpuledger run: -o %s: not a regular file or a directory (a database needs one)\n", bad[i]);
        assert_string_equal(r.err, want);
        assert_string_equal(r.out, "");
    }
    assert_int_equal(access("/dev/null.1", F_OK), -1);
    assert_string_equal(h_listing(h_dir(), 1), ".stderr .stdout fifo");
    make("l3.db", "leaks3");
    h_run(&r, NULL, ARGV(GL, "report", "--format", "html", "-o", "/dev/null", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    h_run(&r, NULL, ARGV(GL, "export", "--format", "perfetto", "-o", "/dev/null", "l3.db"));
    assert_int_equal(r.status, 0);
    assert_int_equal(access("/dev/null.1", F_OK), -1);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

/* run -q: the recorded process says nothing informational either (it
 * said "x.db exists already; writing x.1.db instead" under -q, from the
 * library: -q now sets GPULEDGER_QUIET=1 for it); without -q that line and
 * the summary; a warning (a bad value) and an error (no database can be
 * made) still print under -q. */
static void test_run_quiet(void **state)
{
    (void)state;
    char want[1200];
    const char *d = h_dir();
    h_run(&r, NULL, ARGV(GL, "run", "-o", "x.db", PROG("misc"), "exit", "0"));
    assert_int_equal(r.status, 0);
    snprintf(want, sizeof want,
             "gpuledger: %s/x.db: 1 event, peak 4.00 KiB on device 0, 1 allocation (4.00 KiB) never freed\n", d);
    assert_string_equal(r.err, want);
    h_run(&r, NULL, ARGV(GL, "run", "-o", "x.db", PROG("misc"), "exit", "0"));
    snprintf(want, sizeof want,
             "gpuledger: x.db exists already; writing x.1.db instead\n"
             "gpuledger: %s/x.1.db: 1 event, peak 4.00 KiB on device 0, 1 allocation (4.00 KiB) never freed\n",
             d);
    assert_string_equal(r.err, want);
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "x.db", PROG("misc"), "exit", "0"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_string_equal(h_listing(d, 0), "x.1.db x.2.db x.db");
    h_run(&r, ENV("GPULEDGER_STACK_DEPTH=999"), ARGV(GL, "run", "-q", "-o", "x.db", PROG("misc"), "exit", "0"));
    assert_string_equal(r.err, "gpuledger: GPULEDGER_STACK_DEPTH='999' is not a whole number in 0..256; using 48\n");
    h_run(&r, ENV("GPULEDGER_OUTPUT=/proc/nope/x.db"), ARGV(GL, "run", "-q", PROG("misc"), "exit", "0"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "gpuledger: cannot create /proc/nope/x.db: No such file or directory (set "
                               "GPULEDGER_OUTPUT or -o to a writable path); the program runs on unprofiled\n");
    /* the variable set by hand: the library says nothing informational; the
     * launcher's summary, which only -q leaves out, stays */
    h_run(&r, ENV("GPULEDGER_QUIET=1"), ARGV(GL, "run", "-o", "x.db", PROG("misc"), "exit", "0"));
    snprintf(want, sizeof want,
             "gpuledger: %s/x.4.db: 1 event, peak 4.00 KiB on device 0, 1 allocation (4.00 KiB) never freed\n", d);
    assert_string_equal(r.err, want);
}

/* The ledger's columns at 100,000 allocations of one stack (misc many
 * 100000: 256 B each, and 1 MiB from another line): the count stands two
 * spaces from the share and aligned with the row below (it read
 * " 96.1% 100000x", one space, the rows out of line). */
static void test_ledger_columns(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "many.db", PROG("misc"), "many", "100000"));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "report", "many.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\n  peak ledger (2 stacks):\n"
                    "     24.41 MiB  96.1%  100000x  other            leak_one <- main\n");
    h_expect(r.out, "\n      1.00 MiB   3.9%       1x  other            main\n");
}

/* Does s end with tail? */
static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* Error lines about a file deep in directories (a path of 1,200 bytes and
 * more): the reason after the path is whole (it was cut at ~1 KB, before
 * the reason), on one line; a database SQLite cannot open for its path's
 * length says so. */
static void test_long_error_lines(void **state)
{
    (void)state;
    char deep[2048], bad[2100], rules[2100], db[2100], cmd[10000];
    int n = snprintf(deep, sizeof deep, "%s", h_dir());
    for (int i = 0; i < 6; i++)
        n += snprintf(deep + n, sizeof deep - (size_t)n, "/%0200d", i);
    snprintf(bad, sizeof bad, "%s/bad.db", deep);
    snprintf(rules, sizeof rules, "%s/rules.txt", deep);
    snprintf(db, sizeof db, "%s/l3.db", deep);
    make("l3.db", "leaks3");
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && printf 'hello\\n' > '%s' && printf 'onlyone\\n' > '%s' && cp l3.db '%s'",
             deep, bad, rules, db);
    h_run(&r, NULL, ARGV("/bin/sh", "-c", cmd));
    assert_int_equal(r.status, 0);
    static const char *const verbs[] = {"summary", "report", "leaks", "gate"};
    for (int i = 0; i < 4; i++) {
        h_run(&r, NULL, ARGV(GL, verbs[i], "--max-leak-bytes", "0", bad));
        if (strcmp(verbs[i], "gate"))
            h_run(&r, NULL, ARGV(GL, verbs[i], bad));
        assert_int_equal(r.status, 2);
        assert_int_equal(h_count_lines(r.err, ""), 1);
        if (!ends_with(r.err, "/bad.db: not a SQLite database (6 bytes, shorter than SQLite's header)\n"))
            fail_msg("%s: %s", verbs[i], r.err);
    }
    h_run(&r, NULL, ARGV(GL, "report", "--rules", rules, "l3.db"));
    assert_int_equal(r.status, 2);
    if (!ends_with(r.err, "/rules.txt:1: rule 'onlyone' has no field and no pattern (want CATEGORY FIELD PATTERN)\n"))
        fail_msg("rules: %s", r.err);
    h_run(&r, NULL, ARGV(GL, "report", db));
    assert_int_equal(r.status, 2);
    if (!ends_with(r.err, "/l3.db: cannot open: unable to open database file (SQLite opens files whose full path is "
                          "under 512 bytes: move or link it to a shorter one)\n"))
        fail_msg("long path: %s", r.err);
}

/* PyTorch's memory snapshot from gpuledger export: the OOM entry's
 * device_free is the device's free bytes then (it was 0): the fake's 16 GiB
 * less its 300 MiB context less the 3 MiB live at the OOM (oom: 1 and 2 MiB
 * live, the 3 MiB cudaMalloc fails), from the cudaMemGetInfo sample taken
 * at the first allocation less what the ledger took since. The trace keeps
 * each device's last 100,000 entries by default, saying so (8 M entries
 * were made for a long run), and all with --max-entries all. */
static void test_memviz_export(void **state)
{
    (void)state;
    static const char *const show =
        "import pickle, sys\n"
        "s = pickle.load(open(sys.argv[1], 'rb'))\n"
        "print([len(t) for t in s['device_traces']], [e['device_free'] for t in s['device_traces'] for e in t"
        " if e['action'] == 'oom'])\n";
    h_run(&r, ENV("FAKECUDA_FAIL_ALLOC=3"), ARGV(GL, "run", "-q", "-o", "oom.db", PROG("oom")));
    assert_int_equal(r.status, 1);
    h_run(&r, NULL, ARGV(GL, "export", "--format", "memory_viz", "-o", "oom.pickle", "oom.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    h_run(&r, NULL, ARGV("/usr/bin/python3", "-c", show, "oom.pickle"));
    assert_string_equal(r.out, "[21] [16862150656]\n");
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "many.db", PROG("misc"), "many", "150000"));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "export", "--format", "memory_viz", "-o", "m.pickle", "many.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "gpuledger export: memory_viz: device 0: the last 100000 of 300002 trace entries kept "
                               "(--max-entries 100000; --max-entries all keeps every one)\n");
    h_run(&r, NULL, ARGV("/usr/bin/python3", "-c", show, "m.pickle"));
    assert_string_equal(r.out, "[100000] []\n");
    h_run(&r, NULL, ARGV(GL, "export", "--format", "memory_viz", "--max-entries", "all", "-o", "m.pickle", "many.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    h_run(&r, NULL, ARGV("/usr/bin/python3", "-c", show, "m.pickle"));
    assert_string_equal(r.out, "[300002] []\n");
    h_run(&r, NULL, ARGV(GL, "export", "--help"));
    h_expect(r.out, "(default 100000, as PyTorch's snapshot examples record;\n");
}

/* An OOM at the first allocation, with nothing live: the OOM ledger's
 * heading says "nothing" (it was a heading over no rows). */
static void test_oom_with_nothing_live(void **state)
{
    (void)state;
    h_run(&r, ENV("FAKECUDA_FAIL_ALLOC=1"), ARGV(GL, "run", "-q", "-o", "first.db", PROG("oom")));
    assert_int_equal(r.status, 1);
    h_run(&r, NULL, ARGV(GL, "report", "first.db"));
    h_expect(r.out, "failed (error 2) with 0 B live; grow_cache <- main\n"
                    "    live then (OOM ledger): nothing\n");
}

/* diff of two different programs says so first (it gave no word); two
 * runs of one program with other arguments do not get the note. */
static void test_diff_programs(void **state)
{
    (void)state;
    make("l3.db", "leaks3");
    make("g.db", "grow");
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "a.db", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "diff", "l3.db", "a.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "note: A and B are different programs (A misc, B alloc1000): what follows compares two "
                    "programs, not two runs of one\npeak:        14.00 MiB -> 1.43 MiB (-12.57 MiB)\n");
    h_run(&r, NULL, ARGV(GL, "diff", "l3.db", "g.db"));
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "different programs"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_unfinished_recording, h_teardown),
        cmocka_unit_test_teardown(test_stdout_full, h_teardown),
        cmocka_unit_test_teardown(test_output_file_errors, teardown_mount),
        cmocka_unit_test_teardown(test_python_path, h_teardown),
        cmocka_unit_test_teardown(test_failed_calls, h_teardown),
        cmocka_unit_test_teardown(test_same_db_twice, h_teardown),
        cmocka_unit_test_teardown(test_cli_promises, h_teardown),
        cmocka_unit_test_teardown(test_output_not_regular, h_teardown),
        cmocka_unit_test_teardown(test_run_quiet, h_teardown),
        cmocka_unit_test_teardown(test_ledger_columns, h_teardown),
        cmocka_unit_test_teardown(test_long_error_lines, h_teardown),
        cmocka_unit_test_teardown(test_memviz_export, h_teardown),
        cmocka_unit_test_teardown(test_oom_with_nothing_live, h_teardown),
        cmocka_unit_test_teardown(test_diff_programs, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
