/* stacks.h — stacks and frames, each written once: an event's return
 * addresses (and Python pseudo-frames) become a stack id; a new stack gets
 * its stacks/stack_entries rows, a new address its frames row (symbolized
 * in-process, with its module), a new Python frame its name and line. */
#ifndef GL_STACKS_H
#define GL_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "gl_event.h"
#include "store.h"
#include "symbolize.h"
#include "u64map.h"
#include "wdb.h"

/* A new stack's entries are written this many to an INSERT (one VM run
 * instead of one each: a 36-frame stack was 36 statements). */
#define GL_STACK_ENTRY_BATCH 16

struct gl_stacks {
    struct gl_wdb *w;
    sqlite3_stmt *ins_stack, *ins_entry, *ins_frame, *ins_pyframe, *ins_module;
    sqlite3_stmt *ins_entries; /* GL_STACK_ENTRY_BATCH entries in one statement */
    gl_py_describe_fn py_describe; /* Python pseudo-frames -> names */
    struct gl_symbolizer sym;
    struct gl_u64map frames;       /* ip -> frame id */
    int64_t next_frame, next_stack, next_module;
    struct gl_u64map index;        /* probe key -> index in ents[] */
    struct gl_stack_ent *ents;
    size_t nents, ents_cap;
    uintptr_t *ips;                /* arena of every distinct stack's ips */
    size_t nips, ips_cap;
    size_t last;                   /* ents[] index of the last stack found or added */
    int64_t last_id;               /* its id; 0: none yet */
};

int gl_stacks_open(struct gl_stacks *s, struct gl_wdb *w, int symbolize);
/* The id of ev's stack (written if new); 0 for an event without one. */
int64_t gl_stacks_id(struct gl_stacks *s, const struct gl_event *ev);
void gl_stacks_close(struct gl_stacks *s);

#endif
