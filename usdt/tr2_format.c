/*
 * Messages of the printf-style calls, formatted only while a tracer listens
 * (the macros call this inside the semaphore check).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace2.h"

/* Per thread so concurrent calls do not share it; the probe reads it before
 * the thread formats the next message.  On the heap, made at a thread's
 * first message: every object reaches trace2__tls with the initial-exec
 * model, which puts all of libtr2's thread-local data in the static TLS
 * block, and glibc keeps about 1.6 KiB of that block for objects loaded by
 * dlopen (a 4 KiB buffer there made dlopen of libtr2.so fail with "cannot
 * allocate memory in static TLS block"). */
static __thread char *message __attribute__((tls_model("initial-exec")));
static pthread_key_t message_key;
static int have_key;

static void free_message(void *buf);

static void make_key(void)
{
	have_key = !pthread_key_create(&message_key, free_message);
}

/* The thread ends (a thread-specific data destructor): a message formatted
 * after this makes a new buffer. */
static void free_message(void *buf)
{
	free(buf);
	message = NULL;
}

const char *trace2__format(const char **fmt_out, const char *fmt, ...)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	va_list ap;

	if (fmt_out)
		*fmt_out = fmt;
	if (!message) {
		pthread_once(&once, make_key);
		message = malloc(TRACE2_MSG_MAX);
		if (!message)
			return "";
		if (have_key)
			pthread_setspecific(message_key, message);
	}
	va_start(ap, fmt);
	if (vsnprintf(message, TRACE2_MSG_MAX, fmt, ap) < 0)
		message[0] = '\0';
	va_end(ap);
	return message;
}
