/* tr2_model.c: see tr2_model.h.  Processes, their sessions, and the switch
 * that makes each call's event; threads are in tr2_thread.c, timers and
 * counters in tr2_metric.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tr2_mem.h"
#include "tr2_model_int.h"
#include "tr2_sid.h"

struct tr2_model *tr2_model_new(const struct tr2_model_sink *sink, const char *host_hash,
				int64_t mono_to_real_ns)
{
	struct tr2_model *m = xcalloc(1, sizeof(*m));

	m->sink = *sink;
	snprintf(m->host_hash, sizeof(m->host_hash), "%s", host_hash);
	m->mono_to_real_ns = mono_to_real_ns;
	return m;
}

uint64_t tr2_model_events(const struct tr2_model *m)
{
	return m->events;
}

uint64_t tr2_model_dropped(const struct tr2_model *m)
{
	return m->dropped;
}

static struct tr2_proc *find_proc(struct tr2_model *m, uint32_t pid)
{
	for (struct tr2_proc *p = m->procs[pid % TR2_MODEL_BUCKETS]; p; p = p->hnext)
		if (p->pid == pid && !p->gone)
			return p;
	return NULL;
}

/* Links p to its parent's state, once, when the parent is known. */
static void set_parent(struct tr2_model *m, struct tr2_proc *p)
{
	struct tr2_proc *q = p->parent || !p->ppid ? NULL : find_proc(m, p->ppid);

	if (q && q != p) {
		p->parent = q;
		q->children++;
	}
}

struct tr2_proc *tr2_model_proc(struct tr2_model *m, uint32_t pid)
{
	struct tr2_proc *p = find_proc(m, pid);

	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->metrics_tail = &p->metrics;
	p->hnext = m->procs[pid % TR2_MODEL_BUCKETS];
	m->procs[pid % TR2_MODEL_BUCKETS] = p;
	return p;
}

/* p is done with the stream it shares: true when others may write it
 * still; else the stream ends, here when end_now (after an atexit or
 * signal event the target ends it itself). */
static bool leave_shared(struct tr2_model *m, struct tr2_proc *p, bool end_now)
{
	struct tr2_shared *s = p->shared;

	p->shared = NULL;
	if (--s->writers > 0) {
		p->left = true;
		return true;
	}
	if (end_now && m->sink.end)
		m->sink.end(m->sink.ctx, s->sid, s->stream);
	free(s->sid);
	free(s);
	return false;
}

/* p starts a stream of its own: it will not write the one it shared. */
static void drop_share(struct tr2_model *m, struct tr2_proc *p)
{
	if (p->shared)
		leave_shared(m, p, true);
	p->left = false;
}

/* The process's sid (git's tr2_sid.c): under its session before exec, or
 * else the nearest ancestor's that wrote events, as GIT_TRACE2_PARENT_SID
 * would have made it. */
static void make_sid(struct tr2_model *m, struct tr2_proc *p)
{
	int64_t real_us = ((int64_t)p->start_ns + m->mono_to_real_ns) / 1000;
	const char *parent = p->exec_parent_sid;
	struct tr2_proc *q;
	size_t n;
	int hops;

	set_parent(m, p);
	drop_share(m, p);
	for (q = p->parent, hops = 0; !parent && q && hops < 64; q = q->parent, hops++)
		if (q->sid)
			parent = q->sid;
	n = tr2_sid_format(NULL, 0, parent, real_us, m->host_hash, p->pid) + 1;
	p->sid = xcalloc(1, n);
	tr2_sid_format(p->sid, n, parent, real_us, m->host_hash, p->pid);
	p->stream = ++m->streams;
}

/* The parent session's last cmd_name hierarchy, for "parent/child"
 * (git passes it down in GIT_TRACE2_PARENT_NAME). */
