/*
 * tr2_inproc.c: the in-process targets, Trace2 without a tracer and without
 * root (trace2(3), IN-PROCESS TARGETS).  trace2_initialize() reads git's
 * GIT_TRACE2* variables (tr2_inproc_init); while a target is open, byte 2 of
 * trace2__state.on is set, so every trace2 call reaches tr2_probe.c, which
 * hands it here (tr2_inproc_call).  Each call becomes one struct tr2_ev with
 * the values git computes in-process -- the ones tr2-bpf computes from
 * outside (loader/tr2_session.c): sid, thread name, nesting, t_abs, t_rel,
 * cmd_name hierarchy, timer and counter totals -- and goes to the
 * formatter's NORMAL, PERF and EVENT targets and destinations, the same code
 * tr2-bpf writes with, compiled into the runtime (usdt/build.mk).
 *
 * State: per thread (name, start, open regions, timer and counter sums) in
 * a block the thread allocates at its first event, reached through a TLS
 * pointer; per process (sid, start, child start times, metric totals, the
 * targets) here, behind one mutex, which also makes each line one write(2)
 * that no other thread's line can interleave with.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tr2_dst.h"
#include "tr2_inproc.h"
#include "tr2_json.h"
#include "tr2_mem.h"
#include "tr2_runtime.h"
#include "tr2_sid.h"
#include "tr2_tgt.h"

#define TR2_MAX_THREAD_NAME 24  /* git's trace2/tr2_tls.h */

/* A timer or counter of the process: git keeps one per name, so two
 * definitions with the same category and name share it (as tr2-bpf does). */
struct metric {
	int is_counter;
	int per_thread;               /* the first definition's */
	char *category, *name;        /* copies: a definition may be unloaded */
	uint64_t intervals, total_ns, min_ns, max_ns;
	uint64_t count;               /* summed in uint64_t, as git's tr2_ctr.c */
	struct metric *next;          /* in first-use order */
};

/* A thread's use of one definition (struct trace2_timer or trace2_counter),
 * since its last thread_exit: what tr2-bpf's BPF side keeps per thread. */
struct slot {
	const void *id;               /* the definition's address */
	struct metric *m;
	int recursion;                /* timers: starts not yet stopped */
	uint64_t start_ns;
	uint64_t intervals, total_ns, min_ns, max_ns;
	uint64_t count;
};

struct thread {
	char name[TR2_MAX_THREAD_NAME + 1];  /* "main", "th%02d:<base>", "th00:unknown" */
	uint64_t start_ns;            /* CLOCK_MONOTONIC */
	size_t depth, cap;            /* open regions; room in region_start */
	uint64_t *region_start;       /* start time of each open region */
	struct slot *slots;
	size_t nslots, slots_cap;
};

/*
 * Batches: a file target (a path that is a regular file) keeps the lines of
 * region, data and printf events in its destination's buffer, whole, and
 * writes them with one write(2) (O_APPEND: no other writer's line gets
 * inside it) -- a write costs more here than git's whole event (bench/
 * inproc.sh).  The batch goes out at BATCH_BYTES (a dozen lines or
 * more), once its first line is BATCH_NS old (checked at each event), with
 * every other event (start, exit, error, child_*, exec, thread_*, ...
 * atexit, signal) and before fork(); a child forked without exec writes
 * each line at once.
 * What a crash can lose: the batch, those lines of region, data and printf
 * events since the last write, when the process ends without its atexit or
 * signal event (SIGKILL, SIGSEGV, _exit(), an exec*() not announced by
 * trace2_exec()), or when a fatal signal lands inside the runtime.
 */
#define BATCH_BYTES 2048
#define BATCH_NS (10 * 1000 * 1000)

struct target {
	struct tr2_target t;
	const char *var;              /* "GIT_TRACE2", ...: for warnings */
	bool pipe;                    /* a FIFO: write with SIGPIPE blocked, as git */
	bool batch;                   /* a regular file: lines batched (above) */
	bool dead;                    /* a write failed: git disables the target */
	uint64_t batch_since;         /* CLOCK_MONOTONIC of the batch's first line */
};

struct child {
	int id;
	uint64_t start_ns;
};

