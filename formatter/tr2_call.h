/* tr2_call.h: one call of the tr2 runtime, the input of the Trace2 model
 * (tr2_model.h), whichever way it came: from the runtime itself (the
 * in-process targets, usdt/tr2_inproc.c) or through tr2-bpf's ring buffer
 * (a thread's batch, bpf/tr2_record.h, decoded by loader/tr2_decode.c).
 * Fields follow the trace2 probes' arguments (docs/probes.md); the ones a
 * kind does not have are zero or NULL.  Strings are NUL-terminated and stay
 * owned by the caller. */
#ifndef TR2_CALL_H
#define TR2_CALL_H

#include <stdint.h>
#include "trace2.h"
#include "tr2_event.h"

struct tr2_call {
	int probe;               /* TRACE2__P_* */
	uint32_t pid, tid;       /* the calling process (tgid) and thread */
	uint64_t ts_ns;          /* when, CLOCK_MONOTONIC */
	const char *file;        /* __FILE__ of the call site; NULL: none */
	int line;                /* __LINE__ of the call site */
	int repo_id;             /* def_repo, region_*, data, data_json */
	int id;                  /* child_id, exec_id, thread_id (thread_start) */
	int code;                /* exit, atexit, child_exit and exec_result codes; signal's signo */
	int pid_arg;             /* child_exit, child_ready: the child's pid */
	int use_shell;           /* child_start */
	int per_thread;          /* timer_*, counter_add: the definition's per_thread */
	const char *s[4];        /* the probe's strings in argument order; timer_* and
				    counter_add: category, name; version: exe, then the
				    EVENT format version the program writes (NULL: "4");
				    cmd_name: name, then the hierarchy the program made
				    (NULL: the model makes it) */
	const char *const *vec;  /* start, alias, child_start, exec: argv; cmd_ancestry: names */
	intmax_t value;          /* data: the integer (s[2] NULL); counter_add: the value */
	uint64_t metric;         /* timer_*, counter_add: the definition's address, its id */
	/* Where the runtime made the call (tr2-bpf's batch path only): */
	uint32_t module;         /* the calling object's number (trace2.h, trace2__module) */
	int literals;            /* bit 1, 2, 3: s[0], s[1], s[2] are string literals of
				    the call site (trace2.h, TRACE2__LITERALS) */
	/* The thread's time by scheduler state (tr2-bpf, where it counts it): */
	uint64_t sched_origin_ns;              /* when counting began; 0: not counted */
	uint64_t sched_ns[TR2_STATE__COUNT];   /* from then to ts_ns, per enum tr2_state */
};

#endif
