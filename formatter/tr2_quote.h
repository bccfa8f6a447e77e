/* tr2_quote.h: how the NORMAL and PERF targets write strings.  Private to
 * formatter/.
 *
 * git writes strings into these formats as they are, so a message holding a
 * newline spills onto the next lines (seeds/000 "NORMAL Format" says so).
 * tr2 keeps every event on one line instead: each byte below 0x20 other than
 * tab is written as a visible escape, "\n" and "\r" for LF and CR, "\xHH"
 * (two lowercase hex digits) for the others.  Strings without such bytes --
 * everything git itself writes in practice -- come out exactly as git writes
 * them; backslashes are not doubled, so "\n" in the output is ambiguous with
 * a literal backslash-n in the input (readability over reversibility; the
 * EVENT format is the lossless one).  Bytes >= 0x80, valid UTF-8 or not,
 * pass through as git passes them.
 */
#ifndef TR2_QUOTE_H
#define TR2_QUOTE_H

#include "tr2_tgt.h"

/* Appends s with control bytes escaped as described above; NULL appends nothing. */
void tr2_text_add(struct tr2_buf *b, const char *s);

/*
 * Appends s quoted for a shell only when needed, as git's
 * sq_quote_buf_pretty() (quote.c): "" becomes '', a string of ASCII letters,
 * digits and "+,-./:=@_^" stays bare, anything else is wrapped in single
 * quotes with ' and ! written as '\'' and '\!'.  Control bytes are then
 * escaped as tr2_text_add does.  NULL is treated as "".
 */
void tr2_sq_quote_pretty(struct tr2_buf *b, const char *s);

/*
 * Appends the elements of the NULL-terminated argv, each through
 * tr2_sq_quote_pretty, separated by one space, as git's
 * sq_append_quote_argv_pretty().  NULL argv appends nothing.
 */
void tr2_sq_quote_argv_pretty(struct tr2_buf *b, const char *const *argv);

#endif