static struct {
	pthread_mutex_t lock;         /* the targets, and all of this but the
					 fields set once by tr2_inproc_init */
	struct target targets[3];
	int ntargets, live;
	bool debug;                   /* GIT_TRACE2_DST_DEBUG */
	char *sid;
	const char *parent_name;      /* GIT_TRACE2_PARENT_NAME at initialize */
	char *hierarchy;              /* the last cmd_name's */
	uint64_t start_ns;            /* CLOCK_MONOTONIC at initialize: t_abs 0 */
	int64_t real_start_us;        /* the same instant, UTC: the sid's time */
	int64_t mono_to_real_ns;      /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct child *children;       /* child_start times, for child_exit's t_rel */
	size_t nchildren, children_cap;
	struct metric *metrics, **metrics_tail;
	pthread_key_t key;            /* its destructor: a thread that ends without
					 trace2_thread_exit() */
	bool have_key;
} proc = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The calling thread's state, NULL until its first event. */
static __thread struct thread *self __attribute__((tls_model("initial-exec")));
/* Inside tr2_inproc_call: a signal handler's trace2 call on this thread
 * must not wait for the mutex this thread may hold, or touch the state it
 * is changing (see tr2_inproc_call). */
static __thread int busy __attribute__((tls_model("initial-exec")));
/* The "signal" events deferred by handlers that interrupted this thread
 * inside tr2_inproc_call, deferred_n of them (a handler fills its entry,
 * then counts it). */
#define DEFERRED_MAX 8
struct deferred {
	const char *file;
	int line;
	int signo;
	uint64_t ns;
};
static __thread struct deferred deferred[DEFERRED_MAX] __attribute__((tls_model("initial-exec")));
static __thread unsigned deferred_n __attribute__((tls_model("initial-exec")));
/* before_fork took the mutex (after_fork_* give it back). */
static __thread int fork_locked __attribute__((tls_model("initial-exec")));

/* Byte 2 of trace2__state.on (bits 16-23 on this little-endian target):
 * ours; bytes 0-1 are the kernel's, never written here. */
