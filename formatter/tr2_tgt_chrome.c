/* tr2_tgt_chrome.c: Chrome's Trace Event Format, the JSON that Perfetto UI,
 * chrome://tracing and speedscope open (uftrace's `dump --chrome`).
 *
 * The output is the JSON array form, written as events arrive, one trace
 * event per line: the first line of a stream starts with '[', every later
 * one with ','; tr2_target_finish writes the closing "]".  A trace cut short
 * (tr2-bpf killed) lacks only that bracket, which the format allows and the
 * viewers accept.  A directory destination gets one array per process file:
 * '[' on the process's first line, "]" after its atexit or signal.  A path
 * destination is appended to, as for every format: give a new file.
 *
 * Every event has "name", "ph", "ts", "pid" and "tid":
 *   ts   µs since the Unix epoch (Trace2's "time" is wall-clock), with three
 *        decimals: tr2-bpf knows the ns; EVENT input has µs, so ".000"
 *   pid  the process's pid, from its sid ("...-P<8 hex>"); a sid without one,
 *        or with the pid of a process in the trace that has not ended (pid
 *        namespaces, merged traces), gets an id above Linux's pid limit (2^22)
 *   tid  main: the pid; other threads: ids above 2^22 in order of appearance
 *        (Trace2 names threads, it does not number them by kernel tid)
 * Metadata ("ph":"M"): process_name "<cmd_name or argv[0]> (<last sid
 * part>)" at a process's first event and again when start or cmd_name
 * names it; thread_name, the Trace2 thread name ("main", "th01:reader"), at
 * a thread's first event.
 *
 * Regions: "B" at region_enter and "E" at region_leave, named
 * "<category>:<label>", "cat" the category, msg, repo, file and line in
 * "args" (the E repeats its B's: speedscope matches them by name and args).
 * A region_leave with no region_enter seen on its thread (entered before
 * tr2-bpf attached) is an "X" slice that ends at the leave and starts t_rel
 * earlier, or, without t_rel, at the thread's first event; its args say
 * "before_trace":true.  Regions still open when their thread exits, or
 * their process ends (atexit, signal), get their "E" there; regions still
 * open at the end of the trace get theirs at their process's last event.
 *
 * Children: child_start is an instant event (class, argv); child_exit
 * writes the child as an "X" slice on the thread that started it, named
 * "child:<class>" ("child:hook:<name>" for hooks), from child_start (else
 * from t_rel, else from the process's first event) to child_exit.  When the
 * child's own process is in the trace (tr2-bpf -- CMD follows children), a
 * flow arrow ("s" at the slice's start, "f" at the child's first event)
 * joins them.  The slice assumes what git's run_command does: the regions of
 * the starting thread nest with the child's lifetime.
 *
 * Instant events ("ph":"i", "s":"t"), each with its values in "args":
 * version, start, exit, atexit, signal, error, cmd_path, cmd_ancestry,
 * cmd_name, cmd_mode, alias, def_param, def_repo, child_start, child_ready,
 * exec, exec_result, thread_start, thread_exit, printf (named after the
 * kind); data and data_json (named "<category>/<key>", "value" a string for
 * data, the JSON value itself for data_json); timer and th_timer (named
 * "<category>/<name>", seconds as in EVENT).  tr2-bpf's lost-events marker
 * (data "tr2"/"lost_events") is a global instant ("s":"g", drawn across the
 * whole trace) coloured "terrible" (red).  counter is a point of the
 * process's counter track ("ph":"C", "<category>/<name>", args {"count":
 * N}); th_counter, a thread's share, an instant of that name on the thread.
 * Where tr2-bpf splits region time by scheduler state (tr2_event.h,
 * has_split), a region's "E" (or its "X" when entered before the trace)
 * adds "on_cpu_us", "runnable_us", "blocked_us" and "asleep_us" to its
 * args (and "split_since_trace":true when the split counts from the
 * thread's counting on); each thread's thread_state events are "X" slices
 * named Running, Runnable, Uninterruptible Sleep and Sleeping on a track of
 * its own ("<thread> states", its tid above 2^22), which thread_sort_index
 * metadata puts right under the thread; their ts and dur are whole µs
 * (".000").
 * Strings are escaped as in EVENT (tr2_json_add_string).  There is no BRIEF
 * variant: --brief leaves this format (and folded) as it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_buf.h"
#include "tr2_dst.h"
#include "tr2_json.h"
#include "tr2_tgt.h"
#include "tr2_view.h"

struct chrome {
	struct tr2_view *view;
	bool started;          /* one stream (not per process): '[' written */
	uint64_t flow_id;      /* the last flow arrow's id */
	struct tr2_buf scratch;
};

