/*
 * tr2_runtime.h: what the runtime's own files share (not installed).
 */
#ifndef TR2_RUNTIME_H
#define TR2_RUNTIME_H

#include "trace2.h"

/*
 * One runtime call, as the in-process targets take it: the probe's
 * arguments (docs/probes.md) by name; fields the kind does not have are
 * zero or NULL.
 */
struct tr2_call {
	int probe;               /* TRACE2__P_* */
	const char *file;        /* __FILE__ of the call site */
	int line;                /* __LINE__ of the call site */
	int repo_id;             /* def_repo, region_*, data, data_json */
	int id;                  /* child_id, exec_id, thread_id */
	int code;                /* exit, atexit, child_exit, exec_result codes; signal's signo */
	int pid;                 /* child_exit, child_ready */
	int use_shell;           /* child_start */
	const char *s[4];        /* the probe's strings, in their argument order */
	const char *const *vec;  /* start, alias, child_start, exec: argv; cmd_ancestry: names */
	intmax_t value;          /* data: the integer (s[2] NULL); counter_add: the value */
	const void *metric;      /* timer_*: struct trace2_timer *; counter_add: struct trace2_counter * */
};

/* True while an in-process target is open (trace2__state.on, bits 16-23). */
static inline int tr2_inproc_on(void)
{
	return (trace2__state.on >> 16) & 0xff;
}

/* Writes the event of call c to every in-process target (tr2_inproc.c). */
void tr2_inproc_call(const struct tr2_call *c);

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
