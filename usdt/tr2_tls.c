/*
 * The per-thread record every probe passes as arg0, and thread numbering.
 */
#include <string.h>

#include "trace2.h"

/* Zero for every thread until it calls trace2_thread_start(): thread_id 0 is
 * the main thread (or an unnamed one) for the tracer. */
__thread struct trace2_tls trace2__tls __attribute__((tls_model("initial-exec")));

/* The number given to the last started thread; 0 belongs to the main thread. */
static int last_thread_id;

void trace2__thread_start(const char *base_name)
{
	size_t len = base_name ? strnlen(base_name, sizeof(trace2__tls.base_name) - 1) : 0;

	trace2__tls.thread_id = __atomic_add_fetch(&last_thread_id, 1, __ATOMIC_RELAXED);
	if (len)
		memcpy(trace2__tls.base_name, base_name, len);
	trace2__tls.base_name[len] = '\0';
}