static const char *parent_hierarchy(struct tr2_proc *p)
{
	struct tr2_proc *q;
	int hops;

	if (p->parent_name)
		return p->parent_name;
	if (p->exec_parent_sid)
		return p->exec_parent_hierarchy;
	for (q = p->parent, hops = 0; q && hops < 64; q = q->parent, hops++)
		if (q->sid && q->hierarchy && !strncmp(p->sid, q->sid, strlen(q->sid)))
			return q->hierarchy;
	return NULL;
}

void tr2_model_emit(struct tr2_model *m, const struct tr2_proc *p, const struct tr2_ev *ev)
{
	m->sink.emit(m->sink.ctx, p->pid, ev);
	m->events++;
}

void tr2_model_ev_init(struct tr2_model *m, struct tr2_ev *ev, enum tr2_ev_kind kind,
		       struct tr2_thread *t, const char *file, int line, uint64_t ts_ns)
{
	struct tr2_proc *p = t->proc;
	int64_t real_ns = (int64_t)ts_ns + m->mono_to_real_ns;

	if (!p->sid)
		make_sid(m, p);
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->sid = p->sid;
	ev->stream = p->stream;
	ev->thread = t->name;
	ev->time_us = real_ns / 1000;
	ev->time_ns = (int)(real_ns % 1000);
	ev->file = file;
	ev->line = line;
	ev->has_t_abs = true;
	ev->t_abs_us = ts_ns > p->start_ns ? (int64_t)(ts_ns - p->start_ns) / 1000 : 0;
	ev->nesting = t->depth < TR2_NESTING_MAX ? 1 + t->depth : TR2_NESTING_MAX;
	ev->evt = p->evt;
}

static void set_t_rel(struct tr2_ev *ev, uint64_t now, uint64_t since)
{
	ev->has_t_rel = true;
	ev->t_rel_ns = now > since ? (int64_t)(now - since) : 0;
	ev->t_rel_us = ev->t_rel_ns / 1000;
}

/*
 * region_leave's split by scheduler state (call c the leave, since its
 * region's start or -1 when none was open, enter the thread's time by
 * state then): since the enter where both calls were counted from the same
 * origin; for a region entered before the thread's counting began (none
 * open: before the trace, whose calls the model did not see), since that
 * origin.  Nothing where either is not known (lost calls).
 */
static void set_split(struct tr2_ev *ev, const struct tr2_call *c, int64_t since,
		      const struct tr2_sched_mark *enter)
{
	static const uint64_t zero[TR2_STATE__COUNT];
	const uint64_t *base;
	uint64_t from;

	if (!c->sched_origin_ns)
		return;
	if (since > 0 && enter->origin_ns == c->sched_origin_ns) {
		base = enter->ns;
		from = (uint64_t)since;
	} else if (since == -1) {
		base = zero;
		from = c->sched_origin_ns;
		ev->split_since_trace = true;
	} else {
		return;
	}
	ev->has_split = true;
	ev->split_wall_ns = c->ts_ns > from ? (int64_t)(c->ts_ns - from) : 0;
	for (int i = 0; i < TR2_STATE__COUNT; i++)
		ev->split_ns[i] = c->sched_ns[i] > base[i] ? (int64_t)(c->sched_ns[i] - base[i]) : 0;
}

/* A start time (ns) from outside, or `now` when it cannot be one: unknown
 * (0) or in the future. */
static uint64_t sane_start(uint64_t start_ns, uint64_t now)
{
	return start_ns && start_ns <= now ? start_ns : now;
}

/* A copy of NULL-terminated vector v, its strings in the same allocation. */
static char **dup_vec(const char *const *v)
{
	size_t n = 0, bytes = 0;
	char **out, *s;

	for (; v[n]; n++)
		bytes += strlen(v[n]) + 1;
	out = xcalloc(1, (n + 1) * sizeof(*out) + bytes);
	s = (char *)(out + n + 1);
	for (size_t i = 0; i < n; i++) {
		out[i] = strcpy(s, v[i]);
		s += strlen(v[i]) + 1;
	}
	return out;
}

