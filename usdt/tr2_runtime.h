/*
 * tr2_runtime.h: what the runtime's own files share (not installed).
 */
#ifndef TR2_RUNTIME_H
#define TR2_RUNTIME_H

#include "trace2.h"
#include "tr2_call.h"

/* True while an in-process target is open (trace2__state.on, bits 16-23). */
static inline int tr2_inproc_on(void)
{
	return (trace2__state.on >> 16) & 0xff;
}

/* Writes the events of call c (its probe, site and arguments; the rest is
 * filled in here) to every in-process target (tr2_inproc.c). */
void tr2_inproc_call(struct tr2_call *c);

/* Reads git's GIT_TRACE2* variables and opens the targets they name (once,
 * from trace2_initialize()); returns how many opened.  None: nothing is
 * opened, allocated or set.  Else the sid is made and exported in
 * GIT_TRACE2_PARENT_SID, and tr2_inproc_on() becomes true. */
int tr2_inproc_init(void);

/* The "atexit" and "signal" events, for tr2_process.c's handlers at file
 * and line: fire the probe and write to the in-process targets. */
void tr2_emit_atexit(const char *file, int line, int code);
void tr2_emit_signal(const char *file, int line, int signo);

#endif
