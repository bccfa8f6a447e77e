/* tr2_session.c: see tr2_session.h.  Records wait in a min-heap ordered by
 * the time of their next call (a batch) or their own (the tracer's
 * records), ties by arrival; a batch is decoded one call at a time as it
 * comes to the top, and goes back with its next call's time. */
#include <stdlib.h>
#include <string.h>

#include "tr2_dst.h"
#include "tr2_mem.h"
#include "tr2_model.h"
#include "tr2_session.h"
#include "tr2_summary.h"
#include "tr2_tgt.h"

enum item_kind { ITEM_REC, ITEM_RESUMED, ITEM_LOST, ITEM_PAUSED };

struct item {
	uint64_t ts, seq;
	enum item_kind kind;
	struct tr2_rec hdr;
	unsigned char *data;            /* a batch's calls, copied */
	size_t len, off;                /* their bytes, and the next call's offset */
	int64_t calls_left;             /* calls of the batch not written yet */
	struct tr2_rec_thread_info *info;  /* the thread's announce, applied before the batch */
	uint64_t from, to;              /* ITEM_RESUMED, ITEM_PAUSED; ITEM_LOST: count in from */
};

/* A thread's literal strings, where its next batch should start, and when
 * it started as the kernel says (0: unknown). */
struct thread_lits {
	uint32_t tid;
	int has_pos;
	uint64_t next_pos;
	uint64_t start_ns;
	struct tr2_literals lits;
	struct thread_lits *next;
};
#define LIT_BUCKETS 1024

/* A thread's TR2_REC_THREAD_INFO, until its batch comes. */
struct pending_info {
	struct tr2_rec_thread_info info;
	struct pending_info *next;
};

struct tr2_session {
	struct tr2_target **targets;
	int ntargets;
	int live_targets;              /* targets whose destination still takes lines */
	unsigned char dead[16];
	struct tr2_model *model;
	uint64_t since_ns;
	uint64_t seq;
	uint64_t lost_calls;
	struct item **heap;
	int nheap, cap;
	struct pending_info *infos;
	struct thread_lits *lits[LIT_BUCKETS];
	struct tr2_summary *summary;   /* --summary: gets every event too; NULL: none */
	char **cats;                   /* --category, or NULL */
	int ncats;
	struct { uint64_t from, to; } *pauses;   /* paused spans; to is UINT64_MAX while paused */
	int npauses, cap_pauses;
	struct tr2_decoded_call dec;
};

/* The model's sink: every target, but those whose destination failed (a
 * destination with a file or connection per process fails per process:
 * it drops and counts that process's lines, tr2_dst). */
static void emit(void *ctx, uint32_t pid, const struct tr2_ev *ev)
{
	struct tr2_session *s = ctx;

	for (int i = 0; i < s->ntargets; i++)
		if (!s->dead[i] && tr2_target_emit(s->targets[i], ev) &&
		    !tr2_dst_per_process(s->targets[i]->dst)) {
			s->dead[i] = 1;
			s->live_targets--;
		}
	if (s->summary)
		tr2_summary_event(s->summary, pid, ev);
}

static void end(void *ctx, const char *sid, uint64_t stream)
{
	struct tr2_session *s = ctx;

	for (int i = 0; i < s->ntargets; i++)
		if (!s->dead[i] && tr2_target_end_process(s->targets[i], sid, stream)) {
			s->dead[i] = 1;
			s->live_targets--;
		}
}

struct tr2_session *tr2_session_new(struct tr2_target **targets, int ntargets, int64_t mono_to_real_ns,
				    const char *host_hash, uint64_t since_ns)
{
	struct tr2_session *s = xcalloc(1, sizeof(*s));
	struct tr2_model_sink sink = { .emit = emit, .end = end, .ctx = s };

	s->targets = targets;
	s->ntargets = ntargets < 16 ? ntargets : 16;
	s->live_targets = s->ntargets;
	s->since_ns = since_ns;
	s->model = tr2_model_new(&sink, host_hash, mono_to_real_ns);
	return s;
}

void tr2_session_set_summary(struct tr2_session *s, struct tr2_summary *summary)
{
	s->summary = summary;
}

