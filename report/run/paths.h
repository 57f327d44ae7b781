/* paths.h — where gpuledger's installed parts are, found from the running
 * executable: relative to it first (an installation moved as a whole, or
 * one made with `meson install --destdir`), then where they were
 * configured to go. */
#ifndef GL_PATHS_H
#define GL_PATHS_H

#include <stddef.h>

/* The directory of the running executable ("" if unknown). */
void gl_exe_dir(char *out, size_t sz);
/* leaf (a file or directory name) inside dir, a configured install
 * directory: EXE_DIR/../<dir relative to the prefix>/leaf, else dir/leaf.
 * 0 with the path in out when it exists. */
int gl_find_installed(const char *dir, const char *leaf, char *out, size_t sz);

#endif
