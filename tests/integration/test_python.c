/* test_python.c — Python frames in stacks: an embedded CPython (pyembed,
 * linked against the system libpython3) and every CPython 3.x interpreter
 * found on the machine calling the fake runtime through ctypes. The exact
 * frames (qualified name and line, in order, between the native frames)
 * are checked. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"


/* The frames of the stack of the allocation of `size` bytes, as
 * "name:line" for Python frames and "symbol" for native ones. */
static const char *frames_of(sqlite3 *db, long size)
{
    char sql[640];
    snprintf(sql, sizeof sql,
             "SELECT group_concat(CASE WHEN python THEN symbol || ':' || line ELSE coalesce(symbol, '?') END, ';')"
             " FROM (SELECT * FROM stack_frames WHERE stack_id = (SELECT stack_id FROM allocations WHERE size = %ld)"
             " ORDER BY depth)",
             size);
    return h_text(db, sql);
}

static const char *source(const char *rel)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", getenv("GL_SOURCE_ROOT"), rel);
    return buf[k];
}

static long allocator_calls(const char *out)
{
    const char *p = strstr(out, "host allocator calls in 10000 pairs: ");
    return p ? atol(p + strlen("host allocator calls in 10000 pairs: ")) : -1;
}

static void assert_prefix(const char *s, const char *prefix)
{
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("stack\n  %s\ndoes not start with\n  %s", s, prefix);
}

static void test_embedded_python_frames(void **state)
{
    (void)state;
    if (strcmp(getenv("GL_HAVE_PYEMBED") ? getenv("GL_HAVE_PYEMBED") : "0", "1") != 0)
        fail_msg("pyembed was not built: install python3-dev (pkg-config python3-embed) and reconfigure");
    const char *script = source("tests/progs/pyembed_script.py");
    static struct run_result r, bare;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "p.db", PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("p.db");
    /* GIL held, three Python levels: the builtin, then the Python lines
     * that led to it, innermost first; the interpreter's own frames are
     * gone, and so is everything below the Python stack (the default) */
    assert_string_equal(frames_of(db, 1000), "py_alloc;leaf:6;Model.forward:10;outer:14;<module>:17");
    char sql[1200];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM stack_frames WHERE python AND file = '%s' AND stack_id = (SELECT stack_id FROM"
             " allocations WHERE size = 1000)",
             script);
    assert_int_equal(h_int(db, sql), 4);
    /* GIL released around the call, as PyTorch does */
    assert_string_equal(frames_of(db, 2000), "py_alloc_nogil;outer:15;<module>:17");
    /* a Python thread: its own frames, down to threading's bootstrap */
    assert_prefix(frames_of(db, 3000), "py_alloc;<lambda>:19;Thread.run:");
    assert_non_null(strstr(frames_of(db, 3000), "Thread._bootstrap:"));
    /* a thread Python never saw: native only */
    assert_prefix(frames_of(db, 4000), "cthread;");
    assert_int_equal(h_int(db, "SELECT count(*) FROM stack_frames WHERE python AND stack_id = (SELECT stack_id"
                               " FROM allocations WHERE size = 4000)"),
                     0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM run WHERE truncated_stacks = 0"), 1);
    assert_string_equal(h_text(db, "SELECT value FROM meta WHERE key = 'python_version'"), "3.11");
    sqlite3_close(db);
    /* the Python walk adds no host allocator call on the hot path (not
     * countable under a sanitizer, which owns malloc) */
    h_run(&bare, NULL, ARGV(PROG("pyembed"), script));
    assert_int_equal(bare.status, 0);
    long b = allocator_calls(bare.out), p = allocator_calls(r.out);
    if (!getenv("GL_SANITIZED")) {
        assert_true(b >= 0);
        assert_int_equal(p, b);
    }

    /* GPULEDGER_PYTHON=mixed: the whole native stack, interleaved */
    h_run(&r, ARGV("GPULEDGER_PYTHON=mixed"), ARGV(GL, "run", "-q", "-o", "m.db", PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    db = h_open("m.db");
    assert_prefix(frames_of(db, 1000), "py_alloc;leaf:6;Model.forward:10;outer:14;<module>:17;main;");
    assert_non_null(strstr(frames_of(db, 1000), ";__libc_start_main;"));
    sqlite3_close(db);

    /* --python off (GPULEDGER_PYTHON=0): native frames only */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "--python", "off", "-o", "n.db", PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    db = h_open("n.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM frames WHERE python"), 0);
    assert_prefix(frames_of(db, 1000), "py_alloc;");
    sqlite3_close(db);
    /* --python only (GPULEDGER_PYTHON=only): the Python frames alone; a
     * thread with no Python frame keeps its native stack */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "--python", "only", "-o", "y.db", PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    db = h_open("y.db");
    assert_string_equal(frames_of(db, 1000), "leaf:6;Model.forward:10;outer:14;<module>:17");
    assert_string_equal(frames_of(db, 2000), "outer:15;<module>:17");
    assert_prefix(frames_of(db, 3000), "<lambda>:19;Thread.run:");
    assert_prefix(frames_of(db, 4000), "cthread;");
    assert_int_equal(h_int(db, "SELECT count(*) FROM run WHERE truncated_stacks = 0"), 1);
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "run", "--python", "sometimes", "--", PROG("pyembed"), script));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--python wants 'on', 'off', 'mixed' or 'only', not 'sometimes'"));
}

