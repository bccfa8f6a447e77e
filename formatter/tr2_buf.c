/* tr2_buf.c: the growable line buffer of the targets.  A target's buffer is
 * reused for every event, so after the first few lines no event allocates. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_buf.h"

void tr2_buf_grow(struct tr2_buf *b, size_t n)
{
	size_t need = b->len + n + 1;
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		abort();
	b->p = p;
	b->cap = cap;
}

void tr2_buf_add(struct tr2_buf *b, const void *data, size_t len)
{
	tr2_buf_put(b, data, len);
}

void tr2_buf_adds(struct tr2_buf *b, const char *s)
{
	tr2_buf_add(b, s, strlen(s));
}

void tr2_buf_addch(struct tr2_buf *b, char c)
{
	tr2_buf_putc(b, c);
}

void tr2_buf_addf(struct tr2_buf *b, const char *fmt, ...)
{
	size_t room = 64;

	for (;;) {
		char *dst = tr2_buf_reserve(b, room);
		va_list ap;
		int n;

		va_start(ap, fmt);
		n = vsnprintf(dst, room + 1, fmt, ap);
		va_end(ap);
		if (n < 0)
			abort();
		if ((size_t)n <= room) {
			b->len += (size_t)n;
			return;
		}
		room = (size_t)n;
	}
}

void tr2_buf_free(struct tr2_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

const char tr2_digit_pairs[200] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Counting the digits first lets them be written in place, without the
 * copy out of a scratch array. */
size_t tr2_int_digits(char out[20], int64_t v)
{
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	size_t n = (v < 0) + tr2_digit_count(u);

	tr2_digits_before(out + n, u);
	if (v < 0)
		out[0] = '-';
	return n;
}

void tr2_buf_add_uint(struct tr2_buf *b, uint64_t v)
{
	char *p = tr2_buf_reserve(b, 20);
	size_t n = tr2_digit_count(v);

	tr2_digits_before(p + n, v);
	b->len += n;
	tr2_buf_terminate(b);
}

void tr2_buf_add_int(struct tr2_buf *b, int64_t v)
{
	b->len += tr2_int_digits(tr2_buf_reserve(b, 20), v);
	tr2_buf_terminate(b);
}

void tr2_buf_add_secs(struct tr2_buf *b, int64_t us, int width)
{
	size_t w = width > 0 ? (size_t)width : 0;
	char *p = tr2_buf_reserve(b, w + TR2_SECS_MAX);

	b->len = (size_t)(tr2_put_secs(p, us, w) - b->p);
	tr2_buf_terminate(b);
}
