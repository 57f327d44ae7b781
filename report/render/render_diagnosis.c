/* render_diagnosis.c — see render_diagnosis.h. Text: "diagnosis:", then
 * each finding numbered, its evidence and its remedy indented under it. */
#include "render_diagnosis.h"

#include "escape.h"

void gl_diagnosis_text(FILE *f, const struct gl_diagnosis *dg)
{
    if (!dg->n)
        return;
    fputs("diagnosis:\n", f);
    for (size_t i = 0; i < dg->n; i++) {
        const struct gl_finding *x = &dg->v[i];
        fprintf(f, "  %zu. ", i + 1);
        gl_text_str(f, x->sentence);
        fputc('\n', f);
        for (int k = 0; k < x->nevidence; k++) {
            fputs("     evidence: ", f);
            gl_text_str(f, x->evidence[k]);
            fputc('\n', f);
        }
        fputs("     remedy: ", f);
        gl_text_str(f, x->remedy);
        fputc('\n', f);
    }
}

void gl_diagnosis_json(struct gl_json *j, const char *key, const struct gl_diagnosis *dg)
{
    gl_jw_arr(j, key);
    for (size_t i = 0; i < dg->n; i++) {
        const struct gl_finding *x = &dg->v[i];
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "kind", x->kind);
        if (x->verdict)
            gl_jw_str(j, "verdict", x->verdict);
        gl_jw_i64(j, "device", x->device);
        if (x->seq)
            gl_jw_i64(j, "seq", x->seq);
        else
            gl_jw_null(j, "seq");
        if (x->step >= 0)
            gl_jw_i64(j, "step", x->step);
        else
            gl_jw_null(j, "step");
        gl_jw_u64(j, "bytes", x->bytes);
        gl_jw_str(j, "sentence", x->sentence);
        gl_jw_arr(j, "evidence");
        for (int k = 0; k < x->nevidence; k++)
            gl_jw_str(j, NULL, x->evidence[k]);
        gl_jw_end(j);
        gl_jw_str(j, "remedy", x->remedy);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}
