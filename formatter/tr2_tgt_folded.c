/* tr2_tgt_folded.c: region time as collapsed stacks, the input of
 * flamegraph.pl, inferno and speedscope (uftrace's `dump --flame-graph`).
 *
 * One line per distinct stack, written at the end of the trace
 * (tr2_target_finish), as nothing can be written before a stack's last
 * region has ended:
 *
 *   <process>;<thread>;<category>:<label>;<category>:<label> <N>
 *
 *   <process>  its cmd_name, else argv[0]'s last part, else "pid <pid>":
 *              processes of the same program add up, as a flame graph
 *              merges calls
 *   <thread>   the Trace2 thread name ("main", "th01:reader")
 *   <N>        µs of self time: the time inside the innermost region of the
 *              stack and in none of the regions it enclosed, summed over
 *              every time that stack was open, rounded to the nearest µs
 *              (tr2-bpf's times are in ns; EVENT input's in µs)
 *
 * Lines are sorted by process (order of appearance), then by stack (bytes).
 * A directory destination gets each process's lines in that process's
 * file.  In names, ';' becomes ':' and line breaks become spaces, so a line
 * stays one stack.  Regions still open when their thread exits or their
 * process ends (atexit, signal) count up to there; regions still open at
 * the end of the trace count up to their process's last event.  A region
 * entered before tr2-bpf attached is not in any stack (its start is not
 * known); the regions it enclosed are, from the thread's level.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_buf.h"
#include "tr2_dst.h"
#include "tr2_tgt.h"
#include "tr2_view.h"

/* One stack: "<process index>;<thread>;<frame>;..." and its self time. */
struct stack {
	char *key;
	int proc;       /* index into the view's processes */
	int64_t ns;
};

struct folded {
	struct tr2_view *view;
	struct stack *stacks;
	size_t nstacks, cap;
	size_t *slots;   /* 1 + index into stacks; 0: empty.  nslots a power of 2 */
	size_t nslots;
	struct tr2_buf key;
};

static void *folded_new(void)
{
	struct folded *st = calloc(1, sizeof(*st));

	if (!st)
		abort();
	st->view = tr2_view_new();
	st->nslots = 256;
	st->slots = calloc(st->nslots, sizeof(*st->slots));
	if (!st->slots)
		abort();
	return st;
}

static void folded_free(void *state)
{
	struct folded *st = state;

	if (!st)
		return;
	for (size_t i = 0; i < st->nstacks; i++)
		free(st->stacks[i].key);
	free(st->stacks);
	free(st->slots);
	tr2_buf_free(&st->key);
	tr2_view_free(st->view);
	free(st);
}

static size_t find_slot(const struct folded *st, const char *key)
{
	size_t i = tr2_view_hash(key) & (st->nslots - 1);

	while (st->slots[i] && strcmp(st->stacks[st->slots[i] - 1].key, key))
		i = (i + 1) & (st->nslots - 1);
	return i;
}

/* Appends name with ';' as ':' and line breaks as spaces. */
static void add_clean(struct tr2_buf *b, const char *name)
{
	for (; *name; name++)
		tr2_buf_putc(b, *name == ';' ? ':' : *name == '\n' || *name == '\r' ? ' ' : *name);
}

static void add_frame(struct tr2_buf *b, const char *name)
{
	tr2_buf_putc(b, ';');
	add_clean(b, name);
}

/* Adds ns of self time to the stack open on t of process p. */
static void add_self(struct folded *st, const struct tr2_view_proc *p, const struct tr2_view_thread *t,
		     int64_t ns)
{
	struct tr2_buf *k = &st->key;
	size_t i;

	k->len = 0;
	tr2_buf_add_int(k, p->index);
	add_frame(k, t->name);
	for (int d = 0; d < t->depth; d++)
		add_frame(k, tr2_view_frame_name(t, &t->frames[d]));
	i = find_slot(st, k->p);
	if (!st->slots[i]) {
		if (st->nstacks == st->cap) {
			st->cap = st->cap ? 2 * st->cap : 64;
			st->stacks = realloc(st->stacks, st->cap * sizeof(*st->stacks));
			if (!st->stacks)
				abort();
		}
		st->stacks[st->nstacks] = (struct stack){ .key = strdup(k->p), .proc = p->index };
		if (!st->stacks[st->nstacks].key)
			abort();
		st->slots[i] = ++st->nstacks;
		if (2 * st->nstacks > st->nslots) {
			free(st->slots);
			st->nslots *= 2;
			st->slots = calloc(st->nslots, sizeof(*st->slots));
			if (!st->slots)
				abort();
			for (size_t j = 0; j < st->nstacks; j++)
				st->slots[find_slot(st, st->stacks[j].key)] = j + 1;
			i = find_slot(st, k->p);
		}
	}
	st->stacks[st->slots[i] - 1].ns = tr2_view_add(st->stacks[st->slots[i] - 1].ns, ns);
}