/* What every event function works with. */
struct ctx {
	struct chrome *st;
	bool *started;             /* the stream's flag: per process or st->started */
	struct tr2_view_proc *p;
	struct tr2_view_thread *t;
	int64_t ns;
};

#define KEY(b, key) tr2_buf_addlit(b, ",\"" key "\":")

static void *chrome_new(void)
{
	struct chrome *st = calloc(1, sizeof(*st));

	if (!st)
		abort();
	st->view = tr2_view_new();
	return st;
}

static void chrome_free(void *state)
{
	struct chrome *st = state;

	if (!st)
		return;
	tr2_view_free(st->view);
	tr2_buf_free(&st->scratch);
	free(st);
}

/* ts and dur: µs with three decimals (the ns), from ns; negative as 0. */
static void add_ts(struct tr2_buf *b, int64_t ns)
{
	uint64_t u = ns < 0 ? 0 : (uint64_t)ns;
	char tmp[32], *end = tmp + sizeof(tmp), *p;

	end[-1] = (char)('0' + u % 10);
	end[-2] = (char)('0' + u / 10 % 10);
	end[-3] = (char)('0' + u / 100 % 10);
	end[-4] = '.';
	p = tr2_digits_before(end - 4, u / 1000);
	tr2_buf_put(b, p, (size_t)(end - p));
}

/* Starts one trace event: the separator, then "name", "ph", "ts", "pid",
 * "tid".  name is written as a JSON string. */
static void ev_begin(struct tr2_buf *b, struct ctx *c, const char *name, char ph, int64_t ns, uint32_t pid,
		     uint32_t tid)
{
	tr2_buf_putc(b, *c->started ? ',' : '[');
	*c->started = true;
	tr2_buf_addlit(b, "{\"name\":");
	tr2_json_add_string(b, name);
	tr2_buf_addlit(b, ",\"ph\":\"");
	tr2_buf_putc(b, ph);
	tr2_buf_addlit(b, "\",\"ts\":");
	add_ts(b, ns);
	KEY(b, "pid");
	tr2_buf_add_uint(b, pid);
	KEY(b, "tid");
	tr2_buf_add_uint(b, tid);
}

static void ev_end(struct tr2_buf *b)
{
	tr2_buf_addlit(b, "}\n");
}

/* process_name: "<name> (<last sid part>)", or "<last sid part>" while unnamed. */
static void meta_process(struct tr2_buf *b, struct ctx *c)
{
	struct tr2_buf *s = &c->st->scratch;
	const char *last = strrchr(c->p->sid, '/');

	last = last ? last + 1 : c->p->sid;
	s->len = 0;
	if (c->p->name) {
		tr2_buf_adds(s, c->p->name);
		tr2_buf_addlit(s, " (");
		tr2_buf_adds(s, last);
		tr2_buf_putc(s, ')');
	} else {
		tr2_buf_adds(s, last);
	}
	ev_begin(b, c, "process_name", 'M', c->p->first_ns, c->p->pid, c->p->pid);
	tr2_buf_addlit(b, ",\"args\":{\"name\":");
	tr2_json_add_string(b, s->p);
	tr2_buf_addlit(b, "}");
	ev_end(b);
}

