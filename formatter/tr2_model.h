/* tr2_model.h: the Trace2 model, the one place that turns runtime calls
 * (tr2_call.h) into the Trace2 events every target formats (tr2_event.h),
 * with the values git computes in-process: sid and its parent chain
 * (tr2_sid.c), thread names, region nesting and start times (tr2_thread.c,
 * git's tr2_tls.c), t_abs and t_rel, the cmd_name hierarchy, child start
 * times, timer and counter sums (tr2_metric.c, git's tr2_tmr.c and
 * tr2_ctr.c).  Its two front ends: tr2-bpf's session (loader/), which feeds
 * it the calls of every traced process as their batches arrive, and the
 * runtime's in-process targets (usdt/tr2_inproc.c), which feed it the calls
 * of their own process as they happen.  Neither computes any of these values
 * itself.
 *
 * What a tracer attached mid-run cannot know, and how it is written (the
 * in-process targets see every call from trace2_initialize() on):
 *  - regions entered before the attach: events inside them get the nesting
 *    of the regions seen so far; the region_leave that closes such a region
 *    is written at the outermost level with no t_rel (PERF leaves the column
 *    blank, EVENT omits "t_rel"); data events directly inside it have their
 *    t_rel since the thread's start, as at the outermost level (git's
 *    format requires one; the region is not known);
 *  - a child started before the attach: child_exit and child_ready have no
 *    t_rel;
 *  - timer intervals started before the attach are not counted.
 * The same holds after a thread's calls were lost (tr2_model_gap).
 *
 * Not thread-safe: one caller at a time.
 */
#ifndef TR2_MODEL_H
#define TR2_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "tr2_call.h"
#include "tr2_event.h"

/* Where the events go. */
struct tr2_model_sink {
	/* One event of process pid for every target.  ev and its strings are
	 * valid during the call. */
	void (*emit)(void *ctx, uint32_t pid, const struct tr2_ev *ev);
	/* The process of session id sid and stream (tr2_ev) has ended without
	 * its atexit or signal event (killed, or exec replaced its image): each
	 * target ends its stream (tr2_target_end_process).  NULL: nothing to do. */
	void (*end)(void *ctx, const char *sid, uint64_t stream);
	void *ctx;
};

/* What a thread is, as its runtime and the kernel say: sent by tr2-bpf at
 * the thread's first batch, and by the in-process targets at its first call. */
struct tr2_thread_info {
	uint32_t pid, tid;
	uint32_t ppid;               /* the process's parent; 0: unknown */
	uint64_t proc_start_ns;      /* the process's start, CLOCK_MONOTONIC; 0: unknown */
	uint64_t thread_start_ns;    /* the thread's start, likewise */
	int32_t thread_id;           /* trace2__tls.thread_id: 0 unnamed, else 1, 2, ... */
	const char *base_name;       /* trace2__tls.base_name; NULL: none */
	const char *sid;             /* the session id the program made itself (git's, or the
					in-process targets'); NULL or "": none, the model makes one */
	const char *parent_name;     /* the parent session's cmd_name hierarchy, as git passes it
					in GIT_TRACE2_PARENT_NAME; NULL: from the process tree */
	bool forked;                 /* the process was forked and has not called exec since
					(tr2-bpf: the kernel says so): it continues ppid's
					session, as git's targets write such a child */
	const char *const *ancestry; /* the process's ancestors' names, nearest first,
					NULL-terminated, as the kernel had them (tr2-bpf, at the
					main thread's first call): a cmd_ancestry call without
					names gets them; NULL: unknown */
};

struct tr2_model;

/*
 * A model writing to sink (copied).  host_hash: "H" and 8 hex digits, or
 * "Localhost" (tr2_sid_host).  mono_to_real_ns: CLOCK_REALTIME minus
 * CLOCK_MONOTONIC, ns, to turn call times into wall-clock times.  Aborts
 * only if memory runs out.
 */
struct tr2_model *tr2_model_new(const struct tr2_model_sink *sink, const char *host_hash,
				int64_t mono_to_real_ns);
void tr2_model_free(struct tr2_model *m);

/* Names thread info->tid of process info->pid (made if new), and gives the
 * process its parent, start and sid where it has none yet: for a process
 * forked without exec (info->forked), its parent's sid, start, EVENT
 * version, cmd_name hierarchy and the main thread's open regions, as git's
 * targets write a child forked without exec (its lines under the parent's
 * sid, t_abs since the parent's start), in its parent's stream when
 * tr2_model_fork said who forked it, else in a stream of its own. */
void tr2_model_thread(struct tr2_model *m, const struct tr2_thread_info *info);

/* One runtime call: its events go to the sink (none for timer_start,
 * timer_stop and counter_add, whose sums come at thread_exit and atexit;
 * several for thread_exit and atexit).  A thread not named yet is named
 * "main" when its tid is the pid, else "th00:unknown". */
void tr2_model_call(struct tr2_model *m, const struct tr2_call *c);

