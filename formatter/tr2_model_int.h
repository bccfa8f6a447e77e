/* tr2_model_int.h: the model's state, shared by its files (tr2_model.c:
 * processes and events; tr2_thread.c: threads; tr2_metric.c: timers and
 * counters).  Not for the front ends: they use tr2_model.h. */
#ifndef TR2_MODEL_INT_H
#define TR2_MODEL_INT_H

#include "tr2_model.h"

#define TR2_MAX_THREAD_NAME 24  /* git's trace2/tr2_tls.h: longer names are cut */
#define TR2_MODEL_BUCKETS 1024

/* A timer or counter of a process: git keeps one per name, so definitions
 * with the same category and name share it. */
struct tr2_metric {
	bool is_counter;
	bool per_thread;               /* the first definition's */
	char *category, *name;
	uint64_t intervals, total_ns, min_ns, max_ns;  /* timers: the process totals */
	uint64_t count;                /* counters: summed in uint64_t, as git's tr2_ctr.c */
	struct tr2_metric *next;       /* in first-use order */
};

/* A thread's use of one definition since its last thread_exit (git's
 * per-thread timer and counter blocks). */
struct tr2_slot {
	uint64_t id;                   /* the definition's address */
	struct tr2_metric *m;
	int recursion;                 /* timers: starts not stopped yet (git ignores nested ones) */
	uint64_t start_ns;
	uint64_t intervals, total_ns, min_ns, max_ns;
	uint64_t count;
};

struct tr2_proc;

/* A thread's time by scheduler state at a call (tr2_call's sched_*). */
struct tr2_sched_mark {
	uint64_t origin_ns;            /* 0: not counted */
	uint64_t ns[TR2_STATE__COUNT];
};

struct tr2_thread {
	uint32_t tid;
	struct tr2_proc *proc;
	char name[TR2_MAX_THREAD_NAME + 1];   /* "main", "th%02d:<base>", "th00:unknown" */
	bool exited;                   /* its thread_exit came: only its thread_state events
					  are written now; a later call starts afresh */
	uint64_t start_ns;
	int depth;                     /* open regions seen (git's nr_open_regions - 1) */
	int cap;
	uint64_t *region_start;        /* start of each open region; 0: unknown */
	struct tr2_sched_mark *region_sched;   /* the thread's time by state at each one's start */
	struct tr2_slot *slots;
	int nslots, slots_cap;
	struct tr2_thread *hnext;
};

struct tr2_child {
	int id;
	uint64_t start_ns;
};

/* A process's stream that the processes the kernel says it forked may
 * continue without exec, as git's forked child writes into the file it
 * inherited: it ends when the last of them is done with it. */
struct tr2_shared {
	char *sid;
	uint64_t stream;
	int writers;                   /* processes not done with it */
};

/* A process.  Freed when it is gone and no kept process is its child:
 * children find their parent's sid and hierarchy through `parent`. */
struct tr2_proc {
	uint32_t pid, ppid;
	struct tr2_proc *parent;
	int children;                  /* kept processes whose parent this is */
	bool gone;
	uint64_t start_ns;             /* t_abs counts from here */
	char *sid;                     /* NULL until its first event, or given */
	uint64_t stream;               /* its session's number (tr2_ev), given with sid */
	struct tr2_shared *shared;     /* the stream it may write with the processes it forked
					  or was forked by (tr2_model_fork); NULL: none */
	bool left;                     /* it left a shared stream that others write still */
	uint64_t unmarked;             /* timer and counter uses dropped, not marked yet */
	char *evt;                     /* the EVENT version its version event gave; NULL: none yet */
	char *exec_parent_sid;         /* after exec: the session before it */
	char *exec_parent_hierarchy;
	char *parent_name;             /* given: the parent session's hierarchy */
	char **ancestry;               /* given: its ancestors' names (one allocation); NULL: none */
	char *hierarchy;               /* the last cmd_name's */
	struct tr2_child *started;     /* child_start times, for child_exit's t_rel */
	int nstarted, cap;
	struct tr2_metric *metrics, **metrics_tail;
	struct tr2_proc *hnext;
};

struct tr2_model {
	struct tr2_model_sink sink;
	char host_hash[16];
	int64_t mono_to_real_ns;
	uint64_t events, dropped;
	uint64_t streams;              /* the sessions numbered so far */
	struct tr2_proc *procs[TR2_MODEL_BUCKETS];
	struct tr2_thread *threads[TR2_MODEL_BUCKETS];
	struct tr2_thread *last;       /* look-up cache: calls come in runs per thread */
};

/* tr2_model.c */
struct tr2_proc *tr2_model_proc(struct tr2_model *m, uint32_t pid);
/* The fields every event of thread t at time ts_ns has (the sid made first). */
void tr2_model_ev_init(struct tr2_model *m, struct tr2_ev *ev, enum tr2_ev_kind kind,
		       struct tr2_thread *t, const char *file, int line, uint64_t ts_ns);
void tr2_model_emit(struct tr2_model *m, const struct tr2_proc *p, const struct tr2_ev *ev);

/* tr2_thread.c */
/* The thread, made (unnamed) in process p when new; a tid seen in another
 * process is a reused tid, and one that exited starts afresh: the old
 * thread goes. */
struct tr2_thread *tr2_thread_get(struct tr2_model *m, struct tr2_proc *p, uint32_t tid);
struct tr2_thread *tr2_thread_find(struct tr2_model *m, uint32_t tid);
void tr2_thread_drop(struct tr2_model *m, struct tr2_thread *t);
/* "main" for the process's own tid, else git's "th%02d:<base>" cut to 24
 * bytes, else "th00:unknown". */
void tr2_thread_name(struct tr2_thread *t, int32_t thread_id, const char *base);
/* Region nesting (git's tr2tls_push_self / tr2tls_pop_self): the enter
 * call c (its time, and the thread's time by state then); the leave's
 * start (0: unknown, or entered before the trace), or -1 when no region
 * was open, and in *mark the thread's time by state at that start (origin
 * 0: not known). */
void tr2_thread_push(struct tr2_thread *t, const struct tr2_call *c);
int64_t tr2_thread_pop(struct tr2_thread *t, struct tr2_sched_mark *mark);
/* t's open regions become those of `from` (a child forked without exec). */
void tr2_thread_copy_regions(struct tr2_thread *t, const struct tr2_thread *from);
/* Start of the innermost open region, else of the thread; 0: unknown. */
uint64_t tr2_thread_since(const struct tr2_thread *t);

/* tr2_metric.c */
/* timer_start, timer_stop, counter_add of thread t. */
void tr2_metric_call(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c);
/* The thread ends (thread_exit, atexit): its th_timer and th_counter events
 * for its per-thread metrics, stamped at c, then its sums go into the
 * process totals (git's tr2_emit_per_thread_timers). */
void tr2_metric_close_thread(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c);
/* Its sums go into the process totals, without events (it is gone). */
void tr2_metric_merge_thread(struct tr2_thread *t);
/* atexit: the process totals, timers then counters (git's tr2_emit_final_timers). */
void tr2_metric_final(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c);
void tr2_metric_free_proc(struct tr2_proc *p);

#endif
