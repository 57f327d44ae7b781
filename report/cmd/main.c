/* main.c — the gpuledger command: the command table, and dispatch to a
 * verb (cli.c does the set-up every verb shares). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "help.h"
#include "out.h"
#include "pool_id.h"
#include "schema.h"

#ifndef GL_VERSION
#define GL_VERSION "0.0.0"
#endif
#ifndef GL_CUDA_VERSION
#define GL_CUDA_VERSION 0
#endif
#ifndef GL_CUPTI_VERSION
#define GL_CUPTI_VERSION 0
#endif

/* Each verb and what it needs (cli.h). */
static const struct gl_cmd commands[] = {
    {"summary", cmd_summary, &gl_summary_spec, GL_NEEDS_PATHS | GL_NEEDS_DISTINCT},
    {"report", cmd_report, &gl_report_spec,
     GL_NEEDS_DBS | GL_NEEDS_RULES | GL_NEEDS_DEVICE | GL_NEEDS_TOP | GL_NEEDS_OUTPUT | GL_NEEDS_FORMAT |
         GL_NEEDS_DISTINCT},
    {"leaks", cmd_leaks, &gl_leaks_spec,
     GL_NEEDS_DBS | GL_NEEDS_RULES | GL_NEEDS_DEVICE | GL_NEEDS_TOP | GL_NEEDS_FORMAT | GL_NEEDS_DISTINCT},
    {"holes", cmd_holes, &gl_holes_spec, GL_NEEDS_DBS | GL_NEEDS_FORMAT | GL_NEEDS_TOP | GL_NEEDS_DISTINCT},
    {"gate", cmd_gate, &gl_gate_spec, GL_NEEDS_DBS | GL_NEEDS_RULES | GL_NEEDS_DISTINCT},
    {"diff", cmd_diff, &gl_diff_spec, GL_NEEDS_DBS | GL_NEEDS_TOP},
    {"export", cmd_export, &gl_export_spec, GL_NEEDS_ONE_DB | GL_NEEDS_RULES | GL_NEEDS_OUTPUT | GL_NEEDS_FORMAT},
};

/* The version, the schema it writes and reads, and the CUDA headers it was
 * built with (cuda.h's CUDA_VERSION, cupti_version.h's CUPTI_API_VERSION). */
static void print_version(void)
{
    printf("gpuledger %s\n", GL_VERSION);
    printf("database schema version %d (reads versions 1 to %d)\n", GL_SCHEMA_VERSION, GL_SCHEMA_VERSION);
    printf("built against CUDA %d.%d (CUDA_VERSION %d), ", GL_CUDA_VERSION / 1000, GL_CUDA_VERSION % 1000 / 10,
           GL_CUDA_VERSION);
    if (GL_CUPTI_VERSION)
        printf("CUPTI API version %d\n", GL_CUPTI_VERSION);
    else
        printf("without CUPTI (built with -Dcupti=disabled or no cupti.h)\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fputs(gl_usage_main, stderr);
        return 2;
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help")) {
        fputs(gl_usage_main, stdout);
        return 0;
    }
    if (!strcmp(verb, "-V") || !strcmp(verb, "--version")) {
        print_version();
        return 0;
    }
    if (!strcmp(verb, "run"))
        return cmd_run(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(verb, commands[i].name))
            return gl_cli_main(&commands[i], argc - 1, argv + 1);
    fprintf(stderr, "gpuledger: unknown command '%s' (try 'gpuledger --help')\n", verb);
    return 2;
}

/* The verb's exit code, 2 when what it wrote on stdout did not all get
 * there (`> /dev/full`). */
int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    gl_pool_labels_free(); /* the private pools' labels, kept for the whole verb */
    return gl_check_stdout() ? 2 : rc;
}
