/* golden_dbs.h — the unit tests' walk over every database of
 * tests/golden/db (under $GL_SOURCE_ROOT, as meson sets it): each path
 * handed to a function, and how many there were; a changed copy of one. */
#ifndef GL_TEST_GOLDEN_DBS_H
#define GL_TEST_GOLDEN_DBS_H

#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline size_t gl_each_golden_db(void (*fn)(const char *path))
{
    const char *root = getenv("GL_SOURCE_ROOT");
    char dir[1024];
    size_t n = 0;
    snprintf(dir, sizeof dir, "%s/tests/golden/db", root ? root : ".");
    DIR *d = root ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".db"))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        fn(path);
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* A copy of golden database `name` changed by `sql`, at out
 * (/tmp/gl-TAG-PID-NAME); for tests that include cmocka and sqlite3. */
static inline void gl_golden_changed_copy(const char *tag, const char *name, const char *sql, char *out, size_t sz)
{
    const char *root = getenv("GL_SOURCE_ROOT");
    char src[2048], cmd[8192];
    snprintf(src, sizeof src, "%s/tests/golden/db/%s", root, name);
    snprintf(out, sz, "/tmp/gl-%s-%d-%s", tag, (int)getpid(), name);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, out);
    assert_int_equal(system(cmd), 0);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(out, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

#endif
