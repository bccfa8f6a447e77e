/* tr2_quote.h: how the NORMAL and PERF targets write strings.  Private to
 * formatter/.
 *
 * git writes strings into these formats as they are, so a message holding a
 * newline spills onto the next lines (seeds/000 "NORMAL Format" says so), and
 * so does tr2: these formats are git's to the byte, including for a program's
 * multi-line error messages.  EVENT is the format for machines; it escapes
 * everything JSON requires.
 */
#ifndef TR2_QUOTE_H
#define TR2_QUOTE_H

#include <string.h>
#include "tr2_buf.h"

/* Appends s as it is; NULL appends nothing.  Inline: most strings of a
 * NORMAL or PERF line go through it. */
static inline void tr2_text_add(struct tr2_buf *b, const char *s)
{
	if (s)
		tr2_buf_put(b, s, strlen(s));
}

/*
 * Appends s quoted for a shell only when needed, as git's
 * sq_quote_buf_pretty() (quote.c): "" becomes '', a string of ASCII letters,
 * digits and "+,-./:=@_^" stays bare, anything else is wrapped in single
 * quotes with ' and ! written as '\'' and '\!'.  NULL is treated as "".
 */
void tr2_sq_quote_pretty(struct tr2_buf *b, const char *s);

/*
 * Appends the elements of the NULL-terminated argv, each through
 * tr2_sq_quote_pretty, separated by one space, as git's
 * sq_append_quote_argv_pretty().  NULL argv appends nothing.
 */
void tr2_sq_quote_argv_pretty(struct tr2_buf *b, const char *const *argv);

#endif
