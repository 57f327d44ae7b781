/* render_diagnosis.h — the diagnosis (diagnosis.h) as text (the opening of
 * `report`) and as the JSON report's "diagnosis" array. */
#ifndef GL_RENDER_DIAGNOSIS_H
#define GL_RENDER_DIAGNOSIS_H

#include <stdio.h>

#include "diagnosis.h"
#include "json.h"

void gl_diagnosis_text(FILE *f, const struct gl_diagnosis *dg);
void gl_diagnosis_json(struct gl_json *j, const char *key, const struct gl_diagnosis *dg);

#endif