/* Finds the event's process and thread; names them when they are new. */
static struct ctx enter(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = { .st = opts->state, .ns = tr2_view_ns(ev) };
	bool new_proc, new_thread;

	c.p = tr2_view_proc(c.st->view, ev->sid, ev->stream, c.ns, &new_proc);
	c.started = opts->per_process ? &c.p->started : &c.st->started;
	c.t = tr2_view_thread(c.st->view, c.p, ev->thread, c.ns, &new_thread);
	if (new_proc || (opts->per_process && !*c.started))
		meta_process(b, &c);
	if (new_thread) {
		ev_begin(b, &c, "thread_name", 'M', c.ns, c.p->pid, c.t->tid);
		tr2_buf_addlit(b, ",\"args\":{\"name\":");
		tr2_json_add_string(b, c.t->name);
		tr2_buf_addlit(b, "}");
		ev_end(b);
	}
	return c;
}

/* args helpers: each writes ,"key":value or, for the first, {"key":value. */
static void arg_key(struct tr2_buf *b, bool *first, const char *key)
{
	tr2_buf_put(b, *first ? ",\"args\":{\"" : ",\"", *first ? 10 : 2);
	*first = false;
	tr2_buf_adds(b, key);
	tr2_buf_addlit(b, "\":");
}

static void arg_str(struct tr2_buf *b, bool *first, const char *key, const char *val)
{
	if (!val)
		return;
	arg_key(b, first, key);
	tr2_json_add_string(b, val);
}

static void arg_int(struct tr2_buf *b, bool *first, const char *key, int64_t val)
{
	arg_key(b, first, key);
	tr2_buf_add_int(b, val);
}

static void arg_argv(struct tr2_buf *b, bool *first, const char *key, const char *const *argv)
{
	if (!argv)
		return;
	arg_key(b, first, key);
	tr2_buf_putc(b, '[');
	for (int i = 0; argv[i]; i++) {
		if (i)
			tr2_buf_putc(b, ',');
		tr2_json_add_string(b, argv[i]);
	}
	tr2_buf_putc(b, ']');
}

/* file and line of the call site, then closes args (when any) and the event. */
static void args_end(struct tr2_buf *b, bool *first, const struct tr2_ev *ev)
{
	if (ev->file && *ev->file) {
		arg_str(b, first, "file", ev->file);
		arg_int(b, first, "line", ev->line);
	}
	if (!*first)
		tr2_buf_putc(b, '}');
	ev_end(b);
}

static void add_repo(struct tr2_buf *b, bool *first, const struct tr2_ev *ev)
{
	if (ev->repo > 0 || ev->has_repo)
		arg_int(b, first, "repo", ev->repo);
}

/* The region's split (ev->has_split) as args: "<state>_us" each, µs with
 * three decimals, and "split_since_trace":true where it counts from the
 * thread's counting on, not from the region's enter. */
static void arg_split(struct tr2_buf *b, bool *first, const struct tr2_ev *ev)
{
	char key[32];

	for (int i = 0; i < TR2_STATE__COUNT; i++) {
		snprintf(key, sizeof(key), "%s_us", tr2_state_name(i));
		arg_key(b, first, key);
		add_ts(b, ev->split_ns[i]);
	}
	if (ev->split_since_trace) {
		arg_key(b, first, "split_since_trace");
		tr2_buf_addlit(b, "true");
	}
}

/* "E" for t's innermost region, at ns, with the args of its "B", and
 * leave's split when it has one (NULL: none).  Viewers merge an E's args
 * into its slice's (Perfetto, chrome://tracing); speedscope matches an E
 * to its B by name. */
static void end_region(struct tr2_buf *b, struct ctx *c, struct tr2_view_thread *t, int64_t ns,
		       const struct tr2_ev *leave)
{
	const struct tr2_view_frame *f = &t->frames[t->depth - 1];
	bool first = f->extra_len == 0;

	ev_begin(b, c, tr2_view_frame_name(t, f), 'E', ns, c->p->pid, t->tid);
	if (!leave || !leave->has_split) {
		tr2_buf_put(b, tr2_view_kept(t, f), f->extra_len);
	} else {
		tr2_buf_put(b, tr2_view_kept(t, f), first ? 0 : f->extra_len - 1);   /* its '}' after the split */
		arg_split(b, &first, leave);
		tr2_buf_putc(b, '}');
	}
	ev_end(b);
	tr2_view_pop(t, ns);
}