/* Process p, forked without exec from parent q, continues q's session:
 * in q's stream when the kernel's fork record gave it a share of it (git's
 * child writes into the file it inherited), else in one of its own. */
static void continue_session(struct tr2_model *m, struct tr2_proc *p, const struct tr2_proc *q)
{
	struct tr2_thread *from = tr2_thread_find(m, q->pid), *main;

	p->sid = xstrdup(p->shared ? p->shared->sid : q->sid);
	p->stream = p->shared ? p->shared->stream : ++m->streams;
	main = tr2_thread_get(m, p, p->pid);
	/* q may have exec'd since the fork: a new session, not p's */
	if (!q->sid || strcmp(q->sid, p->sid))
		return;
	p->start_ns = q->start_ns;
	p->evt = q->evt ? xstrdup(q->evt) : NULL;
	p->hierarchy = q->hierarchy ? xstrdup(q->hierarchy) : NULL;
	main->start_ns = p->start_ns;
	/* with a share, it has the regions q had at the fork */
	if (!p->shared && from && from->proc == q)
		tr2_thread_copy_regions(main, from);
}

void tr2_model_thread(struct tr2_model *m, const struct tr2_thread_info *info)
{
	struct tr2_proc *p = tr2_model_proc(m, info->pid);
	struct tr2_thread *t;

	if (!p->ppid)
		p->ppid = info->ppid;
	set_parent(m, p);
	if (info->forked && !p->sid && p->parent &&
	    (p->shared || (p->parent->sid && p->parent->pid == info->ppid)))
		continue_session(m, p, p->parent);
	if (!p->start_ns)
		p->start_ns = sane_start(info->proc_start_ns, info->thread_start_ns);
	if (info->sid && *info->sid && !p->sid) {
		/* a claim: its lines say it, its stream is its own */
		drop_share(m, p);
		p->sid = xstrdup(info->sid);
		p->stream = ++m->streams;
	}
	if (info->parent_name && *info->parent_name && !p->parent_name)
		p->parent_name = xstrdup(info->parent_name);
	if (info->ancestry) {
		free(p->ancestry);
		p->ancestry = dup_vec(info->ancestry);
	}
	t = tr2_thread_get(m, p, info->tid);
	t->start_ns = info->tid == info->pid || !info->thread_start_ns ? p->start_ns : info->thread_start_ns;
	tr2_thread_name(t, info->thread_id, info->base_name);
}

/* The thread of call c, made from the call when tr2_model_thread() did not
 * name it. */
static struct tr2_thread *thread_of(struct tr2_model *m, uint32_t pid, uint32_t tid, uint64_t ts_ns)
{
	struct tr2_thread *t = tr2_thread_find(m, tid);
	struct tr2_proc *p;

	if (t && t->proc->pid == pid && !t->proc->gone && !t->exited)
		return t;
	p = tr2_model_proc(m, pid);
	if (!p->start_ns)
		p->start_ns = ts_ns;
	t = tr2_thread_get(m, p, tid);
	return t;
}

static struct tr2_child *find_child(struct tr2_proc *p, int id)
{
	for (int i = 0; i < p->nstarted; i++)
		if (p->started[i].id == id)
			return &p->started[i];
	return NULL;
}

static void add_child(struct tr2_proc *p, int id, uint64_t ts)
{
	struct tr2_child *c = find_child(p, id);

	if (!c) {
		p->started = tr2_grow(p->started, p->nstarted, &p->cap, sizeof(*p->started));
		c = &p->started[p->nstarted++];
		c->id = id;
	}
	c->start_ns = ts;
}

/* cmd_name: the hierarchy the program gave, else "<parent's
 * hierarchy>/<name>", the parent's being the one the session started
 * with, so that a second cmd_name replaces the first. */
