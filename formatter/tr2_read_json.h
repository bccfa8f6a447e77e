/* tr2_read_json.h: the JSON layer of the EVENT-line reader (tr2_read_event.c):
 * one line's top-level object, parsed by simdjson's On Demand API
 * (tr2_read_json.cc, C++) and handed to C as a flat array of fields.
 * Private to formatter/; used by tr2-fmt.  tr2_read_json.cc also defines
 * tr2_json_is_valid (tr2_json.h).
 *
 * On Demand parses only what it is asked for; this layer asks for every value
 * of the line, nested ones included, so that a line is accepted only when it
 * is one well-formed JSON text (RFC 8259) in valid UTF-8, as a DOM parser
 * would check.
 */
#ifndef TR2_READ_JSON_H
#define TR2_READ_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tr2_jtype { TR2_J_NULL, TR2_J_BOOL, TR2_J_INT, TR2_J_DOUBLE, TR2_J_STRING, TR2_J_ARRAY, TR2_J_OBJECT };

/* One value of the top-level object.  Every pointer stays valid until the
 * next tr2_jline_parse() on the same parser. */
struct tr2_jval {
	enum tr2_jtype type;
	bool nul;           /* STRING: text holds a NUL byte ("\u0000"); ARRAY: an element does */
	bool big;           /* INT: beyond int64_t (i is then 0) */
	bool b;             /* BOOL */
	bool in_place;      /* private: a STRING left in the line buffer */
	/*
	 * STRING: the unescaped bytes.  Any other type: the value's JSON text
	 * as the line wrote it, without the whitespace around it.  len bytes,
	 * then a NUL (written over the closing quote or the byte after the
	 * text, in the line buffer, once the line is parsed).
	 */
	char *text;
	size_t len;
	union {
		int64_t i;      /* INT */
		double d;       /* DOUBLE */
	};
	/* ARRAY: n elements; when every one is a string, strv holds them as STRING
	 * text (NULL-terminated vector) and strv_len their lengths, else strv is
	 * NULL. */
	char **strv;
	size_t *strv_len;
	size_t n;
};

/* One key of the top-level object, unescaped (key_len bytes, not
 * NUL-terminated, valid until the next parse; on a line with invalid UTF-8,
 * as mapped), and its value.  Keys come in the line's order, duplicates
 * included. */
struct tr2_jfield {
	const char *key;
	size_t key_len;
	struct tr2_jval v;
};

struct tr2_jline;

/* Creates a parser (simdjson's On Demand parser and its buffers, grown to the
 * longest line seen).  Aborts on allocation failure. */
struct tr2_jline *tr2_jline_new(void);

/* Frees the parser; NULL is allowed. */
void tr2_jline_free(struct tr2_jline *j);

/*
 * Parses the len bytes at line (need not be NUL-terminated; copied first, so
 * simdjson's padding is this layer's business) as one JSON object, optionally
 * surrounded by spaces.  Nesting deeper than 64 arrays and objects is
 * refused.
 *
 * Invalid UTF-8 is accepted and comes out unchanged in text and strv,
 * because git writes non-UTF-8 arguments and paths as raw bytes.  simdjson
 * refuses a document that is not UTF-8 as a whole, so such a line takes a
 * slow path: each byte >= 0x80 that does not start a valid sequence (and
 * each byte of a literal U+10FF80..U+10FFFF) is replaced by the code point
 * U+10FF00 + byte, the line is parsed again, and those code points are
 * turned back into their bytes in the results.  One ambiguity remains, on
 * such lines only: U+10FF80..U+10FFFF written as \u escapes (private use
 * code points nobody writes) come back as single bytes too.
 *
 * Returns the number of fields (>= 0) with *out pointing to them, or:
 *   TR2_J_ENOTOBJ  the text is one JSON value but not an object
 *   TR2_J_EJSON    not JSON; tr2_jline_error() says why and where
 */
#define TR2_J_ENOTOBJ (-1)
#define TR2_J_EJSON (-2)
long tr2_jline_parse(struct tr2_jline *j, const char *line, size_t len, struct tr2_jfield **out);

/*
 * After TR2_J_EJSON: the reason, one line without newline, e.g. "truncated
 * JSON" or "invalid JSON at column 12: Problem while parsing a number"
 * (simdjson's message); columns count bytes of the line from 1.
 */
const char *tr2_jline_error(const struct tr2_jline *j);

#ifdef __cplusplus
}
#endif

#endif
