/* tr2_buf.h: helpers on struct tr2_buf (declared in tr2_tgt.h) that the
 * targets share: digits and fixed-point seconds without snprintf.
 * Private to formatter/.
 *
 * Invariant of every tr2_buf function: after a call, b->p[b->len] == '\0',
 * so a line can be compared as a C string (the tests do).  The tr2_put_*
 * functions write through a pointer into room a caller reserved; that
 * caller sets b->len and the NUL (tr2_buf_terminate).
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

/* Writes v in decimal, as printf's "%" PRId64, into out (no NUL); returns
 * the length, at most 20. */
size_t tr2_int_digits(char out[20], int64_t v);

/* Appends a decimal integer, as printf's "%" PRId64 / "%" PRIu64. */
void tr2_buf_add_int(struct tr2_buf *b, int64_t v);
void tr2_buf_add_uint(struct tr2_buf *b, uint64_t v);

/* "00", "01", .. "99": two digits per lookup (see tr2_put_usec). */
extern const char tr2_digit_pairs[200];

/* Writes usec (0..999999) as 6 digits, leading zeros kept, at p (no NUL):
 * the fraction of every time column.  Two digits per table lookup: 45 -> 22
 * instructions against a digit per division by 10, and a PERF line has up
 * to three of these. */
static inline void tr2_put_usec(char *p, uint32_t usec)
{
	uint32_t hi = usec / 10000, lo = usec % 100;

	memcpy(p, tr2_digit_pairs + 2 * hi, 2);
	memcpy(p + 2, tr2_digit_pairs + 2 * (usec / 100 - 100 * hi), 2);
	memcpy(p + 4, tr2_digit_pairs + 2 * lo, 2);
}

/* Writes the digits of v backwards, ending at end; returns where they
 * start.  Two digits per step, as tr2_put_usec. */
static inline char *tr2_digits_before(char *end, uint64_t v)
{
	for (; v >= 100; v /= 100) {
		end -= 2;
		memcpy(end, tr2_digit_pairs + 2 * (v % 100), 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, tr2_digit_pairs + 2 * v, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

/* The number of decimal digits of v (1 for 0). */
static inline size_t tr2_digit_count(uint64_t v)
{
	size_t n = 1;

	for (; v >= 10; v /= 10)
		n++;
	return n;
}

/* The longest "%.6f" that tr2_put_secs writes, INT64_MIN µs: "-9223372036854.775808". */
#define TR2_SECS_MAX 21

/*
 * Writes us microseconds as seconds with 6 decimals, right-aligned in width
 * bytes (0: no padding), at p, and returns the end (no NUL); p must have room
 * for width + TR2_SECS_MAX bytes.  For callers that reserved room for a whole
 * line and write it with a pointer, as tr2_buf_add_secs does for one value.
 * Inline so that PERF's constant width pads with a store or two rather than
 * a call to memset (770 -> 729 instructions per PERF region line).
 */
static inline char *tr2_put_secs(char *p, int64_t us, size_t width)
{
	uint64_t u = us < 0 ? -(uint64_t)us : (uint64_t)us;
	uint64_t secs = u / 1000000;
	size_t n = (us < 0) + tr2_digit_count(secs) + 7;
	char *end, *q;

	memset(p, ' ', width);
	end = p + (n < width ? width : n);
	tr2_put_usec(end - 6, (uint32_t)(u % 1000000));
	end[-7] = '.';
	q = tr2_digits_before(end - 7, secs);
	if (us < 0)
		q[-1] = '-';
	return end;
}

/*
 * Appends us microseconds as seconds with 6 decimals, right-aligned in width
 * bytes (0: no padding): what git writes with "%.6f" / "%9.6f" / "%8.6f" of
 * (double)us / 1000000.0.  The digits are exact, which is what printf gives
 * for such a double as long as |us| < 2^53.
 */
void tr2_buf_add_secs(struct tr2_buf *b, int64_t us, int width);

#endif
