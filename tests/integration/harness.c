/* harness.c — see harness.h. */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

const char *h_dir(void)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gl-e2e-XXXXXX");
        if (!mkdtemp(dir))
            fail_msg("mkdtemp failed");
    }
    return dir;
}

void h_cleanup(void)
{
    if (dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
        dir[0] = 0;
    }
}

int h_teardown(void **state)
{
    (void)state;
    h_cleanup();
    return 0;
}

const char *h_build(const char *rel)
{
    static char bufs[8][1024];
    static int next;
    const char *root = getenv("GL_BUILD_ROOT");
    if (!root)
        fail_msg("GL_BUILD_ROOT is not set (run through meson test)");
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", root, rel);
    return b;
}

static void slurp(int fd, char *buf, size_t sz)
{
    size_t n = 0;
    lseek(fd, 0, SEEK_SET);
    ssize_t k;
    while (n < sz - 1 && (k = read(fd, buf + n, sz - 1 - n)) > 0)
        n += (size_t)k;
    buf[n] = 0;
}

void h_run(struct run_result *r, const char *const *env, const char *const *argv)
{
    h_run_in(r, h_dir(), env, argv);
}

void h_run_in(struct run_result *r, const char *cwd, const char *const *env, const char *const *argv)
{
    char outp[300], errp[300];
    snprintf(outp, sizeof outp, "%s/.stdout", h_dir());
    snprintf(errp, sizeof errp, "%s/.stderr", h_dir());
    int ofd = open(outp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int efd = open(errp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(ofd >= 0 && efd >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (chdir(cwd) != 0)
            _exit(126);
        dup2(ofd, 1);
        dup2(efd, 2);
        for (const char *const *e = env; e && *e; e++)
            putenv((char *)*e);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    slurp(ofd, r->out, sizeof r->out);
    slurp(efd, r->err, sizeof r->err);
    close(ofd);
    close(efd);
}

sqlite3 *h_open(const char *path)
{
    sqlite3 *db = NULL;
    char full[600];
    if (path[0] != '/')
        snprintf(full, sizeof full, "%s/%s", h_dir(), path);
    else
        snprintf(full, sizeof full, "%s", path);
    if (access(full, R_OK) != 0)
        fail_msg("no database at %s", full);
    if (sqlite3_open_v2(full, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        fail_msg("cannot open %s", full);
    /* the SQL module of packed recordings (schema 6), as a user loads it */
    char *err = NULL;
    if (sqlite3_enable_load_extension(db, 1) != SQLITE_OK ||
        sqlite3_load_extension(db, h_build("store/libgpuledger_sql.so"), NULL, &err) != SQLITE_OK)
        fail_msg("cannot load %s: %s", h_build("store/libgpuledger_sql.so"), err ? err : "?");
    sqlite3_free(err);
    return db;
}

int64_t h_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad query %s: %s", sql, sqlite3_errmsg(db));
    int64_t v = -999999;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

const char *h_text(sqlite3 *db, const char *sql)
{
    static char buf[4096];
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad query %s: %s", sql, sqlite3_errmsg(db));
    buf[0] = 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(buf, sizeof buf, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return buf;
}

int h_count_lines(const char *s, const char *needle)
{
    int n = 0;
    while (s && *s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), s);
        if (strstr(line, needle))
            n++;
        s = eol ? eol + 1 : s + len;
    }
    return n;
}

void h_expect(const char *haystack, const char *needle)
{
    if (!haystack || !strstr(haystack, needle))
        fail_msg("expected to find\n  %s\nin\n%.4000s", needle, haystack ? haystack : "(nothing)");
}

const char *h_listing(const char *dir, int dots)
{
    static char buf[2048];
    struct dirent **v;
    int n = scandir(dir, &v, NULL, alphasort);
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        const char *d = v[i]->d_name;
        if (dots ? strcmp(d, ".") && strcmp(d, "..") : d[0] != '.')
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? " " : "", d);
        free(v[i]);
    }
    free(v);
    return buf;
}