static const char *set_hierarchy(struct tr2_proc *p, const char *name, const char *given)
{
	const char *up = parent_hierarchy(p);
	size_t n = (up ? strlen(up) + 1 : 0) + strlen(name) + 1;
	char *hier;

	if (given) {
		hier = xstrdup(given);
	} else {
		hier = xcalloc(1, n);
		snprintf(hier, n, "%s%s%s", up ? up : "", up ? "/" : "", name);
	}
	free(p->hierarchy);
	return p->hierarchy = hier;
}

/* The event kind of each probe; TR2_EV__COUNT for timer_start, timer_stop
 * and counter_add, which write none. */
#define KIND_OF(probe) [TRACE2__P_##probe] = TRACE2__EV_OF_##probe,
#define TRACE2__EV_OF_version TR2_EV_VERSION
#define TRACE2__EV_OF_start TR2_EV_START
#define TRACE2__EV_OF_exit TR2_EV_EXIT
#define TRACE2__EV_OF_atexit TR2_EV_ATEXIT
#define TRACE2__EV_OF_signal TR2_EV_SIGNAL
#define TRACE2__EV_OF_error TR2_EV_ERROR
#define TRACE2__EV_OF_cmd_path TR2_EV_CMD_PATH
#define TRACE2__EV_OF_cmd_ancestry TR2_EV_CMD_ANCESTRY
#define TRACE2__EV_OF_cmd_name TR2_EV_CMD_NAME
#define TRACE2__EV_OF_cmd_mode TR2_EV_CMD_MODE
#define TRACE2__EV_OF_alias TR2_EV_ALIAS
#define TRACE2__EV_OF_def_param TR2_EV_DEF_PARAM
#define TRACE2__EV_OF_def_repo TR2_EV_DEF_REPO
#define TRACE2__EV_OF_child_start TR2_EV_CHILD_START
#define TRACE2__EV_OF_child_exit TR2_EV_CHILD_EXIT
#define TRACE2__EV_OF_child_ready TR2_EV_CHILD_READY
#define TRACE2__EV_OF_exec TR2_EV_EXEC
#define TRACE2__EV_OF_exec_result TR2_EV_EXEC_RESULT
#define TRACE2__EV_OF_thread_start TR2_EV_THREAD_START
#define TRACE2__EV_OF_thread_exit TR2_EV_THREAD_EXIT
#define TRACE2__EV_OF_region_enter TR2_EV_REGION_ENTER
#define TRACE2__EV_OF_region_leave TR2_EV_REGION_LEAVE
#define TRACE2__EV_OF_data TR2_EV_DATA
#define TRACE2__EV_OF_data_json TR2_EV_DATA_JSON
#define TRACE2__EV_OF_printf TR2_EV_PRINTF
#define TRACE2__EV_OF_timer_start TR2_EV__COUNT
#define TRACE2__EV_OF_timer_stop TR2_EV__COUNT
#define TRACE2__EV_OF_counter_add TR2_EV__COUNT
static const enum tr2_ev_kind kind_of[TRACE2__NPROBES] = { TRACE2__PROBES(KIND_OF) };

