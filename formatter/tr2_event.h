/* tr2_event.h: one decoded Trace2 event, as every target consumes it.
 *
 * Producers: the ring-buffer decoder of tr2-bpf (loader/) and the EVENT-line
 * reader of tr2-fmt.  Both fill in final values (thread name, nesting, t_abs,
 * t_rel, sid); the targets in formatter/ only lay them out.  Field names are
 * the JSON keys of git's EVENT format (seeds/000 "Event Format"), so a field's
 * meaning is the meaning git documents for that key.
 */
#ifndef TR2_EVENT_H
#define TR2_EVENT_H

#include <stdbool.h>
#include <stdint.h>

/* The deepest nesting an event may carry.  git sets no limit, but PERF
 * writes 2 * (nesting - 1) dots per line: a hostile or broken producer must
 * not make a line of gigabytes.  tr2-bpf writes deeper events at this
 * nesting; tr2-fmt rejects lines above it. */
#define TR2_NESTING_MAX 10000

/* The Trace2 event kinds, named after git's "event" values. */
enum tr2_ev_kind {
	TR2_EV_VERSION,
	TR2_EV_START,
	TR2_EV_EXIT,
	TR2_EV_ATEXIT,
	TR2_EV_SIGNAL,
	TR2_EV_ERROR,
	TR2_EV_CMD_PATH,
	TR2_EV_CMD_ANCESTRY,
	TR2_EV_CMD_NAME,
	TR2_EV_CMD_MODE,
	TR2_EV_ALIAS,
	TR2_EV_CHILD_START,
	TR2_EV_CHILD_EXIT,
	TR2_EV_CHILD_READY,
	TR2_EV_EXEC,
	TR2_EV_EXEC_RESULT,
	TR2_EV_THREAD_START,
	TR2_EV_THREAD_EXIT,
	TR2_EV_DEF_PARAM,
	TR2_EV_DEF_REPO,
	TR2_EV_REGION_ENTER,
	TR2_EV_REGION_LEAVE,
	TR2_EV_DATA,
	TR2_EV_DATA_JSON,
	TR2_EV_PRINTF,
	TR2_EV_TIMER,
	TR2_EV_TH_TIMER,
	TR2_EV_COUNTER,
	TR2_EV_TH_COUNTER,
	TR2_EV_TOO_MANY_FILES,  /* EVENT only: written after the first line of a process whose
				   directory target overflowed (git's trace2.maxFiles) */
	TR2_EV_THREAD_STATE,    /* tr2-bpf's own, no Trace2 event: a stretch of a thread in one
				   enum tr2_state (--chrome's state track); never in EVENT lines */
	TR2_EV__COUNT
};

/* Where a thread's time goes, as the scheduler says (tr2-bpf; the order of
 * bpf/tr2_record.h's enum tr2_sched_state): on a CPU; runnable, waiting
 * for one; blocked in an uninterruptible sleep (ps's D: disk I/O, a page
 * fault from disk); asleep (ps's S, and stopped: a lock, a pipe, poll,
 * nanosleep, a child). */
enum tr2_state { TR2_STATE_CPU, TR2_STATE_RUNNABLE, TR2_STATE_BLOCKED, TR2_STATE_ASLEEP, TR2_STATE__COUNT };

/* The names tables and JSON give the four: "on_cpu", "runnable",
 * "blocked", "asleep"; NULL when out of range. */
const char *tr2_state_name(int state);

/* The "event" string of a kind ("region_enter", ...); NULL when out of range. */
const char *tr2_ev_kind_name(enum tr2_ev_kind kind);

/* Looks a kind up by its "event" string; returns -1 when the name is unknown. */
int tr2_ev_kind_from_name(const char *name);

/*
 * One event.  Strings are NUL-terminated, may hold any bytes (targets escape
 * them), and stay owned by the producer; NULL means "absent".  Fields that a
 * kind does not use are zero/NULL.
 */
struct tr2_ev {
	enum tr2_ev_kind kind;

