/* stack_text.h — a recorded stack as a person reads it (frameclass.h's
 * rules on report/model/frames.h's stacks): the one-line chain (op,
 * innermost user frame, outermost; never eliding the user's), the user's
 * frame in a few words, and each frame's class. */
#ifndef GL_STACK_TEXT_H
#define GL_STACK_TEXT_H

#include <stddef.h>

#include "frameclass.h"
#include "frames.h"

/* enum gl_fc_class of frame i of st. */
int gl_stack_frame_class(const struct gl_stack *st, int i);
/* The chain of gl_fc_chain_text (op, innermost user frame, outermost),
 * with the op's caller when the op is the user's own frame, and frame
 * `must` (a frame that tells this stack from others shown beside it; -1:
 * none). */
char *gl_stack_chain(const struct gl_stack *st, int must, char *buf, size_t sz);
/* The innermost user frame ("train_step (train.py:19)"), else the op;
 * "(no stack)" for none. */
char *gl_stack_user_frame(const struct gl_stack *st, char *buf, size_t sz);
/* Where a request was made, as a sentence says it: "at " the innermost
 * user frame, else "in " the op (a request made on a thread without a
 * frame of the program, autograd's backward say), "with no stack
 * recorded" for none. */
char *gl_stack_place(const struct gl_stack *st, char *buf, size_t sz);
/* Index of the innermost user frame, else the op; -1 for an empty stack. */
int gl_stack_user_index(const struct gl_stack *st);
/* A frame in a few words (gl_fc_frame_text: a C++ name shortened). */
char *gl_stack_frame_text(const struct gl_stack *st, int i, char *buf, size_t sz);

#endif
