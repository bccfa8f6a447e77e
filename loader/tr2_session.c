/* tr2_session.c: see tr2_session.h.  Mirrors what git computes in-process
 * (trace2/tr2_sid.c, tr2_tls.c, tr2_tmr.c, tr2_ctr.c), from the outside. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tr2_mem.h"
#include "tr2_session.h"
#include "tr2_sid.h"
#include "tr2_dst.h"
#include "tr2_summary.h"
#include "tr2_tgt.h"

#define TR2_MAX_THREAD_NAME 24  /* git's trace2/tr2_tls.h */

/* A timer or counter of a process (TRACE2_DEFINE_TIMER / _COUNTER), with
 * the totals of the threads that have exited (git's final_timer_block). */
struct metric {
	long id;               /* address of the definition in the program */
	int is_counter;
	int per_thread;
	char *category, *name;
	uint64_t intervals, total_ns, min_ns, max_ns;
	uint64_t count;        /* git's tr2_ctr.c sums in uint64_t: it wraps */
	struct metric *next;   /* in first-use order */
};

/* One thread's use of a metric (git's per-thread timer_block). */
struct thread_metric {
	struct metric *m;
	uint64_t intervals, total_ns, min_ns, max_ns;
	uint64_t count;
	struct thread_metric *next;
};

/* Another id (definition) of a metric with the same names. */
struct id_alias {
	long id;
	struct metric *m;
	struct id_alias *next;
};

struct proc;

struct thread {
	uint32_t tid;
	struct proc *proc;
	char name[TR2_MAX_THREAD_NAME + 1];
	uint64_t start_ns;
	struct thread_metric *metrics;
	struct thread *hnext;  /* hash chain */
};

struct child {
	int id;
	uint64_t start_ns;
};

/* A traced process.  It is freed when it is gone (its last thread exited)
 * and no process it is the parent of is still kept: children find their
 * parent session through `parent`. */
struct proc {
	uint32_t pid, ppid;
	struct proc *parent;   /* the parent process's state, when known */
	int children;          /* kept processes whose parent this is */
	int gone;              /* exited: no longer found by pid */
	uint64_t start_ns;     /* CLOCK_MONOTONIC; t_abs counts from here */
	char *sid;             /* NULL until its first event */
	char *exec_parent_sid; /* after exec: the session before it */
	char *exec_parent_hierarchy; /* after exec: the cmd_name hierarchy before it */
	char *hierarchy;       /* last cmd_name's hierarchy */
	int exit_code;
	struct child *children_started; /* child_start events, for child_exit's t_rel */
	int nstarted, cap;
	struct metric *metrics, **metrics_tail;
	struct id_alias *aliases;
	struct proc *hnext;
};

#define NBUCKETS 1024

struct tr2_session {
	struct tr2_target **targets;
	int ntargets;
	int64_t mono_to_real_ns;
	char host_hash[16];
	uint64_t events;
	int live_targets;      /* targets whose destination still takes lines */
	unsigned char dead[16];
	struct proc *procs[NBUCKETS];
	struct thread *threads[NBUCKETS];
	struct thread *last;   /* lookup cache: records come in runs per thread */
	struct tr2_summary *summary;   /* --summary: gets every event too; NULL: none */
};

struct tr2_session *tr2_session_new(struct tr2_target **targets, int ntargets,
				    int64_t mono_to_real_ns, const char *host_hash)
{
	struct tr2_session *s = xcalloc(1, sizeof(*s));

	s->targets = targets;
	s->ntargets = ntargets < 16 ? ntargets : 16;
	s->live_targets = s->ntargets;
	s->mono_to_real_ns = mono_to_real_ns;
	snprintf(s->host_hash, sizeof(s->host_hash), "%s", host_hash);
	return s;
}

void tr2_session_set_summary(struct tr2_session *s, struct tr2_summary *summary)
{
	s->summary = summary;
}

uint64_t tr2_session_events(const struct tr2_session *s)
{
	return s->events;
}

static struct proc *find_proc(struct tr2_session *s, uint32_t pid)
{
	struct proc *p;

	for (p = s->procs[pid % NBUCKETS]; p; p = p->hnext)
		if (p->pid == pid && !p->gone)
			return p;
	return NULL;
}