	/* Common to every event. */
	const char *sid;     /* git's session id, "<UTC start>-H<8 hex>-P<8 hex pid>", parents first, '/'-joined; depth = number of '/' */
	uint64_t stream;     /* with sid, whose stream it is (a file or connection of a per-process
				destination, a process of a view): the number the model gives each
				process session (tr2-bpf: a process as the kernel knows it, whatever
				sid it claims); 0 where the sid alone tells processes apart (tr2-fmt) */
	bool stream_goes_on; /* atexit, signal: a process forked from this one without exec
				writes this stream still (git's child writes into the file it
				inherited): a per-process destination keeps it open */
	const char *thread;  /* "main" or "th%02d:<base>", at most 24 bytes (git's TR2_MAX_THREAD_NAME) */
	int64_t time_us;     /* wall-clock time of the event, µs since the Unix epoch (UTC) */
	int time_ns;         /* the ns past time_us, 0..999, where the producer knows them
				(tr2-bpf); 0 otherwise (EVENT lines carry µs).  Only the
				chrome and folded targets use them */
	const char *file;    /* source file of the call site; NULL or "" when none */
	int line;            /* source line of the call site; 0 when none */

	/* Timing and position, present per kind as git writes them. */
	bool has_t_abs;
	int64_t t_abs_us;    /* µs since the process started */
	bool has_t_rel;
	int64_t t_rel_us;    /* µs since the innermost open region (or the thread, or the child) started */
	int64_t t_rel_ns;    /* the same in ns where the producer knows them (the model); else 0 */
	int nesting;         /* git's nr_open_regions: 1 at thread top level, +1 per open region;
				region_enter: before the push, region_leave: after the pop;
				at most TR2_NESTING_MAX */
	int repo;            /* repo_id, 0 = no repository */
	bool has_repo;       /* the event names a repository even though repo is 0: git prints
				"r0" / "repo":0 for a repository struct whose id is still 0.
				Targets print the repo when repo > 0 || has_repo. */

	/* version */
	const char *evt;     /* the EVENT format version the process's program writes: "3",
				"4" (version events; others where the producer knows it, else
				NULL): EVENT writes no printf events below "4", as git */
	const char *exe;     /* the program's version string */

	/* start, exec, alias, child_start: NULL-terminated vector */
	const char *const *argv;

	/* exit, atexit, child_exit, exec_result */
	int code;
	/* signal */
	int signo;

	/* error */
	const char *msg;     /* also region_enter/leave (printf forms) and printf */
	const char *fmt;

	/* cmd_path, cmd_ancestry, cmd_name, cmd_mode, alias */
	const char *path;
	const char *const *ancestry;  /* NULL-terminated, nearest parent first */
	const char *name;             /* cmd_name; also timer/counter name */
	const char *hierarchy;        /* cmd_name: "parent/child" */
	const char *mode;
	const char *alias;

	/* child_start, child_exit, child_ready */
	int child_id;
	int pid;                      /* child pid; -1 when it could not be spawned */
	const char *child_class;
	const char *hook_name;
	const char *cd;
	bool use_shell;
	const char *ready;            /* "ready", "timeout", "error" */

	/* exec, exec_result */
	int exec_id;
	/* exec: exe (above) is the program run */

	/* def_param */
	const char *param;
	const char *value;            /* def_param value; data value; data_json JSON text */
	bool has_intval;              /* data: the value is an integer (trace2_data_intmax) ... */
	int64_t intval;               /* ... this one, which `value` writes in decimal */
	const char *scope;

	/* def_repo */
	const char *worktree;

	/* region_enter, region_leave, data, data_json, timer, counter */
	const char *category;
	const char *label;
	const char *key;

	/* timer, th_timer (name and category above) */
	uint64_t intervals;
	int64_t t_total_us, t_min_us, t_max_us;
	/* counter, th_counter */
	int64_t count;

	/* region_leave, where tr2-bpf counts the thread's time by state: the
	 * region's time split by enum tr2_state, ns, adding up to split_wall_ns
	 * (t_rel's ns; for a region entered before the counting began, the
	 * time since it began, and split_since_trace is set) */
	bool has_split;
	bool split_since_trace;
	int64_t split_wall_ns;
	int64_t split_ns[TR2_STATE__COUNT];
	/* thread_state: the thread was in `state` (enum tr2_state) from the
	 * event's time on, for dur_ns */
	int state;
	int64_t dur_ns;
};

/* Adds a timer's n2 intervals (total2, min2, max2: ns) into the sums *n,
 * *total, *min and *max: the merge of per-thread timers into a process's,
 * as git's tr2_tmr.c does.  Nothing when n2 is 0; *min and *max are taken
 * from the first intervals added. */
static inline void tr2_timer_add(uint64_t *n, uint64_t *total, uint64_t *min, uint64_t *max,
				 uint64_t n2, uint64_t total2, uint64_t min2, uint64_t max2)
{
	if (!n2)
		return;
	if (!*n || min2 < *min)
		*min = min2;
	if (!*n || max2 > *max)
		*max = max2;
	*n += n2;
	*total += total2;
}

#endif
