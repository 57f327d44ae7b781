/* json.c — see json.h. */
#include "json.h"
#include "stack_text.h"

#include <inttypes.h>

#include "escape.h"
#include "frames.h"
#include "pool_id.h"

void gl_jw_init(struct gl_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->any[0] = 0;
    j->script = 0;
}

void gl_jw_init_script(struct gl_json *j, FILE *f)
{
    gl_jw_init(j, f);
    j->script = 1;
}

/* The comma and "key": before a member. */
static void member(struct gl_json *j, const char *key)
{
    if (j->depth > 0 && j->any[j->depth - 1])
        fputs(j->lines[j->depth - 1] ? ",\n" : ",", j->f);
    if (j->depth > 0)
        j->any[j->depth - 1] = 1;
    if (key)
        fprintf(j->f, "\"%s\":", key);
}

static void open_level(struct gl_json *j, const char *key, char o, char c, int lines)
{
    member(j, key);
    fputc(o, j->f);
    if (j->depth < GL_JSON_MAX_DEPTH) {
        j->close[j->depth] = c;
        j->any[j->depth] = 0;
        j->lines[j->depth] = (char)lines;
    }
    j->depth++;
}

void gl_jw_obj(struct gl_json *j, const char *key)
{
    open_level(j, key, '{', '}', 0);
}

void gl_jw_arr(struct gl_json *j, const char *key)
{
    open_level(j, key, '[', ']', 0);
}

void gl_jw_arr_lines(struct gl_json *j, const char *key)
{
    open_level(j, key, '[', ']', 1);
}

void gl_jw_end(struct gl_json *j)
{
    if (j->depth <= 0)
        return;
    j->depth--;
    fputc(j->depth < GL_JSON_MAX_DEPTH ? j->close[j->depth] : '}', j->f);
}

void gl_jw_str(struct gl_json *j, const char *key, const char *s)
{
    member(j, key);
    if (j->script)
        gl_json_script_str(j->f, s);
    else
        gl_json_str(j->f, s);
}

void gl_jw_i64(struct gl_json *j, const char *key, int64_t v)
{
    member(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void gl_jw_u64(struct gl_json *j, const char *key, uint64_t v)
{
    member(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void gl_jw_u8s(struct gl_json *j, const char *key, const uint8_t *v, size_t n)
{
    gl_jw_arr(j, key);
    for (size_t i = 0; v && i < n; i++)
        gl_jw_u64(j, NULL, v[i]);
    gl_jw_end(j);
}

void gl_jw_bool(struct gl_json *j, const char *key, int v)
{
    member(j, key);
    fputs(v ? "true" : "false", j->f);
}

void gl_jw_null(struct gl_json *j, const char *key)
{
    member(j, key);
    fputs("null", j->f);
}

void gl_jw_num(struct gl_json *j, const char *key, const char *fmt, double v)
{
    member(j, key);
    fprintf(j->f, fmt, v);
}

void gl_jw_frames(struct gl_json *j, const char *key, const struct gl_stack *st, int max)
{
    gl_jw_arr(j, key);
    for (int i = 0; i < st->n && i < max; i++) {
        const struct gl_frame *fr = gl_stack_frame(st, i);
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "symbol", fr->symbol);
        gl_jw_str(j, "module", fr->module);
        gl_jw_str(j, "file", fr->file);
        if (fr->line > 0)
            gl_jw_i64(j, "line", fr->line);
        else
            gl_jw_null(j, "line");
        gl_jw_u64(j, "offset", (uint64_t)fr->offset);
        gl_jw_bool(j, "python", fr->python);
        gl_jw_str(j, "class", gl_fc_class_name(gl_stack_frame_class(st, i))); /* user, library, allocator */
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

void gl_jw_begin_processes(struct gl_json *j, FILE *f)
{
    gl_jw_init(j, f);
    gl_jw_obj(j, NULL);
    gl_jw_arr(j, "processes");
}

void gl_jw_end_processes(struct gl_json *j)
{
    gl_jw_end(j);
    gl_jw_end(j);
    fputc('\n', j->f);
}

void gl_jw_category(struct gl_json *j, const char *category)
{
    gl_jw_str(j, "category", category);
    uint64_t pool = 0;
    if (!gl_is_private_pool(category, &pool) || !pool)
        return;
    struct gl_pool_id id = gl_pool_id(pool);
    gl_jw_arr(j, "pool_id");
    gl_jw_u64(j, NULL, id.first);
    gl_jw_u64(j, NULL, id.second);
    gl_jw_end(j);
}
