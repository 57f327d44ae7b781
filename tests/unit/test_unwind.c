/* test_unwind.c — the fast stack walk (interpose/unwind.c) against
 * libunwind: the same return addresses, frame for frame, through ordinary
 * frames, frame-pointer frames, realigned frames, frames in libc, other
 * threads and after a cache invalidation; and -1 (libunwind's turn) where
 * it must give up: a signal frame, an alternate signal stack. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unwind.h"

#define MAXF 128

struct pair {
    uintptr_t fast[MAXF], slow[MAXF];
    int nf, ns;
};

/* Both walks from the same frame: entry 0 differs (two call sites in
 * here), everything from entry 1 on must be equal. */
__attribute__((noinline)) static void both(struct pair *p, int max)
{
    p->nf = gl_unwind_fast(p->fast, max);
    p->ns = unw_backtrace((void **)p->slow, max);
    __asm__ volatile("" ::: "memory");
}

static void assert_same(const struct pair *p)
{
    assert_true(p->nf > 1);
    assert_int_equal(p->nf, p->ns);
    for (int i = 1; i < p->nf; i++)
        assert_int_equal(p->fast[i], p->slow[i]);
}

/* ---- plain recursion ---- */
__attribute__((noinline)) static int deep(int n, struct pair *p, int max)
{
    if (n == 0) {
        both(p, max);
        return 0;
    }
    int r = deep(n - 1, p, max);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return r + 1;
}

static void test_deep_recursion(void **state)
{
    (void)state;
    struct pair p;
    uint64_t f0, b0, f1, b1;
    gl_unwind_stats(&f0, &b0);
    deep(60, &p, MAXF);
    assert_same(&p);
    assert_true(p.nf > 60);
    gl_unwind_stats(&f1, &b1);
    assert_int_equal(f1 - f0, 1);
    assert_int_equal(b1 - b0, 0);
}

static void test_depth_limit(void **state)
{
    (void)state;
    struct pair p;
    deep(60, &p, 20);
    assert_int_equal(p.nf, 20);
    assert_same(&p);
}

/* A walk that stops at a caller: the first return address in the stop
 * range ends it (stored, last); the frames before it are the full walk's;
 * a range no return address lies in changes nothing. Twice: the second
 * time the answers may come from the memo, which keeps walks with
 * different stops apart. */
static uintptr_t stop_fast[2][MAXF], full_fast[MAXF], none_fast[MAXF];
static int stop_n[2], full_n, none_n;

__attribute__((noinline)) static void stop_walks(void)
{
    for (int rep = 0; rep < 2; rep++) {
        full_n = gl_unwind_fast(full_fast, MAXF);
        uintptr_t at = full_fast[2]; /* the recursive call in outer_stop */
        stop_n[rep] = gl_unwind_fast_to(stop_fast[rep], MAXF, at - 1, at);
        none_n = gl_unwind_fast_to(none_fast, 32, 1, 2);
        __asm__ volatile("" ::: "memory");
    }
}

__attribute__((noinline)) static void outer_stop(int n)
{
    if (n > 0) {
        outer_stop(n - 1);
        __asm__ volatile("" ::: "memory"); /* not a tail call */
        return;
    }
    stop_walks();
    __asm__ volatile("" ::: "memory");
}

static void test_stop_range(void **state)
{
    (void)state;
    outer_stop(3);
    assert_true(full_n > 6);
    for (int rep = 0; rep < 2; rep++) {
        assert_int_equal(stop_n[rep], 3);
        for (int i = 0; i < 3; i++)
            assert_int_equal(stop_fast[rep][i], stop_fast[0][i]);
        for (int i = 1; i < 3; i++)
            assert_int_equal(stop_fast[rep][i], full_fast[i]);
    }
    assert_int_equal(full_fast[3], full_fast[2]); /* the same call site one level out: not reached */
    assert_int_equal(none_n, full_n < 32 ? full_n : 32);
    for (int i = 1; i < none_n; i++)
        assert_int_equal(none_fast[i], full_fast[i]);
}

/* ---- frames with a variable size (rbp-based CFA) and realigned ones ---- */
__attribute__((noinline)) static int vla_frame(int n, struct pair *p)
{
    volatile char buf[n + 16];
    buf[0] = (char)n;
    both(p, MAXF);
    return buf[0];
}

/* Stack arguments + a variable-size frame + an over-aligned local: GCC
 * realigns through a saved argument pointer, CFA = *(rbp - 8) (the
 * DW_CFA_def_cfa_expression case). */
__attribute__((noinline)) static int realigned(int a, int b, int c, int d, int e, int f, int g, int n,
                                               struct pair *p)
{
    _Alignas(64) volatile char big[256];
    volatile char v[n + 1];
    v[0] = (char)(a + b + c + d + e + f + g);
    big[0] = (char)n;
    int r = vla_frame(n * 3 + 1, p);
    return r + big[0] + v[0];
}

