/* commands.h — the verbs of the gpuledger command. Each takes the
 * arguments after its name and returns the process exit code:
 * 0 success, 1 a check failed (gate), 2 bad usage or bad input. */
#ifndef GL_COMMANDS_H
#define GL_COMMANDS_H

#include <stdio.h>

int cmd_run(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_holes(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);

struct gl_run;
struct gl_rules;
/* Load every database named; on a bad one print its one-line error and
 * return -1 (the caller exits 2). */
int gl_load_all(int argc, char **argv, struct gl_run ***runs);
/* Built-in rules, or the file given with --rules; -1 after printing why. */
int gl_rules_from_opt(const char *path, struct gl_rules *rules);

/* Print "gpuledger: <DB>: N events, peak …" for one database on f (the
 * closing line of `gpuledger run` goes to stderr, `summary` to stdout); 0,
 * or 2 after printing why on stderr. */
int gl_print_db_summary(FILE *f, const char *path);

#endif
