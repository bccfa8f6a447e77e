/* tr2_mode.h: which processes tr2-bpf traces, and how it finds new ones.
 *
 * -p PID, -- CMD and -a are three answers to one question, each a table of
 * operations (as git's struct tr2_tgt is for formats):
 *   tr2_mode_pid  the processes given, from now on, and what they exec;
 *   tr2_mode_cmd  CMD from its first event, and every descendant of it;
 *   tr2_mode_all  every process on the host that carries a tr2 runtime.
 * Each decides the scope of what it attaches (loader/tr2_attach.h): payload
 * uprobes for one process or for all, and the tr2:enable semaphore raised
 * in exactly the processes it traces, so that no other process pays.
 */
#ifndef TR2_MODE_H
#define TR2_MODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer;

struct tr2_mode {
	const char *name;
	int follow;               /* the eBPF side adds each traced process's children */
	int all;                  /* every process is traced (bpf trace_all) */
	int known_per_process;    /* objects are attached per process (bpf known_per_process) */
	/* After the BPF programs are loaded and the session made: attaches to
	 * the processes there are, or starts CMD; a failure is fatal (tr2_fail). */
	void (*start)(struct tracer *tr);
	/* Traced process pid maps objects not looked at yet: it stopped itself
	 * (exec, or its loader mapped objects).  Attaches to the runtimes among
	 * them.  Returns 0, or -1 with a one-line reason in err. */
	int (*attach)(struct tracer *tr, pid_t pid, char *err, size_t errlen);
	/* Traced process child was forked at fork_ns (CLOCK_MONOTONIC), before
	 * its record arrived (follow modes). */
	void (*forked)(struct tracer *tr, pid_t child, uint64_t fork_ns);
	/* After a pause (tr2_tracer_paused: meanwhile attach and forked raise
	 * no tr2:enable): raises tr2:enable again in every process the mode
	 * traces now, those started or forked while paused included; a
	 * failure is said (tr2_tracer_untraced). */
	void (*resume)(struct tracer *tr);
	/* 1 when nothing is left to trace: every traced process has ended. */
	int (*done)(struct tracer *tr);
	/* After the trace: reaps what the mode started, frees its state. */
	void (*finish)(struct tracer *tr);
};

extern const struct tr2_mode tr2_mode_pid;
extern const struct tr2_mode tr2_mode_cmd;
extern const struct tr2_mode tr2_mode_all;

#endif
