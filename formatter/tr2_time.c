/* tr2_time.c: time-of-day columns (see tr2_time.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tr2_buf.h"
#include "tr2_time.h"

/* Per-thread caches, initial-exec as the runtime's other thread-local data
 * (this file is also one of libtr2's): in a program that links libtr2.a, a
 * -fPIC object's default model would call __tls_get_addr, and make the
 * program need ld.so by name. */
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* Splits µs since the epoch into whole seconds and µs, rounding toward
 * negative infinity so that times before 1970 still get 0..999999 µs. */
static void split_us(int64_t time_us, int64_t *secs, int *usec)
{
	int64_t s = time_us / 1000000, r = time_us % 1000000;

	if (r < 0) {
		r += 1000000;
		s--;
	}
	*secs = s;
	*usec = (int)r;
}

static char *put2(char *p, int v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
	return p + 2;
}

char *tr2_time_put_local(char *p, int64_t time_us)
{
	/* localtime_r is the costly part (time zone rules); the hour, minute
	 * and second only change with the second, and a zone's offset changes
	 * on a second boundary, so caching the second is exact. */
	static TLS int64_t cached_secs;
	static TLS bool cached;
	static TLS char hms[9];
	int64_t secs;
	int usec;

	split_us(time_us, &secs, &usec);
	if (!cached || secs != cached_secs) {
		time_t t = (time_t)secs;
		struct tm tm = { 0 };
		char *q;

		localtime_r(&t, &tm);
		q = put2(hms, tm.tm_hour);
		*q++ = ':';
		q = put2(q, tm.tm_min);
		*q++ = ':';
		put2(q, tm.tm_sec);
		cached_secs = secs;
		cached = true;
	}
	memcpy(p, hms, 8);
	p[8] = '.';
	tr2_put_usec(p + 9, (uint32_t)usec);
	return p + 15;
}

void tr2_time_add_local(struct tr2_buf *b, int64_t time_us)
{
	b->len = (size_t)(tr2_time_put_local(tr2_buf_reserve(b, 15), time_us) - b->p);
	tr2_buf_terminate(b);
}

/* Days since 1970-01-01 to a proleptic Gregorian date (the well-known
 * era-based algorithm, exact for every int64 day count we can meet). */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097;                                   /* [0, 146096] */
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365; /* [0, 399] */
	doy = z - era * 146097 - (365 * yoe + yoe / 4 - yoe / 100);  /* [0, 365] */
	mp = (5 * doy + 2) / 153;                                 /* [0, 11] */
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* Formats "YYYY-MM-DDTHH:MM:SS" of secs into out (at most 40 bytes); returns its length. */
static size_t format_utc_secs(char *out, int64_t secs)
{
	int64_t days = secs / 86400, year;
	int sod = (int)(secs % 86400), month, day;
	char *p = out;

	if (sod < 0) {
		sod += 86400;
		days--;
	}
	civil_from_days(days, &year, &month, &day);
	if (year >= 1000 && year <= 9999) {
		p = put2(p, (int)(year / 100));
		p = put2(p, (int)(year % 100));
	} else {
		/* git writes the year with "%4d" */
		p += snprintf(p, 24, "%4lld", (long long)year);  /* up to 20 bytes */
	}
	*p++ = '-';
	p = put2(p, month);
	*p++ = '-';
	p = put2(p, day);
	*p++ = 'T';
	p = put2(p, sod / 3600);
	*p++ = ':';
	p = put2(p, sod / 60 % 60);
	*p++ = ':';
	p = put2(p, sod % 60);
	return (size_t)(p - out);
}

void tr2_time_add_utc(struct tr2_buf *b, int64_t time_us)
{
	/* as for local time: the date and time of day change with the second */
	static TLS int64_t cached_secs;
	static TLS bool cached;
	static TLS char ymdhms[48];
	static TLS size_t n;
	int64_t secs;
	int usec;
	char *p;

	split_us(time_us, &secs, &usec);
	if (!cached || secs != cached_secs) {
		n = format_utc_secs(ymdhms, secs);
		cached_secs = secs;
		cached = true;
	}
	p = tr2_buf_reserve(b, n + 8);
	memcpy(p, ymdhms, n);
	p[n] = '.';
	tr2_put_usec(p + n + 1, (uint32_t)usec);
	p[n + 7] = 'Z';
	b->len += n + 8;
	tr2_buf_terminate(b);
}