/* GPULEDGER_PYTHON_DEPTH: the innermost Python frames are kept, the stack
 * counts as truncated. */
static void test_python_depth_limit(void **state)
{
    (void)state;
    if (strcmp(getenv("GL_HAVE_PYEMBED") ? getenv("GL_HAVE_PYEMBED") : "0", "1") != 0)
        fail_msg("pyembed was not built: install python3-dev (pkg-config python3-embed) and reconfigure");
    static struct run_result r;
    h_run(&r, ENV("GPULEDGER_PYTHON_DEPTH=5"),
          ARGV(GL, "run", "-q", "-o", "d.db", PROG("pyembed"), source("tests/progs/pyembed_deep.py")));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("d.db");
    assert_string_equal(frames_of(db, 5000), "py_alloc;down:10;down:11;down:11;down:11;down:11");
    assert_int_equal(h_int(db, "SELECT truncated FROM stacks WHERE id = (SELECT stack_id FROM allocations"
                               " WHERE size = 5000)"),
                     1);
    assert_int_equal(h_int(db, "SELECT truncated_stacks FROM run"), 1);
    sqlite3_close(db);
    /* the default (64) keeps all 31 */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "e.db", PROG("pyembed"), source("tests/progs/pyembed_deep.py")));
    assert_int_equal(r.status, 0);
    db = h_open("e.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM stack_frames WHERE python AND stack_id = (SELECT stack_id"
                               " FROM allocations WHERE size = 5000)"),
                     31);
    assert_int_equal(h_int(db, "SELECT truncated_stacks FROM run"), 0);
    sqlite3_close(db);
    /* 102 frames, default limit 64: the innermost 48 and the outermost 16
     * (so the program's own entry point is still there) */
    h_run(&r, ENV("DEPTH=100"),
          ARGV(GL, "run", "-q", "-o", "f.db", PROG("pyembed"), source("tests/progs/pyembed_deep.py")));
    assert_int_equal(r.status, 0);
    db = h_open("f.db");
    const char *sid = "(SELECT stack_id FROM allocations WHERE size = 5000)";
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM stack_frames WHERE python AND stack_id = %s", sid);
    assert_int_equal(h_int(db, sql), 64);
    snprintf(sql, sizeof sql,
             "SELECT symbol || ':' || line FROM stack_frames WHERE stack_id = %s ORDER BY depth DESC LIMIT 1", sid);
    assert_string_equal(h_text(db, sql), "<module>:14");
    snprintf(sql, sizeof sql, "SELECT symbol || ':' || line FROM stack_frames WHERE stack_id = %s AND depth = 1",
             sid);
    assert_string_equal(h_text(db, sql), "down:10");
    assert_int_equal(h_int(db, "SELECT truncated_stacks FROM run"), 1);
    sqlite3_close(db);
}