void tr2_session_set_categories(struct tr2_session *s, char *const *names, int n)
{
	s->cats = xcalloc((size_t)n, sizeof(*s->cats));
	for (int i = 0; i < n; i++)
		s->cats[i] = xstrdup(names[i]);
	s->ncats = n;
}

/* ---- the heap ---- */

static int before(const struct item *a, const struct item *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static void push(struct tr2_session *s, struct item *it)
{
	int i;

	s->heap = tr2_grow(s->heap, s->nheap, &s->cap, sizeof(*s->heap));
	for (i = s->nheap++; i > 0 && before(it, s->heap[(i - 1) / 2]); i = (i - 1) / 2)
		s->heap[i] = s->heap[(i - 1) / 2];
	s->heap[i] = it;
}

static struct item *pop(struct tr2_session *s)
{
	struct item *top = s->heap[0], *last = s->heap[--s->nheap];
	int i = 0, c;

	while ((c = 2 * i + 1) < s->nheap) {
		if (c + 1 < s->nheap && before(s->heap[c + 1], s->heap[c]))
			c++;
		if (!before(s->heap[c], last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static struct item *new_item(struct tr2_session *s, enum item_kind kind, uint64_t ts)
{
	struct item *it = xcalloc(1, sizeof(*it));

	it->kind = kind;
	it->ts = ts;
	it->seq = s->seq++;
	return it;
}

static void free_item(struct item *it)
{
	free(it->data);
	free(it->info);
	free(it);
}

/* ---- records in ---- */

/* The pending announce of thread tid, taken out of the list; NULL: none. */
static struct tr2_rec_thread_info *take_info(struct tr2_session *s, uint32_t tid)
{
	for (struct pending_info **pp = &s->infos, *p; (p = *pp); pp = &p->next)
		if (p->info.hdr.tid == tid) {
			*pp = p->next;
			return &p->info;   /* info is the first member: free() takes it */
		}
	return NULL;
}

static struct thread_lits *lits_of(struct tr2_session *s, uint32_t tid);

/* A call's time as the process wrote it, ts, within what the kernel says
 * (a process writes what it likes into its buffer): no later than the copy
 * that carried it (batch it), no earlier than its thread's start (start;
 * 0: unknown). */
static uint64_t call_time(const struct item *it, uint64_t start, uint64_t ts)
{
	if (ts > it->hdr.ts_ns)
		return it->hdr.ts_ns;
	return ts < start ? start : ts;
}

/* A batch whose calls (from `off` on) cannot be decoded: they are lost,
 * the thread's open regions lose their start times, and its literal ids
 * are not trusted until its next epoch (the lost calls may define some). */
static void batch_broken(struct tr2_session *s, struct item *it)
{
	s->lost_calls += it->calls_left > 0 ? (uint64_t)it->calls_left : 0;
	if (it->calls_left > 0)
		tr2_model_lost(s->model, it->hdr.pid, (uint64_t)it->calls_left, it->ts);
	tr2_model_gap(s->model, it->hdr.pid, it->hdr.tid);
	lits_of(s, it->hdr.tid)->lits.whole = 0;
}

void tr2_session_record(struct tr2_session *s, const struct tr2_rec *hdr, const void *data, size_t size)
{
	struct item *it;
	struct pending_info *p;

	switch (hdr->kind) {
	case TR2_REC_THREAD_INFO:
		free(take_info(s, hdr->tid));
		p = xcalloc(1, sizeof(*p));
		memcpy(&p->info, data, sizeof(p->info));
		p->next = s->infos;
		s->infos = p;
		return;
	case TR2_REC_BATCH:
		it = new_item(s, ITEM_REC, hdr->ts_ns);
		it->hdr = *hdr;
		it->len = size - sizeof(*hdr);
		it->data = xcalloc(1, it->len ? it->len : 1);
		memcpy(it->data, (const unsigned char *)data + sizeof(*hdr), it->len);
		it->calls_left = hdr->num[0];
		it->info = take_info(s, hdr->tid);
		/* its first call's time; one that does not parse breaks it at once */
		if (tr2_batch_peek(it->data, it->len, 0, &it->ts) < 0)
			it->ts = hdr->ts_ns;
		it->ts = call_time(it, 0, it->ts);
		break;
	default:
		/* a thread gone before its first batch came: its announce too */
		if (hdr->kind == TR2_REC_THREAD_GONE)
			free(take_info(s, hdr->tid));
		it = new_item(s, ITEM_REC, hdr->ts_ns);
		it->hdr = *hdr;
		break;
	}
	push(s, it);
}

void tr2_session_resumed(struct tr2_session *s, uint32_t pid, uint64_t from_ns, uint64_t to_ns)
{
	struct item *it = new_item(s, ITEM_RESUMED, from_ns);

	it->hdr.pid = pid;
	it->from = from_ns;
	it->to = to_ns;
	push(s, it);
}

void tr2_session_lost(struct tr2_session *s, uint32_t pid, uint64_t count, uint64_t ts_ns)
{
	struct item *it = new_item(s, ITEM_LOST, ts_ns);

	it->hdr.pid = pid;
	it->from = count;
	push(s, it);
}

void tr2_session_pause(struct tr2_session *s, uint64_t from_ns)
{
	if (s->npauses && s->pauses[s->npauses - 1].to == UINT64_MAX)
		return;
	s->pauses = tr2_grow(s->pauses, s->npauses, &s->cap_pauses, sizeof(*s->pauses));
	s->pauses[s->npauses].from = from_ns;
	s->pauses[s->npauses++].to = UINT64_MAX;
}

void tr2_session_resume(struct tr2_session *s, uint64_t to_ns)
{
	struct item *it;

	if (!s->npauses || s->pauses[s->npauses - 1].to != UINT64_MAX)
		return;
	if (to_ns < s->pauses[s->npauses - 1].from)
		to_ns = s->pauses[s->npauses - 1].from;
	s->pauses[s->npauses - 1].to = to_ns;
	it = new_item(s, ITEM_PAUSED, to_ns);
	it->from = s->pauses[s->npauses - 1].from;
	it->to = to_ns;
	push(s, it);
}

/* ---- records out ---- */

/* Thread tid's literal strings, made when new. */
static struct thread_lits *lits_of(struct tr2_session *s, uint32_t tid)
{
	struct thread_lits *t;

	for (t = s->lits[tid % LIT_BUCKETS]; t; t = t->next)
		if (t->tid == tid)
			return t;
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->next = s->lits[tid % LIT_BUCKETS];
	s->lits[tid % LIT_BUCKETS] = t;
	return t;
}

static void forget_lits(struct tr2_session *s, uint32_t tid)
{
	for (struct thread_lits **pp = &s->lits[tid % LIT_BUCKETS], *t; (t = *pp); pp = &t->next)
		if (t->tid == tid) {
			*pp = t->next;
			tr2_literals_clear(&t->lits);
			free(t);
			return;
		}
}

/* A thread's announce, to the model (strings cut where they must end). */
static void announce(struct tr2_session *s, struct tr2_rec_thread_info *r)
{
	const char *names[TR2_ANCESTRY_MAX + 1];
	uint32_t n = r->nancestry < TR2_ANCESTRY_MAX ? r->nancestry : TR2_ANCESTRY_MAX;
	struct tr2_thread_info info = {
		.pid = r->hdr.pid, .tid = r->hdr.tid, .ppid = (uint32_t)r->hdr.num[0],
		.proc_start_ns = (uint64_t)r->hdr.num[1], .thread_start_ns = (uint64_t)r->hdr.num[2],
		.thread_id = r->hdr.thread_id, .base_name = r->base_name, .sid = r->sid,
		.forked = r->hdr.flags & TR2_REC_FORKED,
		.ancestry = n ? names : NULL,
	};

	r->base_name[sizeof(r->base_name) - 1] = '\0';
	r->comm[sizeof(r->comm) - 1] = '\0';
	r->sid[sizeof(r->sid) - 1] = '\0';
	for (uint32_t i = 0; i < n; i++) {
		r->ancestry[i][sizeof(r->ancestry[i]) - 1] = '\0';
		names[i] = r->ancestry[i];
	}
	names[n] = NULL;
	if (info.proc_start_ns >= TR2_TS_MAX)
		info.proc_start_ns = 0;
	if (info.thread_start_ns >= TR2_TS_MAX)
		info.thread_start_ns = 0;
	tr2_model_thread(s->model, &info);
	if (s->summary && r->hdr.tid == r->hdr.pid)
		tr2_summary_comm(s->summary, r->hdr.pid, r->comm);
}

/* Whether call c was made while tracing was paused (by a process that
 * another tracer kept enabled meanwhile): as if never made. */
static int paused(const struct tr2_session *s, const struct tr2_call *c)
{
	for (int i = s->npauses - 1; i >= 0; i--)
		if (c->ts_ns >= s->pauses[i].from && c->ts_ns <= s->pauses[i].to)
			return 1;
	return 0;
}

/* Whether call c is one --category leaves out. */
static int filtered(const struct tr2_session *s, const struct tr2_call *c)
{
	if (!s->cats || c->probe < TRACE2__P_region_enter || c->probe > TRACE2__P_data_json)
		return 0;
	for (int i = 0; i < s->ncats; i++)
		if (c->s[0] && !strcmp(c->s[0], s->cats[i]))
			return 0;
	return 1;
}

_Static_assert((int)TR2_SCHED_CPU == TR2_STATE_CPU && (int)TR2_SCHED_RUNNABLE == TR2_STATE_RUNNABLE &&
	       (int)TR2_SCHED_BLOCKED == TR2_STATE_BLOCKED && (int)TR2_SCHED_ASLEEP == TR2_STATE_ASLEEP &&
	       (int)TR2_SCHED__COUNT == TR2_STATE__COUNT, "the eBPF side's states are the model's");

/* Call c's thread's time by state at c's time, from its batch's counts at
 * the thread's last switch-in (bpf/tr2_record.h, struct tr2_sched): on the
 * CPU from then to c.  A call made before that switch-in (its time taken
 * before the thread blocked in the runtime, its bytes written after) gets
 * the counts at the switch-in. */
static void set_sched(struct tr2_call *c, const struct tr2_sched *sc)
{
	if (!sc->origin_ns || sc->origin_ns >= TR2_TS_MAX || sc->in_ns < sc->origin_ns)
		return;
	c->sched_origin_ns = sc->origin_ns;
	for (int i = 0; i < TR2_STATE__COUNT; i++)
		c->sched_ns[i] = sc->ns[i];
	if (c->ts_ns > sc->in_ns)
		c->sched_ns[TR2_STATE_CPU] += c->ts_ns - sc->in_ns;
}

/* Writes the next call of batch it; returns 1 while it has more (it->ts is
 * the next one's time), 0 when it is done or broken. */
static int batch_step(struct tr2_session *s, struct item *it)
{
	const char *why;
	int r;

	if (it->info) {
		announce(s, it->info);
		lits_of(s, it->hdr.tid)->start_ns = (uint64_t)it->info->hdr.num[it->hdr.tid == it->hdr.pid ? 1 : 2];
		free(it->info);
		it->info = NULL;
	}
	if (it->off == 0) {
		struct thread_lits *t = lits_of(s, it->hdr.tid);
		uint64_t from = (uint64_t)it->hdr.num[2];

		/* calls lost before this batch: region starts unknown; and a
		 * batch of the thread lost: its literal ids too, until an epoch */
		if (t->has_pos && TR2_POS_BYTES(from - t->next_pos))
			t->lits.whole = 0;
		if ((t->has_pos && TR2_POS_BYTES(from - t->next_pos)) || it->hdr.num[1])
			tr2_model_gap(s->model, it->hdr.pid, it->hdr.tid);
		t->has_pos = 1;
		t->next_pos = from + it->len;
	}
	r = tr2_batch_next(&it->hdr, it->data, it->len, &it->off, &lits_of(s, it->hdr.tid)->lits, &s->dec,
			   &why);
	if (r == -1) {
		batch_broken(s, it);
		return 0;
	}
	if (r == 0)
		return 0;
	if (r == -2) {   /* one call that cannot be written: lost */
		s->lost_calls++;
		it->calls_left--;
		tr2_model_lost(s->model, it->hdr.pid, 1, it->ts);
	} else {
		s->dec.call.ts_ns = call_time(it, lits_of(s, it->hdr.tid)->start_ns, s->dec.call.ts_ns);
		if (s->dec.call.probe < TRACE2__P_timer_start)
			it->calls_left--;
		set_sched(&s->dec.call, &it->hdr.sched);
		if (s->dec.call.ts_ns >= s->since_ns && !filtered(s, &s->dec.call) && !paused(s, &s->dec.call))
			tr2_model_call(s->model, &s->dec.call);
	}
	r = tr2_batch_peek(it->data, it->len, it->off, &it->ts);
	if (r < 0)
		batch_broken(s, it);
	it->ts = call_time(it, 0, it->ts);
	return r > 0;
}

/* Writes what item it says; returns 1 when it has more (a batch). */
static int step(struct tr2_session *s, struct item *it)
{
	const struct tr2_rec *h = &it->hdr;

	switch (it->kind) {
	case ITEM_RESUMED:
		tr2_model_resumed(s->model, h->pid, it->from, it->to);
		return 0;
	case ITEM_LOST:
		tr2_model_lost(s->model, h->pid, it->from, it->ts);
		return 0;
	case ITEM_PAUSED:
		tr2_model_paused(s->model, it->from, it->to);
		return 0;
	case ITEM_REC:
		break;
	}
	switch (h->kind) {
	case TR2_REC_BATCH:
		return batch_step(s, it);
	case TR2_REC_FORK:
		tr2_model_fork(s->model, h->pid, (uint32_t)h->num[0], (uint64_t)h->num[1] < TR2_TS_MAX ?
								     (uint64_t)h->num[1] : h->ts_ns);
		break;
	case TR2_REC_EXECVE:
		tr2_model_exec(s->model, h->pid, h->ts_ns);
		break;
	case TR2_REC_THREAD_GONE:
		tr2_model_thread_gone(s->model, h->pid, h->tid);
		forget_lits(s, h->tid);
		break;
	case TR2_REC_PROC_GONE:
		tr2_model_proc_gone(s->model, h->pid);
		if (s->summary)
			tr2_summary_proc_gone(s->summary, h->pid);
		break;
	case TR2_REC_SCHED: {
		struct tr2_sched_period sp = {
			.state = h->state, .run_ns = (uint64_t)h->num[0], .off_ns = (uint64_t)h->num[1],
			.woken_ns = (uint64_t)h->num[2], .in_ns = h->ts_ns,
		};

		tr2_model_sched(s->model, h->pid, h->tid, &sp);
		break;
	}
	}
	return 0;
}

void tr2_session_flush(struct tr2_session *s, uint64_t upto_ns)
{
	while (s->nheap && s->heap[0]->ts <= upto_ns) {
		struct item *it = pop(s);
		int more;

		/* a thread's run of calls, while none of another comes first */
		while ((more = step(s, it)) && it->ts <= upto_ns && !(s->nheap && before(s->heap[0], it)))
			;
		if (more)
			push(s, it);
		else
			free_item(it);
	}
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

uint64_t tr2_session_events(const struct tr2_session *s)
{
	return tr2_model_events(s->model);
}

uint64_t tr2_session_lost_calls(const struct tr2_session *s)
{
	return s->lost_calls + tr2_model_dropped(s->model);
}

void tr2_session_kept(const struct tr2_session *s, unsigned long *procs, unsigned long *threads,
		      unsigned long *waiting)
{
	tr2_model_kept(s->model, procs, threads);
	*waiting = (unsigned long)s->nheap;
}

void tr2_session_free(struct tr2_session *s)
{
	if (!s)
		return;
	while (s->nheap)
		free_item(pop(s));
	while (s->infos) {
		struct pending_info *p = s->infos;

		s->infos = p->next;
		free(p);
	}
	for (int i = 0; i < LIT_BUCKETS; i++)
		while (s->lits[i])
			forget_lits(s, s->lits[i]->tid);
	for (int i = 0; i < s->ncats; i++)
		free(s->cats[i]);
	free(s->cats);
	free(s->pauses);
	free(s->heap);
	tr2_model_free(s->model);
	free(s);
}
