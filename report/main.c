/* main.c — the gpuledger command: dispatch to a verb. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#ifndef GL_VERSION
#define GL_VERSION "0.0.0"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuledger <command> [options] [args]\n"
            "\n"
            "GPU memory profiler: records every device-memory allocation, free, map and\n"
            "pool operation of a CUDA program with its call stack into SQLite.\n"
            "\n"
            "commands:\n"
            "  run [-o PATTERN] [--] CMD [ARGS...]   profile a program (see 'gpuledger run --help')\n"
            "  report DB...                          peak ledger, categories, timeline, OOMs, holes\n"
            "                                        (--format text|json|html)\n"
            "  leaks DB...                           leak chains; --steps: memory growing every step\n"
            "  holes DB...                           fragmentation of pools and reserved ranges\n"
            "  gate --max-leak-bytes N DB...         CI gate: exit 1 when a limit is broken\n"
            "  diff A.db B.db                        what grew between two runs, by stack\n"
            "  export --format folded|perfetto|csv DB\n"
            "  summary DB...                         one line per database: events, peak, unfreed\n"
            "\n"
            "options:\n"
            "  -h, --help      this text\n"
            "  -V, --version   print the version\n"
            "\n"
            "Each command takes --help. The database schema is documented in README.md.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(verb, "-V") || !strcmp(verb, "--version")) {
        printf("gpuledger %s\n", GL_VERSION);
        return 0;
    }
    if (!strcmp(verb, "run"))
        return cmd_run(argc - 1, argv + 1);
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } verbs[] = {{"summary", cmd_summary}, {"report", cmd_report}, {"leaks", cmd_leaks}, {"holes", cmd_holes},
                 {"gate", cmd_gate},       {"diff", cmd_diff},     {"export", cmd_export}};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (!strcmp(verb, verbs[i].name))
            return verbs[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "gpuledger: unknown command '%s' (try 'gpuledger --help')\n", verb);
    return 2;
}
