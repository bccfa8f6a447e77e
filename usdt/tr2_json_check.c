/*
 * tr2_json_check.c: is a data_json value JSON?  The runtime's answer to the
 * question the formatter's EVENT target asks tr2_json_is_valid() (valid
 * text is embedded, anything else is written as a string), without the
 * simdjson and libstdc++ that tr2-bpf's answer (formatter/tr2_read_json.cc)
 * would drag into every instrumented program.  It accepts and refuses what
 * simdjson 3.0's On Demand walk accepts and refuses (tests/unit/test_inproc.c
 * holds both to it): RFC 8259's grammar in valid UTF-8, and beyond it
 *   - arrays and objects nested deeper than 255 levels are refused,
 *   - a number whose value rounds beyond DBL_MAX (to infinity) is refused,
 *     judged on its digits, so that neither the locale nor strtod matter,
 *   - so is an exponent of more than 19 digits, leading zeros included,
 *   - and a \u escape of a surrogate that is not a high one followed by a
 *     \u escape of a low one.
 * A recursive descent, one call per nesting level (at most 256 deep).
 */
#include <string.h>

#include "tr2_inproc.h"
#include "tr2_json.h"

#define MAX_DEPTH 256   /* arrays and objects at this level or deeper are refused */

/* The digits of 2^1024 - 2^970, halfway between DBL_MAX and 2^1024: a value
 * of 309 integer digits rounds to infinity from here up (a tie goes to the
 * even 2^1024). */
static const char overflow_digits[] =
	"1797693134862315807937289714053034150799341327100378269361737789804449682927647509466490"
	"1797758720709633028641669288791094655554785194040263065748867150582068190890200070838367"
	"6273854845817711531764475730270069855571366959622842914819860834936475292719074168444365"
	"510704342711559699508093042880177904174497792";

typedef const unsigned char *ptr;

static ptr value(ptr p, int depth);

static ptr skip_ws(ptr p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The 4 hex digits at p, or -1. */
static long hex4(ptr p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];

		if (is_digit(c))
			v = v * 16 + (c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v * 16 + (c - 'A' + 10);
		else
			return -1;
	}
	return v;
}

/* A string; p at its opening quote.  Returns the byte after the closing
 * quote, or NULL. */
static ptr string(ptr p)
{
	for (p++;;) {
		unsigned char c = *p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)      /* a control byte, or the end of the text */
			return NULL;
		if (c >= 0x80) {
			int n = tr2_utf8_seq(p);

			if (n <= 0)
				return NULL;
			p += n;
			continue;
		}
		if (c != '\\') {
			p++;
			continue;
		}
		c = p[1];
		if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
		    c == 't') {
			p += 2;
		} else if (c == 'u') {
			long u = hex4(p + 2), low;

			if (u < 0 || (u >= 0xdc00 && u <= 0xdfff))
				return NULL;
			p += 6;
			if (u >= 0xd800 && u <= 0xdbff) {
				if (p[0] != '\\' || p[1] != 'u')
					return NULL;
				low = hex4(p + 2);
				if (low < 0xdc00 || low > 0xdfff)
					return NULL;
				p += 6;
			}
		} else {
			return NULL;
		}
	}
}

/* Whether the number with integer digits [i0, i1), fraction digits [f0, f1)
 * and decimal exponent exp rounds to a finite double. */
static int finite_number(ptr i0, ptr i1, ptr f0, ptr f1, long long exp)
{
	/* the digits as one run d[0..n), skipping leading zeros; the value is
	 * 0.d x 10^e */
	char d[sizeof(overflow_digits)];
	size_t n = 0, lead = 0;
	long long e;
	ptr p;

	for (p = i0; p < i1 && *p == '0'; p++)
		lead++;
	if (p == i1)  /* integer part zero: leading zeros of the fraction count down */
		for (ptr q = f0; q < f1 && *q == '0'; q++)
			lead++;
	if (lead == (size_t)(i1 - i0) + (size_t)(f1 - f0))
		return 1;  /* zero, whatever its exponent */
	e = (long long)(i1 - i0) - (long long)lead + exp;
	if (e < 309)
		return 1;  /* below 10^308 */
	if (e > 309)
		return 0;
	/* 309 integer digits: compare with the halfway point, digit by digit */
	for (ptr q = i0; q < i1 && n < sizeof(d); q++)
		if (n || *q != '0')
			d[n++] = (char)*q;
	for (ptr q = f0; q < f1 && n < sizeof(d); q++)
		if (n || *q != '0')
			d[n++] = (char)*q;
	for (size_t k = 0; k < sizeof(overflow_digits) - 1; k++) {
		char c = k < n ? d[k] : '0';

		if (c != overflow_digits[k])
			return c < overflow_digits[k];
	}
	return 0;  /* at or past the halfway point */
}

/* A number; p at its first byte ('-' or a digit). */
static ptr number(ptr p)
{
	ptr i0, i1, f0 = NULL, f1 = NULL, x0;
	long long exp = 0;

	if (*p == '-')
		p++;
	i0 = p;
	if (*p == '0')
		p++;
	else if (is_digit(*p))
		while (is_digit(*p))
			p++;
	else
		return NULL;
	i1 = p;
	if (*p == '.') {
		f0 = ++p;
		if (!is_digit(*p))
			return NULL;
		while (is_digit(*p))
			p++;
		f1 = p;
	}
	if (*p == 'e' || *p == 'E') {
		int neg = 0;

		p++;
		if (*p == '-' || *p == '+')
			neg = *p++ == '-';
		x0 = p;
		for (; is_digit(*p); p++)
			if (exp < 100000)  /* beyond it, any value is 0 or infinite */
				exp = exp * 10 + (*p - '0');
		if (p == x0 || p - x0 > 19)
			return NULL;
		if (neg)
			exp = -exp;
	}
	return finite_number(i0, i1, f0, f1, exp) ? p : NULL;
}

/* A literal: true, false or null. */
static ptr literal(ptr p, const char *word)
{
	size_t n = strlen(word);

	return strncmp((const char *)p, word, n) ? NULL : p + n;
}

static ptr array(ptr p, int depth)
{
	p = skip_ws(p + 1);
	if (*p == ']')
		return p + 1;
	for (;;) {
		if (!(p = value(p, depth + 1)))
			return NULL;
		p = skip_ws(p);
		if (*p == ']')
			return p + 1;
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
}

static ptr object(ptr p, int depth)
{
	p = skip_ws(p + 1);
	if (*p == '}')
		return p + 1;
	for (;;) {
		if (*p != '"' || !(p = string(p)))
			return NULL;
		p = skip_ws(p);
		if (*p != ':')
			return NULL;
		if (!(p = value(skip_ws(p + 1), depth + 1)))
			return NULL;
		p = skip_ws(p);
		if (*p == '}')
			return p + 1;
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
}

/* A value at nesting level depth (1 for the text's own), p at its first
 * byte.  Returns the byte after it, or NULL. */
static ptr value(ptr p, int depth)
{
	switch (*p) {
	case '[':
		return depth < MAX_DEPTH ? array(p, depth) : NULL;
	case '{':
		return depth < MAX_DEPTH ? object(p, depth) : NULL;
	case '"':
		return string(p);
	case 't':
		return literal(p, "true");
	case 'f':
		return literal(p, "false");
	case 'n':
		return literal(p, "null");
	default:
		return *p == '-' || is_digit(*p) ? number(p) : NULL;
	}
}

bool tr2_json_check(const char *text)
{
	ptr p;

	if (!text)
		return false;
	p = value(skip_ws((ptr)text), 1);
	return p && !*skip_ws(p);
}
