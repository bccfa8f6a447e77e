/* tr2_view.h: what the chrome and folded targets remember across events --
 * the traced processes (by sid), their threads (by Trace2 thread name), the
 * regions open on each thread and the children started.  Private to
 * formatter/.
 *
 * Times here are ns since the Unix epoch: an event's time_us * 1000 +
 * time_ns (tr2_view_ns, clamped to what int64_t holds).
 */
#ifndef TR2_VIEW_H
#define TR2_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "tr2_event.h"
#include "tr2_tgt.h"

/* Threads other than main, thread-state tracks, and processes whose sid
 * names no pid, get ids from here up: above Linux's PID_MAX_LIMIT (2^22),
 * so never a real pid. */
#define TR2_VIEW_ID_BASE ((1u << 22) + 1)

/* One open region of a thread. */
struct tr2_view_frame {
	size_t name_off;   /* its "category:label" in the thread's names, NUL-terminated */
	size_t extra_len;  /* bytes a target kept after the name (tr2_view_keep) */
	int64_t start_ns;  /* when it was entered */
	int64_t child_ns;  /* time spent in the regions it enclosed, ns (folded's self time) */
};

struct tr2_view_thread {
	char *name;                    /* Trace2 thread name: "main", "th01:reader" */
	uint32_t tid;                  /* main: the pid; others: TR2_VIEW_ID_BASE and up */
	int64_t first_ns;              /* its first event */
	uint32_t states_tid;           /* chrome: the tid of its thread-state track; 0: none yet */
	struct tr2_view_frame *frames; /* the open regions, outermost first */
	int depth, cap;
	struct tr2_buf names;          /* the open regions' names, each followed by what
					  tr2_view_keep kept with it */
};

/* A child_start not yet matched by its child_exit. */
struct tr2_view_child {
	int child_id;
	int64_t start_ns;
	uint32_t tid;        /* the thread that started it */
	char *name;          /* "child:<class>" (or the hook's name) */
};

struct tr2_view_proc {
	char *sid;
	uint64_t stream;         /* with sid, the process's key (tr2_ev's stream) */
	uint32_t pid;            /* from the sid's last "-P<hex>"; TR2_VIEW_ID_BASE and up when the
				    sid has none or a process of the view that has not ended
				    has it already (pid namespaces, merged traces) */
	int index;               /* order of appearance, from 0 */
	char *name;              /* cmd_name, else argv[0]'s last part; NULL until known */
	bool named_by_cmd;       /* name came from cmd_name: a later start does not change it */
	int64_t first_ns, last_ns;
	bool started;            /* chrome: its output has begun (the '[' written) */
	bool ended;              /* its atexit or signal was seen (tr2_view_end) */
	struct tr2_view_thread **threads;
	int nthreads, last_thread;
	struct tr2_view_child *children;
	int nchildren;
};

struct tr2_view {
	struct tr2_view_proc **procs;  /* in order of appearance */
	int nprocs;
	struct tr2_view_proc **slots;  /* open addressing by sid; nslots a power of 2 */
	size_t nslots;
	struct tr2_view_proc *last;
	uint32_t next_id;
};

/* µs (a time or a t_rel) as ns, clamped to what int64_t holds with room for
 * time_ns (±292 years around 1970: every real time).  Sums and differences
 * of such values, whatever a hostile EVENT line says, go through
 * tr2_view_add and tr2_view_sub. */
static inline int64_t tr2_view_us_to_ns(int64_t us)
{
	const int64_t max_us = (INT64_MAX - 999) / 1000;

	return (us > max_us ? max_us : us < -max_us ? -max_us : us) * 1000;
}

/* The event's time in ns since the Unix epoch (time_ns: at most 999 either way). */
static inline int64_t tr2_view_ns(const struct tr2_ev *ev)
{
	return tr2_view_us_to_ns(ev->time_us) + ev->time_ns;
}

/* a + b and a - b, saturated at INT64_MIN and INT64_MAX: sums of durations. */
static inline int64_t tr2_view_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline int64_t tr2_view_sub(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

/* FNV-1a of a string, for hash tables of names. */
size_t tr2_view_hash(const char *s);

/* An empty view; tr2_view_free frees it.  Aborts if memory runs out. */
struct tr2_view *tr2_view_new(void);
void tr2_view_free(struct tr2_view *v);

/* The process of sid (NULL counts as ""), made on first sight (*is_new
 * true); its last_ns becomes now_ns when that is later (a thread's state
 * stretches come after later events). */
struct tr2_view_proc *tr2_view_proc(struct tr2_view *v, const char *sid, uint64_t stream, int64_t now_ns,
				    bool *is_new);

/* The process of sid (NULL counts as ""), or NULL when the view has none. */
struct tr2_view_proc *tr2_view_find(const struct tr2_view *v, const char *sid, uint64_t stream);

/* The thread of p named name (NULL counts as "main"), made on first sight. */
struct tr2_view_thread *tr2_view_thread(struct tr2_view *v, struct tr2_view_proc *p, const char *name,
					int64_t now_ns, bool *is_new);

/* Opens a region named "<category>:<label>" (NULLs as "") on t at now_ns;
 * returns its frame. */
struct tr2_view_frame *tr2_view_push(struct tr2_view_thread *t, const char *category, const char *label,
				     int64_t now_ns);

/* The name of frame f of t. */
static inline const char *tr2_view_frame_name(const struct tr2_view_thread *t, const struct tr2_view_frame *f)
{
	return t->names.p + f->name_off;
}

/* Keeps n bytes of text with t's innermost frame (chrome: the args of its
 * "B", repeated in its "E"), until it is popped. */
void tr2_view_keep(struct tr2_view_thread *t, const char *text, size_t n);

/* The text kept with frame f (tr2_view_keep), f->extra_len bytes. */
static inline const char *tr2_view_kept(const struct tr2_view_thread *t, const struct tr2_view_frame *f)
{
	return t->names.p + f->name_off + strlen(t->names.p + f->name_off) + 1;
}

/* Closes t's innermost region: adds its duration to its parent's child_ns
 * and forgets its name.  The frame stays readable until the next push. */
void tr2_view_pop(struct tr2_view_thread *t, int64_t now_ns);

/* Remembers a child_start (name is copied). */
void tr2_view_child_start(struct tr2_view_proc *p, int child_id, int64_t now_ns, uint32_t tid, const char *name);

/* Takes the child_start of child_id out of p into *out (the caller frees
 * out->name); false when there was none (started before the trace). */
bool tr2_view_child_take(struct tr2_view_proc *p, int child_id, struct tr2_view_child *out);

/* The process whose pid is pid, or NULL. */
struct tr2_view_proc *tr2_view_proc_by_pid(const struct tr2_view *v, uint32_t pid);

/* Marks p ended (its atexit or signal): a later process may reuse its pid. */
static inline void tr2_view_end(struct tr2_view_proc *p)
{
	p->ended = true;
}

/* Sets p's name from a cmd_name (name) or a start (argv[0]'s last part). */
void tr2_view_name_proc(struct tr2_view_proc *p, const struct tr2_ev *ev);

#endif
