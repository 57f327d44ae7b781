/* retention.c — gpuledger_retention (gpuledger.h): one path of what keeps
 * GPU memory alive, from the Python package's retention finder, as an event
 * of its own on the ring (its text where a stack would be; the writer puts
 * it in the retention table, store/retention.h). Never called on a wrapped
 * call's path. */
#include <string.h>

#include "gpuledger.h"
#include "recorder.h"
#include "retention.h"
#include "state.h"

/* Bytes of s that fit in room, not cutting a UTF-8 character. */
static size_t fit(const char *s, size_t len, size_t room)
{
    if (len <= room)
        return len;
    size_t n = room;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

GL_EXPORT int gpuledger_retention(int moment, int64_t step, uint64_t ptr, uint64_t bytes, uint64_t elapsed_us,
                                  int complete, const char *path, const char *root_file, int root_line)
{
    _Static_assert((int)GPULEDGER_RETENTION_OOM == (int)GL_RETENTION_OOM &&
                       (int)GPULEDGER_RETENTION_STEP == (int)GL_RETENTION_STEP &&
                       (int)GPULEDGER_RETENTION_EXIT == (int)GL_RETENTION_EXIT,
                   "same numbers");
    if (!path || !gl_retention_moment_name(moment))
        return -1;
    if (!root_file)
        root_file = "";
    if (!gl_enter()) {
        gl_leave();
        return -1;
    }
    struct gl_call c = {.api = GL_API_gpuledger_retention, .device = -1};
    struct gl_claim cl;
    gl_claim_nostack(&cl, &c);
    if (!cl.ev) { /* dropped (counted) or not recording */
        gl_leave();
        return -1;
    }
    /* "path\0root_file\0" in the slot's words; what does not fit is cut
     * (flag GL_EVF_CUT): the root file to at most half of them */
    size_t cap = (size_t)gl_st.queue.slot_words * sizeof(uintptr_t);
    size_t plen = strlen(path), flen = strlen(root_file);
    size_t room = cap >= 2 ? cap - 2 : 0;
    size_t fn = fit(root_file, flen, room / 2); /* at most half the room */
    size_t pn = fit(path, plen, room - fn);
    char *out = (char *)cl.ev->ips;
    memcpy(out, path, pn);
    out[pn] = 0;
    memcpy(out + pn + 1, root_file, fn);
    out[pn + 1 + fn] = 0;
    cl.ev->aux = pn + fn + 2;
    cl.ev->depth = 0;
    struct gl_retention_rec r = {.moment = moment, .root_line = root_line, .complete = complete,
                                 .cut = pn < plen || fn < flen, .step = step, .ptr = ptr, .bytes = bytes,
                                 .elapsed_us = elapsed_us};
    gl_retention_pack(cl.ev, &r);
    int cut = r.cut;
    gl_publish(&cl, root_line); /* the event's result field holds the root's line */
    gl_leave();
    return cut;
}
