/* html_app.c — see html_app.h. The page: a strict Content-Security-Policy
 * (nothing may be fetched: no network even if a string in the data tried),
 * the CSS, the data in a <script type="application/json"> element, then
 * the scripts in order. */
#include "html_app.h"

#include "escape.h"

/* generated from report/html/ by embed_assets (meson custom_target) */
extern const char gl_asset_app_css[];
extern const char gl_asset_format_js[];
extern const char gl_asset_model_js[];
extern const char gl_asset_timeline_js[];
extern const char gl_asset_flame_js[];
extern const char gl_asset_panels_js[];
extern const char gl_asset_app_js[];

void gl_render_html_begin(FILE *f, const struct gl_run *lone)
{
    fputs("<!doctype html>\n<html lang=en><head><meta charset=utf-8>\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=viewport content=\"width=device-width,initial-scale=1\">\n<title>gpuledger report",
          f);
    if (lone) {
        fputs(" — ", f);
        gl_xml_str(f, lone->cmdline);
    }
    fprintf(f, "</title>\n<style>\n%s</style>\n</head><body>\n"
               "<noscript>This report is drawn by JavaScript, which is off. "
               "<code>gpuledger report DB</code> prints the same answers as text.</noscript>\n"
               "<div id=app></div>\n<script type=\"application/json\" id=gl-data>\n"
               "{\"format\":\"gpuledger-report\",\"version\":1,\"gpuledger_version\":\"" GL_VERSION
               "\",\"processes\":[",
            gl_asset_app_css);
}

void gl_render_html_process(FILE *f, const struct gl_html_view *v, size_t i)
{
    if (i)
        fputs(",\n", f);
    gl_html_data_write(f, v);
}

void gl_render_html_end(FILE *f)
{
    const char *const scripts[] = {gl_asset_format_js, gl_asset_model_js, gl_asset_timeline_js,
                                   gl_asset_flame_js,  gl_asset_panels_js, gl_asset_app_js};
    fputs("]}\n</script>\n<script>\n", f);
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++)
        fputs(scripts[i], f);
    fputs("</script>\n</body></html>\n", f);
}
