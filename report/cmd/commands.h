/* commands.h — the verbs of the gpuledger command: what each says about
 * itself (its spec: help, formats, options) and its run function, which
 * main.c's command table pairs with what it needs. A run function returns
 * the process exit code: 0 success, 1 a check failed (gate), 2 bad usage
 * or bad input. `run` (the launcher) parses its own command line. */
#ifndef GL_COMMANDS_H
#define GL_COMMANDS_H

#include "cli.h"

int cmd_run(int argc, char **argv);

#define GL_VERB(name)                                                                                             \
    extern const struct gl_cmd_spec gl_##name##_spec;                                                          \
    int cmd_##name(struct gl_cli *cli);
GL_VERB(summary)
GL_VERB(report)
GL_VERB(leaks)
GL_VERB(holes)
GL_VERB(gate)
GL_VERB(diff)
GL_VERB(export)
#undef GL_VERB

#endif