/* The report names the Python line first. */
static void test_report_shows_python_lines(void **state)
{
    (void)state;
    if (strcmp(getenv("GL_HAVE_PYEMBED") ? getenv("GL_HAVE_PYEMBED") : "0", "1") != 0)
        fail_msg("pyembed was not built: install python3-dev (pkg-config python3-embed) and reconfigure");
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "p.db", PROG("pyembed"), source("tests/progs/pyembed_script.py")));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "leaks", "p.db"));
    assert_int_equal(r.status, 0);
    /* whole path for the program's own files, the part after lib/python3.x/
     * for the standard library (site-packages/ likewise) */
    assert_non_null(strstr(r.out, "1  leaf (/"));
    assert_non_null(strstr(r.out, "/tests/progs/pyembed_script.py:6)\n"));
    assert_non_null(strstr(r.out, "2  Model.forward (/"));
    assert_non_null(strstr(r.out, " Thread._bootstrap (threading.py:"));
    h_run(&r, NULL, ARGV(GL, "report", "p.db"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Python 3.11: 10103 of 10104 allocations carry Python frames"));
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "p.db"));
    assert_int_equal(r.status, 0);
    assert_non_null(
        strstr(r.out, "\"python\":{\"version\":\"3.11\",\"allocations\":10104,\"allocations_with_python_frames\":10103}"));
    h_run(&r, NULL, ARGV(GL, "leaks", "p.db"));
    /* categories from Python frames: Model.forward -> activations */
    assert_non_null(strstr(r.out, "1000 B in 1 allocation  [activations]"));
    assert_non_null(strstr(r.out, "1.95 KiB in 1 allocation  [other]"));
}

/* Every CPython 3.x on the machine (pyenv versions, the system one, or
 * GL_TEST_PYTHONS): 3.9-3.13 give the exact Python frames, others none and
 * one line saying so. */
static void test_python_versions_through_ctypes(void **state)
{
    (void)state;
    glob_t g;
    memset(&g, 0, sizeof g);
    const char *list = getenv("GL_TEST_PYTHONS");
    char pattern[2048];
    snprintf(pattern, sizeof pattern, "%s", list ? list : "/root/.pyenv/versions/3.*/bin/python3 /usr/bin/python3");
    for (char *save = NULL, *tok = strtok_r(pattern, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        glob(tok, g.gl_pathc ? GLOB_APPEND : 0, NULL, &g);
    int supported = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *py = g.gl_pathv[i];
        char cmd[1200], db[64];
        snprintf(cmd, sizeof cmd, "%s -c 'import sys; print(sys.version_info[1])' 2>/dev/null", py);
        FILE *p = popen(cmd, "r");
        int minor = -1;
        if (!p || fscanf(p, "%d", &minor) != 1)
            minor = -1;
        if (p)
            pclose(p);
        if (minor < 0)
            continue;
        snprintf(db, sizeof db, "v%zu.db", i);
        static struct run_result r;
        h_run(&r, NULL,
              ARGV(GL, "run", "-q", "-o", db, py, source("tests/progs/py_stack.py"),
                   h_build("tests/fakecuda/libcudart.so.13")));
        if (r.status != 0)
            fail_msg("%s: exit %d\n%s", py, r.status, r.err);
        sqlite3 *d = h_open(db);
        const char *f = frames_of(d, 8192);
        if (minor >= 9 && minor <= 13) {
            char want[256];
            /* ctypes' and libffi's native frames first (unnamed where the
             * interpreter is stripped), then the Python lines */
            snprintf(want, sizeof want, ";leaf:12;%s:17;outer:21;<module>:24",
                     minor >= 11 ? "Model.forward" : "forward");
            size_t fl = strlen(f), wl = strlen(want);
            if (!strstr(f, "ffi_call;") || fl < wl || strcmp(f + fl - wl, want))
                fail_msg("Python 3.%d (%s): stack\n  %s\nlacks\n  %s", minor, py, f, want);
            char v[8];
            snprintf(v, sizeof v, "3.%d", minor);
            assert_string_equal(h_text(d, "SELECT value FROM meta WHERE key = 'python_version'"), v);
            supported++;
        } else {
            assert_int_equal(h_int(d, "SELECT count(*) FROM frames WHERE python"), 0);
            assert_int_equal(h_count_lines(r.err, "frames are not supported"), 1);
        }
        print_message("  python 3.%d (%s): ok\n", minor, py);
        sqlite3_close(d);
    }
    globfree(&g);
    assert_true(supported >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_embedded_python_frames, h_teardown),
        cmocka_unit_test_teardown(test_python_depth_limit, h_teardown),
        cmocka_unit_test_teardown(test_report_shows_python_lines, h_teardown),
        cmocka_unit_test_teardown(test_python_versions_through_ctypes, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
