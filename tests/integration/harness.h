/* harness.h — helpers for the end-to-end tests: run a test program under
 * `gpuledger run` (or bare) in a scratch directory, capture its output,
 * and query the database it wrote. */
#ifndef GL_HARNESS_H
#define GL_HARNESS_H

#include <sqlite3.h>
#include <stdint.h>

struct run_result {
    int status;        /* exit code, or 128 + signal */
    char out[1 << 18]; /* stdout */
    char err[1 << 16]; /* stderr */
};

/* argv / extra environment lists for h_run, and the built programs */
#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})
#define GL h_build("report/gpuledger")
#define PROG(p) h_build("tests/" p)

/* A fresh scratch directory for this test (removed by h_cleanup). */
const char *h_dir(void);
void h_cleanup(void);
/* cmocka teardown: h_cleanup */
int h_teardown(void **state);
/* build/... path of a built file, e.g. h_build("tests/alloc1000"). */
const char *h_build(const char *rel);
/* Run argv (NULL-terminated) with extra "NAME=value" env entries (NULL-
 * terminated, may be NULL), cwd = h_dir(). */
void h_run(struct run_result *r, const char *const *env, const char *const *argv);
/* The same with another working directory. */
void h_run_in(struct run_result *r, const char *cwd, const char *const *env, const char *const *argv);
/* Open a database read-only; fails the test if it cannot. */
sqlite3 *h_open(const char *path);
int64_t h_int(sqlite3 *db, const char *sql);
/* First column of the first row as text ("" if NULL), in a static buffer. */
const char *h_text(sqlite3 *db, const char *sql);
/* Fails the test, showing the start of haystack, unless it contains needle. */
void h_expect(const char *haystack, const char *needle);
/* The names in a directory, sorted, space-separated, in a static buffer;
 * dots: also those starting with '.' (but . and ..). */
const char *h_listing(const char *dir, int dots);
/* Count the lines of s that contain needle. */
int h_count_lines(const char *s, const char *needle);

#endif