static void set_open(int on)
{
	((volatile uint8_t *)&trace2__state.on)[2] = (uint8_t)on;
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* git's warning(): "warning: <msg>" on stderr, one write. */
static void git_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void git_warning(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	memcpy(line, "warning: ", 9);
	va_start(ap, fmt);
	n = vsnprintf(line + 9, sizeof(line) - 10, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = 9 + (n < (int)sizeof(line) - 10 ? n : (int)sizeof(line) - 11);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/* ---- writing ---- */

/* Writes ev to target tg; for a FIFO with SIGPIPE blocked (git ignores
 * SIGPIPE around its write), taking back a SIGPIPE this write raised. */
static int emit_to(struct target *tg, const struct tr2_ev *ev)
{
	sigset_t pipe_set, old, pending;
	int rc, e, was_pending;

	if (!tg->pipe)
		return tr2_target_emit(&tg->t, ev);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	was_pending = !sigpending(&pending) && sigismember(&pending, SIGPIPE);
	rc = tr2_target_emit(&tg->t, ev);
	e = errno;
	if (rc && e == EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return rc;
}

/* Writes target tg's batch; false when the write failed. */
static bool flush_batch(struct target *tg)
{
	return !tg->batch || !tr2_dst_flush(tg->t.dst);
}

/* A failed write: git's tr2_dst_write_line disables the target. */
static void target_failed(struct target *tg)
{
	if (proc.debug)
		git_warning("unable to write trace to '%s': %s", tg->var, strerror(errno));
	tg->dead = true;
	if (!--proc.live)
		set_open(0);
}

/* The events whose lines may wait in a batch: the ones a program makes by
 * the thousand.  Any other event writes the batch out with its own line. */
static bool batched_kind(enum tr2_ev_kind kind)
{
	return kind == TR2_EV_REGION_ENTER || kind == TR2_EV_REGION_LEAVE || kind == TR2_EV_DATA ||
	       kind == TR2_EV_DATA_JSON || kind == TR2_EV_PRINTF;
}

/* Writes ev, made at time now, to every live target; the caller holds the
 * mutex.  A batching target's batch goes out when it reaches BATCH_BYTES,
 * when its first line is BATCH_NS old, and with every event but those of
 * batched_kind(). */
static void emit_locked(const struct tr2_ev *ev, uint64_t now)
{
	for (int i = 0; i < proc.ntargets; i++) {
		struct target *tg = &proc.targets[i];
		struct tr2_buf *batch;
		size_t before;

		if (tg->dead)
			continue;
		batch = tg->batch ? tr2_dst_buffer(tg->t.dst) : NULL;
		before = batch ? batch->len : 0;
		if (emit_to(tg, ev)) {
			target_failed(tg);
			continue;
		}
		if (!batch)
			continue;
		if (!before)
			tg->batch_since = now;
		if ((!batched_kind(ev->kind) || batch->len >= BATCH_BYTES || now - tg->batch_since >= BATCH_NS) &&
		    !flush_batch(tg))
			target_failed(tg);
	}
}

static void emit(const struct tr2_ev *ev, uint64_t now)
{
	pthread_mutex_lock(&proc.lock);
	emit_locked(ev, now);
	pthread_mutex_unlock(&proc.lock);
}

/* ---- threads ---- */

static void name_thread(struct thread *t)
{
	/* git's "th%02d:<base>", cut to 24 bytes */
	const char *base = trace2__tls.base_name;

	if (gettid() == getpid())
		snprintf(t->name, sizeof(t->name), "main");
	else if (trace2__tls.thread_id > 0) {
		int n = snprintf(t->name, sizeof(t->name), "th%02d:", trace2__tls.thread_id);
		size_t room = n > 0 && (size_t)n < sizeof(t->name) ? sizeof(t->name) - 1 - (size_t)n : 0;
		size_t len = strnlen(base, room);

		memcpy(t->name + sizeof(t->name) - 1 - room, base, len);
		t->name[sizeof(t->name) - 1 - room + len] = '\0';
	} else
		snprintf(t->name, sizeof(t->name), "th00:unknown");
}

/* The calling thread's state, made at its first event: the main thread
 * started with the process, another one now (or at its thread_start). */
static struct thread *thread_self(uint64_t now)
{
	struct thread *t = self;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	name_thread(t);
	t->start_ns = strcmp(t->name, "main") ? now : proc.start_ns;
	self = t;
	if (proc.have_key)
		pthread_setspecific(proc.key, t);
	return t;
}

/* The thread's sums go into the process totals, and its slots are freed
 * (git's tr2_update_final_timers); the caller holds the mutex. */
static void merge_slots_locked(struct thread *t)
{
	for (size_t i = 0; i < t->nslots; i++) {
		struct slot *s = &t->slots[i];

		tr2_timer_add(&s->m->intervals, &s->m->total_ns, &s->m->min_ns, &s->m->max_ns,
			     s->intervals, s->total_ns, s->min_ns, s->max_ns);
		s->m->count += s->count;
	}
	t->nslots = 0;
}

static void free_thread(struct thread *t)
{
	free(t->region_start);
	free(t->slots);
	free(t);
}

/* A thread ends without trace2_thread_exit(): its sums still count in the
 * process totals, as tr2-bpf counts them when the thread is gone. */
static void thread_gone(void *arg)
{
	struct thread *t = arg;

	pthread_mutex_lock(&proc.lock);
	merge_slots_locked(t);
	pthread_mutex_unlock(&proc.lock);
	if (self == t)
		self = NULL;
	free_thread(t);
}

/* ---- timers and counters ---- */

/* The process's metric with these names, made in first-use order. */
static struct metric *metric_locked(int is_counter, const char *category, const char *name,
				    int per_thread)
{
	struct metric *m;

	category = category ? category : "";
	name = name ? name : "";
	for (m = proc.metrics; m; m = m->next)
		if (m->is_counter == is_counter && !strcmp(m->category, category) && !strcmp(m->name, name))
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	m->is_counter = is_counter;
	m->per_thread = per_thread != 0;
	m->category = xstrdup(category);
	m->name = xstrdup(name);
	*proc.metrics_tail = m;
	proc.metrics_tail = &m->next;
	return m;
}

/* The thread's slot of definition id; made (from the definition) when
 * missing if create, else NULL. */
static struct slot *slot_of(struct thread *t, const struct tr2_call *c, int create)
{
	int is_counter = c->probe == TRACE2__P_counter_add;
	const struct trace2_timer *timer = c->metric;
	const struct trace2_counter *counter = c->metric;
	struct slot *s;

	for (size_t i = 0; i < t->nslots; i++)
		if (t->slots[i].id == c->metric)
			return &t->slots[i];
	if (!create)
		return NULL;
	if (t->nslots == t->slots_cap) {
		t->slots_cap = t->slots_cap ? 2 * t->slots_cap : 8;
		t->slots = xrealloc(t->slots, t->slots_cap * sizeof(*t->slots));
	}
	s = &t->slots[t->nslots++];
	memset(s, 0, sizeof(*s));
	s->id = c->metric;
	pthread_mutex_lock(&proc.lock);
	s->m = is_counter ? metric_locked(1, counter->category, counter->name, counter->per_thread)
			  : metric_locked(0, timer->category, timer->name, timer->per_thread);
	pthread_mutex_unlock(&proc.lock);
	return s;
}

static void on_metric(struct thread *t, const struct tr2_call *c, uint64_t now)
{
	struct slot *s;
	uint64_t len;

	switch (c->probe) {
	case TRACE2__P_timer_start:
		s = slot_of(t, c, 1);
		if (s->recursion++ == 0)   /* git ignores recursive starts */
			s->start_ns = now;
		return;
	case TRACE2__P_timer_stop:
		s = slot_of(t, c, 0);
		if (!s || s->recursion == 0 || --s->recursion)
			return;
		len = now - s->start_ns;
		if (!s->intervals || len < s->min_ns)
			s->min_ns = len;
		if (len > s->max_ns)
			s->max_ns = len;
		s->total_ns += len;
		s->intervals++;
		return;
	case TRACE2__P_counter_add:
		s = slot_of(t, c, 1);
		s->count += (uint64_t)c->value;
		return;
	}
}

/* ---- events ---- */

/* The fields every event of thread t at time now has. */
static void ev_init(struct tr2_ev *ev, enum tr2_ev_kind kind, const struct thread *t,
		    const struct tr2_call *c, uint64_t now)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->sid = proc.sid;
	ev->thread = t->name;
	ev->time_us = ((int64_t)now + proc.mono_to_real_ns) / 1000;
	ev->file = c->file;
	ev->line = c->line;
	ev->has_t_abs = true;
	ev->t_abs_us = now > proc.start_ns ? (int64_t)(now - proc.start_ns) / 1000 : 0;
	ev->nesting = t->depth < TR2_NESTING_MAX ? 1 + (int)t->depth : TR2_NESTING_MAX;
}

static void set_t_rel(struct tr2_ev *ev, uint64_t now, uint64_t since)
{
	ev->has_t_rel = true;
	ev->t_rel_us = now > since ? (int64_t)(now - since) / 1000 : 0;
}

static int64_t ns_to_us(uint64_t ns)
{
	return (int64_t)((ns + 500) / 1000);
}

static void metric_event(struct tr2_ev *ev, enum tr2_ev_kind kind, const struct thread *t,
			 const struct tr2_call *c, uint64_t now, const struct metric *m,
			 uint64_t intervals, uint64_t total, uint64_t min, uint64_t max, uint64_t count)
{
	ev_init(ev, kind, t, c, now);
	ev->category = m->category;
	ev->name = m->name;
	ev->intervals = intervals;
	ev->t_total_us = ns_to_us(total);
	ev->t_min_us = ns_to_us(min);
	ev->t_max_us = ns_to_us(max);
	ev->count = (int64_t)count;
}

/*
 * The thread ends (thread_exit, or atexit on the thread that exits): the
 * th_timer and th_counter events of its per-thread metrics, a metric's
 * slots merged, timers first (git's tr2_emit_per_thread_timers, then
 * counters), then its sums go into the process totals.
 */
static void close_thread_metrics(struct thread *t, const struct tr2_call *c, uint64_t now)
{
	struct tr2_ev ev;

	for (int counters = 0; counters < 2; counters++)
		for (size_t i = 0; i < t->nslots; i++) {
			struct metric *m = t->slots[i].m;
			uint64_t n = 0, total = 0, min = 0, max = 0, count = 0;
			size_t j;

			for (j = 0; j < i && t->slots[j].m != m; j++)
				;
			if (j < i || !m->per_thread || m->is_counter != counters)
				continue;   /* merged with an earlier slot, or not per thread */
			for (j = i; j < t->nslots; j++)
				if (t->slots[j].m == m) {
					const struct slot *s = &t->slots[j];

					tr2_timer_add(&n, &total, &min, &max, s->intervals, s->total_ns,
						     s->min_ns, s->max_ns);
					count += s->count;
				}
			if (counters ? !count : !n)
				continue;
			metric_event(&ev, counters ? TR2_EV_TH_COUNTER : TR2_EV_TH_TIMER, t, c, now, m, n,
				     total, min, max, count);
			emit(&ev, now);
		}
	pthread_mutex_lock(&proc.lock);
	merge_slots_locked(t);
	pthread_mutex_unlock(&proc.lock);
}

/* atexit: the process totals, timers first (git's tr2_emit_final_timers). */
static void emit_final_metrics(const struct thread *t, const struct tr2_call *c, uint64_t now)
{
	struct tr2_ev ev;

	pthread_mutex_lock(&proc.lock);
	for (const struct metric *m = proc.metrics; m; m = m->next)
		if (!m->is_counter && m->intervals) {
			metric_event(&ev, TR2_EV_TIMER, t, c, now, m, m->intervals, m->total_ns, m->min_ns,
				     m->max_ns, 0);
			emit_locked(&ev, now);
		}
	for (const struct metric *m = proc.metrics; m; m = m->next)
		if (m->is_counter && m->count) {
			metric_event(&ev, TR2_EV_COUNTER, t, c, now, m, 0, 0, 0, 0, m->count);
			emit_locked(&ev, now);
		}
	pthread_mutex_unlock(&proc.lock);
}

/* cmd_name: "<parent's hierarchy>/<name>", kept for child processes in
 * GIT_TRACE2_PARENT_NAME (git's tr2_cmd_name.c).  The parent's is the one
 * the process started with, so that a second cmd_name replaces the first,
 * as tr2-bpf writes it. */
static const char *hierarchy_locked(const char *name)
{
	const char *up = proc.parent_name && *proc.parent_name ? proc.parent_name : NULL;
	size_t n = (up ? strlen(up) + 1 : 0) + strlen(name) + 1;

	proc.hierarchy = xrealloc(proc.hierarchy, n);
	snprintf(proc.hierarchy, n, "%s%s%s", up ? up : "", up ? "/" : "", name);
	setenv("GIT_TRACE2_PARENT_NAME", proc.hierarchy, 1);
	return proc.hierarchy;
}

static void child_started_locked(int id, uint64_t now)
{
	if (proc.nchildren == proc.children_cap) {
		proc.children_cap = proc.children_cap ? 2 * proc.children_cap : 8;
		proc.children = xrealloc(proc.children, proc.children_cap * sizeof(*proc.children));
	}
	proc.children[proc.nchildren].id = id;
	proc.children[proc.nchildren].start_ns = now;
	proc.nchildren++;
}

static const struct child *child_locked(int id)
{
	for (size_t i = 0; i < proc.nchildren; i++)
		if (proc.children[i].id == id)
			return &proc.children[i];
	return NULL;
}

/* The event kind of each probe (timer_start, timer_stop and counter_add
 * write none: their sums come at thread_exit and atexit). */
static const enum tr2_ev_kind kind_of[TRACE2__NPROBES] = {
	[TRACE2__P_version] = TR2_EV_VERSION, [TRACE2__P_start] = TR2_EV_START,
	[TRACE2__P_exit] = TR2_EV_EXIT, [TRACE2__P_atexit] = TR2_EV_ATEXIT,
	[TRACE2__P_signal] = TR2_EV_SIGNAL, [TRACE2__P_error] = TR2_EV_ERROR,
	[TRACE2__P_cmd_path] = TR2_EV_CMD_PATH, [TRACE2__P_cmd_ancestry] = TR2_EV_CMD_ANCESTRY,
	[TRACE2__P_cmd_name] = TR2_EV_CMD_NAME, [TRACE2__P_cmd_mode] = TR2_EV_CMD_MODE,
	[TRACE2__P_alias] = TR2_EV_ALIAS, [TRACE2__P_def_param] = TR2_EV_DEF_PARAM,
	[TRACE2__P_def_repo] = TR2_EV_DEF_REPO, [TRACE2__P_child_start] = TR2_EV_CHILD_START,
	[TRACE2__P_child_exit] = TR2_EV_CHILD_EXIT, [TRACE2__P_child_ready] = TR2_EV_CHILD_READY,
	[TRACE2__P_exec] = TR2_EV_EXEC, [TRACE2__P_exec_result] = TR2_EV_EXEC_RESULT,
	[TRACE2__P_thread_start] = TR2_EV_THREAD_START, [TRACE2__P_thread_exit] = TR2_EV_THREAD_EXIT,
	[TRACE2__P_region_enter] = TR2_EV_REGION_ENTER, [TRACE2__P_region_leave] = TR2_EV_REGION_LEAVE,
	[TRACE2__P_data] = TR2_EV_DATA, [TRACE2__P_data_json] = TR2_EV_DATA_JSON,
	[TRACE2__P_printf] = TR2_EV_PRINTF,
	[TRACE2__P_timer_start] = TR2_EV__COUNT, [TRACE2__P_timer_stop] = TR2_EV__COUNT,
	[TRACE2__P_counter_add] = TR2_EV__COUNT,
};

/* Builds and writes the event of call c on thread t at time now: what
 * tr2-bpf's tr2_session_record() computes for the same call. */
static void call_event(struct thread *t, const struct tr2_call *c, uint64_t now)
{
	bool region_open = t->depth > 0;
	const struct child *ch;
	struct tr2_ev ev;
	char num[24];

	if ((unsigned)c->probe >= TRACE2__NPROBES)
		return;
	if (kind_of[c->probe] == TR2_EV__COUNT) {
		on_metric(t, c, now);
		return;
	}
	/* what comes before the event: a region_leave's nesting is the one
	 * after the pop; the thread's metrics end before its last event */
	if (c->probe == TRACE2__P_region_leave && region_open)
		t->depth--;
	if (c->probe == TRACE2__P_thread_start) {
		t->start_ns = now;
		name_thread(t);
	}
	if (c->probe == TRACE2__P_thread_exit || c->probe == TRACE2__P_atexit)
		close_thread_metrics(t, c, now);
	if (c->probe == TRACE2__P_atexit)
		emit_final_metrics(t, c, now);

	ev_init(&ev, kind_of[c->probe], t, c, now);
	pthread_mutex_lock(&proc.lock);
	switch (c->probe) {
	case TRACE2__P_version:
		/* EVENT format version 4 (git 2.47+), the one with printf
		 * events, as tr2-bpf writes it */
		ev.evt = "4";
		ev.exe = c->s[0];
		break;
	case TRACE2__P_exec:
		ev.exec_id = c->id;
		ev.exe = c->s[0];
		ev.argv = c->vec;
		break;
	case TRACE2__P_alias:
		ev.alias = c->s[0];
		/* fall through */
	case TRACE2__P_start:
		ev.argv = c->vec;
		break;
	case TRACE2__P_exit:
	case TRACE2__P_atexit:
		ev.code = c->code;
		break;
	case TRACE2__P_signal:
		ev.signo = c->code;
		break;
	case TRACE2__P_error:
		ev.msg = c->s[0];
		ev.fmt = c->s[1];
		break;
	case TRACE2__P_cmd_path:
		ev.path = c->s[0];
		break;
	case TRACE2__P_cmd_ancestry:
		ev.ancestry = c->vec;
		break;
	case TRACE2__P_cmd_name:
		ev.name = c->s[0] ? c->s[0] : "";
		ev.hierarchy = hierarchy_locked(ev.name);
		break;
	case TRACE2__P_cmd_mode:
		ev.mode = c->s[0];
		break;
	case TRACE2__P_def_param:
		ev.param = c->s[0];
		ev.value = c->s[1];
		ev.scope = c->s[2];
		break;
	case TRACE2__P_def_repo:
		ev.repo = c->repo_id;
		ev.worktree = c->s[0];
		break;
	case TRACE2__P_child_start:
		ev.child_id = c->id;
		ev.use_shell = c->use_shell != 0;
		ev.child_class = c->s[0] ? c->s[0] : "?";
		ev.hook_name = c->s[1];
		ev.cd = c->s[2];
		ev.argv = c->vec;
		child_started_locked(c->id, now);
		break;
	case TRACE2__P_child_exit:
	case TRACE2__P_child_ready:
		ev.child_id = c->id;
		ev.pid = c->pid;
		ev.code = c->code;
		ev.ready = c->probe == TRACE2__P_child_ready ? c->s[0] : NULL;
		if ((ch = child_locked(c->id)))
			set_t_rel(&ev, now, ch->start_ns);
		break;
	case TRACE2__P_exec_result:
		ev.exec_id = c->id;
		ev.code = c->code;
		break;
	case TRACE2__P_thread_exit:
		set_t_rel(&ev, now, t->start_ns);
		break;
	case TRACE2__P_region_enter:
		if (t->depth == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 16;
			t->region_start = xrealloc(t->region_start, t->cap * sizeof(*t->region_start));
		}
		t->region_start[t->depth++] = now;   /* after the event's nesting */
		/* fall through */
	case TRACE2__P_region_leave:
		/* a leave with no region open has no t_rel */
		if (c->probe == TRACE2__P_region_leave && region_open)
			set_t_rel(&ev, now, t->region_start[t->depth]);
		ev.repo = c->repo_id;
		ev.category = c->s[0];
		ev.label = c->s[1];
		ev.msg = c->s[2];
		break;
	case TRACE2__P_data:
	case TRACE2__P_data_json:
		/* since the innermost open region, else since the thread started */
		set_t_rel(&ev, now, t->depth ? t->region_start[t->depth - 1] : t->start_ns);
		ev.repo = c->repo_id;
		ev.category = c->s[0];
		ev.key = c->s[1];
		ev.value = c->s[2];
		if (c->probe == TRACE2__P_data && !ev.value) {
			snprintf(num, sizeof(num), "%jd", c->value);
			ev.value = num;
		}
		break;
	case TRACE2__P_printf:
		ev.msg = c->s[0];
		break;
	}
	emit_locked(&ev, now);
	pthread_mutex_unlock(&proc.lock);

	if (c->probe == TRACE2__P_atexit) {
		/* git's last event: its targets are disabled after it */
		set_open(0);
	} else if (c->probe == TRACE2__P_thread_exit) {
		/* git forgets the thread: a later event starts afresh */
		if (proc.have_key)
			pthread_setspecific(proc.key, NULL);
		self = NULL;
		free_thread(t);
	}
}

/* Writes the signal events handlers deferred (see tr2_inproc_call), the
 * ones a handler adds meanwhile too. */
static void drain_deferred(void)
{
	unsigned done = 0;

	for (;;) {
		unsigned n = __atomic_load_n(&deferred_n, __ATOMIC_SEQ_CST);
		struct tr2_call d = { .probe = TRACE2__P_signal };
		uint64_t at;

		if (done == n) {
			/* all written: empty the list, unless one came since */
			if (__atomic_compare_exchange_n(&deferred_n, &n, 0, false, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				return;
			continue;
		}
		d.file = deferred[done].file;
		d.line = deferred[done].line;
		d.code = deferred[done].signo;
		at = deferred[done].ns;
		done++;
		call_event(thread_self(at), &d, at);
	}
}

void tr2_inproc_call(const struct tr2_call *c)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (busy) {
		/* A signal handler's call on a thread inside this file: it
		 * waits for the interrupted call (whose mutex or state it would
		 * meet half-done) and is written right after it, at its own
		 * time (up to DEFERRED_MAX of them); other calls from handlers
		 * are dropped.  If the handler ends the process (a fatal
		 * signal's default action), the event is lost, with the lines
		 * still in a batch. */
		unsigned n = __atomic_load_n(&deferred_n, __ATOMIC_SEQ_CST);

		if (c->probe == TRACE2__P_signal && n < DEFERRED_MAX) {
			deferred[n] = (struct deferred){ c->file, c->line, c->code, now };
			__atomic_store_n(&deferred_n, n + 1, __ATOMIC_SEQ_CST);
		}
		return;
	}
	busy = 1;
	drain_deferred();
	call_event(thread_self(now), c, now);
	drain_deferred();
	busy = 0;
}

/* The formatter's data_json check (formatter/tr2_json.h): simdjson's in
 * tr2-bpf and tr2-fmt, this C twin of it in the runtime. */
bool tr2_json_is_valid(const char *text)
{
	return tr2_json_check(text);
}

/* ---- opening: git's GIT_TRACE2* variables ---- */

/* fork: the mutex is taken around it, so that the child's copy of the state
 * is whole, and batches are written first; not by a thread that forks from
 * a signal handler inside this file (it may hold the mutex already). */
static void before_fork(void)
{
	if (busy)
		return;
	pthread_mutex_lock(&proc.lock);
	fork_locked = 1;
	/* the child must not inherit lines it would write a second time */
	for (int i = 0; i < proc.ntargets; i++)
		if (!proc.targets[i].dead && !flush_batch(&proc.targets[i]))
			target_failed(&proc.targets[i]);
}

static void after_fork(void)
{
	if (fork_locked) {
		fork_locked = 0;
		pthread_mutex_unlock(&proc.lock);
	}
}

/* Every target writes each line at once from now on. */
static void stop_batching(void)
{
	for (int i = 0; i < proc.ntargets; i++)
		if (proc.targets[i].batch) {
			tr2_dst_set_buffered(proc.targets[i].t.dst, false);
			proc.targets[i].batch = false;
		}
}

/* A child forked without exec writes each line at once: it may well leave
 * by _exit(), which would lose a batch. */
static void after_fork_child(void)
{
	stop_batching();
	after_fork();
}

/* The session id, made once (at the first target that opens, or for the
 * warning of a directory target that does not): git's tr2_sid.c. */
static void make_sid(void)
{
	const char *parent = getenv("GIT_TRACE2_PARENT_SID");
	char host[16];
	size_t n;

	if (proc.sid)
		return;
	tr2_sid_host(host, sizeof(host));
	n = tr2_sid_format(NULL, 0, parent, proc.real_start_us, host, (uint32_t)getpid()) + 1;
	proc.sid = xrealloc(NULL, n);
	tr2_sid_format(proc.sid, n, parent, proc.real_start_us, host, (uint32_t)getpid());
}

/* The value of an integer variable, git's way: atoi of a non-empty value,
 * -1 when unset or empty. */
static int env_int(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : -1;
}

/* Opens the target that variable var asks for, as git's tr2_dst_get_trace_fd
 * does, with git's warnings: an unknown value always, the others with
 * GIT_TRACE2_DST_DEBUG. */
static void open_target(const char *var, const char *brief_var, const struct tr2_tgt *tgt)
{
	const char *value = getenv(var), *brief = getenv(brief_var), *socket_path = NULL;
	struct tr2_tgt_opts opts = { 0 };
	struct target *tg = &proc.targets[proc.ntargets];
	struct tr2_dst *d = NULL;
	char fd_value[2] = "2";
	struct stat st;
	bool pipe = false, batch = false;
	int fd = -1, e, b;

	switch (tr2_sysenv_target(value, &fd, &socket_path)) {
	case TR2_SYSENV_OFF:
		return;
	case TR2_SYSENV_UNKNOWN:
		git_warning("trace2: unknown value for '%s': '%s'", var, value);
		return;
	case TR2_SYSENV_BAD_SOCKET:
		if (proc.debug)
			git_warning("trace2: invalid AF_UNIX value '%s' for '%s' tracing", value, var);
		return;
	case TR2_SYSENV_BAD_SOCKET_PATH:
		if (proc.debug)
			git_warning("trace2: invalid AF_UNIX path '%s' for '%s' tracing", socket_path, var);
		return;
	case TR2_SYSENV_FD:
		/* git writes to it and disables the target at the first failure */
		if (fstat(fd, &st)) {
			if (proc.debug)
				git_warning("unable to write trace to '%s': %s", var, strerror(errno));
			return;
		}
		pipe = S_ISFIFO(st.st_mode);
		fd_value[0] = (char)('0' + fd);
		d = tr2_dst_open(fd_value, NULL, 0);
		break;
	case TR2_SYSENV_PATH:
		d = tr2_dst_open(value, NULL, 0);
		e = errno;
		if (d) {
			pipe = !stat(value, &st) && S_ISFIFO(st.st_mode);
			batch = !pipe && S_ISREG(st.st_mode);
		} else if (proc.debug) {
			/* git names the file it could not create in a directory */
			bool dir = !stat(value, &st) && S_ISDIR(st.st_mode);
			const char *own;

			make_sid();
			own = strrchr(proc.sid, '/');
			own = own ? own + 1 : proc.sid;
			git_warning("trace2: could not open '%s%s%s' for '%s' tracing: %s", value,
				    dir && value[strlen(value) - 1] != '/' ? "/" : "", dir ? own : "", var,
				    strerror(e));
		}
		break;
	case TR2_SYSENV_AF_UNIX:
		d = tr2_dst_open(value, NULL, 0);
		if (!d && proc.debug)
			git_warning("trace2: could not connect to socket '%s' for '%s' tracing: %s",
				    socket_path, var, strerror(errno));
		break;
	}
	if (!d)
		return;
	tr2_dst_set_quiet(d, true);
	tr2_dst_set_max_files(d, env_int("GIT_TRACE2_MAX_FILES"));
	if (brief && *brief && (b = tr2_sysenv_bool(brief)) != -1)
		opts.brief = b;
	if (tgt == &tr2_tgt_event && env_int("GIT_TRACE2_EVENT_NESTING") > 0)
		opts.event_nesting = env_int("GIT_TRACE2_EVENT_NESTING");
	tr2_target_init(&tg->t, tgt, &opts, d);
	tr2_dst_set_buffered(d, batch);
	tg->var = var;
	tg->pipe = pipe;
	tg->batch = batch;
	proc.ntargets++;
	proc.live++;
}

int tr2_inproc_init(void)
{
	static const char *const vars[] = { "GIT_TRACE2", "GIT_TRACE2_PERF", "GIT_TRACE2_EVENT" };
	uint64_t real_ns, mono_ns;
	int any = 0;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		any |= tr2_sysenv_target(getenv(vars[i]), &(int){ 0 }, NULL) != TR2_SYSENV_OFF;
	if (!any)
		return 0;   /* nothing set: nothing opened, allocated or set */

	proc.debug = env_int("GIT_TRACE2_DST_DEBUG") > 0;
	mono_ns = clock_ns(CLOCK_MONOTONIC);
	real_ns = clock_ns(CLOCK_REALTIME);
	proc.start_ns = mono_ns;
	proc.mono_to_real_ns = (int64_t)(real_ns - mono_ns);
	proc.metrics_tail = &proc.metrics;
	proc.real_start_us = (int64_t)(real_ns / 1000);

	/* git's order: NORMAL, PERF, EVENT */
	open_target("GIT_TRACE2", "GIT_TRACE2_BRIEF", &tr2_tgt_normal);
	open_target("GIT_TRACE2_PERF", "GIT_TRACE2_PERF_BRIEF", &tr2_tgt_perf);
	open_target("GIT_TRACE2_EVENT", "GIT_TRACE2_EVENT_BRIEF", &tr2_tgt_event);
	if (!proc.ntargets) {
		free(proc.sid);
		proc.sid = NULL;
		return 0;
	}
	make_sid();
	/* Children (git, or another program of ours) nest their sessions in
	 * this one; GIT_TRACE2_PARENT_NAME is set at cmd_name. */
	setenv("GIT_TRACE2_PARENT_SID", proc.sid, 1);
	proc.parent_name = getenv("GIT_TRACE2_PARENT_NAME");
	if (proc.parent_name)
		proc.parent_name = xstrdup(proc.parent_name);
	/* Without the key, a thread that ends without trace2_thread_exit()
	 * takes its sums and its memory with it; without the fork handlers,
	 * a child could write its parent's batch again: no batches then. */
	proc.have_key = !pthread_key_create(&proc.key, thread_gone);
	if (pthread_atfork(before_fork, after_fork, after_fork_child))
		stop_batching();
	set_open(1);
	return proc.ntargets;
}
