/* cmd_summary.c — `gpuledger summary DB...`: the one line per database
 * that `gpuledger run` prints at the end. A bad database gets its error
 * line and the others are still summarized. */
#include "cli.h"
#include "commands.h"
#include "help.h"
#include "render.h"

const struct gl_cmd_spec gl_summary_spec = {.usage = gl_usage_summary};

int cmd_summary(struct gl_cli *cli)
{
    int rc = 0;
    for (int i = 0; i < cli->npaths; i++)
        if (gl_print_db_summary(cli->out, cli->paths[i]))
            rc = 2;
    return rc;
}