/* Ends t's innermost region at ns. */
static void leave(struct folded *st, const struct tr2_view_proc *p, struct tr2_view_thread *t, int64_t ns)
{
	const struct tr2_view_frame *f = &t->frames[t->depth - 1];

	add_self(st, p, t, tr2_view_sub(tr2_view_sub(ns, f->start_ns), f->child_ns));
	tr2_view_pop(t, ns);
}

static void close_thread(struct folded *st, const struct tr2_view_proc *p, struct tr2_view_thread *t,
			 int64_t ns)
{
	while (t->depth)
		leave(st, p, t, ns);
}

static void close_proc(struct folded *st, const struct tr2_view_proc *p, int64_t ns)
{
	for (int i = 0; i < p->nthreads; i++)
		close_thread(st, p, p->threads[i], ns);
}

/* Every event: its process's and thread's state; regions and the ends of
 * threads and processes change it.  Nothing is written here. */
static void fn_any(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct folded *st = opts->state;
	int64_t ns = tr2_view_ns(ev);
	bool is_new;
	struct tr2_view_proc *p = tr2_view_proc(st->view, ev->sid, ev->stream, ns, &is_new);
	struct tr2_view_thread *t = tr2_view_thread(st->view, p, ev->thread, ns, &is_new);

	(void)b;
	switch (ev->kind) {
	case TR2_EV_START:
	case TR2_EV_CMD_NAME:
		tr2_view_name_proc(p, ev);
		break;
	case TR2_EV_REGION_ENTER:
		tr2_view_push(t, ev->category, ev->label, ns);
		break;
	case TR2_EV_REGION_LEAVE:
		if (t->depth)
			leave(st, p, t, ns);
		break;
	case TR2_EV_THREAD_EXIT:
		close_thread(st, p, t, ns);
		break;
	case TR2_EV_ATEXIT:
	case TR2_EV_SIGNAL:
		close_proc(st, p, ns);
		tr2_view_end(p);
		break;
	default:
		break;
	}
}

static int cmp_stack(const void *a, const void *b)
{
	const struct stack *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int folded_finish(struct tr2_target *t)
{
	struct folded *st = t->opts.state;
	struct tr2_buf *b = &t->buf;
	int rc = 0;

	for (int i = 0; i < st->view->nprocs; i++)
		close_proc(st, st->view->procs[i], st->view->procs[i]->last_ns);
	if (st->nstacks)   /* qsort of NULL is undefined, even for 0 elements */
		qsort(st->stacks, st->nstacks, sizeof(*st->stacks), cmp_stack);
	for (size_t i = 0; i < st->nstacks && !rc; i++) {
		const struct stack *s = &st->stacks[i];
		const struct tr2_view_proc *p = st->view->procs[s->proc];

		b->len = 0;
		if (p->name) {
			add_clean(b, p->name);
		} else {
			tr2_buf_addlit(b, "pid ");
			tr2_buf_add_uint(b, p->pid);
		}
		tr2_buf_adds(b, strchr(s->key, ';'));
		tr2_buf_putc(b, ' ');
		tr2_buf_add_int(b, tr2_view_add(s->ns, 500) / 1000);
		tr2_buf_putc(b, '\n');
		rc = tr2_dst_write(t->dst, p->sid, p->stream, b->p, b->len);
	}
	b->len = 0;
	return rc;
}

const struct tr2_tgt tr2_tgt_folded = {
	.name = "folded",
	.fn = {
		[TR2_EV_VERSION] = fn_any,
		[TR2_EV_START] = fn_any,
		[TR2_EV_EXIT] = fn_any,
		[TR2_EV_ATEXIT] = fn_any,
		[TR2_EV_SIGNAL] = fn_any,
		[TR2_EV_ERROR] = fn_any,
		[TR2_EV_CMD_PATH] = fn_any,
		[TR2_EV_CMD_ANCESTRY] = fn_any,
		[TR2_EV_CMD_NAME] = fn_any,
		[TR2_EV_CMD_MODE] = fn_any,
		[TR2_EV_ALIAS] = fn_any,
		[TR2_EV_CHILD_START] = fn_any,
		[TR2_EV_CHILD_EXIT] = fn_any,
		[TR2_EV_CHILD_READY] = fn_any,
		[TR2_EV_EXEC] = fn_any,
		[TR2_EV_EXEC_RESULT] = fn_any,
		[TR2_EV_THREAD_START] = fn_any,
		[TR2_EV_THREAD_EXIT] = fn_any,
		[TR2_EV_DEF_PARAM] = fn_any,
		[TR2_EV_DEF_REPO] = fn_any,
		[TR2_EV_REGION_ENTER] = fn_any,
		[TR2_EV_REGION_LEAVE] = fn_any,
		[TR2_EV_DATA] = fn_any,
		[TR2_EV_DATA_JSON] = fn_any,
		[TR2_EV_PRINTF] = fn_any,
		[TR2_EV_TIMER] = fn_any,
		[TR2_EV_TH_TIMER] = fn_any,
		[TR2_EV_COUNTER] = fn_any,
		[TR2_EV_TH_COUNTER] = fn_any,
	},
	.state_new = folded_new,
	.finish = folded_finish,
	.state_free = folded_free,
};
