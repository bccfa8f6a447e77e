/* unit.h: helpers shared by the formatter unit tests (cmocka).
 *
 * Golden lines are whole lines as git 2.39.5 wrote them (GIT_TRACE2,
 * GIT_TRACE2_PERF, GIT_TRACE2_EVENT with GIT_TRACE2_EVENT_NESTING=10, in a
 * UTC time zone); each test builds the struct tr2_ev git's call carried,
 * with the time that format's line shows (git stamps each target
 * separately), formats it and compares the whole line.  Run with TZ=UTC.
 */
#ifndef UNIT_H
#define UNIT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "tr2_buf.h"
#include "tr2_event.h"
#include "tr2_tgt.h"

/* The day of the oracle runs; NORMAL and PERF lines only show the time of day. */
#define ORACLE_DAY "2026-11-21"

/*
 * µs since the epoch of a UTC time written "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (as
 * EVENT's "time") or "HH:MM:SS.uuuuuu" (as NORMAL/PERF show it, on
 * ORACLE_DAY; the tests run with TZ=UTC so local time is UTC).
 */
static inline int64_t at(const char *s)
{
	char iso[40];
	struct tm tm = { 0 };
	int us = 0;

	if (strlen(s) == 15) {
		snprintf(iso, sizeof(iso), "%sT%sZ", ORACLE_DAY, s);
		s = iso;
	}
	if (sscanf(s, "%d-%d-%dT%d:%d:%d.%6dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &us) != 7)
		abort();
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000 + us;
}

/* µs of a seconds value written "S.uuuuuu" (git's "%.6f"). */
static inline int64_t secs(const char *s)
{
	long sec = 0, us = 0;

	if (sscanf(s, "%ld.%6ld", &sec, &us) != 2)
		abort();
	return (int64_t)sec * 1000000 + us;
}

/* Formats ev with tgt (no line when the format skips it: returns ""). */
static inline const char *fmt_ev(const struct tr2_tgt *tgt, const struct tr2_ev *ev, int brief,
				 int nesting)
{
	static struct tr2_buf b;
	struct tr2_tgt_opts opts = { .brief = brief, .event_nesting = nesting };

	b.len = 0;
	tr2_buf_addlit(&b, "");
	if (tgt->fn[ev->kind])
		tgt->fn[ev->kind](&b, ev, &opts);
	return b.p;
}

/* A blank event of a kind, for a process and call site. */
static inline struct tr2_ev ev_new(enum tr2_ev_kind kind, const char *sid, const char *file, int line)
{
	struct tr2_ev ev = { .kind = kind, .sid = sid, .thread = "main", .file = file, .line = line,
			     .nesting = 1 };

	return ev;
}

/*
 * Checks one format's whole line: the event is stamped with time (see at())
 * first.  NORMAL, PERF, EVENT in their full variants (EVENT with nesting
 * limit 10, as the oracle runs), and their BRIEF variants.
 */
#define CHECK_AT(tgt, brief, ev, time, expected)                               \
	do {                                                                   \
		(ev).time_us = at(time);                                       \
		assert_string_equal(fmt_ev(&(tgt), &(ev), (brief), 10), (expected)); \
	} while (0)
#define NORMAL(ev, time, expected) CHECK_AT(tr2_tgt_normal, 0, ev, time, expected)
#define PERF(ev, time, expected) CHECK_AT(tr2_tgt_perf, 0, ev, time, expected)
#define EVENT(ev, time, expected) CHECK_AT(tr2_tgt_event, 0, ev, time, expected)
#define NORMAL_BRIEF(ev, expected) CHECK_AT(tr2_tgt_normal, 1, ev, "00:00:00.000000", expected)
#define PERF_BRIEF(ev, expected) CHECK_AT(tr2_tgt_perf, 1, ev, "00:00:00.000000", expected)
#define EVENT_BRIEF(ev, time, expected) CHECK_AT(tr2_tgt_event, 1, ev, time, expected)

/* The format skips the event. */
#define SKIPPED(tgt, ev) assert_string_equal(fmt_ev(&(tgt), &(ev), 0, 10), "")

#endif