/* "E" for every region open on t, innermost first, at ns. */
static void close_thread(struct tr2_buf *b, struct ctx *c, struct tr2_view_thread *t, int64_t ns)
{
	while (t->depth)
		end_region(b, c, t, ns, NULL);
}

static void close_proc(struct tr2_buf *b, struct ctx *c, int64_t ns)
{
	for (int i = 0; i < c->p->nthreads; i++)
		close_thread(b, c, c->p->threads[i], ns);
}

/* An instant event on the event's thread, named name, args begun. */
static bool instant(struct tr2_buf *b, struct ctx *c, const char *name)
{
	ev_begin(b, c, name, 'i', c->ns, c->p->pid, c->t->tid);
	tr2_buf_addlit(b, ",\"s\":\"t\"");
	return true;
}

/* The events that are only an instant with a few values. */
static void fn_instant(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	bool first = instant(b, &c, tr2_ev_kind_name(ev->kind));

	switch (ev->kind) {
	case TR2_EV_VERSION:
		arg_str(b, &first, "evt", ev->evt);
		arg_str(b, &first, "exe", ev->exe);
		break;
	case TR2_EV_EXIT:
	case TR2_EV_EXEC_RESULT:
		if (ev->kind == TR2_EV_EXEC_RESULT)
			arg_int(b, &first, "exec_id", ev->exec_id);
		arg_int(b, &first, "code", ev->code);
		break;
	case TR2_EV_ERROR:
		arg_str(b, &first, "msg", ev->msg);
		arg_str(b, &first, "fmt", ev->fmt);
		break;
	case TR2_EV_CMD_PATH:
		arg_str(b, &first, "path", ev->path);
		break;
	case TR2_EV_CMD_ANCESTRY:
		arg_argv(b, &first, "ancestry", ev->ancestry);
		break;
	case TR2_EV_CMD_MODE:
		arg_str(b, &first, "name", ev->mode);
		break;
	case TR2_EV_ALIAS:
		arg_str(b, &first, "alias", ev->alias);
		arg_argv(b, &first, "argv", ev->argv);
		break;
	case TR2_EV_DEF_PARAM:
		arg_str(b, &first, "scope", ev->scope);
		arg_str(b, &first, "param", ev->param);
		arg_str(b, &first, "value", ev->value);
		break;
	case TR2_EV_DEF_REPO:
		add_repo(b, &first, ev);
		arg_str(b, &first, "worktree", ev->worktree);
		break;
	case TR2_EV_CHILD_READY:
		arg_int(b, &first, "child_id", ev->child_id);
		arg_int(b, &first, "pid", ev->pid);
		arg_str(b, &first, "ready", ev->ready);
		break;
	case TR2_EV_EXEC:
		arg_int(b, &first, "exec_id", ev->exec_id);
		arg_str(b, &first, "exe", ev->exe);
		arg_argv(b, &first, "argv", ev->argv);
		break;
	case TR2_EV_PRINTF:
		arg_str(b, &first, "msg", ev->msg);
		break;
	default:
		break;
	}
	args_end(b, &first, ev);
}

/* start and cmd_name also name the process. */
static void fn_naming(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	bool first = instant(b, &c, tr2_ev_kind_name(ev->kind));

	if (ev->kind == TR2_EV_START) {
		arg_argv(b, &first, "argv", ev->argv);
	} else {
		arg_str(b, &first, "name", ev->name);
		arg_str(b, &first, "hierarchy", ev->hierarchy);
	}
	args_end(b, &first, ev);
	tr2_view_name_proc(c.p, ev);
	meta_process(b, &c);
}

/* atexit, signal: the process's open regions end here; a per-process file
 * ends too, unless a process it forked writes it still (then it ends as
 * that one's does). */
