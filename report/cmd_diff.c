/* cmd_diff.c — `gpuledger diff A.db B.db`: what grew between two runs.
 * Stacks are matched across databases by their frames' names (addresses
 * differ from run to run), and compared at each run's peak and at exit. */
#include "cli.h"
#include "commands.h"
#include "help.h"
#include "render.h"

const struct gl_cmd_spec gl_diff_spec = {
    .usage = gl_usage_diff,
    .top = 15,
};

int cmd_diff(struct gl_cli *cli)
{
    struct gl_diff_view v;
    gl_diff_view(&v, cli->runs[0], cli->runs[1]);
    gl_render_diff_text(cli->out, &v, cli->top);
    gl_diff_view_free(&v);
    return 0;
}
