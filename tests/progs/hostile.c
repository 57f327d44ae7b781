/* hostile.c — programs that treat their descriptors roughly, selected by
 * argv[1]:
 *   perm DB          one cudaMalloc; once DB-wal and DB-shm exist, print the
 *                    octal modes of DB, DB-wal and DB-shm ("600 600 600")
 *   closefds HOW DIR DB
 *                    100 cudaMalloc/cudaFree pairs, then (once DB-wal exists,
 *                    i.e. the database is open) take every descriptor from 3
 *                    up, HOW:
 *                      loop         for (fd = 3; fd < 4096; fd++) close(fd)
 *                      close_range  close_range(3, ~0U, 0)
 *                      closefrom    closefrom(3)
 *                      dup2         open the files first, dup2 them onto 3..6
 *                    then write DIR/f0..f3 in 20 rounds (100 more pairs, one
 *                    4 KiB chunk per file, 60 ms: the writer commits in
 *                    between), read every file back and compare. Exit 0 if
 *                    all four hold exactly what was written, 42 if not.
 *   pipe-eof DB      make a pipe, allocate (the writer starts), wait for
 *                    DB-wal, close the pipe's write end: reading must find
 *                    EOF at once (no copy of the descriptor lingers
 *                    anywhere); exit 0, or 43 after 2 s without EOF
 *   dlsym-default N  N cudaMalloc/cudaFree pairs through pointers from
 *                    dlsym(RTLD_DEFAULT, …) (what ctypes.CDLL(None) does)
 *   late DELAY HOLD  wait DELAY ms, one cudaMalloc/cudaFree pair, wait HOLD
 *                    ms, exit 0 (a background process of a launched shell)
 * hostile_chunk() is the content; test_hostile.c checks the files again
 * after the program (and the library's last commit) has gone. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 4096
#define ROUNDS 20
#define FILES 4

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void wait_for(const char *path)
{
    for (int i = 0; i < 500 && access(path, F_OK) != 0; i++)
        nap_ms(10);
}

static void pairs(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = NULL;
        cudaMalloc(&p, 4096 + (size_t)i);
        cudaFree(p);
    }
}

/* chunk k of file i: a header line, then the file's letter */
static void hostile_chunk(int i, int k, char *buf)
{
    memset(buf, 'a' + i, CHUNK);
    int n = snprintf(buf, CHUNK, "file %d chunk %d\n", i, k);
    buf[n] = '\n';
}

static int do_perm(const char *db)
{
    void *p = NULL;
    cudaMalloc(&p, 1 << 20);
    char wal[600], shm[600];
    snprintf(wal, sizeof wal, "%s-wal", db);
    snprintf(shm, sizeof shm, "%s-shm", db);
    wait_for(wal);
    wait_for(shm);
    struct stat a, b, c;
    if (stat(db, &a) || stat(wal, &b) || stat(shm, &c)) {
        printf("missing\n");
        return 1;
    }
    printf("%o %o %o\n", a.st_mode & 0777, b.st_mode & 0777, c.st_mode & 0777);
    cudaFree(p);
    return 0;
}

static int do_closefds(const char *how, const char *dir, const char *db)
{
    pairs(100);
    char path[FILES][600], wal[600];
    snprintf(wal, sizeof wal, "%s-wal", db);
    wait_for(wal);
    for (int i = 0; i < FILES; i++)
        snprintf(path[i], sizeof path[i], "%s/f%d", dir, i);
    int fd[FILES];
    if (!strcmp(how, "dup2")) {
        for (int i = 0; i < FILES; i++) {
            int f = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0644);
            if (f < 0 || dup2(f, 3 + i) != 3 + i)
                return 2;
            if (f != 3 + i)
                close(f);
            fd[i] = 3 + i;
        }
    } else {
        if (!strcmp(how, "loop")) {
            for (int f = 3; f < 4096; f++)
                close(f);
        } else if (!strcmp(how, "close_range")) {
            if (close_range(3, ~0U, 0) != 0)
                return 2;
        } else if (!strcmp(how, "closefrom")) {
            closefrom(3);
        } else {
            return 2;
        }
        for (int i = 0; i < FILES; i++)
            if ((fd[i] = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
                return 2;
    }
    static char buf[CHUNK], back[CHUNK];
    for (int k = 0; k < ROUNDS; k++) {
        pairs(100);
        for (int i = 0; i < FILES; i++) {
            hostile_chunk(i, k, buf);
            if (write(fd[i], buf, CHUNK) != CHUNK)
                return 2;
        }
        nap_ms(60);
    }
    int bad = 0;
    for (int i = 0; i < FILES; i++) {
        struct stat st;
        if (fstat(fd[i], &st) || st.st_size != (off_t)CHUNK * ROUNDS)
            bad = 1;
        for (int k = 0; k < ROUNDS && !bad; k++) {
            hostile_chunk(i, k, buf);
            if (pread(fd[i], back, CHUNK, (off_t)k * CHUNK) != CHUNK || memcmp(buf, back, CHUNK))
                bad = 1;
        }
        if (bad) {
            fprintf(stderr, "hostile: %s does not hold what was written\n", path[i]);
            return 42;
        }
    }
    printf("hostile: %s: 4 files checked\n", how);
    return 0;
}

static int do_pipe_eof(const char *db)
{
    int p[2];
    if (pipe(p))
        return 2;
    pairs(10);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", db);
    wait_for(wal);
    pairs(10);
    close(p[1]);
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    char c;
    if (poll(&pf, 1, 2000) != 1 || read(p[0], &c, 1) != 0) {
        fprintf(stderr, "hostile: no EOF on the pipe after its write end was closed\n");
        return 43;
    }
    printf("hostile: pipe-eof: EOF\n");
    return 0;
}

static int do_dlsym_default(int n)
{
    cudaError_t (*m)(void **, size_t) = (cudaError_t(*)(void **, size_t))dlsym(RTLD_DEFAULT, "cudaMalloc");
    cudaError_t (*f)(void *) = (cudaError_t(*)(void *))dlsym(RTLD_DEFAULT, "cudaFree");
    if (!m || !f)
        return 2;
    for (int i = 0; i < n; i++) {
        void *p = NULL;
        if (m(&p, 4096) != cudaSuccess || f(p) != cudaSuccess)
            return 3;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "perm"))
        return do_perm(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "late")) {
        nap_ms(atol(argv[2]));
        pairs(1);
        nap_ms(atol(argv[3]));
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "dlsym-default"))
        return do_dlsym_default(atoi(argv[2]));
    if (argc == 3 && !strcmp(argv[1], "pipe-eof"))
        return do_pipe_eof(argv[2]);
    if (argc == 5 && !strcmp(argv[1], "closefds"))
        return do_closefds(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: hostile perm DB | pipe-eof DB | dlsym-default N | late DELAY HOLD | closefds loop|close_range|closefrom|dup2 DIR DB\n");
    return 2;
}
