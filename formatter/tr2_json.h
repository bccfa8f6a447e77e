/* tr2_json.h: JSON text for the EVENT target.  Private to formatter/.
 *
 * Strings from traced programs may hold any bytes; every EVENT line must
 * still be valid JSON (RFC 8259) in UTF-8.
 */
#ifndef TR2_JSON_H
#define TR2_JSON_H

#include <stdbool.h>
#include "tr2_tgt.h"

/*
 * Length of the UTF-8 sequence at s if it is well formed (Unicode Table 3-7),
 * else the negated length of its maximal ill-formed subpart (at least 1).
 * s[0] >= 0x80.  A NUL stops a truncated sequence, being no continuation
 * byte, so nothing past the string's NUL is read.  Also used by tr2-fmt's
 * reader (tr2_read_json.cc) to find the bytes simdjson would refuse.
 */
int tr2_utf8_seq(const unsigned char *s);

/*
 * Appends s as a JSON string, quotes included, escaped as git's json-writer.c
 * (append_quoted_string) does: \" \\ \n \r \t \f \b, other bytes below 0x20
 * as \u00XX with lowercase hex, everything else raw (DEL included).
 *
 * Deviation from git, which copies bytes >= 0x80 as they are: each invalid
 * UTF-8 sequence -- every maximal subpart of an ill-formed sequence, in the
 * sense of Unicode 15 section 3.9 (an unexpected continuation byte, an
 * overlong or surrogate or beyond-U+10FFFF form, a truncated sequence) -- is
 * replaced by one U+FFFD, written as its three UTF-8 bytes EF BF BD.  Valid
 * UTF-8 is copied unchanged.  NULL is written as "".
 */
void tr2_json_add_string(struct tr2_buf *b, const char *s);

/*
 * True when text is exactly one JSON value (object, array, string, number,
 * true, false or null) with optional surrounding whitespace, per RFC 8259,
 * in valid UTF-8 (no overlong forms, surrogates or code points beyond
 * U+10FFFF); false for NULL.  simdjson parses every value of it, with the
 * walk tr2-fmt's reader uses (tr2_read_json.cc).  Beyond RFC 8259's
 * grammar, as its sections 6 and 8.2 allow, refused are: nesting deeper
 * than 255 arrays and objects; numbers whose magnitude rounds beyond
 * DBL_MAX (1e309) or whose exponent has more than 19 digits; \u escapes of
 * unpaired surrogates ("\ud800").  Thread-safe: each thread has its own
 * parser, kept (and grown to the longest text seen) until the thread exits;
 * aborts only if memory runs out.  In libtr2 (the in-process targets),
 * usdt/tr2_json_check.c gives the same answers without simdjson.
 */
bool tr2_json_is_valid(const char *text);

/*
 * Appends a data_json value.  Valid JSON text (tr2_json_is_valid) is embedded
 * as it is, except that line breaks between tokens and the spaces that
 * follow them are dropped -- what git's json-writer does when it embeds a
 * pretty-printed value into a compact line (kill_indent) -- so that the event
 * stays on one line.  Text that is not valid JSON is written as a JSON string
 * instead (deviation: git can only embed JSON it built itself); NULL is
 * written as null.
 */
void tr2_json_add_value(struct tr2_buf *b, const char *text);

#endif
