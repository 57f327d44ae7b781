/* out.c — see out.h. */
#include "out.h"
#include "stack_text.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void frame_line(FILE *f, const char *indent, int i, const char *name)
{
    fprintf(f, "%s%2d  ", indent, i);
    gl_text_str(f, name);
    fputc('\n', f);
}

void gl_print_frame_list(FILE *f, const struct gl_stack *st, const char *indent)
{
    char buf[1024];
    if (!st->n) {
        fprintf(f, "%s(no stack recorded)\n", indent);
        return;
    }
    /* up to 8 native frames from the first interesting one, then (when
     * there are Python frames further out) up to 16 Python-led frames */
    int k = gl_first_interesting(st), py = gl_first_python(st, k), shown = 0;
    if (k)
        fprintf(f, "%s    [%d allocator frame%s]\n", indent, k, gl_s((uint64_t)k));
    int i = k;
    for (; i < st->n && shown < 8 && (py < 0 || i < py); i++, shown++)
        frame_line(f, indent, i, gl_frame_name(gl_stack_frame(st, i), buf, sizeof buf));
    if (py > i) {
        fprintf(f, "%s    [%d native frame%s]\n", indent, py - i, gl_s((uint64_t)(py - i)));
        i = py;
    }
    int limit = i + (py >= 0 ? 16 : 0);
    for (; i < st->n && i < limit; i++)
        frame_line(f, indent, i, gl_frame_name(gl_stack_frame(st, i), buf, sizeof buf));
    if (i < st->n)
        fprintf(f, "%s    [%d more frame%s]\n", indent, st->n - i, gl_s((uint64_t)(st->n - i)));
}

void gl_print_chain(FILE *f, const struct gl_stack *st, int max, int must)
{
    /* the op, the innermost user frame and the outermost (stack_text.h),
     * and `must`: the frame that tells this row from the others */
    (void)max;
    char buf[4096];
    gl_text_str(f, gl_stack_chain(st, must, buf, sizeof buf));
}

const char *gl_unfreed_words(const struct gl_run *r)
{
    return r->unfinished ? "live when the recording stopped" : "never freed";
}

void gl_print_skipped(FILE *f, const struct gl_run *r)
{
    if (!r->nskipped)
        return;
    fputs("gpuledger: ", f);
    gl_text_str(f, r->path);
    fprintf(f, ": %" PRId64 " row%s skipped, breaking an invariant:", r->nskipped, gl_s((uint64_t)r->nskipped));
    const char *sep = " ";
    for (int k = 0; k < GL_SKIP_COUNT; k++) {
        if (!r->skipped[k])
            continue;
        fprintf(f, "%s%s: %" PRId64, sep, gl_skip_reason((enum gl_skip)k), r->skipped[k]);
        if (k != GL_SKIP_RUN_END)
            fprintf(f, " (first seq %" PRId64 ")", r->skipped_first_seq[k]);
        sep = "; ";
    }
    fputc('\n', f);
}

/* The files gl_open_out opened: where each goes, and the temporary beside
 * it that becomes it at gl_close_out (-o and --junit: a few at most). */
#define MAX_OUTS 4
static struct out_file {
    FILE *f;
    char *path;  /* as given (for messages) */
    char *final; /* what the temporary is renamed to: path, or the file a link names */
    char *tmp;   /* NULL: written in place (not a regular file, or no temporary could be made there) */
    int existed; /* the file was there before */
} outs[MAX_OUTS];

static void say_cannot_write(const char *path, int err, const char *after)
{
    fputs("gpuledger: cannot write ", stderr);
    gl_text_str(stderr, path);
    fprintf(stderr, ": %s%s\n", strerror(err), after);
}

/* A temporary beside `final` with the mode the file would get (its own
 * if it exists): its stream, or NULL (errno set) where none can be made. */
static FILE *temp_beside(struct out_file *o, const struct stat *st)
{
    const char *slash = strrchr(o->final, '/');
    size_t dir = slash ? (size_t)(slash - o->final + 1) : 0, len = strlen(o->final) + 32;
    if (!(o->tmp = malloc(len)))
        return NULL;
    snprintf(o->tmp, len, "%.*s.%s.gpuledger-XXXXXX", (int)dir, o->final, o->final + dir);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
        return NULL;
    }
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, st ? st->st_mode & 07777 : 0666 & ~mask); /* (a mode one may not set: 0600 stays) */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(o->tmp);
    }
    return f;
}

FILE *gl_open_out(const char *path)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    struct out_file *o = NULL;
    for (int i = 0; i < MAX_OUTS && !o; i++)
        if (!outs[i].f)
            o = &outs[i];
    struct stat st;
    int have = stat(path, &st) == 0;
    char *real = have ? realpath(path, NULL) : NULL;
    if (!o || !(o->path = strdup(path)) || !(o->final = real ? real : strdup(path))) {
        say_cannot_write(path, ENOMEM, "");
        if (o)
            free(o->path);
        free(real);
        return NULL;
    }
    o->existed = have;
    o->tmp = NULL;
    /* a regular file (or a new one) is written beside and renamed onto it
     * when complete; anything else (/dev/null, a pipe, a terminal) is
     * written as it is */
    FILE *f = !have || S_ISREG(st.st_mode) ? temp_beside(o, have ? &st : NULL) : NULL;
    if (!f)
        f = fopen(path, "w");
    if (!f) {
        say_cannot_write(path, errno, "");
        free(o->path);
        free(o->final);
        return NULL;
    }
    o->f = f;
    return f;
}

int gl_close_out(FILE *f, int discard)
{
    if (!f)
        return 0;
    if (f == stdout)
        return gl_check_stdout();
    struct out_file *o = NULL;
    for (int i = 0; i < MAX_OUTS && !o; i++)
        if (outs[i].f == f)
            o = &outs[i];
    if (!o) /* not ours */
        return fclose(f);
    errno = 0;
    int failed = fflush(f) != 0 || ferror(f), err = errno ? errno : EIO;
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (!failed && !discard && o->tmp && rename(o->tmp, o->final) != 0) {
        failed = 1;
        err = errno;
    }
    if (o->tmp && (failed || discard))
        unlink(o->tmp);
    else if (!o->tmp && failed && !o->existed)
        unlink(o->path); /* made here, incomplete */
    if (failed)
        say_cannot_write(o->path, err,
                         o->tmp || !o->existed ? (o->existed ? " (the file is left as it was)" : " (no file written)")
                                               : "");
    free(o->path);
    free(o->final);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return failed ? -1 : 0;
}

int gl_check_stdout(void)
{
    static int said;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (!said++)
        fprintf(stderr, "gpuledger: writing the output failed: %s\n", strerror(errno ? errno : EIO));
    return -1;
}

