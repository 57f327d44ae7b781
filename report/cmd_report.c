/* cmd_report.c — `gpuledger report DB...`: the one-screen summary (text),
 * the full answer as JSON (a dossier per database, dossier.c, rendered by
 * render_text.c / render_json.c), or the interactive HTML page
 * (html_app.c). */
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "dossier.h"
#include "help.h"
#include "html_app.h"

const struct gl_cmd_spec gl_report_spec = {.usage = gl_usage_report, .formats = "text|json|html", .top = 10};

int cmd_report(struct gl_cli *cli)
{
    size_t n = (size_t)cli->npaths;
    if (gl_cli_format(cli, "html")) {
        struct gl_html_opts ho = {&cli->rules, cli->device, NULL, 0, 0};
        return gl_render_html_app(cli->out, cli->runs, n, NULL, &ho) ? 2 : 0;
    }
    struct gl_dossier *ds = calloc(n, sizeof *ds);
    if (!ds)
        return 2;
    struct gl_dossier_opts o = {cli->device, &cli->rules};
    for (size_t i = 0; i < n; i++)
        gl_dossier_build(&ds[i], cli->runs[i], &o);
    if (gl_cli_format(cli, "json"))
        gl_render_json(cli->out, ds, n, cli->top);
    else
        gl_render_text(cli->out, ds, n, cli->top);
    for (size_t i = 0; i < n; i++)
        gl_dossier_free(&ds[i]);
    free(ds);
    return 0;
}
