/* tr2_quote.c: strings in the NORMAL and PERF formats (see tr2_quote.h). */
#include <string.h>
#include "tr2_buf.h"
#include "tr2_quote.h"

static const char hex[] = "0123456789abcdef";

static int needs_escape(unsigned char c)
{
	return c < 0x20 && c != '\t';
}

/* Appends s[0..n) escaping control bytes. */
static void text_add_n(struct tr2_buf *b, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t run = i;
		unsigned char c;

		while (run < n && !needs_escape((unsigned char)s[run]))
			run++;
		if (run > i)
			tr2_buf_put(b, s + i, run - i);
		if (run == n)
			break;
		c = (unsigned char)s[run];
		if (c == '\n') {
			tr2_buf_put(b, "\\n", 2);
		} else if (c == '\r') {
			tr2_buf_put(b, "\\r", 2);
		} else {
			char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

			tr2_buf_put(b, e, 4);
		}
		i = run + 1;
	}
}

void tr2_text_add(struct tr2_buf *b, const char *s)
{
	if (s)
		text_add_n(b, s, strlen(s));
}

/* git's quote.c: characters that need no quoting besides ASCII letters and digits. */
static int is_pretty_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("+,-./:=@_^", c));
}

/* git's sq_quote_buf(): 'abc', with ' and ! closed, backslashed and reopened. */
static void sq_quote(struct tr2_buf *b, const char *s)
{
	tr2_buf_putc(b, '\'');
	while (*s) {
		size_t len = strcspn(s, "'!");

		text_add_n(b, s, len);
		s += len;
		while (*s == '\'' || *s == '!') {
			char q[4] = { '\'', '\\', *s++, '\'' };

			tr2_buf_put(b, q, 4);
		}
	}
	tr2_buf_putc(b, '\'');
}

void tr2_sq_quote_pretty(struct tr2_buf *b, const char *s)
{
	const char *p;

	if (!s || !*s) {
		tr2_buf_put(b, "''", 2);
		return;
	}
	for (p = s; *p; p++) {
		if (!is_pretty_ok((unsigned char)*p)) {
			sq_quote(b, s);
			return;
		}
	}
	/* every byte is printable ASCII: nothing to escape */
	tr2_buf_put(b, s, (size_t)(p - s));
}

void tr2_sq_quote_argv_pretty(struct tr2_buf *b, const char *const *argv)
{
	if (!argv)
		return;
	for (int i = 0; argv[i]; i++) {
		if (i)
			tr2_buf_putc(b, ' ');
		tr2_sq_quote_pretty(b, argv[i]);
	}
}