/* The fields of call c that its event carries, as git writes them. */
static void fill(struct tr2_model *m, struct tr2_ev *ev, struct tr2_thread *t, const struct tr2_call *c,
		 char num[static 24])
{
	struct tr2_proc *p = t->proc;
	struct tr2_sched_mark enter;
	struct tr2_child *ch;
	int64_t since;

	switch (c->probe) {
	case TRACE2__P_version:
		/* EVENT format version 4 (git 2.47+, the one with printf events)
		 * unless the program says which it writes */
		free(p->evt);
		ev->evt = p->evt = xstrdup(c->s[1] ? c->s[1] : "4");
		ev->exe = c->s[0];
		break;
	case TRACE2__P_start:
		ev->argv = c->vec;
		break;
	case TRACE2__P_exit:
	case TRACE2__P_atexit:
		ev->code = c->code;
		break;
	case TRACE2__P_signal:
		ev->signo = c->code;
		break;
	case TRACE2__P_error:
		ev->msg = c->s[0];
		ev->fmt = c->s[1];
		break;
	case TRACE2__P_cmd_path:
		ev->path = c->s[0];
		break;
	case TRACE2__P_cmd_ancestry:
		ev->ancestry = c->vec ? c->vec : (const char *const *)p->ancestry;
		break;
	case TRACE2__P_cmd_name:
		ev->name = c->s[0] ? c->s[0] : "";
		ev->hierarchy = set_hierarchy(p, ev->name, c->s[1]);
		break;
	case TRACE2__P_cmd_mode:
		ev->mode = c->s[0];
		break;
	case TRACE2__P_alias:
		ev->alias = c->s[0];
		ev->argv = c->vec;
		break;
	case TRACE2__P_def_param:
		ev->param = c->s[0];
		ev->value = c->s[1];
		ev->scope = c->s[2];
		break;
	case TRACE2__P_def_repo:
		ev->repo = c->repo_id;
		ev->worktree = c->s[0];
		break;
	case TRACE2__P_child_start:
		ev->child_id = c->id;
		ev->use_shell = c->use_shell != 0;
		ev->child_class = c->s[0] ? c->s[0] : "?";
		ev->hook_name = c->s[1];
		ev->cd = c->s[2];
		ev->argv = c->vec;
		add_child(p, c->id, c->ts_ns);
		break;
	case TRACE2__P_child_exit:
	case TRACE2__P_child_ready:
		ev->child_id = c->id;
		ev->pid = c->pid_arg;
		ev->code = c->code;
		ev->ready = c->probe == TRACE2__P_child_ready ? c->s[0] : NULL;
		if ((ch = find_child(p, c->id)))
			set_t_rel(ev, c->ts_ns, ch->start_ns);
		break;
	case TRACE2__P_exec:
		ev->exec_id = c->id;
		ev->exe = c->s[0];
		ev->argv = c->vec;
		break;
	case TRACE2__P_exec_result:
		ev->exec_id = c->id;
		ev->code = c->code;
		break;
	case TRACE2__P_thread_exit:
		set_t_rel(ev, c->ts_ns, t->start_ns);
		break;
	case TRACE2__P_region_enter:
	case TRACE2__P_region_leave:
		ev->repo = c->repo_id;
		ev->category = c->s[0];
		ev->label = c->s[1];
		ev->msg = c->s[2];
		if (c->probe == TRACE2__P_region_enter) {
			tr2_thread_push(t, c);   /* after the event's nesting */
			break;
		}
		/* a leave with no region open, or of one entered before the
		 * trace: no t_rel */
		since = tr2_thread_pop(t, &enter);
		ev->nesting = t->depth < TR2_NESTING_MAX ? 1 + t->depth : TR2_NESTING_MAX;
		if (since > 0)
			set_t_rel(ev, c->ts_ns, (uint64_t)since);
		set_split(ev, c, since, &enter);
		break;
	case TRACE2__P_data:
	case TRACE2__P_data_json:
		ev->repo = c->repo_id;
		ev->category = c->s[0];
		ev->key = c->s[1];
		ev->value = c->s[2];
		if (c->probe == TRACE2__P_data && !ev->value) {
			snprintf(num, 24, "%jd", c->value);
			ev->value = num;
			ev->has_intval = true;
			ev->intval = c->value;
		}
		/* since the innermost open region, else the thread's start */
		if ((since = (int64_t)tr2_thread_since(t)))
			set_t_rel(ev, c->ts_ns, (uint64_t)since);
		break;
	case TRACE2__P_printf:
		ev->msg = c->s[0];
		break;
	}
}