static void fn_end(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	bool first;

	close_proc(b, &c, c.ns);
	tr2_view_end(c.p);
	first = instant(b, &c, tr2_ev_kind_name(ev->kind));
	if (ev->kind == TR2_EV_SIGNAL)
		arg_int(b, &first, "signo", ev->signo);
	else
		arg_int(b, &first, "code", ev->code);
	args_end(b, &first, ev);
	if (opts->per_process && !ev->stream_goes_on) {
		tr2_buf_addlit(b, "]\n");
		c.p->started = false;
	}
}

static void fn_thread(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	bool first;

	if (ev->kind == TR2_EV_THREAD_EXIT)
		close_thread(b, &c, c.t, c.ns);
	first = instant(b, &c, tr2_ev_kind_name(ev->kind));
	args_end(b, &first, ev);
}

/* "child:<class>", or "child:hook:<name>" */
static const char *child_name(struct tr2_buf *s, const struct tr2_ev *ev)
{
	s->len = 0;
	tr2_buf_addlit(s, "child:");
	if (ev->hook_name) {
		tr2_buf_addlit(s, "hook:");
		tr2_buf_adds(s, ev->hook_name);
	} else {
		tr2_buf_adds(s, ev->child_class ? ev->child_class : "?");
	}
	return s->p;
}

static void fn_child_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	bool first = instant(b, &c, "child_start");

	arg_int(b, &first, "child_id", ev->child_id);
	arg_str(b, &first, "child_class", ev->hook_name ? "hook" : ev->child_class ? ev->child_class : "?");
	arg_str(b, &first, "hook_name", ev->hook_name);
	arg_str(b, &first, "cd", ev->cd);
	arg_argv(b, &first, "argv", ev->argv);
	args_end(b, &first, ev);
	tr2_view_child_start(c.p, ev->child_id, c.ns, c.t->tid, child_name(&c.st->scratch, ev));
}

static void fn_child_exit(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	struct tr2_view_child ch = { .tid = c.t->tid };
	bool known = tr2_view_child_take(c.p, ev->child_id, &ch), first = true;
	struct tr2_view_proc *child = ev->pid > 0 ? tr2_view_proc_by_pid(c.st->view, (uint32_t)ev->pid) : NULL;

	if (!known)
		ch.start_ns = ev->has_t_rel ? tr2_view_sub(c.ns, tr2_view_us_to_ns(ev->t_rel_us)) : c.p->first_ns;
	ev_begin(b, &c, known ? ch.name : "child:?", 'X', ch.start_ns, c.p->pid, ch.tid);
	KEY(b, "dur");
	add_ts(b, tr2_view_sub(c.ns, ch.start_ns));
	arg_int(b, &first, "child_id", ev->child_id);
	arg_int(b, &first, "pid", ev->pid);
	arg_int(b, &first, "code", ev->code);
	if (!known) {
		arg_key(b, &first, "before_trace");
		tr2_buf_addlit(b, "true");
	}
	args_end(b, &first, ev);
	if (child && child != c.p) {
		c.st->flow_id++;
		ev_begin(b, &c, "child", 's', ch.start_ns, c.p->pid, ch.tid);
		KEY(b, "id");
		tr2_buf_add_uint(b, c.st->flow_id);
		tr2_buf_addlit(b, ",\"cat\":\"child\"");
		ev_end(b);
		ev_begin(b, &c, "child", 'f', child->first_ns, child->pid, child->pid);
		KEY(b, "id");
		tr2_buf_add_uint(b, c.st->flow_id);
		tr2_buf_addlit(b, ",\"cat\":\"child\"");
		ev_end(b);
	}
	free(ch.name);
}

