/* tr2_quote.c: strings in the NORMAL and PERF formats (see tr2_quote.h). */
#include <string.h>
#include "tr2_buf.h"
#include "tr2_quote.h"

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

		tr2_buf_put(b, s, len);
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
