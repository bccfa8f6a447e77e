/* tr2_json.c: JSON strings and data_json values for the EVENT target (see
 * tr2_json.h; tr2_json_is_valid is in tr2_read_json.cc, with the rest of
 * simdjson's use). */
#include <stdint.h>
#include <string.h>
#include "tr2_buf.h"
#include "tr2_json.h"

static const char hex[] = "0123456789abcdef";

/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
static const char replacement[3] = { (char)0xef, (char)0xbf, (char)0xbd };

int tr2_utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return -1;  /* continuation byte, C0/C1 overlong lead, or > U+10FFFF */

	/* The second byte's range excludes overlongs, surrogates and > U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return -1;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return -i;
	return n;
}

/* Non-zero when one of the 8 bytes in x is below 0x20, at or above 0x80, '"'
 * or '\\': the bytes the loop below must look at one by one.  The borrow
 * tricks (x - n) & ~x find a byte below n; they may flag bytes above a real
 * one, never miss one. */
static uint64_t needs_care(uint64_t x)
{
	const uint64_t ones = UINT64_C(0x0101010101010101), highs = ones << 7;
	uint64_t q = x ^ ones * '"', bs = x ^ ones * '\\';

	return (x | ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs;
}

void tr2_json_add_string(struct tr2_buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	const unsigned char *end = s + strlen((const char *)s);

	tr2_buf_putc(b, '"');
	for (;;) {
		const unsigned char *run = s;
		unsigned char c;

		/* the common case: printable ASCII that needs no escape, 8 bytes
		 * at a time (EVENT lines are mostly such strings) */
		for (uint64_t x; end - run >= 8 && (memcpy(&x, run, 8), !needs_care(x));)
			run += 8;
		while (*run >= 0x20 && *run < 0x80 && *run != '"' && *run != '\\')
			run++;
		if (run > s)
			tr2_buf_put(b, s, (size_t)(run - s));
		s = run;
		c = *s;
		if (!c)
			break;
		if (c >= 0x80) {
			int n = tr2_utf8_seq(s);

			if (n > 0) {
				tr2_buf_put(b, s, (size_t)n);
				s += n;
			} else {
				tr2_buf_put(b, replacement, sizeof(replacement));
				s += -n;
			}
			continue;
		}
		s++;
		switch (c) {
		case '"': tr2_buf_put(b, "\\\"", 2); break;
		case '\\': tr2_buf_put(b, "\\\\", 2); break;
		case '\n': tr2_buf_put(b, "\\n", 2); break;
		case '\r': tr2_buf_put(b, "\\r", 2); break;
		case '\t': tr2_buf_put(b, "\\t", 2); break;
		case '\f': tr2_buf_put(b, "\\f", 2); break;
		case '\b': tr2_buf_put(b, "\\b", 2); break;
		default: {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

			tr2_buf_put(b, e, 6);
		}
		}
	}
	tr2_buf_putc(b, '"');
}

void tr2_json_add_value(struct tr2_buf *b, const char *text)
{
	const char *p, *run;
	bool in_string = false, eat_spaces = false;

	if (!text) {
		tr2_buf_put(b, "null", 4);
		return;
	}
	if (!tr2_json_is_valid(text)) {
		tr2_json_add_string(b, text);
		return;
	}
	/* Valid JSON has LF and CR only as whitespace between tokens. */
	for (p = run = text; *p; p++) {
		if (in_string) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				in_string = false;
			continue;
		}
		if (*p == '\n' || *p == '\r' || (eat_spaces && *p == ' ')) {
			tr2_buf_put(b, run, (size_t)(p - run));
			run = p + 1;
			eat_spaces = true;
			continue;
		}
		eat_spaces = false;
		if (*p == '"')
			in_string = true;
	}
	tr2_buf_put(b, run, (size_t)(p - run));
}
