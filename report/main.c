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
    if (!strcmp(verb, "summary"))
        return cmd_summary(argc - 1, argv + 1);
    fprintf(stderr, "gpuledger: unknown command '%s' (try 'gpuledger --help')\n", verb);
    return 2;
}