static void fn_region_enter(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	struct tr2_view_frame *f = tr2_view_push(c.t, ev->category, ev->label, c.ns);
	bool first = true;

	size_t args;

	ev_begin(b, &c, tr2_view_frame_name(c.t, f), 'B', c.ns, c.p->pid, c.t->tid);
	tr2_buf_addlit(b, ",\"cat\":");
	tr2_json_add_string(b, ev->category ? ev->category : "");
	args = b->len;
	arg_str(b, &first, "msg", ev->msg);
	add_repo(b, &first, ev);
	args_end(b, &first, ev);
	/* ,"args":{...} without the "}\n" that ends the event */
	tr2_view_keep(c.t, b->p + args, b->len - 2 - args);
}

static void fn_region_leave(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	struct tr2_buf *s = &c.st->scratch;
	bool first = true;
	int64_t start;

	if (c.t->depth) {
		end_region(b, &c, c.t, c.ns, ev);
		return;
	}
	/* entered before the trace began */
	start = ev->has_t_rel ? tr2_view_sub(c.ns, tr2_view_us_to_ns(ev->t_rel_us)) : c.t->first_ns;
	s->len = 0;
	tr2_buf_adds(s, ev->category ? ev->category : "");
	tr2_buf_putc(s, ':');
	tr2_buf_adds(s, ev->label ? ev->label : "");
	ev_begin(b, &c, s->p, 'X', start, c.p->pid, c.t->tid);
	KEY(b, "dur");
	add_ts(b, tr2_view_sub(c.ns, start));
	tr2_buf_addlit(b, ",\"cat\":");
	tr2_json_add_string(b, ev->category ? ev->category : "");
	arg_key(b, &first, "before_trace");
	tr2_buf_addlit(b, "true");
	arg_str(b, &first, "msg", ev->msg);
	add_repo(b, &first, ev);
	if (ev->has_split)
		arg_split(b, &first, ev);
	args_end(b, &first, ev);
}

/* thread_state: an "X" slice on the thread's state track, a track of its
 * own (Chrome's slices on one track must nest; states do not nest with
 * regions) named "<thread> states" and sorted right under its thread:
 * the names and colours Perfetto gives the kernel's thread states.
 * Nothing for a process whose stream has ended (atexit, signal): its
 * threads' last stretches come after. */
static void fn_thread_state(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	static const char *const names[TR2_STATE__COUNT] = { "Running", "Runnable", "Uninterruptible Sleep",
							       "Sleeping" };
	static const char *const colours[TR2_STATE__COUNT] = { "thread_state_running", "thread_state_runnable",
								 "thread_state_uninterruptible",
								 "thread_state_sleeping" };
	struct chrome *st = opts->state;
	const struct tr2_view_proc *seen = tr2_view_find(st->view, ev->sid, ev->stream);
	struct tr2_buf *s = &st->scratch;
	int64_t start_us, end_us;
	struct ctx c;
	int i;

	if ((seen && seen->ended) || ev->state < 0 || ev->state >= TR2_STATE__COUNT)
		return;
	c = enter(b, ev, opts);
	if (!c.t->states_tid) {
		c.t->states_tid = st->view->next_id++;
		for (i = 0; c.p->threads[i] != c.t; i++)
			;
		s->len = 0;
		tr2_buf_adds(s, c.t->name);
		tr2_buf_addlit(s, " states");
		ev_begin(b, &c, "thread_name", 'M', c.ns, c.p->pid, c.t->states_tid);
		tr2_buf_addlit(b, ",\"args\":{\"name\":");
		tr2_json_add_string(b, s->p);
		tr2_buf_addlit(b, "}");
		ev_end(b);
		ev_begin(b, &c, "thread_sort_index", 'M', c.ns, c.p->pid, c.t->tid);
		tr2_buf_addlit(b, ",\"args\":{\"sort_index\":");
		tr2_buf_add_uint(b, 2 * (unsigned)i);
		tr2_buf_addlit(b, "}");
		ev_end(b);
		ev_begin(b, &c, "thread_sort_index", 'M', c.ns, c.p->pid, c.t->states_tid);
		tr2_buf_addlit(b, ",\"args\":{\"sort_index\":");
		tr2_buf_add_uint(b, 2 * (unsigned)i + 1);
		tr2_buf_addlit(b, "}");
		ev_end(b);
	}
	/* whole µs, start and end each rounded down: the viewers read ts as
	 * doubles, which hold a quarter µs at most here, so that a slice's
	 * end and the next one's start, written with decimals, would not meet
	 * (speedscope then finds them overlapping); shorter ones are left out */
	start_us = c.ns / 1000;
	end_us = tr2_view_add(c.ns, ev->dur_ns) / 1000;
	if (end_us <= start_us)
		return;
	ev_begin(b, &c, names[ev->state], 'X', start_us * 1000, c.p->pid, c.t->states_tid);
	KEY(b, "dur");
	add_ts(b, (end_us - start_us) * 1000);
	tr2_buf_addlit(b, ",\"cat\":\"thread_state\",\"cname\":\"");
	tr2_buf_adds(b, colours[ev->state]);
	tr2_buf_putc(b, '"');
	ev_end(b);
}

