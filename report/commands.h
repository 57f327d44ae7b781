/* commands.h — the verbs of the gpuledger command. Each takes the
 * arguments after its name and returns the process exit code:
 * 0 success, 1 a check failed (gate), 2 bad usage or bad input. */
#ifndef GL_COMMANDS_H
#define GL_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_summary(int argc, char **argv);

/* Print "gpuledger: <DB>: N events, peak …" for one database; 0 or 2. */
int gl_print_db_summary(const char *path);

#endif
