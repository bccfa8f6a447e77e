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

void tr2_buf_addchars(struct tr2_buf *b, char c, size_t n)
{
	memset(tr2_buf_reserve(b, n), c, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void tr2_buf_pad(struct tr2_buf *b, size_t start, size_t col)
{
	if (b->len - start < col)
		tr2_buf_addchars(b, ' ', col - (b->len - start));
}

/* Writes the digits of v backwards, ending at end; returns where they start. */
static char *digits_before(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

size_t tr2_int_digits(char out[20], int64_t v)
{
	char tmp[20], *end = tmp + sizeof(tmp), *p;

	p = digits_before(end, v < 0 ? -(uint64_t)v : (uint64_t)v);
	if (v < 0)
		*--p = '-';
	memcpy(out, p, (size_t)(end - p));
	return (size_t)(end - p);
}

void tr2_buf_add_uint(struct tr2_buf *b, uint64_t v)
{
	char tmp[20], *end = tmp + sizeof(tmp), *p = digits_before(end, v);

	tr2_buf_put(b, p, (size_t)(end - p));
}

void tr2_buf_add_int(struct tr2_buf *b, int64_t v)
{
	char tmp[20];

	tr2_buf_put(b, tmp, tr2_int_digits(tmp, v));
}

void tr2_buf_add_secs(struct tr2_buf *b, int64_t us, int width)
{
	char tmp[32], *end = tmp + sizeof(tmp), *p = end;
	uint64_t u = us < 0 ? -(uint64_t)us : (uint64_t)us;
	uint64_t frac = u % 1000000;
	size_t n;

	for (int i = 0; i < 6; i++) {
		*--p = (char)('0' + frac % 10);
		frac /= 10;
	}
	*--p = '.';
	p = digits_before(p, u / 1000000);
	if (us < 0)
		*--p = '-';
	n = (size_t)(end - p);
	if (width > 0 && (size_t)width > n)
		tr2_buf_addchars(b, ' ', (size_t)width - n);
	tr2_buf_put(b, p, n);
}