static bool is_lost_marker(const struct tr2_ev *ev)
{
	return (!ev->file || !*ev->file) && ev->category && ev->key && !strcmp(ev->category, "tr2") &&
	       !strcmp(ev->key, "lost_events");
}

/* "<a>/<b>" in the scratch buffer */
static const char *slash_name(struct tr2_buf *s, const char *a, const char *b)
{
	s->len = 0;
	tr2_buf_adds(s, a ? a : "");
	tr2_buf_putc(s, '/');
	tr2_buf_adds(s, b ? b : "");
	return s->p;
}

static void fn_data(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	bool first = true;

	if (is_lost_marker(ev)) {
		ev_begin(b, &c, "tr2/lost_events", 'i', c.ns, c.p->pid, c.t->tid);
		tr2_buf_addlit(b, ",\"s\":\"g\",\"cname\":\"terrible\"");
	} else {
		instant(b, &c, slash_name(&c.st->scratch, ev->category, ev->key));
	}
	tr2_buf_addlit(b, ",\"cat\":");
	tr2_json_add_string(b, ev->category ? ev->category : "");
	add_repo(b, &first, ev);
	arg_key(b, &first, "value");
	if (ev->kind == TR2_EV_DATA_JSON)
		tr2_json_add_value(b, ev->value);
	else
		tr2_json_add_string(b, ev->value ? ev->value : "");
	args_end(b, &first, ev);
}

static void fn_timer(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	bool first = instant(b, &c, slash_name(&c.st->scratch, ev->category, ev->name));

	tr2_buf_addlit(b, ",\"cat\":");
	tr2_json_add_string(b, tr2_ev_kind_name(ev->kind));
	arg_int(b, &first, "intervals", (int64_t)ev->intervals);
	arg_key(b, &first, "t_total");
	tr2_buf_add_secs(b, ev->t_total_us, 0);
	arg_key(b, &first, "t_min");
	tr2_buf_add_secs(b, ev->t_min_us, 0);
	arg_key(b, &first, "t_max");
	tr2_buf_add_secs(b, ev->t_max_us, 0);
	args_end(b, &first, ev);
}

/* counter: a point of the process's counter track; th_counter, one
 * thread's share, an instant on that thread (on the track it would make
 * the process's total jump) */
static void fn_counter(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	struct ctx c = enter(b, ev, opts);
	const char *name = slash_name(&c.st->scratch, ev->category, ev->name);
	bool first = true;

	if (ev->kind == TR2_EV_TH_COUNTER)
		instant(b, &c, name);
	else
		ev_begin(b, &c, name, 'C', c.ns, c.p->pid, c.t->tid);
	tr2_buf_addlit(b, ",\"cat\":");
	tr2_json_add_string(b, tr2_ev_kind_name(ev->kind));
	arg_int(b, &first, "count", ev->count);
	if (ev->kind == TR2_EV_TH_COUNTER) {
		args_end(b, &first, ev);
	} else {
		tr2_buf_putc(b, '}');
		ev_end(b);
	}
}

/* The end of the trace: the regions still open end at their process's last
 * event; then the closing bracket(s). */