void tr2_model_call(struct tr2_model *m, const struct tr2_call *c)
{
	struct tr2_thread *t;
	struct tr2_ev ev;
	char num[24];

	if ((unsigned)c->probe >= TRACE2__NPROBES)
		return;
	t = thread_of(m, c->pid, c->tid, c->ts_ns);
	if (kind_of[c->probe] == TR2_EV__COUNT) {
		tr2_metric_call(m, t, c);
		return;
	}
	/* without names, the ones tr2-bpf gave (tr2_thread_info); with
	 * none, no event, as git writes none (compat/linux/procinfo.c) */
	if (c->probe == TRACE2__P_cmd_ancestry && !c->vec && !t->proc->ancestry)
		return;
	if (t->proc->unmarked) {
		uint64_t n = t->proc->unmarked;

		t->proc->unmarked = 0;
		tr2_model_lost(m, c->pid, n, c->ts_ns);
	}
	if (c->probe == TRACE2__P_thread_start) {
		t->start_ns = c->ts_ns;
		tr2_thread_name(t, c->id, c->s[0]);
	}
	/* git ends the regions a thread or an exit left open before it
	 * writes its metrics and thread_exit or atexit (tr2tls_pop_unwind_self) */
	if (c->probe == TRACE2__P_thread_exit || c->probe == TRACE2__P_atexit)
		t->depth = 0;
	/* the thread's metrics end before its last event */
	if (c->probe == TRACE2__P_thread_exit || c->probe == TRACE2__P_atexit)
		tr2_metric_close_thread(m, t, c);
	if (c->probe == TRACE2__P_atexit)
		tr2_metric_final(m, t, c);
	tr2_model_ev_init(m, &ev, kind_of[c->probe], t, c->file, c->line, c->ts_ns);
	fill(m, &ev, t, c, num);
	if ((c->probe == TRACE2__P_atexit || c->probe == TRACE2__P_signal) && t->proc->shared)
		ev.stream_goes_on = leave_shared(m, t->proc, false);
	tr2_model_emit(m, t->proc, &ev);
	/* git forgets it: a later call starts afresh; its last stretches
	 * on a CPU may come still (tr2_model_sched) */
	if (c->probe == TRACE2__P_thread_exit)
		t->exited = true;
}

void tr2_model_gap(struct tr2_model *m, uint32_t pid, uint32_t tid)
{
	struct tr2_thread *t = tr2_thread_find(m, tid);

	if (t && t->proc->pid == pid)
		for (int i = 0; i < t->depth && i < TR2_NESTING_MAX; i++) {
			t->region_start[i] = 0;
			t->region_sched[i].origin_ns = 0;
		}
}

/* One thread_state event of thread t: state from from_ns to to_ns
 * (CLOCK_MONOTONIC); nothing when that is empty.  Not counted in
 * tr2_model_events(): it is no call of the program. */
static void emit_state(struct tr2_model *m, struct tr2_thread *t, int state, uint64_t from_ns, uint64_t to_ns)
{
	struct tr2_ev ev;

	if (to_ns <= from_ns)
		return;
	tr2_model_ev_init(m, &ev, TR2_EV_THREAD_STATE, t, NULL, 0, from_ns);
	ev.has_t_abs = false;
	ev.state = state;
	ev.dur_ns = (int64_t)(to_ns - from_ns);
	m->sink.emit(m->sink.ctx, t->proc->pid, &ev);
}

void tr2_model_sched(struct tr2_model *m, uint32_t pid, uint32_t tid, const struct tr2_sched_period *sp)
{
	struct tr2_thread *t = tr2_thread_find(m, tid);

	if (!t || t->proc->pid != pid || t->proc->gone || !t->proc->sid)
		return;
	emit_state(m, t, TR2_STATE_CPU, sp->run_ns, sp->off_ns);
	if (sp->state == TR2_STATE_CPU)
		return;
	emit_state(m, t, sp->state, sp->off_ns, sp->woken_ns);
	emit_state(m, t, TR2_STATE_RUNNABLE, sp->woken_ns > sp->off_ns ? sp->woken_ns : sp->off_ns, sp->in_ns);
}

