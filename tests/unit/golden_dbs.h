/* golden_dbs.h — the unit tests' walk over every database of
 * tests/golden/db (under $GL_SOURCE_ROOT, as meson sets it): each path
 * handed to a function, and how many there were. */
#ifndef GL_TEST_GOLDEN_DBS_H
#define GL_TEST_GOLDEN_DBS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
