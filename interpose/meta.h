/* meta.h — how a part of the library hands its facts to the run's meta
 * table: the writer calls each part's gl_*_meta(put, ctx) and stores what
 * it puts, so the keys and their wording live with the part that owns the
 * fact (clock.c, queue.c, config.c, pyframes.c, unwind.c). */
#ifndef GL_META_H
#define GL_META_H

typedef void (*gl_meta_put)(void *ctx, const char *key, const char *value);

#endif