void tr2_model_lost(struct tr2_model *m, uint32_t pid, uint64_t count, uint64_t ts_ns)
{
	struct tr2_thread *t = thread_of(m, pid, pid, ts_ns);
	struct tr2_call c = { .pid = pid, .tid = pid, .ts_ns = ts_ns, .probe = TRACE2__P_data };
	uint64_t since;
	struct tr2_ev ev;
	char num[24];

	tr2_model_ev_init(m, &ev, TR2_EV_DATA, t, c.file, c.line, ts_ns);
	if ((since = tr2_thread_since(t)))
		set_t_rel(&ev, ts_ns, since);
	ev.category = "tr2";
	ev.key = "lost_events";
	snprintf(num, sizeof(num), "%" PRIu64, count);
	ev.value = num;
	tr2_model_emit(m, t->proc, &ev);
	m->events--;   /* a marker, not one of the program's events */
}

void tr2_model_paused(struct tr2_model *m, uint64_t from_ns, uint64_t to_ns)
{
	char secs[32];

	snprintf(secs, sizeof(secs), "%.6f", (to_ns - from_ns) / 1e9);
	for (int i = 0; i < TR2_MODEL_BUCKETS; i++)
		for (struct tr2_proc *p = m->procs[i]; p; p = p->hnext) {
			struct tr2_thread *t;
			struct tr2_ev ev;
			uint64_t since;

			if (!p->sid || p->gone)
				continue;
			t = thread_of(m, p->pid, p->pid, to_ns);
			tr2_model_ev_init(m, &ev, TR2_EV_DATA, t, NULL, 0, to_ns);
			if ((since = tr2_thread_since(t)))
				set_t_rel(&ev, to_ns, since);
			ev.category = "tr2";
			ev.key = "paused";
			ev.value = secs;
			tr2_model_emit(m, p, &ev);
			m->events--;   /* a marker, not one of the program's events */
		}
}

void tr2_model_fork(struct tr2_model *m, uint32_t pid, uint32_t ppid, uint64_t start_ns)
{
	struct tr2_proc *p = tr2_model_proc(m, pid), *q;
	struct tr2_thread *from;

	p->ppid = ppid;
	p->start_ns = start_ns;
	set_parent(m, p);
	/* the kernel's word that q forked p: until p calls exec, it may go on
	 * writing q's stream */
	q = p->parent;
	if (!q || q->pid != ppid || !q->sid || q->left || p->shared)
		return;
	if (!q->shared) {
		q->shared = xcalloc(1, sizeof(*q->shared));
		q->shared->sid = xstrdup(q->sid);
		q->shared->stream = q->stream;
		q->shared->writers = 1;
	}
	p->shared = q->shared;
	p->shared->writers++;
	/* its main thread's open regions: q's at the fork (q may have ended
	 * by the time p makes its first call) */
	from = tr2_thread_find(m, ppid);
	if (from && from->proc == q)
		tr2_thread_copy_regions(tr2_thread_get(m, p, pid), from);
}

/* Ends p's stream in every target (a no-op for one that has ended), or
 * p's part of a stream it shares. */
static void end_stream(struct tr2_model *m, struct tr2_proc *p)
{
	if (p->shared)
		leave_shared(m, p, true);
	else if (p->sid && !p->left && m->sink.end)
		m->sink.end(m->sink.ctx, p->sid, p->stream);
}

/* Drops p's threads but keep (NULL: all of them). */
static void drop_threads(struct tr2_model *m, struct tr2_proc *p, struct tr2_thread *keep)
{
	for (int i = 0; i < TR2_MODEL_BUCKETS; i++)
		for (struct tr2_thread *t = m->threads[i], *next; t; t = next) {
			next = t->hnext;
			if (t->proc == p && t != keep)
				tr2_thread_drop(m, t);
		}
}

