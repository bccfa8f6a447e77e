/* tr2_thread.c: the model's threads (git's trace2/tr2_tls.c): their names,
 * start times and open regions. */
#include <stdio.h>
#include <string.h>

#include "tr2_mem.h"
#include "tr2_model_int.h"

struct tr2_thread *tr2_thread_find(struct tr2_model *m, uint32_t tid)
{
	struct tr2_thread *t;

	if (m->last && m->last->tid == tid)
		return m->last;
	for (t = m->threads[tid % TR2_MODEL_BUCKETS]; t; t = t->hnext)
		if (t->tid == tid)
			return m->last = t;
	return NULL;
}

void tr2_thread_drop(struct tr2_model *m, struct tr2_thread *t)
{
	struct tr2_thread **pp;

	for (pp = &m->threads[t->tid % TR2_MODEL_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	if (m->last == t)
		m->last = NULL;
	free(t->region_start);
	free(t->region_sched);
	free(t->slots);
	free(t);
}

void tr2_thread_name(struct tr2_thread *t, int32_t thread_id, const char *base)
{
	if (t->tid == t->proc->pid)
		snprintf(t->name, sizeof(t->name), "main");
	else if (thread_id > 0)
		snprintf(t->name, sizeof(t->name), "th%02d:%s", thread_id, base ? base : "");
	else
		snprintf(t->name, sizeof(t->name), "th00:unknown");
}

struct tr2_thread *tr2_thread_get(struct tr2_model *m, struct tr2_proc *p, uint32_t tid)
{
	struct tr2_thread *t = tr2_thread_find(m, tid);

	if (t && t->proc == p && !t->exited)
		return t;
	if (t)
		tr2_thread_drop(m, t);
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->proc = p;
	t->start_ns = p->start_ns;
	tr2_thread_name(t, 0, NULL);
	t->hnext = m->threads[tid % TR2_MODEL_BUCKETS];
	m->threads[tid % TR2_MODEL_BUCKETS] = t;
	return m->last = t;
}

void tr2_thread_push(struct tr2_thread *t, const struct tr2_call *c)
{
	struct tr2_sched_mark *mark;

	/* deeper than any event may show (TR2_NESTING_MAX): counted, not kept */
	if (t->depth < TR2_NESTING_MAX) {
		if (t->depth == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 16;
			t->region_start = xrealloc(t->region_start,
						   (size_t)t->cap * sizeof(*t->region_start));
			t->region_sched = xrealloc(t->region_sched,
						   (size_t)t->cap * sizeof(*t->region_sched));
		}
		t->region_start[t->depth] = c->ts_ns;
		mark = &t->region_sched[t->depth];
		mark->origin_ns = c->sched_origin_ns;
		memcpy(mark->ns, c->sched_ns, sizeof(mark->ns));
	}
	if (t->depth < INT32_MAX)
		t->depth++;
}

int64_t tr2_thread_pop(struct tr2_thread *t, struct tr2_sched_mark *mark)
{
	mark->origin_ns = 0;
	if (!t->depth)
		return -1;
	t->depth--;
	if (t->depth >= TR2_NESTING_MAX)
		return 0;
	*mark = t->region_sched[t->depth];
	return (int64_t)t->region_start[t->depth];
}

void tr2_thread_copy_regions(struct tr2_thread *t, const struct tr2_thread *from)
{
	/* the child's time by state is counted from its own origin, not the
	 * parent's: its regions' split is not known (origin 0) */
	struct tr2_call enter = { 0 };

	t->depth = 0;
	for (int i = 0; i < from->depth && i < TR2_NESTING_MAX; i++) {
		enter.ts_ns = from->region_start[i];
		tr2_thread_push(t, &enter);
	}
	t->depth = from->depth;
}

uint64_t tr2_thread_since(const struct tr2_thread *t)
{
	if (t->depth)
		return t->depth <= TR2_NESTING_MAX ? t->region_start[t->depth - 1] : 0;
	return t->start_ns;
}
