/* strmap.h — ids for strings: the first time a string is seen it gets the
 * next id (0, 1, 2, …), later it gets the same one. For deduplicating
 * frames and stack chains in the report's exports. */
#ifndef GL_STRMAP_H
#define GL_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "u64map.h"

struct gl_strmap {
    struct gl_u64map idx; /* hash (probed) -> id */
    char **keys;
    size_t n, cap;
};

void gl_strmap_init(struct gl_strmap *m);
void gl_strmap_free(struct gl_strmap *m);
/* Id of key, adding it when new (*added = 1); -1 on out of memory. */
int64_t gl_strmap_id(struct gl_strmap *m, const char *key, int *added);

#endif