void tr2_model_exec(struct tr2_model *m, uint32_t pid, uint64_t ts_ns)
{
	struct tr2_proc *p = tr2_model_proc(m, pid);
	struct tr2_thread *t = tr2_thread_find(m, pid);

	if (t && (t->proc != p || t->exited))
		t = NULL;
	end_stream(m, p);   /* or its share of its parent's, unused */
	if (p->sid) {
		free(p->exec_parent_sid);
		p->exec_parent_sid = p->sid;
		p->sid = NULL;
		free(p->exec_parent_hierarchy);
		p->exec_parent_hierarchy = p->hierarchy;
		p->hierarchy = NULL;
	}
	p->left = false;
	p->start_ns = ts_ns;
	p->nstarted = 0;
	/* exec leaves one thread, the one that called it, renamed to the pid */
	drop_threads(m, p, t);
	if (t) {
		t->start_ns = ts_ns;
		t->depth = 0;
		t->nslots = 0;
		tr2_thread_name(t, 0, NULL);
	}
	tr2_metric_free_proc(p);
}

void tr2_model_resumed(struct tr2_model *m, uint32_t pid, uint64_t from_ns, uint64_t to_ns)
{
	struct tr2_proc *p = find_proc(m, pid);

	if (p && !p->sid && to_ns > from_ns)
		p->start_ns += to_ns - from_ns;
}

static void free_proc(struct tr2_proc *p)
{
	if (p->shared && --p->shared->writers == 0) {
		free(p->shared->sid);
		free(p->shared);
	}
	tr2_metric_free_proc(p);
	free(p->sid);
	free(p->exec_parent_sid);
	free(p->exec_parent_hierarchy);
	free(p->parent_name);
	free(p->ancestry);
	free(p->evt);
	free(p->hierarchy);
	free(p->started);
	free(p);
}

/* Unlinks and frees p if it is gone and no kept process is its child, then
 * its parent likewise. */
static void release_proc(struct tr2_model *m, struct tr2_proc *p)
{
	while (p && p->gone && !p->children) {
		struct tr2_proc *parent = p->parent, **pp;

		for (pp = &m->procs[p->pid % TR2_MODEL_BUCKETS]; *pp != p; pp = &(*pp)->hnext)
			;
		*pp = p->hnext;
		free_proc(p);
		if (parent)
			parent->children--;
		p = parent;
	}
}

void tr2_model_proc_gone(struct tr2_model *m, uint32_t pid)
{
	struct tr2_proc *p = find_proc(m, pid);

	if (!p)
		return;
	end_stream(m, p);
	drop_threads(m, p, NULL);
	p->gone = true;
	tr2_metric_free_proc(p);
	free(p->started);
	p->started = NULL;
	p->nstarted = p->cap = 0;
	release_proc(m, p);
}

void tr2_model_thread_gone(struct tr2_model *m, uint32_t pid, uint32_t tid)
{
	struct tr2_thread *t = tr2_thread_find(m, tid);

	if (!t || t->proc->pid != pid)
		return;
	if (!t->exited)   /* its sums went at its thread_exit */
		tr2_metric_merge_thread(t);
	tr2_thread_drop(m, t);
}

void tr2_model_kept(const struct tr2_model *m, unsigned long *procs, unsigned long *threads)
{
	*procs = *threads = 0;
	for (int i = 0; i < TR2_MODEL_BUCKETS; i++) {
		for (const struct tr2_proc *p = m->procs[i]; p; p = p->hnext)
			++*procs;
		for (const struct tr2_thread *t = m->threads[i]; t; t = t->hnext)
			++*threads;
	}
}

void tr2_model_free(struct tr2_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < TR2_MODEL_BUCKETS; i++) {
		while (m->threads[i])
			tr2_thread_drop(m, m->threads[i]);
		while (m->procs[i]) {
			struct tr2_proc *p = m->procs[i];

			m->procs[i] = p->hnext;
			free_proc(p);
		}
	}
	free(m);
}