/* Thread tid of process pid lost calls (its batch did not reach tr2-bpf):
 * the start times of its open regions are unknown from now on. */
void tr2_model_gap(struct tr2_model *m, uint32_t pid, uint32_t tid);

/* Process pid lost `count` calls: writes the marker into its stream, on its
 * main thread, at ts_ns: a Trace2 "data" event that any Trace2 tool parses:
 * no file, category "tr2", key "lost_events", value the count, e.g. in PERF
 *   ... | data | | 0.021000 | 0.021000 | tr2 | lost_events:1234
 * Not counted in tr2_model_events(). */
void tr2_model_lost(struct tr2_model *m, uint32_t pid, uint64_t count, uint64_t ts_ns);

/* Tracing was paused from from_ns to to_ns (tr2-bpf's SIGUSR1, then
 * SIGUSR2): the calls made meanwhile were not made.  Writes a marker into
 * the stream of every process that has one and goes on, on its main
 * thread, at to_ns: a Trace2 "data" event, no file, category "tr2", key
 * "paused", value the seconds paused, e.g. in PERF
 *   ... | data | | 2.510000 | 2.004000 | tr2 | paused:2.000131
 * Not counted in tr2_model_events(). */
void tr2_model_paused(struct tr2_model *m, uint64_t from_ns, uint64_t to_ns);

/* tr2-bpf's view of the process tree (the in-process targets have none): */
/* Process pid was forked by ppid at start_ns (the kernel says so: tr2-bpf's
 * fork record).  Until it calls exec, it shares ppid's stream: if it goes on
 * tracing without exec (tr2_thread_info.forked), its lines go into ppid's
 * stream, as git's forked child writes into the file it inherited, and that
 * stream ends when the last of the processes sharing it ends or execs (an
 * atexit or signal event of one whose stream others may still write has
 * stream_goes_on set). */
void tr2_model_fork(struct tr2_model *m, uint32_t pid, uint32_t ppid, uint64_t start_ns);
/* Process pid called exec at ts_ns: a new program, a new session, child of
 * the old one; the old one's stream ends (sink->end) unless it wrote none. */
void tr2_model_exec(struct tr2_model *m, uint32_t pid, uint64_t ts_ns);
/* The last thread of process pid exited: its stream ends (sink->end, a no-op
 * after its atexit or signal event); what the model keeps of it goes, but
 * for its sid and cmd_name hierarchy while a kept process is its child. */
void tr2_model_proc_gone(struct tr2_model *m, uint32_t pid);
/* Thread tid of process pid exited: its timer and counter sums go into the
 * process totals (it ended without thread_exit) and its state goes. */
void tr2_model_thread_gone(struct tr2_model *m, uint32_t pid, uint32_t tid);
/* Process pid was held stopped from from_ns to to_ns (CLOCK_MONOTONIC)
 * while tr2-bpf attached to an object it maps.  Before the process's first
 * event, t_abs starts after the stop, so that it measures the program and
 * not the tracer (git's t_abs starts in main()). */
void tr2_model_resumed(struct tr2_model *m, uint32_t pid, uint64_t from_ns, uint64_t to_ns);

/* A stretch of a thread off the CPU, as tr2-bpf's eBPF side saw it
 * (bpf/tr2_record.h, TR2_REC_SCHED): times CLOCK_MONOTONIC, ns. */
struct tr2_sched_period {
	int state;          /* enum tr2_state it left the CPU in; TR2_STATE_CPU: it ended */
	uint64_t run_ns;    /* on the CPU from here */
	uint64_t off_ns;    /* to here, then in `state` */
	uint64_t woken_ns;  /* until woken here (off_ns: it left runnable), */
	uint64_t in_ns;     /* then runnable until on the CPU again here */
};

/* Thread tid of process pid was off the CPU as sp says: thread_state
 * events (tr2_event.h) for its stretches, for --chrome's state track;
 * nothing for a thread that has written no event (its calls may be named
 * yet), or is gone.  Not counted in tr2_model_events(). */
void tr2_model_sched(struct tr2_model *m, uint32_t pid, uint32_t tid, const struct tr2_sched_period *sp);

/* Events written to the sink so far (markers excluded). */
uint64_t tr2_model_events(const struct tr2_model *m);
/* Timer and counter uses left out because a thread used more than
 * TR2_MODEL_METRICS definitions; each is marked in its process's stream
 * (tr2_model_lost) before the process's next event. */
uint64_t tr2_model_dropped(const struct tr2_model *m);
/* What the model keeps now: processes (gone ones whose sid a kept child
 * still needs included) and threads.  Bounded by the processes and threads
 * alive, never by those that have come and gone. */
void tr2_model_kept(const struct tr2_model *m, unsigned long *procs, unsigned long *threads);

/* Timer and counter definitions a thread keeps sums of (as tr2-bpf always
 * has); a use of another one is lost, counted and marked in the stream. */
#define TR2_MODEL_METRICS 16

#endif
