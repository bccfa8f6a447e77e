/* tr2_buf.h: helpers on struct tr2_buf (declared in tr2_tgt.h) that the
 * targets share: digits and fixed-point seconds without snprintf, padding.
 * Private to formatter/.
 *
 * Invariant of every tr2_buf function: after a call, b->p[b->len] == '\0',
 * so a line can be compared as a C string (the tests do).
 */
#ifndef TR2_BUF_H
#define TR2_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tr2_tgt.h"

/* The slow path of tr2_buf_reserve: grows the buffer (doubling, at least
 * 256 bytes) to hold n more bytes and a NUL.  Aborts on allocation failure. */
void tr2_buf_grow(struct tr2_buf *b, size_t n);

/*
 * Makes room for n more bytes (plus the terminating NUL) and returns where
 * they go (b->p + b->len); the caller writes them, adds n to b->len and calls
 * tr2_buf_terminate.  Inline because the targets append a few bytes at a
 * time, per event, and a buffer that is reused never grows again.
 */
static inline char *tr2_buf_reserve(struct tr2_buf *b, size_t n)
{
	if (b->len + n + 1 > b->cap)
		tr2_buf_grow(b, n);
	return b->p + b->len;
}

/* Writes the NUL after b->len (after a caller wrote through tr2_buf_reserve). */
static inline void tr2_buf_terminate(struct tr2_buf *b)
{
	b->p[b->len] = '\0';
}

/* Inline tr2_buf_add and tr2_buf_addch, for the targets' hot paths. */
static inline void tr2_buf_put(struct tr2_buf *b, const void *data, size_t n)
{
	memcpy(tr2_buf_reserve(b, n), data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void tr2_buf_putc(struct tr2_buf *b, char c)
{
	char *p = tr2_buf_reserve(b, 1);

	p[0] = c;
	p[1] = '\0';
	b->len++;
}

/* Appends a string literal; its length is known at compile time. */
#define tr2_buf_addlit(b, lit) tr2_buf_put((b), "" lit, sizeof(lit) - 1)

/* Appends n copies of c. */
void tr2_buf_addchars(struct tr2_buf *b, char c, size_t n);

/* Appends spaces until the line that started at offset start is col bytes
 * long; does nothing when it is already that long or longer. */
void tr2_buf_pad(struct tr2_buf *b, size_t start, size_t col);

/* Writes v in decimal, as printf's "%" PRId64, into out (no NUL); returns
 * the length, at most 20. */
size_t tr2_int_digits(char out[20], int64_t v);

/* Appends a decimal integer, as printf's "%" PRId64 / "%" PRIu64. */
void tr2_buf_add_int(struct tr2_buf *b, int64_t v);
void tr2_buf_add_uint(struct tr2_buf *b, uint64_t v);

/*
 * Appends us microseconds as seconds with 6 decimals, right-aligned in width
 * bytes (0: no padding): what git writes with "%.6f" / "%9.6f" / "%8.6f" of
 * (double)us / 1000000.0.  The digits are exact, which is what printf gives
 * for such a double as long as |us| < 2^53.
 */
void tr2_buf_add_secs(struct tr2_buf *b, int64_t us, int width);

#endif
