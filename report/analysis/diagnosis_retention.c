/* diagnosis_retention.c — what keeps a finding's memory alive, as
 * evidence: the one place where the diagnosis reads the retention paths
 * the gpuledger package records (the `retention` table: pid, moment,
 * step, ptr = a tensor storage's data_ptr = a block's address, bytes,
 * path). Until the model loads that table this adds nothing; then: for
 * each row whose ptr is one of f->blocks (the moment nearest f->seq
 * first), add "kept alive by: PATH" with gl_finding_evidence(). */
#include "diagnosis.h"
#include "dossier.h"

void gl_finding_kept_alive(struct gl_dossier *d, struct gl_finding *f)
{
    (void)d;
    (void)f;
}
