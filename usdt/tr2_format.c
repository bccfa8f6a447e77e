/*
 * Messages of the printf-style calls, formatted only while a tracer listens
 * (the macros call this inside the semaphore check).
 */
#include <stdarg.h>
#include <stdio.h>

#include "trace2.h"

/* Per thread so concurrent calls do not share it, static so formatting never
 * allocates; the probe reads it before the thread formats the next message. */
static __thread char message[TRACE2_MSG_MAX];

const char *trace2__format(const char **fmt_out, const char *fmt, ...)
{
	va_list ap;

	if (fmt_out)
		*fmt_out = fmt;
	va_start(ap, fmt);
	if (vsnprintf(message, sizeof(message), fmt, ap) < 0)
		message[0] = '\0';
	va_end(ap);
	return message;
}
