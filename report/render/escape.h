/* escape.h — the one place where text that gpuledger did not write itself
 * (symbols, file names, module paths, labels, command lines, host names,
 * rule categories, database paths) is made safe for an output format.
 * Every verb writes such text through these functions and nothing else
 * escapes.
 *
 * Any byte may arrive: invalid UTF-8, control characters, terminal escape
 * sequences, quotes, separators, newlines. Printable valid UTF-8 passes
 * unchanged in every format; what each format does with the rest is said
 * below. Visible escapes are \xNN for a control byte or a byte that is not
 * UTF-8, and \uNNNN for a C1 control or a bidirectional override. */
#ifndef GL_ESCAPE_H
#define GL_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Text for a terminal: control characters (C0, DEL, C1), bytes that are
 * not UTF-8, line and paragraph separators and bidirectional overrides as
 * visible escapes. NULL prints nothing. */
void gl_text_str(FILE *f, const char *s);
/* The same into buf (for printf field widths); returns buf. */
const char *gl_text_buf(const char *s, char *buf, size_t sz);
/* A JSON string with its quotes ("null" for NULL), always valid UTF-8:
 * a byte that is not UTF-8 becomes U+FFFD, control characters and
 * U+2028/U+2029 are \u-escaped. */
void gl_json_str(FILE *f, const char *s);
/* The same, for JSON inside an HTML <script> element (the HTML report's
 * data): also < > & as \u escapes, so no text can end the element or open
 * a comment there. */
void gl_json_script_str(FILE *f, const char *s);
/* s as valid UTF-8 (a byte that is not UTF-8 becomes U+FFFD; nothing else
 * changes) into buf, cut at a character boundary if it does not fit; returns
 * its length. For binary formats that carry UTF-8 (the memory_viz pickle). */
size_t gl_utf8_buf(const char *s, char *buf, size_t sz);
/* XML or HTML text or attribute value: & < > " ' as references, tab,
 * newline and CR as character references, and what XML 1.0 forbids even
 * as a reference (other C0 controls, U+FFFE, U+FFFF, bytes that are not
 * UTF-8) as visible escapes. */
void gl_xml_str(FILE *f, const char *s);
/* A CSV text cell (RFC 4180), always quoted: a cell starting with = + - @
 * TAB or CR gets a leading ' (OWASP: a spreadsheet would run it as a
 * formula); control characters and bytes that are not UTF-8 as visible
 * escapes, so a row is one line. */
void gl_csv_str(FILE *f, const char *s);
/* One frame of a folded-stack line: as text, and the format's separators
 * replaced (';' -> ':', ' ' -> '_'). */
void gl_folded_str(FILE *f, const char *s);

#endif
