/* escape.c — see escape.h. One strict UTF-8 decoder, one classification
 * of what a character is, and per format the few lines that say what
 * becomes of each class. */
#include "escape.h"

#include <stdint.h>
#include <string.h>

/* Where escaped text goes: a stream, or a buffer that keeps whole pieces
 * only (a cut never splits an escape or a UTF-8 sequence). */
struct sink {
    FILE *f;
    char *buf;
    size_t sz, n;
    int full;
};

static void put(struct sink *k, const void *p, size_t n)
{
    if (k->f) {
        fwrite(p, 1, n, k->f);
        return;
    }
    if (k->full || k->n + n >= k->sz) {
        k->full = 1;
        return;
    }
    memcpy(k->buf + k->n, p, n);
    k->n += n;
    k->buf[k->n] = 0;
}

static void puts_(struct sink *k, const char *s)
{
    put(k, s, strlen(s));
}

/* "\xNN" (a byte) or "\uNNNN" (a code point) */
static void visible(struct sink *k, int unicode, uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    char e[6] = {'\\', unicode ? 'u' : 'x'};
    int n = unicode ? 4 : 2;
    for (int i = 0; i < n; i++)
        e[2 + i] = hex[(v >> (4 * (n - 1 - i))) & 15];
    put(k, e, 2 + (size_t)n);
}

/* Length of the UTF-8 sequence at p and its code point in *cp; 0 when the
 * byte at p starts no valid sequence (a stray continuation byte, an
 * overlong form, a surrogate, above U+10FFFF, cut short). */
static size_t utf8(const unsigned char *p, uint32_t *cp)
{
    size_t n;
    uint32_t c, min;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    if ((p[0] & 0xe0) == 0xc0) {
        n = 2, c = p[0] & 0x1fu, min = 0x80;
    } else if ((p[0] & 0xf0) == 0xe0) {
        n = 3, c = p[0] & 0x0fu, min = 0x800;
    } else if ((p[0] & 0xf8) == 0xf0) {
        n = 4, c = p[0] & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        c = c << 6 | (p[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

enum cls {
    PLAIN,
    C0,        /* U+0000..U+001F and DEL */
    C1,        /* U+0080..U+009F: 0x9b is CSI to some terminals */
    LINE_SEP,  /* U+2028, U+2029 */
    BIDI,      /* overrides and isolates that reorder what a reader sees */
    NONCHAR,   /* U+FFFE, U+FFFF: not allowed in XML */
    NOT_UTF8,  /* one byte that starts no valid sequence */
};

static enum cls classify(size_t n, uint32_t c)
{
    if (!n)
        return NOT_UTF8;
    if (c < 0x20 || c == 0x7f)
        return C0;
    if (c >= 0x80 && c < 0xa0)
        return C1;
    if (c == 0x2028 || c == 0x2029)
        return LINE_SEP;
    if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f || c == 0x061c)
        return BIDI;
    if (c == 0xfffe || c == 0xffff)
        return NONCHAR;
    return PLAIN;
}

enum fmt { TEXT, FOLDED, JSON, JSON_SCRIPT, XML, CSV, UTF8 };

/* One character (or one bad byte) of s, escaped for fmt. */
static void one(struct sink *k, enum fmt fmt, const unsigned char *p, size_t n, uint32_t c)
{
    enum cls cl = classify(n, c);
    switch (fmt) {
    case UTF8:
        if (cl == NOT_UTF8)
            puts_(k, "\xef\xbf\xbd"); /* U+FFFD */
        else
            put(k, p, n);
        return;
    case JSON_SCRIPT:
        if (c == '<' || c == '>' || c == '&') { /* nothing can end the <script> element */
            visible(k, 1, c);
            return;
        }
        /* fall through */
    case JSON:
        if (cl == NOT_UTF8)
            puts_(k, "\\ufffd");
        else if (c == '"' || c == '\\')
            put(k, c == '"' ? "\\\"" : "\\\\", 2);
        else if (c == '\n' || c == '\t')
            put(k, c == '\n' ? "\\n" : "\\t", 2);
        else if ((cl == C0 && c != 0x7f) || cl == LINE_SEP)
            visible(k, 1, c);
        else
            put(k, p, n);
        return;
    case XML:
        if (cl == NOT_UTF8) {
            visible(k, 0, *p);
            return;
        }
        switch (c) {
        case '&': puts_(k, "&amp;"); return;
        case '<': puts_(k, "&lt;"); return;
        case '>': puts_(k, "&gt;"); return;
        case '"': puts_(k, "&quot;"); return;
        case '\'': puts_(k, "&#39;"); return;
        case '\t': puts_(k, "&#9;"); return;
        case '\n': puts_(k, "&#10;"); return;
        case '\r': puts_(k, "&#13;"); return;
        default: break;
        }
        if (cl == C0 && c != 0x7f)
            visible(k, 0, c);
        else if (cl == NONCHAR)
            visible(k, 1, c);
        else
            put(k, p, n);
        return;
    case CSV:
        if (c == '"' && cl == PLAIN) {
            put(k, "\"\"", 2);
            return;
        }
        break;
    case FOLDED:
        if (c == ';' || c == ' ') {
            put(k, c == ';' ? ":" : "_", 1);
            return;
        }
        break;
    case TEXT:
        break;
    }
    /* text, folded, csv: everything that is not plain, visibly */
    if (cl == NOT_UTF8 || cl == C0)
        visible(k, 0, cl == NOT_UTF8 ? *p : c);
    else if (cl != PLAIN && cl != NONCHAR)
        visible(k, 1, c);
    else
        put(k, p, n);
}

static void escape(struct sink *k, enum fmt fmt, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
        uint32_t c = 0;
        size_t n = utf8(p, &c);
        one(k, fmt, p, n, c);
        p += n ? n : 1;
    }
}

void gl_text_str(FILE *f, const char *s)
{
    struct sink k = {.f = f};
    escape(&k, TEXT, s);
}

const char *gl_text_buf(const char *s, char *buf, size_t sz)
{
    struct sink k = {.buf = buf, .sz = sz};
    if (sz)
        buf[0] = 0;
    escape(&k, TEXT, s);
    return buf;
}

void gl_folded_str(FILE *f, const char *s)
{
    struct sink k = {.f = f};
    escape(&k, FOLDED, s);
}

void gl_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    struct sink k = {.f = f};
    fputc('"', f);
    escape(&k, JSON, s);
    fputc('"', f);
}

void gl_json_script_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    struct sink k = {.f = f};
    fputc('"', f);
    escape(&k, JSON_SCRIPT, s);
    fputc('"', f);
}

size_t gl_utf8_buf(const char *s, char *buf, size_t sz)
{
    struct sink k = {.buf = buf, .sz = sz};
    if (sz)
        buf[0] = 0;
    escape(&k, UTF8, s);
    return k.n;
}

void gl_xml_str(FILE *f, const char *s)
{
    struct sink k = {.f = f};
    escape(&k, XML, s);
}

void gl_csv_str(FILE *f, const char *s)
{
    struct sink k = {.f = f};
    fputc('"', f);
    if (s && *s && strchr("=+-@\t\r", *s))
        fputc('\'', f);
    escape(&k, CSV, s);
    fputc('"', f);
}