static void test_vla_and_realigned_frames(void **state)
{
    (void)state;
    uint64_t f0, b0, f1, b1;
    gl_unwind_stats(&f0, &b0);
    for (int n = 1; n < 200; n += 37) {
        struct pair p;
        realigned(1, 2, 3, 4, 5, 6, 7, n, &p);
        assert_same(&p);
    }
    gl_unwind_stats(&f1, &b1);
    assert_int_equal(b1 - b0, 0);
}

/* ---- through libc: qsort calls back into us ---- */
static struct pair *qsort_pair;
static int cmp(const void *a, const void *b)
{
    if (qsort_pair) {
        both(qsort_pair, MAXF);
        qsort_pair = NULL;
    }
    return *(const int *)a - *(const int *)b;
}

static void test_through_libc(void **state)
{
    (void)state;
    struct pair p;
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (i * 7919) % 64;
    qsort_pair = &p;
    uint64_t f0, b0, f1, b1;
    gl_unwind_stats(&f0, &b0);
    qsort(v, 64, sizeof v[0], cmp);
    assert_same(&p);
    gl_unwind_stats(&f1, &b1);
    assert_int_equal(b1 - b0, 0);
}

/* ---- another thread, and after invalidation ---- */
static void *thread_main(void *arg)
{
    deep(10, arg, MAXF);
    return NULL;
}

static void test_thread_and_invalidate(void **state)
{
    (void)state;
    struct pair p;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, thread_main, &p), 0);
    pthread_join(t, NULL);
    assert_same(&p);
    gl_unwind_invalidate();
    deep(5, &p, MAXF);
    assert_same(&p);
}

/* ---- the memo of recent walks ---- */
static volatile int sink;
/* Two callers with the same frame (the walk starts at the same sp), made
 * different so that the compiler does not fold them into one. */
__attribute__((noinline)) static void caller_a(struct pair *p)
{
    sink = 1;
    both(p, MAXF);
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void caller_b(struct pair *p)
{
    sink = 2;
    both(p, MAXF);
    __asm__ volatile("" ::: "memory");
}

/* g's frame is found through rbp (a VLA); the callers' VLA and g's add up
 * to the same size, so every walk starts at the same sp while g's rbp, and
 * the caller g returns to, change. */
__attribute__((noinline)) static int g_vla(int m, struct pair *p)
{
    volatile char v[m];
    v[0] = (char)m;
    both(p, MAXF);
    return v[0];
}
__attribute__((noinline)) static int f1_vla(int n, struct pair *p)
{
    volatile char v[n];
    v[0] = (char)n;
    int r = g_vla(272 - n, p);
    return r + v[0] + 1;
}
__attribute__((noinline)) static int f2_vla(int n, struct pair *p)
{
    volatile char v[n];
    v[0] = (char)(n + 2);
    int r = g_vla(272 - n, p);
    return r + v[0] + 2;
}

static void test_memo_hits_and_never_lies(void **state)
{
    (void)state;
    uint64_t h0, h1;
    struct pair p, q;
    gl_unwind_memo_stats(&h0);
    for (int i = 0; i < 5; i++) { /* the same stack again and again: answered from the memo */
        deep(20, &p, MAXF);
        assert_same(&p);
    }
    gl_unwind_memo_stats(&h1);
    assert_true(h1 - h0 >= 4);
    for (int i = 0; i < 3; i++) { /* two callers, the same sp: each gets its own stack */
        caller_a(&p);
        assert_same(&p);
        caller_b(&q);
        assert_same(&q);
        assert_int_not_equal(p.fast[1], q.fast[1]);
    }
    for (int n = 16; n <= 256; n += 16) { /* frames found through rbp, at the same starting sp */
        f1_vla(n, &p);
        assert_same(&p);
        f2_vla(272 - n, &q);
        assert_same(&q);
        assert_int_not_equal(p.fast[2], q.fast[2]);
    }
}

/* ---- where it must give up ---- */
static struct pair sig_pair;
static void on_signal(int sig)
{
    (void)sig;
    sig_pair.nf = gl_unwind_fast(sig_pair.fast, MAXF);
}

static void test_signal_frame_gives_up(void **state)
{
    (void)state;
    uint64_t f0, b0, f1, b1;
    gl_unwind_stats(&f0, &b0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, &old);
    raise(SIGUSR1);
    assert_int_equal(sig_pair.nf, -1); /* __restore_rt: a signal frame */

    /* and on an alternate signal stack, before reading anything */
    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16};
    sigaltstack(&ss, NULL);
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    sig_pair.nf = 0;
    raise(SIGUSR1);
    assert_int_equal(sig_pair.nf, -1);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, NULL);
    free(ss.ss_sp);
    sigaction(SIGUSR1, &old, NULL);
    gl_unwind_stats(&f1, &b1);
    assert_int_equal(b1 - b0, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_recursion),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_stop_range),
        cmocka_unit_test(test_vla_and_realigned_frames),
        cmocka_unit_test(test_through_libc),
        cmocka_unit_test(test_thread_and_invalidate),
        cmocka_unit_test(test_memo_hits_and_never_lies),
        cmocka_unit_test(test_signal_frame_gives_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