static int chrome_finish(struct tr2_target *t)
{
	struct chrome *st = t->opts.state;
	struct tr2_buf *b = &t->buf;
	int rc = 0;

	for (int i = 0; i < st->view->nprocs && !rc; i++) {
		struct ctx c = { .st = st, .p = st->view->procs[i] };

		c.started = t->opts.per_process ? &c.p->started : &st->started;
		if (!*c.started)
			continue;
		b->len = 0;
		close_proc(b, &c, c.p->last_ns);
		if (t->opts.per_process)
			tr2_buf_addlit(b, "]\n");
		if (b->len)
			rc = tr2_dst_write(t->dst, c.p->sid, c.p->stream, b->p, b->len);
	}
	if (!t->opts.per_process && !rc)
		rc = st->started ? tr2_dst_write(t->dst, NULL, 0, "]\n", 2) : tr2_dst_write(t->dst, NULL, 0, "[]\n", 3);
	b->len = 0;
	return rc;
}

/* A process ended without atexit or signal (killed, or exec'd): on a
 * per-process destination its document ends now, as chrome_finish would
 * end it, before its file or connection is closed. */
static int chrome_end_process(struct tr2_target *t, const char *sid, uint64_t stream)
{
	struct chrome *st = t->opts.state;
	struct ctx c = { .st = st, .p = tr2_view_find(st->view, sid, stream) };
	struct tr2_buf *b = &t->buf;
	int rc;

	if (!t->opts.per_process || !c.p || !c.p->started)
		return 0;
	c.started = &c.p->started;
	b->len = 0;
	close_proc(b, &c, c.p->last_ns);
	tr2_view_end(c.p);
	tr2_buf_addlit(b, "]\n");
	c.p->started = false;
	rc = tr2_dst_write(t->dst, c.p->sid, c.p->stream, b->p, b->len);
	b->len = 0;
	return rc;
}

const struct tr2_tgt tr2_tgt_chrome = {
	.name = "chrome",
	.fn = {
		[TR2_EV_VERSION] = fn_instant,
		[TR2_EV_START] = fn_naming,
		[TR2_EV_EXIT] = fn_instant,
		[TR2_EV_ATEXIT] = fn_end,
		[TR2_EV_SIGNAL] = fn_end,
		[TR2_EV_ERROR] = fn_instant,
		[TR2_EV_CMD_PATH] = fn_instant,
		[TR2_EV_CMD_ANCESTRY] = fn_instant,
		[TR2_EV_CMD_NAME] = fn_naming,
		[TR2_EV_CMD_MODE] = fn_instant,
		[TR2_EV_ALIAS] = fn_instant,
		[TR2_EV_CHILD_START] = fn_child_start,
		[TR2_EV_CHILD_EXIT] = fn_child_exit,
		[TR2_EV_CHILD_READY] = fn_instant,
		[TR2_EV_EXEC] = fn_instant,
		[TR2_EV_EXEC_RESULT] = fn_instant,
		[TR2_EV_THREAD_START] = fn_thread,
		[TR2_EV_THREAD_EXIT] = fn_thread,
		[TR2_EV_DEF_PARAM] = fn_instant,
		[TR2_EV_DEF_REPO] = fn_instant,
		[TR2_EV_REGION_ENTER] = fn_region_enter,
		[TR2_EV_REGION_LEAVE] = fn_region_leave,
		[TR2_EV_DATA] = fn_data,
		[TR2_EV_DATA_JSON] = fn_data,
		[TR2_EV_PRINTF] = fn_instant,
		[TR2_EV_TIMER] = fn_timer,
		[TR2_EV_TH_TIMER] = fn_timer,
		[TR2_EV_COUNTER] = fn_counter,
		[TR2_EV_TH_COUNTER] = fn_counter,
		[TR2_EV_THREAD_STATE] = fn_thread_state,
	},
	.state_new = chrome_new,
	.finish = chrome_finish,
	.state_free = chrome_free,
	.end_process = chrome_end_process,
};