/* Links p to its parent's state, once, when the parent is known. */
static void set_parent(struct tr2_session *s, struct proc *p)
{
	struct proc *q = p->parent || !p->ppid ? NULL : find_proc(s, p->ppid);

	if (q && q != p) {
		p->parent = q;
		q->children++;
	}
}

static struct proc *get_proc(struct tr2_session *s, uint32_t pid)
{
	struct proc *p = find_proc(s, pid);

	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->metrics_tail = &p->metrics;
	p->hnext = s->procs[pid % NBUCKETS];
	s->procs[pid % NBUCKETS] = p;
	return p;
}

static void free_metrics(struct proc *p)
{
	while (p->metrics) {
		struct metric *m = p->metrics->next;

		free(p->metrics->category);
		free(p->metrics->name);
		free(p->metrics);
		p->metrics = m;
	}
	p->metrics_tail = &p->metrics;
	while (p->aliases) {
		struct id_alias *a = p->aliases->next;

		free(p->aliases);
		p->aliases = a;
	}
}

static void name_thread(struct thread *t, int32_t thread_id, const char *base)
{
	if (t->tid == t->proc->pid)
		snprintf(t->name, sizeof(t->name), "main");
	else if (thread_id > 0)
		snprintf(t->name, sizeof(t->name), "th%02d:%s", thread_id, base ? base : "");
	else
		snprintf(t->name, sizeof(t->name), "th00:unknown");
}

static struct thread *find_thread(struct tr2_session *s, uint32_t tid)
{
	struct thread *t;

	if (s->last && s->last->tid == tid)
		return s->last;
	for (t = s->threads[tid % NBUCKETS]; t; t = t->hnext)
		if (t->tid == tid)
			return s->last = t;
	return NULL;
}

static struct thread *new_thread(struct tr2_session *s, struct proc *p, uint32_t tid)
{
	struct thread *t = xcalloc(1, sizeof(*t));

	t->tid = tid;
	t->proc = p;
	name_thread(t, 0, NULL);
	t->hnext = s->threads[tid % NBUCKETS];
	s->threads[tid % NBUCKETS] = t;
	return s->last = t;
}

static void free_thread_metrics(struct thread *t)
{
	while (t->metrics) {
		struct thread_metric *n = t->metrics->next;

		free(t->metrics);
		t->metrics = n;
	}
}

