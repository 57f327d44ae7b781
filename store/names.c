/* names.c — text names of the numeric codes in gl_event.h. */
#include "gl_event.h"

#include <stddef.h>

const char *gl_op_name(int op)
{
    switch (op) {
#define GL_X(name, id, text, ...)                                                  \
    case id:                                                                  \
        return text;
        GL_OPS(GL_X)
#undef GL_X
    }
    return "?";
}

const char *gl_kind_name(int kind)
{
    switch (kind) {
#define GL_X(name, id, text, ...)                                                  \
    case id:                                                                  \
        return text;
        GL_KINDS(GL_X)
#undef GL_X
    }
    return "?";
}

const char *gl_api_name(int api)
{
    switch (api) {
#define GL_X(name, id, text, ...)                                         \
    case id:                                                                   \
        return text;
        GL_APIS(GL_X)
#undef GL_X
    }
    return "?";
}

const char *gl_tag_name(int tag)
{
    switch (tag) {
#define GL_X(name, id, text)                                                       \
    case id:                                                                  \
        return text;
        GL_TAGS(GL_X)
#undef GL_X
    }
    return NULL;
}
