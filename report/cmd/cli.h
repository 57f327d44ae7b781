/* cli.h — the skeleton every verb of the gpuledger command stands on (like
 * git's command table): main.c lists each verb with what it needs; cli.c
 * parses the options all verbs share, says what is wrong with the command
 * line, loads the rules and the databases, opens -o, runs the verb and
 * cleans up. A verb (cmd_*.c) is its own options and the view it builds. */
#ifndef GL_CLI_H
#define GL_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "frames.h"
#include "model.h"

/* What a verb needs (struct gl_cmd.needs). */
enum {
    GL_NEEDS_DBS = 1u << 0,     /* DB... : one or more, loaded into cli->runs */
    GL_NEEDS_ONE_DB = 1u << 1,  /* exactly one */
    GL_NEEDS_TWO_DBS = 1u << 2, /* exactly two, A (before) and B (after) */
    GL_NEEDS_PATHS = 1u << 3,   /* DB... as paths only: the verb opens each itself */
    GL_NEEDS_RULES = 1u << 4,   /* --rules FILE (or the built-in rules) in cli->rules */
    GL_NEEDS_DEVICE = 1u << 5,  /* --device N (cli->device; -2: every device) */
    GL_NEEDS_TOP = 1u << 6,     /* --top K (cli->top, default spec->top) */
    GL_NEEDS_OUTPUT = 1u << 7,  /* -o, --output FILE: cli->out (stdout without it) */
    GL_NEEDS_FORMAT = 1u << 8,  /* --format, one of spec->formats (cli->format) */
    GL_NEEDS_DISTINCT = 1u << 9, /* a database named twice (the same file) is taken once, with a note */
};

struct gl_cli;

/* What a verb says about itself (in its cmd_*.c). */
struct gl_cmd_spec {
    const char *usage;         /* --help, and on stderr after a usage error */
    const char *formats;       /* --format words, "text|json": the first is the default */
    int format_required;       /* no default: --format must be given */
    int top;                   /* --top default */
    const struct option *opts; /* the verb's own options ({0} ends; NULL: none) */
    /* Take one of them (key = its val): 0, or 2 after saying why. */
    int (*opt)(struct gl_cli *cli, int key, const char *arg);
    unsigned loads;            /* GL_LOAD_* parts its view reads beyond every verb's (model.h) */
    /* After the options (cli->paths set), before loading: 0, or 2 after
     * saying why (NULL: none). */
    int (*check)(struct gl_cli *cli);
    /* Before the options: forget those of an earlier run in this process
     * (the reader's fuzz target runs the verbs again and again; NULL: none). */
    void (*reset)(void);
    /* The verb takes its runs one at a time (gl_cli_run, gl_cli_release),
     * so that with several databases the memory is that of the largest,
     * not of all of them: they are loaded on demand, what the verb writes
     * to stdout is held in a temporary file until every database was read
     * (a bad one among good ones: exit 2 and nothing on stdout), and a
     * --device none of them has is said at the end. One database is
     * loaded before the verb runs, as for any verb. */
    int one_at_a_time;
    /* A one_at_a_time verb that writes nothing before every database was
     * read (gate): stdout is not held, as there is nothing to hold back. */
    int writes_at_end;
    /* For this command line the verb opens the database and -o itself
     * (export --format sqlite copies the file): nothing is loaded and no
     * output opened (NULL: never). */
    int (*opens_itself)(const struct gl_cli *cli);
};

/* A row of the command table (main.c). */
struct gl_cmd {
    const char *name;
    int (*run)(struct gl_cli *cli); /* the exit code: 0, 1 (a check failed), 2 */
    const struct gl_cmd_spec *spec;
    unsigned needs;
};

struct gl_cli {
    const struct gl_cmd *cmd;
    const char *format;     /* one of spec->formats */
    int device;             /* -2: every device */
    int top;
    const char *output, *rules_path;
    struct gl_rules rules;
    int have_rules;
    char **paths;           /* the databases named */
    int npaths;
    struct gl_run **runs;   /* loaded (GL_NEEDS_DBS, _ONE_DB, _TWO_DBS), in the order named; a
                               one_at_a_time verb reads them through gl_cli_run instead */
    struct gl_load load;    /* what the verb asks the load for beyond every verb's (its opt or check) */
    FILE *out;              /* -o FILE or stdout (or the temporary that holds stdout) */
    int lazy;               /* runs loaded on demand (one_at_a_time, several databases) */
    FILE *held;             /* the temporary file standing in for stdout until the end, or NULL */
    unsigned char seen_dev[GL_MAX_DEVICES]; /* devices of the runs loaded so far (--device) */
    int seen_any, seen_device; /* a device seen at all; the --device one seen */
};

/* Everything for one verb: argv[0] is the verb's name. */
int gl_cli_main(const struct gl_cmd *cmd, int argc, char **argv);
/* "gpuledger VERB: message" on stderr; returns 2. */
int gl_cli_fail(const struct gl_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Is the chosen --format this word? */
int gl_cli_format(const struct gl_cli *cli, const char *word);
/* Run i of a one_at_a_time verb, loaded now if it is not (NULL after the
 * one-line error: the verb returns 2). */
struct gl_run *gl_cli_run(struct gl_cli *cli, int i);
/* Free run i (a later gl_cli_run loads it again). */
void gl_cli_release(struct gl_cli *cli, int i);
/* Load one database (also for GL_NEEDS_PATHS verbs): NULL after printing
 * the one-line error (the verb exits 2); rows skipped for breaking an
 * invariant are named in one line on stderr. */
struct gl_run *gl_cli_load(const char *path);
/* The same, and what `what` asks (NULL: nothing more). */
struct gl_run *gl_cli_load_with(const char *path, const struct gl_load *what);
/* `summary`'s line for one database on f (also the closing line of
 * `gpuledger run`): 0, or 2 after saying why. */
int gl_print_db_summary(FILE *f, const char *path);

#endif
