/* json.h — the one JSON emitter of the report: objects and arrays nest,
 * commas and keys are written for the caller, strings go through
 * escape.h's gl_json_str. Output is compact (no spaces), as every verb's
 * JSON has always been. Keys are gpuledger's own words (not escaped). */
#ifndef GL_JSON_H
#define GL_JSON_H

#include <stdint.h>
#include <stdio.h>

#define GL_JSON_MAX_DEPTH 32

struct gl_json {
    FILE *f;
    int depth;
    char close[GL_JSON_MAX_DEPTH]; /* '}' or ']' of each open level */
    char any[GL_JSON_MAX_DEPTH];   /* the level has a member: the next one gets a comma */
    char lines[GL_JSON_MAX_DEPTH]; /* the level's members are separated by ",\n" */
    int script;                    /* strings safe inside an HTML <script> (gl_json_script_str) */
};

struct gl_stack;

void gl_jw_init(struct gl_json *j, FILE *f);
/* The same for JSON that goes inside an HTML <script> element. */
void gl_jw_init_script(struct gl_json *j, FILE *f);
/* Open an object / array: as the value of key inside an object, or as the
 * next element of an array (key NULL). */
void gl_jw_obj(struct gl_json *j, const char *key);
void gl_jw_arr(struct gl_json *j, const char *key);
/* An array whose elements stand one a line (",\n" between them), for
 * large files that tools and people read line by line. */
void gl_jw_arr_lines(struct gl_json *j, const char *key);
/* Close the innermost object or array. */
void gl_jw_end(struct gl_json *j);
/* Members (key NULL inside an array). */
void gl_jw_str(struct gl_json *j, const char *key, const char *s); /* NULL: null */
void gl_jw_i64(struct gl_json *j, const char *key, int64_t v);
void gl_jw_u64(struct gl_json *j, const char *key, uint64_t v);
void gl_jw_bool(struct gl_json *j, const char *key, int v);
void gl_jw_null(struct gl_json *j, const char *key);
/* An array of n small numbers (v NULL: empty), e.g. a heap's occupancy cells. */
void gl_jw_u8s(struct gl_json *j, const char *key, const uint8_t *v, size_t n);
/* A number with a printf format for one double, e.g. "%.6f". */
void gl_jw_num(struct gl_json *j, const char *key, const char *fmt, double v);
/* {"processes":[ ... ]} and a newline: the frame of every verb's JSON
 * with one object per database. */
void gl_jw_begin_processes(struct gl_json *j, FILE *f);
void gl_jw_end_processes(struct gl_json *j);
/* A stack's frames (at most max) as an array of {symbol, module, file,
 * line, offset, python}. */
void gl_jw_frames(struct gl_json *j, const char *key, const struct gl_stack *st, int max);
/* "category": its name, and after it, for a private pool's
 * ("private_pool (0, 1)"), "pool_id": [0, 1]. */
void gl_jw_category(struct gl_json *j, const char *category);

#endif
