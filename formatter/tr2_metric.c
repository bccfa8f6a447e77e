/* tr2_metric.c: the model's stopwatch timers and counters (git's
 * trace2/tr2_tmr.c and tr2_ctr.c): each thread sums its own uses of each
 * definition; a thread that ends hands its sums to its process's totals,
 * which atexit reports. */
#include <string.h>

#include "tr2_mem.h"
#include "tr2_model_int.h"

/* The process's metric with these names, made last in first-use order. */
static struct tr2_metric *metric_of(struct tr2_proc *p, bool is_counter, const char *category,
				    const char *name, int per_thread)
{
	struct tr2_metric *mt;

	category = category ? category : "";
	name = name ? name : "";
	for (mt = p->metrics; mt; mt = mt->next)
		if (mt->is_counter == is_counter && !strcmp(mt->category, category) &&
		    !strcmp(mt->name, name))
			return mt;
	mt = xcalloc(1, sizeof(*mt));
	mt->is_counter = is_counter;
	mt->per_thread = per_thread != 0;
	mt->category = xstrdup(category);
	mt->name = xstrdup(name);
	*p->metrics_tail = mt;
	p->metrics_tail = &mt->next;
	return mt;
}

/* Thread t's slot of the definition of call c; made when missing if create,
 * else NULL.  NULL too when t has TR2_MODEL_METRICS slots already (counted). */
static struct tr2_slot *slot_of(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c,
				bool create)
{
	struct tr2_slot *s;

	for (int i = 0; i < t->nslots; i++)
		if (t->slots[i].id == c->metric)
			return &t->slots[i];
	if (!create)
		return NULL;
	if (t->nslots == TR2_MODEL_METRICS) {
		m->dropped++;
		t->proc->unmarked++;
		return NULL;
	}
	t->slots = tr2_grow(t->slots, t->nslots, &t->slots_cap, sizeof(*t->slots));
	s = &t->slots[t->nslots++];
	memset(s, 0, sizeof(*s));
	s->id = c->metric;
	s->m = metric_of(t->proc, c->probe == TRACE2__P_counter_add, c->s[0], c->s[1], c->per_thread);
	return s;
}

void tr2_metric_call(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c)
{
	struct tr2_slot *s = slot_of(m, t, c, c->probe != TRACE2__P_timer_stop);
	uint64_t len;

	if (!s)
		return;
	switch (c->probe) {
	case TRACE2__P_timer_start:
		if (s->recursion++ == 0)
			s->start_ns = c->ts_ns;
		return;
	case TRACE2__P_timer_stop:
		/* a stop whose start came before the trace is not counted */
		if (s->recursion == 0 || --s->recursion)
			return;
		len = c->ts_ns > s->start_ns ? c->ts_ns - s->start_ns : 0;
		tr2_timer_add(&s->intervals, &s->total_ns, &s->min_ns, &s->max_ns, 1, len, len, len);
		return;
	case TRACE2__P_counter_add:
		s->count += (uint64_t)c->value;
		return;
	}
}

static int64_t ns_to_us(uint64_t ns)
{
	return (int64_t)((ns + 500) / 1000);
}

static void metric_event(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c,
			 enum tr2_ev_kind kind, const struct tr2_metric *mt, uint64_t intervals,
			 uint64_t total, uint64_t min, uint64_t max, uint64_t count)
{
	struct tr2_ev ev;

	tr2_model_ev_init(m, &ev, kind, t, c->file, c->line, c->ts_ns);
	ev.category = mt->category;
	ev.name = mt->name;
	ev.intervals = intervals;
	ev.t_total_us = ns_to_us(total);
	ev.t_min_us = ns_to_us(min);
	ev.t_max_us = ns_to_us(max);
	ev.count = (int64_t)count;
	tr2_model_emit(m, t->proc, &ev);
}

void tr2_metric_merge_thread(struct tr2_thread *t)
{
	for (int i = 0; i < t->nslots; i++) {
		struct tr2_slot *s = &t->slots[i];

		tr2_timer_add(&s->m->intervals, &s->m->total_ns, &s->m->min_ns, &s->m->max_ns,
			     s->intervals, s->total_ns, s->min_ns, s->max_ns);
		s->m->count += s->count;
	}
	t->nslots = 0;
}

void tr2_metric_close_thread(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c)
{
	/* timers first, then counters; the slots of two definitions with the
	 * same names are one metric, one event */
	for (int counters = 0; counters < 2; counters++)
		for (int i = 0; i < t->nslots; i++) {
			struct tr2_metric *mt = t->slots[i].m;
			uint64_t n = 0, total = 0, min = 0, max = 0, count = 0;
			int j;

			for (j = 0; j < i && t->slots[j].m != mt; j++)
				;
			if (j < i || !mt->per_thread || mt->is_counter != counters)
				continue;
			for (j = i; j < t->nslots; j++)
				if (t->slots[j].m == mt) {
					const struct tr2_slot *s = &t->slots[j];

					tr2_timer_add(&n, &total, &min, &max, s->intervals, s->total_ns,
						     s->min_ns, s->max_ns);
					count += s->count;
				}
			if (counters ? count != 0 : n != 0)
				metric_event(m, t, c, counters ? TR2_EV_TH_COUNTER : TR2_EV_TH_TIMER, mt, n,
					     total, min, max, count);
		}
	tr2_metric_merge_thread(t);
}

void tr2_metric_final(struct tr2_model *m, struct tr2_thread *t, const struct tr2_call *c)
{
	const struct tr2_metric *mt;

	for (mt = t->proc->metrics; mt; mt = mt->next)
		if (!mt->is_counter && mt->intervals)
			metric_event(m, t, c, TR2_EV_TIMER, mt, mt->intervals, mt->total_ns, mt->min_ns,
				     mt->max_ns, 0);
	for (mt = t->proc->metrics; mt; mt = mt->next)
		if (mt->is_counter && mt->count)
			metric_event(m, t, c, TR2_EV_COUNTER, mt, 0, 0, 0, 0, mt->count);
}

void tr2_metric_free_proc(struct tr2_proc *p)
{
	while (p->metrics) {
		struct tr2_metric *next = p->metrics->next;

		free(p->metrics->category);
		free(p->metrics->name);
		free(p->metrics);
		p->metrics = next;
	}
	p->metrics_tail = &p->metrics;
}
