/* tr2_time.h: the time-of-day columns of the Trace2 formats, from an event's
 * wall-clock time (git's trace2/tr2_tbuf.c formats the current time instead).
 * Private to formatter/.
 */
#ifndef TR2_TIME_H
#define TR2_TIME_H

#include <stdint.h>
#include "tr2_tgt.h"

/*
 * Appends the local time of day of time_us (µs since the Unix epoch) as
 * "HH:MM:SS.uuuuuu" (15 bytes), git's tr2_tbuf_local_time() layout used by
 * NORMAL and PERF.  The time zone is the process's (TZ), read by localtime_r;
 * the broken-down second is cached per thread, so one event costs no libc
 * call unless its second differs from the previous event's.
 */
void tr2_time_add_local(struct tr2_buf *b, int64_t time_us);

/* The same 15 bytes written at p (no NUL); returns p + 15.  For callers that
 * reserved room for a whole line and write it with a pointer. */
char *tr2_time_put_local(char *p, int64_t time_us);

/*
 * Appends time_us in UTC as "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (27 bytes for years
 * 1000-9999), git's tr2_tbuf_utc_datetime_extended() layout used by EVENT's
 * "time".  Arithmetic only (no libc call for years 1000-9999); the
 * date-time part is cached per thread for the second, as for local time.
 */
void tr2_time_add_utc(struct tr2_buf *b, int64_t time_us);

#endif