static void drop_thread(struct tr2_session *s, struct thread *t)
{
	struct thread **pp;

	for (pp = &s->threads[t->tid % NBUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	if (s->last == t)
		s->last = NULL;
	free_thread_metrics(t);
	free(t);
}

/* The thread a probe record came from; made up from the record when its
 * TR2_REC_THREAD_INFO was lost. */
static struct thread *thread_of(struct tr2_session *s, const struct tr2_rec *h)
{
	struct thread *t = find_thread(s, h->tid);
	struct proc *p;

	if (t && t->proc->pid == h->pid)
		return t;
	if (t)
		drop_thread(s, t); /* a reused tid */
	p = get_proc(s, h->pid);
	if (!p->start_ns)
		p->start_ns = h->ts_ns;
	t = new_thread(s, p, h->tid);
	t->start_ns = p->start_ns;
	return t;
}

/* The process's sid (tr2_sid.c): under its parent's, which exec keeps, or
 * else the nearest traced ancestor's that wrote events, as
 * GIT_TRACE2_PARENT_SID would have made it. */
static void make_sid(struct tr2_session *s, struct proc *p)
{
	int64_t real_us = ((int64_t)p->start_ns + s->mono_to_real_ns) / 1000;
	const char *parent = p->exec_parent_sid;
	struct proc *q;
	size_t n;
	int hops;

	set_parent(s, p);
	for (q = p->parent, hops = 0; !parent && q && hops < 64; q = q->parent, hops++)
		if (q->sid)
			parent = q->sid;
	n = tr2_sid_format(NULL, 0, parent, real_us, s->host_hash, p->pid) + 1;
	p->sid = xcalloc(1, n);
	tr2_sid_format(p->sid, n, parent, real_us, s->host_hash, p->pid);
}

/* The parent session's last cmd_name hierarchy, for "parent/child". */
static const char *parent_hierarchy(struct tr2_session *s, struct proc *p)
{
	struct proc *q;
	int hops;

	/* exec keeps GIT_TRACE2_PARENT_NAME, as it keeps the parent sid */
	if (p->exec_parent_sid)
		return p->exec_parent_hierarchy;
	for (q = p->parent, hops = 0; q && hops < 64; q = q->parent, hops++)
		if (q->sid && q->hierarchy && !strncmp(p->sid, q->sid, strlen(q->sid)))
			return q->hierarchy;
	return NULL;
}

static void emit(struct tr2_session *s, uint32_t pid, const struct tr2_ev *ev)
{
	/* A destination that failed (reported once by tr2_dst) gets no more
	 * lines; the others go on.  One with a file or connection per process
	 * fails per process: it drops and counts that process's lines. */
	for (int i = 0; i < s->ntargets; i++)
		if (!s->dead[i] && tr2_target_emit(s->targets[i], ev) &&
		    !tr2_dst_per_process(s->targets[i]->dst)) {
			s->dead[i] = 1;
			s->live_targets--;
		}
	if (s->summary)
		tr2_summary_event(s->summary, pid, ev);
	s->events++;
}

/* The stream of sid has ended without atexit or signal: the process is
 * gone (killed), or exec replaced its image.  Each target ends it now
 * (tr2_target_end_process: a socket's connection closes, as the kernel
 * closes a dead git's), not at the end of the trace. */
static void end_stream(struct tr2_session *s, const char *sid)
{
	for (int i = 0; i < s->ntargets; i++)
		if (!s->dead[i] && tr2_target_end_process(s->targets[i], sid)) {
			s->dead[i] = 1;
			s->live_targets--;
		}
}

void tr2_session_flush(struct tr2_session *s)
{
	for (int i = 0; i < s->ntargets; i++)
		if (!s->dead[i] && tr2_dst_flush(s->targets[i]->dst)) {
			s->dead[i] = 1;
			s->live_targets--;
		}
}

int tr2_session_writing(const struct tr2_session *s)
{
	return s->live_targets > 0;
}

/* Fills the fields every event of thread t at time ts has. */
static void ev_init(struct tr2_session *s, struct tr2_ev *ev, enum tr2_ev_kind kind,
		    struct thread *t, const struct tr2_decoded *d)
{
	struct proc *p = t->proc;
	uint64_t ts = d->hdr.ts_ns;

	if (!p->sid)
		make_sid(s, p);
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->sid = p->sid;
	ev->thread = t->name;
	ev->time_us = ((int64_t)ts + s->mono_to_real_ns) / 1000;
	ev->time_ns = (int)(((int64_t)ts + s->mono_to_real_ns) % 1000);
	ev->file = d->str[0];
	ev->line = d->hdr.line;
	ev->has_t_abs = 1;
	ev->t_abs_us = ts > p->start_ns ? (int64_t)(ts - p->start_ns) / 1000 : 0;
	ev->nesting = d->hdr.depth < TR2_NESTING_MAX ? 1 + (int)d->hdr.depth : TR2_NESTING_MAX;
}

static void set_t_rel(struct tr2_ev *ev, uint64_t now, uint64_t since)
{
	ev->has_t_rel = 1;
	ev->t_rel_ns = now > since ? (int64_t)(now - since) : 0;
	ev->t_rel_us = ev->t_rel_ns / 1000;
}

/* t_rel of data events: since the innermost open region, else the thread;
 * none when that region was entered before the attach. */
static void set_t_rel_in_region(struct tr2_ev *ev, const struct thread *t, const struct tr2_rec *h)
{
	if (h->depth == 0)
		set_t_rel(ev, h->ts_ns, t->start_ns);
	else if (h->region_ns)
		set_t_rel(ev, h->ts_ns, h->region_ns);
}

/* A definition record: the metric's names.  Definitions in two files share
 * one line when category and name agree, as git's metrics are one per name:
 * the second id becomes an alias of the first. */
static struct metric *metric_by_id(struct proc *p, long id, int is_counter)
{
	for (struct metric *m = p->metrics; m; m = m->next)
		if (m->id == id && m->is_counter == is_counter)
			return m;
	return NULL;
}

/* Adds a metric to the process, last in first-use order. */
static struct metric *new_metric(struct proc *p, long id, int is_counter, int per_thread,
				 const char *category, const char *name)
{
	struct metric *m = xcalloc(1, sizeof(*m));

	m->id = id;
	m->is_counter = is_counter;
	m->per_thread = per_thread;
	m->category = xstrdup(category);
	m->name = xstrdup(name);
	*p->metrics_tail = m;
	p->metrics_tail = &m->next;
	return m;
}

static void define_metric(struct proc *p, const struct tr2_decoded *d, int is_counter)
{
	const char *category = d->str[1] ? d->str[1] : "", *name = d->str[2] ? d->str[2] : "";
	struct metric *m;

	if (metric_by_id(p, d->hdr.num[0], is_counter))
		return;
	for (m = p->metrics; m; m = m->next)
		if (m->is_counter == is_counter && !strcmp(m->category, category) && !strcmp(m->name, name)) {
			struct id_alias *a = xcalloc(1, sizeof(*a));

			a->id = d->hdr.num[0];
			a->m = m;
			a->next = p->aliases;
			p->aliases = a;
			return;
		}
	new_metric(p, d->hdr.num[0], is_counter, d->hdr.num[1] != 0, category, name);
}

/* A metric whose definition record was lost: named "?" so that its sums
 * still show. */
static struct metric *find_metric(struct proc *p, long id, int is_counter)
{
	struct metric *m = metric_by_id(p, id, is_counter);

	return m ? m : new_metric(p, id, is_counter, 0, "?", "?");
}

static struct thread_metric *get_thread_metric(struct thread *t, struct metric *m)
{
	struct thread_metric *tm, **tail = &t->metrics;

	for (tm = t->metrics; tm; tm = tm->next) {
		if (tm->m == m)
			return tm;
		tail = &tm->next;
	}
	tm = xcalloc(1, sizeof(*tm));
	tm->m = m;
	*tail = tm;
	return tm;
}

static int64_t ns_to_us(uint64_t ns)
{
	return (int64_t)((ns + 500) / 1000);
}

static void emit_metric(struct tr2_session *s, struct thread *t, const struct tr2_decoded *d,
			const struct metric *m, enum tr2_ev_kind kind, uint64_t intervals,
			uint64_t total, uint64_t min, uint64_t max, uint64_t count)
{
	struct tr2_ev ev;

	ev_init(s, &ev, kind, t, d);
	ev.category = m->category;
	ev.name = m->name;
	ev.intervals = intervals;
	ev.t_total_us = ns_to_us(total);
	ev.t_min_us = ns_to_us(min);
	ev.t_max_us = ns_to_us(max);
	ev.count = (int64_t)count;
	emit(s, t->proc->pid, &ev);
}

/* The thread's sums go into its process's totals (git's
 * tr2_update_final_timers). */
static void merge_thread_metrics(struct thread *t)
{
	for (struct thread_metric *tm = t->metrics; tm; tm = tm->next) {
		struct metric *m = tm->m;

		tr2_timer_add(&m->intervals, &m->total_ns, &m->min_ns, &m->max_ns,
			     tm->intervals, tm->total_ns, tm->min_ns, tm->max_ns);
		m->count += tm->count;
	}
	free_thread_metrics(t);
}

/* A thread ends (thread_exit or atexit): its per-thread events (th_timer,
 * th_counter), then its sums go into the process totals (git's
 * tr2_emit_per_thread_timers). */
static void close_thread_metrics(struct tr2_session *s, struct thread *t, const struct tr2_decoded *d)
{
	struct thread_metric *tm;

	for (tm = t->metrics; tm; tm = tm->next)
		if (tm->m->per_thread && !tm->m->is_counter && tm->intervals)
			emit_metric(s, t, d, tm->m, TR2_EV_TH_TIMER, tm->intervals, tm->total_ns,
				    tm->min_ns, tm->max_ns, 0);
	for (tm = t->metrics; tm; tm = tm->next)
		if (tm->m->per_thread && tm->m->is_counter && tm->count)
			emit_metric(s, t, d, tm->m, TR2_EV_TH_COUNTER, 0, 0, 0, 0, tm->count);
	merge_thread_metrics(t);
}

static void emit_final_metrics(struct tr2_session *s, struct thread *t, const struct tr2_decoded *d)
{
	struct metric *m;

	for (m = t->proc->metrics; m; m = m->next)
		if (!m->is_counter && m->intervals)
			emit_metric(s, t, d, m, TR2_EV_TIMER, m->intervals, m->total_ns, m->min_ns,
				    m->max_ns, 0);
	for (m = t->proc->metrics; m; m = m->next)
		if (m->is_counter && m->count)
			emit_metric(s, t, d, m, TR2_EV_COUNTER, 0, 0, 0, 0, m->count);
}

static struct child *find_child(struct proc *p, int id)
{
	for (int i = 0; i < p->nstarted; i++)
		if (p->children_started[i].id == id)
			return &p->children_started[i];
	return NULL;
}

static void add_child(struct proc *p, int id, uint64_t ts)
{
	p->children_started = tr2_grow(p->children_started, p->nstarted, &p->cap,
				       sizeof(*p->children_started));
	p->children_started[p->nstarted].id = id;
	p->children_started[p->nstarted].start_ns = ts;
	p->nstarted++;
}

/* A start time (ns) from the kernel, or `now` when it cannot be one: in the
 * future or out of the range tr2_decode accepts for times. */
static uint64_t sane_start(int64_t start_ns, uint64_t now)
{
	return start_ns > 0 && (uint64_t)start_ns <= now ? (uint64_t)start_ns : now;
}

static void on_thread_info(struct tr2_session *s, const struct tr2_decoded *d)
{
	const struct tr2_rec *h = &d->hdr;
	struct proc *p = get_proc(s, h->pid);
	struct thread *t = find_thread(s, h->tid);

	if (!p->ppid)
		p->ppid = (uint32_t)h->num[0];
	set_parent(s, p);
	if (!p->start_ns)
		p->start_ns = sane_start(h->num[1], h->ts_ns);
	if (t && t->proc != p) {
		drop_thread(s, t);
		t = NULL;
	}
	if (!t)
		t = new_thread(s, p, h->tid);
	t->start_ns = h->tid == h->pid ? p->start_ns : sane_start(h->num[2], h->ts_ns);
	name_thread(t, h->thread_id, d->str[0]);
	if (s->summary && h->tid == h->pid && d->nstr >= 2)
		tr2_summary_comm(s->summary, h->pid, d->str[1]);
}

/* exec: the process is a new program and a new session, child of the old. */
static void on_execve(struct tr2_session *s, const struct tr2_decoded *d)
{
	struct proc *p = get_proc(s, d->hdr.pid);
	struct thread *t = find_thread(s, d->hdr.pid);

	if (p->sid) {
		end_stream(s, p->sid);
		free(p->exec_parent_sid);
		p->exec_parent_sid = p->sid;
		p->sid = NULL;
		free(p->exec_parent_hierarchy);
		p->exec_parent_hierarchy = p->hierarchy;
		p->hierarchy = NULL;
	}
	p->start_ns = d->hdr.ts_ns;
	p->nstarted = 0;
	/* exec leaves one thread, the one that called it, renamed to the pid. */
	for (int i = 0; i < NBUCKETS; i++)
		for (struct thread *o = s->threads[i], *next; o; o = next) {
			next = o->hnext;
			if (o->proc == p && o != t)
				drop_thread(s, o);
		}
	if (t) {
		t->start_ns = p->start_ns;
		free_thread_metrics(t);
	}
	free_metrics(p);
}

void tr2_session_resumed(struct tr2_session *s, uint32_t pid, uint64_t from_ns, uint64_t to_ns)
{
	struct proc *p = find_proc(s, pid);

	if (p && !p->sid && to_ns > from_ns)
		p->start_ns += to_ns - from_ns;
}

void tr2_session_lost(struct tr2_session *s, uint32_t pid, uint64_t count, uint64_t now_ns)
{
	struct tr2_decoded d;
	struct thread *t;
	struct tr2_ev ev;
	char num[32];

	/* A record-like header, so that the marker goes through the same
	 * thread lookup and timing as the events around it. */
	memset(&d.hdr, 0, sizeof(d.hdr));
	d.hdr.pid = pid;
	d.hdr.tid = pid;
	d.hdr.ts_ns = now_ns;
	d.str[0] = NULL;
	t = thread_of(s, &d.hdr);
	ev_init(s, &ev, TR2_EV_DATA, t, &d);
	set_t_rel_in_region(&ev, t, &d.hdr);
	ev.category = "tr2";
	ev.key = "lost_events";
	snprintf(num, sizeof(num), "%" PRIu64, count);
	ev.value = num;
	emit(s, pid, &ev);
	s->events--; /* a marker, not one of the program's events */
}

/* Thread t's sums of the metrics in d (a TR2_REC_METRICS record), added to
 * those it already has: the thread_exit or atexit record that follows
 * reports them.  A thread that ended without thread_exit (num[1]) has no
 * such record: its sums go into the process's totals at once. */
static void add_metrics(struct thread *t, const struct tr2_decoded *d)
{
	struct proc *p = t->proc;

	for (unsigned i = 0; i < d->nmetrics; i++) {
		const struct tr2_metric *v = &d->metrics[i];
		struct thread_metric *tm;
		struct metric *m = NULL;

		/* Definitions in two files with the same names share one metric:
		 * the definition record of the second id was matched by name to
		 * the first. */
		for (struct id_alias *a = p->aliases; a && !m; a = a->next)
			if (a->id == (long)v->id)
				m = a->m;
		if (!m)
			m = find_metric(p, (long)v->id, v->is_counter != 0);
		tm = get_thread_metric(t, m);
		tr2_timer_add(&tm->intervals, &tm->total_ns, &tm->min_ns, &tm->max_ns, v->intervals,
			     v->total_ns, v->min_ns, v->max_ns);
		tm->count += (uint64_t)v->count;
	}
	if (d->hdr.num[1])
		merge_thread_metrics(t);
}

static void free_proc(struct proc *p)
{
	free_metrics(p);
	free(p->sid);
	free(p->exec_parent_sid);
	free(p->exec_parent_hierarchy);
	free(p->hierarchy);
	free(p->children_started);
	free(p);
}

/* Unlinks and frees p if it is gone and no kept process is its child, then
 * its parent likewise. */
static void release_proc(struct tr2_session *s, struct proc *p)
{
	while (p && p->gone && !p->children) {
		struct proc *parent = p->parent, **pp;

		for (pp = &s->procs[p->pid % NBUCKETS]; *pp != p; pp = &(*pp)->hnext)
			;
		*pp = p->hnext;
		free_proc(p);
		if (parent)
			parent->children--;
		p = parent;
	}
}

/* The last thread of p exited: what it kept goes, but for what its kept
 * children still need (its sid and cmd_name hierarchy). */
static void proc_gone(struct tr2_session *s, struct proc *p)
{
	if (p->sid)
		end_stream(s, p->sid);
	for (int i = 0; i < NBUCKETS; i++)
		for (struct thread *t = s->threads[i], *next; t; t = next) {
			next = t->hnext;
			if (t->proc == p)
				drop_thread(s, t);
		}
	p->gone = 1;
	free_metrics(p);
	free(p->children_started);
	p->children_started = NULL;
	p->nstarted = p->cap = 0;
	release_proc(s, p);
}

void tr2_session_record(struct tr2_session *s, const struct tr2_decoded *d)
{
	const struct tr2_rec *h = &d->hdr;
	char num[32];
	struct tr2_ev ev;
	struct thread *t;
	struct proc *p;

	switch (h->kind) {
	case TR2_REC_THREAD_INFO:
		on_thread_info(s, d);
		return;
	case TR2_REC_FORK:
		p = get_proc(s, h->pid);
		p->ppid = (uint32_t)h->num[0];
		p->start_ns = sane_start(h->num[1], h->ts_ns);
		set_parent(s, p);
		return;
	case TR2_REC_PROC_GONE:
		p = find_proc(s, h->pid);
		if (p)
			proc_gone(s, p);
		if (s->summary)
			tr2_summary_proc_gone(s->summary, h->pid);
		return;
	case TR2_REC_EXECVE:
		on_execve(s, d);
		return;
	case TR2_REC_NEW_OBJECT:
		return;
	case TR2_REC_THREAD_GONE:
		t = find_thread(s, h->tid);
		if (t && t->proc->pid == h->pid)
			drop_thread(s, t);
		return;
	}

	t = thread_of(s, h);
	p = t->proc;
	switch (h->kind) {
	case TR2_REC_VERSION:
		ev_init(s, &ev, TR2_EV_VERSION, t, d);
		/* EVENT format version 4 (git 2.47+): the one with printf events,
		 * which tr2's EVENT target writes. */
		ev.evt = "4";
		ev.exe = d->str[1];
		break;
	case TR2_REC_START:
		ev_init(s, &ev, TR2_EV_START, t, d);
		ev.argv = d->vec;
		break;
	case TR2_REC_EXIT:
		ev_init(s, &ev, TR2_EV_EXIT, t, d);
		ev.code = p->exit_code = (int)h->num[0];
		break;
	case TR2_REC_ATEXIT:
		close_thread_metrics(s, t, d);
		emit_final_metrics(s, t, d);
		ev_init(s, &ev, TR2_EV_ATEXIT, t, d);
		ev.code = (int)h->num[0];
		break;
	case TR2_REC_SIGNAL:
		ev_init(s, &ev, TR2_EV_SIGNAL, t, d);
		ev.signo = (int)h->num[0];
		break;
	case TR2_REC_ERROR:
		ev_init(s, &ev, TR2_EV_ERROR, t, d);
		ev.msg = d->str[1];
		ev.fmt = d->str[2];
		break;
	case TR2_REC_CMD_PATH:
		ev_init(s, &ev, TR2_EV_CMD_PATH, t, d);
		ev.path = d->str[1];
		break;
	case TR2_REC_CMD_ANCESTRY:
		ev_init(s, &ev, TR2_EV_CMD_ANCESTRY, t, d);
		ev.ancestry = d->vec;
		break;
	case TR2_REC_CMD_NAME: {
		const char *name = d->str[1] ? d->str[1] : "";
		const char *up;
		char *hier;
		size_t n;

		ev_init(s, &ev, TR2_EV_CMD_NAME, t, d);
		up = parent_hierarchy(s, p);
		n = (up ? strlen(up) + 1 : 0) + strlen(name) + 1;
		hier = malloc(n);
		if (!hier)
			abort();
		snprintf(hier, n, "%s%s%s", up ? up : "", up ? "/" : "", name);
		free(p->hierarchy);
		p->hierarchy = hier;
		ev.name = name;
		ev.hierarchy = hier;
		break;
	}
	case TR2_REC_CMD_MODE:
		ev_init(s, &ev, TR2_EV_CMD_MODE, t, d);
		ev.mode = d->str[1];
		break;
	case TR2_REC_ALIAS:
		ev_init(s, &ev, TR2_EV_ALIAS, t, d);
		ev.alias = d->str[1];
		ev.argv = d->vec;
		break;
	case TR2_REC_DEF_PARAM:
		ev_init(s, &ev, TR2_EV_DEF_PARAM, t, d);
		ev.param = d->str[1];
		ev.value = d->str[2];
		ev.scope = d->str[3];
		break;
	case TR2_REC_DEF_REPO:
		ev_init(s, &ev, TR2_EV_DEF_REPO, t, d);
		ev.repo = (int)h->num[0];
		ev.worktree = d->str[1];
		break;
	case TR2_REC_CHILD_START:
		ev_init(s, &ev, TR2_EV_CHILD_START, t, d);
		ev.child_id = (int)h->num[0];
		ev.use_shell = h->num[1] != 0;
		ev.child_class = d->str[1] ? d->str[1] : "?";
		ev.hook_name = d->str[2];
		ev.cd = d->str[3];
		ev.argv = d->vec;
		add_child(p, ev.child_id, h->ts_ns);
		break;
	case TR2_REC_CHILD_EXIT:
	case TR2_REC_CHILD_READY: {
		struct child *c = find_child(p, (int)h->num[0]);

		ev_init(s, &ev, h->kind == TR2_REC_CHILD_EXIT ? TR2_EV_CHILD_EXIT : TR2_EV_CHILD_READY, t, d);
		ev.child_id = (int)h->num[0];
		ev.pid = (int)h->num[1];
		ev.code = (int)h->num[2];
		ev.ready = h->kind == TR2_REC_CHILD_READY ? d->str[1] : NULL;
		if (c)
			set_t_rel(&ev, h->ts_ns, c->start_ns);
		break;
	}
	case TR2_REC_EXEC:
		ev_init(s, &ev, TR2_EV_EXEC, t, d);
		ev.exec_id = (int)h->num[0];
		ev.exe = d->str[1];
		ev.argv = d->vec;
		break;
	case TR2_REC_EXEC_RESULT:
		ev_init(s, &ev, TR2_EV_EXEC_RESULT, t, d);
		ev.exec_id = (int)h->num[0];
		ev.code = (int)h->num[1];
		break;
	case TR2_REC_THREAD_START:
		t->start_ns = h->ts_ns;
		name_thread(t, h->thread_id, d->str[1]);
		ev_init(s, &ev, TR2_EV_THREAD_START, t, d);
		break;
	case TR2_REC_THREAD_EXIT:
		close_thread_metrics(s, t, d);
		ev_init(s, &ev, TR2_EV_THREAD_EXIT, t, d);
		set_t_rel(&ev, h->ts_ns, t->start_ns);
		emit(s, h->pid, &ev);
		drop_thread(s, t);
		return;
	case TR2_REC_REGION_ENTER:
		ev_init(s, &ev, TR2_EV_REGION_ENTER, t, d);
		ev.repo = (int)h->num[0];
		ev.category = d->str[1];
		ev.label = d->str[2];
		ev.msg = d->str[3];
		break;
	case TR2_REC_REGION_LEAVE:
		ev_init(s, &ev, TR2_EV_REGION_LEAVE, t, d);
		ev.repo = (int)h->num[0];
		ev.category = d->str[1];
		ev.label = d->str[2];
		ev.msg = d->str[3];
		if (h->region_ns)
			set_t_rel(&ev, h->ts_ns, h->region_ns);
		break;
	case TR2_REC_DATA:
	case TR2_REC_DATA_JSON:
		ev_init(s, &ev, h->kind == TR2_REC_DATA ? TR2_EV_DATA : TR2_EV_DATA_JSON, t, d);
		set_t_rel_in_region(&ev, t, h);
		ev.repo = (int)h->num[0];
		ev.category = d->str[1];
		ev.key = d->str[2];
		ev.value = d->str[3];
		if (h->kind == TR2_REC_DATA && !ev.value) {
			snprintf(num, sizeof(num), "%" PRId64, (int64_t)h->num[1]);
			ev.value = num;
			ev.has_intval = 1;
			ev.intval = (int64_t)h->num[1];
		}
		break;
	case TR2_REC_PRINTF:
		ev_init(s, &ev, TR2_EV_PRINTF, t, d);
		ev.msg = d->str[1];
		break;
	case TR2_REC_METRICS:
		add_metrics(t, d);
		return;
	case TR2_REC_TIMER_START:    /* definitions: the sums come from BPF */
	case TR2_REC_COUNTER_ADD:
		define_metric(p, d, h->kind == TR2_REC_COUNTER_ADD);
		return;
	default:
		return;
	}
	emit(s, h->pid, &ev);
}

void tr2_session_kept(const struct tr2_session *s, unsigned long *procs, unsigned long *threads)
{
	*procs = *threads = 0;
	for (int i = 0; i < NBUCKETS; i++) {
		for (const struct proc *p = s->procs[i]; p; p = p->hnext)
			++*procs;
		for (const struct thread *t = s->threads[i]; t; t = t->hnext)
			++*threads;
	}
}

void tr2_session_free(struct tr2_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < NBUCKETS; i++) {
		while (s->threads[i])
			drop_thread(s, s->threads[i]);
		while (s->procs[i]) {
			struct proc *p = s->procs[i];

			s->procs[i] = p->hnext;
			free_proc(p);
		}
	}
	free(s);
}
