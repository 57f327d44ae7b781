/* frames.h — stack frames of a run, as the load read them, looked up and
 * cached per view (frames.c), and the category rules (categories.c) that
 * map a stack to "parameters", "optimizer", "kv_cache", … (built-in defaults, or a rule
 * file given with --rules), and which frames say who wanted the memory. */
#ifndef GL_FRAMES_H
#define GL_FRAMES_H

#include <regex.h>
#include <stdint.h>

#include "model.h"

struct gl_frame {
    char *symbol, *module, *file;
    int line, python;
    uint64_t offset;
};

struct gl_stack {
    int64_t id;
    const struct gl_frame *frames; /* the run's frames table (model_tables.c) */
    const uint32_t *fi;   /* its n entries, innermost first: indices into frames */
    int n;
    const char *category; /* resolved lazily, points into the rule set */
};

/* Entry i of a stack (0: innermost), 0 <= i < st->n. */
static inline const struct gl_frame *gl_stack_frame(const struct gl_stack *st, int i)
{
    return &st->frames[st->fi[i]];
}

struct gl_stacks {
    struct gl_run *run;
    struct gl_stack *v;
    size_t n, cap;
    void *index;          /* u64map id -> position */
};

void gl_stacks_init(struct gl_stacks *s, struct gl_run *run);
void gl_stacks_free(struct gl_stacks *s);
/* Frames of stack id (NULL stack for id 0 / unknown: n == 0). */
const struct gl_stack *gl_stack_get(struct gl_stacks *s, int64_t id);
/* "symbol" or "module+0xoffset" for display; buffer is per call site. */
const char *gl_frame_name(const struct gl_frame *f, char *buf, size_t sz);
/* A stable text key for a stack: its frames' names (file:line where
 * known), used to merge call sites of the same chain and to match stacks
 * across databases. */
void gl_stack_signature(const struct gl_stack *st, char *buf, size_t sz);
/* For n stacks shown together (the rows of a table): at[i] = the index of
 * the first frame, innermost first, where stack i's chain of frames differs
 * from every other one's (so printing it tells the rows apart), or -1 when
 * another stack has the same chain to its end. */
void gl_stacks_distinct(const struct gl_stack *const *st, size_t n, int *at);
/* A key naming one frame for deduplication in exports: all its fields, the
 * offset only when there is no symbol (so one function is one frame). */
const char *gl_frame_key(const struct gl_frame *f, char *buf, size_t sz);

/* True if any frame of the stack (symbol or module) matches re. */
int gl_stack_matches(const struct gl_stack *st, const regex_t *re);
/* Index of the first frame that is not allocator plumbing (c10::cuda::…). */
int gl_first_interesting(const struct gl_stack *st);
/* Index of the first Python frame at or after `from`, or -1. */
int gl_first_python(const struct gl_stack *st, int from);
/* Where a stack's memory was asked for, in a few words: its innermost
 * Python line, else its first frame that is not allocator plumbing. */
const char *gl_stack_where(const struct gl_stack *st, char *buf, size_t sz);

/* ---- categories (categories.c) ---- */

enum gl_rule_field { GL_RF_SYMBOL, GL_RF_MODULE, GL_RF_FILE, GL_RF_API, GL_RF_KIND, GL_RF_FRAME };

struct gl_rule {
    char category[64];
    enum gl_rule_field field;
    regex_t re;
    char pattern[256];
};

struct gl_rules {
    struct gl_rule *v;
    size_t n;
};

/* Built-in rules (see docs/report.md, "Categories"). */
int gl_rules_default(struct gl_rules *r);
/* Load a rule file; on error returns -1 with "FILE:LINE: problem" in err. */
int gl_rules_load(struct gl_rules *r, const char *path, char *err, size_t errsz);
void gl_rules_free(struct gl_rules *r);
/* The name of a category decided by identity or lifetime (gl_alloc.cat),
 * NULL for 0 or an unknown number. */
const char *gl_cat_name(int cat);
/* Category of an allocation: by identity or lifetime where known, else
 * by the rules for this api/kind at this stack. */
const char *gl_categorize(const struct gl_rules *r, struct gl_stacks *s, const struct gl_alloc *a);
/* Memory of this category is held at exit by design (caching-allocator
 * segments, module globals): not a leak. */
int gl_is_cached_category(const char *cat);

#endif
