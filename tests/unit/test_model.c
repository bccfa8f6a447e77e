/* test_model.c: the Trace2 model (formatter/tr2_model.h), the one code that
 * turns runtime calls into events for tr2-bpf and the in-process targets:
 * calls in, whole PERF BRIEF lines (and sids) out. */
#include "unit.h"
#include "tr2_model.h"
/* Twice: its include guard must cover the whole header. */
#include "tr2_record.h"
#include "tr2_record.h"

#define HOST "H0a7c9cdf"
/* CLOCK_REALTIME - CLOCK_MONOTONIC: monotonic 1 s is 2026-11-21T20:40:14Z. */
#define MONO_TO_REAL (at("2026-11-21T20:40:13.000000Z") * 1000)
#define MS 1000000ull

struct out {
	struct tr2_buf lines;
	char sids[8][256];
	int nsids, ends;
	uint64_t streams[8];   /* [pid / 100]: the stream of its last event */
	char goes_on[8];       /* each atexit's stream_goes_on, '0' or '1' */
};

static void sink_emit(void *ctx, uint32_t pid, const struct tr2_ev *ev)
{
	struct out *o = ctx;
	struct tr2_tgt_opts opts = { .brief = 1 };
	int i;

	if (tr2_tgt_perf.fn[ev->kind])
		tr2_tgt_perf.fn[ev->kind](&o->lines, ev, &opts);
	if (ev->has_split)   /* the split, after its leave's line */
		tr2_buf_addf(&o->lines, "  split%s %lld: %lld %lld %lld %lld\n", ev->split_since_trace ? " since trace" : "",
			     (long long)ev->split_wall_ns, (long long)ev->split_ns[0], (long long)ev->split_ns[1],
			     (long long)ev->split_ns[2], (long long)ev->split_ns[3]);
	if (ev->kind == TR2_EV_THREAD_STATE)
		tr2_buf_addf(&o->lines, "%s state %s at %lld for %lld\n", ev->thread, tr2_state_name(ev->state),   /* µs, ns */
			     (long long)(ev->time_us - MONO_TO_REAL / 1000), (long long)ev->dur_ns);
	for (i = 0; i < o->nsids && strcmp(o->sids[i], ev->sid); i++)
		;
	if (i == o->nsids && i < 8)
		snprintf(o->sids[o->nsids++], sizeof(o->sids[0]), "%s", ev->sid);
	o->streams[pid / 100 % 8] = ev->stream;
	if (ev->kind == TR2_EV_ATEXIT && strlen(o->goes_on) < sizeof(o->goes_on) - 1)
		o->goes_on[strlen(o->goes_on)] = ev->stream_goes_on ? '1' : '0';
}

static void sink_end(void *ctx, const char *sid, uint64_t stream)
{
	((struct out *)ctx)->ends++;
}

static struct tr2_model *model(struct out *o)
{
	struct tr2_model_sink sink = { .emit = sink_emit, .end = sink_end, .ctx = o };

	memset(o, 0, sizeof(*o));
	return tr2_model_new(&sink, HOST, MONO_TO_REAL);
}

/* The lines so far, then none. */
static char *take(struct out *o)
{
	char *s = strndup(o->lines.p ? o->lines.p : "", o->lines.len);

	o->lines.len = 0;
	return s;
}

#define ASSERT_LINES(o, want) \
	do { \
		char *got_ = take(o); \
		assert_string_equal(got_, want); \
		free(got_); \
	} while (0)

static struct tr2_call call(int probe, uint32_t pid, uint32_t tid, uint64_t ts_ns)
{
	return (struct tr2_call){ .probe = probe, .pid = pid, .tid = tid, .ts_ns = ts_ns, .file = "a.c",
				  .line = 1 };
}

static void thread(struct tr2_model *m, uint32_t pid, uint32_t tid, uint64_t start, int id, const char *base,
		   const char *sid)
{
	struct tr2_thread_info info = { .pid = pid, .tid = tid, .ppid = 1, .proc_start_ns = 1000 * MS,
					.thread_start_ns = start, .thread_id = id, .base_name = base, .sid = sid };

	tr2_model_thread(m, &info);
}

static void region(struct tr2_model *m, int probe, uint32_t tid, uint64_t ts, const char *label)
{
	struct tr2_call c = call(probe, 100, tid, ts);

	c.s[0] = "cat";
	c.s[1] = label;
	tr2_model_call(m, &c);
}

static void data(struct tr2_model *m, uint32_t tid, uint64_t ts, intmax_t v)
{
	/* the process of a thread: its tid rounded down to a hundred */
	struct tr2_call c = call(TRACE2__P_data, tid / 100 * 100, tid, ts);

	c.s[0] = "cat";
	c.s[1] = "k";
	c.value = v;
	tr2_model_call(m, &c);
}

/* Nesting, t_abs and t_rel of regions and data on two threads; a thread's
 * name from its announce and its thread_start. */
static void test_regions_and_threads(void **state)
{
	struct out o;
	struct tr2_model *m = model(&o);
	struct tr2_call c;

	thread(m, 100, 100, 1000 * MS, 0, "", NULL);
	region(m, TRACE2__P_region_enter, 100, 1001 * MS, "outer");
	region(m, TRACE2__P_region_enter, 100, 1003 * MS, "inner");
	data(m, 100, 1004 * MS, 42);
	region(m, TRACE2__P_region_leave, 100, 1007 * MS, "inner");
	region(m, TRACE2__P_region_leave, 100, 1010 * MS, "outer");
	thread(m, 100, 101, 1011 * MS, 0, "", NULL);
	c = call(TRACE2__P_thread_start, 100, 101, 1012 * MS);
	c.id = 1;
	c.s[0] = "worker";
	tr2_model_call(m, &c);
	data(m, 101, 1015 * MS, 7);
	tr2_model_call(m, &(struct tr2_call){ .probe = TRACE2__P_thread_exit, .pid = 100, .tid = 101,
					      .ts_ns = 1020 * MS });
	ASSERT_LINES(&o,
		"d0 | main                     | region_enter |     |  0.001000 |           | cat          | label:outer\n"
		"d0 | main                     | region_enter |     |  0.003000 |           | cat          | ..label:inner\n"
		"d0 | main                     | data         |     |  0.004000 |  0.001000 | cat          | ....k:42\n"
		"d0 | main                     | region_leave |     |  0.007000 |  0.004000 | cat          | ..label:inner\n"
		"d0 | main                     | region_leave |     |  0.010000 |  0.009000 | cat          | label:outer\n"
		"d0 | th01:worker              | thread_start |     |  0.012000 |           |              | \n"
		"d0 | th01:worker              | data         |     |  0.015000 |  0.003000 | cat          | k:7\n"
		"d0 | th01:worker              | thread_exit  |     |  0.020000 |  0.008000 |              | \n");
	assert_int_equal(tr2_model_events(m), 8);
	tr2_model_free(m);
	free(o.lines.p);
}

/* A leave with no region open (entered before the attach): the outermost
 * level, no t_rel; after a gap, an open region's start is unknown. */
static void test_before_attach_and_gap(void **state)
{
	struct out o;
	struct tr2_model *m = model(&o);

	thread(m, 100, 100, 1000 * MS, 0, "", NULL);
	data(m, 100, 1002 * MS, 1);
	region(m, TRACE2__P_region_leave, 100, 1003 * MS, "before");
	region(m, TRACE2__P_region_enter, 100, 1004 * MS, "open");
	tr2_model_gap(m, 100, 100);
	region(m, TRACE2__P_region_leave, 100, 1005 * MS, "open");
	ASSERT_LINES(&o,
		"d0 | main                     | data         |     |  0.002000 |  0.002000 | cat          | k:1\n"
		"d0 | main                     | region_leave |     |  0.003000 |           | cat          | label:before\n"
		"d0 | main                     | region_enter |     |  0.004000 |           | cat          | label:open\n"
		"d0 | main                     | region_leave |     |  0.005000 |           | cat          | label:open\n");
	tr2_model_free(m);
	free(o.lines.p);
}

/* A region's split by scheduler state: the thread's counts at its
 * leave less those at its enter, on the CPU growing with the call's time
 * (the session's set_sched gives them so); a region entered before the
 * counting began, since the counting's origin; none where either is
 * unknown (another origin: the thread's counting began anew).  The
 * thread's stretches off the CPU as thread_state events, also after its
 * thread_exit, not before its process's first event. */
static void test_split(void **state)
{
	struct out o;
	struct tr2_model *m = model(&o);
	struct tr2_sched_period sp = { .state = TR2_STATE_BLOCKED, .run_ns = 1000 * MS, .off_ns = 1002 * MS,
				       .woken_ns = 1005 * MS, .in_ns = 1006 * MS };
	struct tr2_call c;

	tr2_model_sched(m, 100, 100, &sp);   /* no event yet: nothing */
	thread(m, 100, 100, 1000 * MS, 0, "", NULL);
	c = call(TRACE2__P_region_leave, 100, 100, 1001 * MS);
	c.s[0] = "cat";
	c.s[1] = "before";
	c.sched_origin_ns = 1000 * MS;
	c.sched_ns[TR2_STATE_CPU] = 1 * MS;
	tr2_model_call(m, &c);
	c.probe = TRACE2__P_region_enter;
	c.s[1] = "io";
	tr2_model_call(m, &c);
	c.probe = TRACE2__P_region_leave;
	c.ts_ns = 1008 * MS;
	c.sched_ns[TR2_STATE_CPU] = 4 * MS;
	c.sched_ns[TR2_STATE_RUNNABLE] = 1 * MS;
	c.sched_ns[TR2_STATE_BLOCKED] = 3 * MS;
	tr2_model_call(m, &c);
	c.probe = TRACE2__P_region_enter;
	tr2_model_call(m, &c);
	c.probe = TRACE2__P_region_leave;
	c.ts_ns = 1009 * MS;
	c.sched_origin_ns = 1008 * MS;   /* counted anew: no split */
	tr2_model_call(m, &c);
	tr2_model_sched(m, 100, 100, &sp);
	tr2_model_call(m, &(struct tr2_call){ .probe = TRACE2__P_thread_exit, .pid = 100, .tid = 100,
					      .ts_ns = 1010 * MS });
	sp.state = TR2_STATE_CPU;
	sp.off_ns = sp.woken_ns = sp.in_ns = 1011 * MS;
	tr2_model_sched(m, 100, 100, &sp);
	ASSERT_LINES(&o,
		"d0 | main                     | region_leave |     |  0.001000 |           | cat          | label:before\n"
		"  split since trace 1000000: 1000000 0 0 0\n"
		"d0 | main                     | region_enter |     |  0.001000 |           | cat          | label:io\n"
		"d0 | main                     | region_leave |     |  0.008000 |  0.007000 | cat          | label:io\n"
		"  split 7000000: 3000000 1000000 3000000 0\n"
		"d0 | main                     | region_enter |     |  0.008000 |           | cat          | label:io\n"
		"d0 | main                     | region_leave |     |  0.009000 |  0.001000 | cat          | label:io\n"
		"main state on_cpu at 1000000 for 2000000\n"
		"main state blocked at 1002000 for 3000000\n"
		"main state runnable at 1005000 for 1000000\n"
		"d0 | main                     | thread_exit  |     |  0.010000 |  0.010000 |              | \n"
		"main state on_cpu at 1000000 for 11000000\n");
	assert_int_equal(tr2_model_events(m), 6);
	tr2_model_free(m);
	free(o.lines.p);
}

/* The sid: the program's own when it gave one; else made, under the
 * parent's for a forked child, under the old one's after exec; a stream
 * that ends without atexit ends in the targets. */
static void test_sids(void **state)
{
	struct out o;
	struct tr2_model *m = model(&o);
	const char *own = "20261121T204013.500000Z-H0a7c9cdf-P00000064";

	thread(m, 100, 100, 1000 * MS, 0, "", own);
	data(m, 100, 1001 * MS, 1);
	tr2_model_fork(m, 200, 100, 1002 * MS);
	thread(m, 200, 200, 1002 * MS, 0, "", NULL);
	data(m, 200, 1003 * MS, 2);
	tr2_model_exec(m, 200, 1004 * MS);
	data(m, 200, 1005 * MS, 3);
	tr2_model_proc_gone(m, 200);
	assert_int_equal(o.nsids, 3);
	assert_string_equal(o.sids[0], own);
	assert_string_equal(o.sids[1], "20261121T204013.500000Z-H0a7c9cdf-P00000064/"
				       "20261121T204014.002000Z-H0a7c9cdf-P000000c8");
	assert_string_equal(o.sids[2], "20261121T204013.500000Z-H0a7c9cdf-P00000064/"
				       "20261121T204014.002000Z-H0a7c9cdf-P000000c8/"
				       "20261121T204014.004000Z-H0a7c9cdf-P000000c8");
	assert_int_equal(o.ends, 2);   /* at exec, and when it was gone */
	tr2_model_free(m);
	free(o.lines.p);
}

static void atexit_call(struct tr2_model *m, uint32_t pid, uint64_t ts)
{
	tr2_model_call(m, &(struct tr2_call){ .probe = TRACE2__P_atexit, .pid = pid, .tid = pid, .ts_ns = ts });
}

/* A child forked without exec writes its parent's stream, as git's child
 * writes the file it inherited: under the parent's sid, t_abs from the
 * parent's start, in the region open at the fork; its atexit leaves the
 * stream to the parent, whose atexit ends it.  A child that execs and one
 * that makes a sid of its own leave it too. */
static void test_shared_stream(void **state)
{
	struct out o;
	struct tr2_model *m = model(&o);
	struct tr2_thread_info child = { .pid = 200, .tid = 200, .ppid = 100, .proc_start_ns = 1002 * MS,
					 .thread_start_ns = 1002 * MS, .forked = true };

	thread(m, 100, 100, 1000 * MS, 0, "", NULL);
	region(m, TRACE2__P_region_enter, 100, 1001 * MS, "parent");
	tr2_model_fork(m, 200, 100, 1002 * MS);
	tr2_model_fork(m, 300, 100, 1002 * MS);
	tr2_model_fork(m, 400, 100, 1002 * MS);
	tr2_model_exec(m, 300, 1003 * MS);
	tr2_model_thread(m, &child);
	data(m, 200, 1004 * MS, 2);
	/* no thread info: not known to go on in the session, a sid of its own
	 * (in the region open at the fork all the same) */
	data(m, 400, 1004 * MS, 4);
	atexit_call(m, 200, 1005 * MS);
	region(m, TRACE2__P_region_leave, 100, 1006 * MS, "parent");
	atexit_call(m, 100, 1007 * MS);
	ASSERT_LINES(&o,
		"d0 | main                     | region_enter |     |  0.001000 |           | cat          | label:parent\n"
		"d0 | main                     | data         |     |  0.004000 |  0.003000 | cat          | ..k:2\n"
		"d1 | main                     | data         |     |  0.002000 |  0.003000 | cat          | ..k:4\n"
		"d0 | main                     | atexit       |     |  0.005000 |           |              | code:0\n"
		"d0 | main                     | region_leave |     |  0.006000 |  0.005000 | cat          | label:parent\n"
		"d0 | main                     | atexit       |     |  0.007000 |           |              | code:0\n");
	assert_int_equal(o.nsids, 2);
	assert_int_equal(o.streams[2], o.streams[1]);
	assert_int_not_equal(o.streams[4], o.streams[1]);
	assert_string_equal(o.goes_on, "10");
	tr2_model_free(m);
	free(o.lines.p);
}

static void metric(struct tr2_model *m, int probe, uint32_t tid, uint64_t ts, uint64_t id, const char *name)
{
	struct tr2_call c = call(probe, 100, tid, ts);

	c.metric = id;
	c.s[0] = "m";
	c.s[1] = name;
	c.per_thread = 1;
	c.value = 5;
	tr2_model_call(m, &c);
}

/* Timers and counters: per thread at thread_exit, totals at atexit; two
 * definitions with one name are one metric; a 17th definition of a thread
 * is dropped, counted and marked before the process's next event. */
static void test_metrics(void **state)
{
	struct out o;
	struct tr2_model *m = model(&o);

	thread(m, 100, 101, 1000 * MS, 1, "w", NULL);
	metric(m, TRACE2__P_timer_start, 101, 1001 * MS, 1, "t");
	metric(m, TRACE2__P_timer_stop, 101, 1003 * MS, 1, "t");
	metric(m, TRACE2__P_timer_start, 101, 1004 * MS, 2, "t");
	metric(m, TRACE2__P_timer_stop, 101, 1005 * MS, 2, "t");
	metric(m, TRACE2__P_counter_add, 101, 1006 * MS, 3, "c");
	tr2_model_call(m, &(struct tr2_call){ .probe = TRACE2__P_thread_exit, .pid = 100, .tid = 101,
					      .ts_ns = 1010 * MS });
	for (uint64_t id = 10; id < 10 + TR2_MODEL_METRICS + 1; id++)
		metric(m, TRACE2__P_counter_add, 100, 1011 * MS, id, "many");
	assert_int_equal(tr2_model_dropped(m), 1);
	tr2_model_call(m, &(struct tr2_call){ .probe = TRACE2__P_atexit, .pid = 100, .tid = 100,
					      .ts_ns = 1012 * MS });
	ASSERT_LINES(&o,
		"d0 | th01:w                   | th_timer     |     |           |           | m            | name:t intervals:2 total:0.003000 min:0.001000 max:0.002000\n"
		"d0 | th01:w                   | th_counter   |     |           |           | m            | name:c value:5\n"
		"d0 | th01:w                   | thread_exit  |     |  0.010000 |  0.010000 |              | \n"
		"d0 | main                     | data         |     |  0.012000 |  0.012000 | tr2          | lost_events:1\n"
		"d0 | main                     | th_counter   |     |           |           | m            | name:many value:80\n"
		"d0 | main                     | timer        |     |           |           | m            | name:t intervals:2 total:0.003000 min:0.001000 max:0.002000\n"
		"d0 | main                     | counter      |     |           |           | m            | name:c value:5\n"
		"d0 | main                     | counter      |     |           |           | m            | name:many value:80\n"
		"d0 | main                     | atexit       |     |  0.012000 |           |              | code:0\n");
	tr2_model_free(m);
	free(o.lines.p);
}

/* What the model keeps goes with the processes and threads that have gone. */
static void test_kept(void **state)
{
	struct out o;
	struct tr2_model *m = model(&o);
	unsigned long procs, threads;

	for (uint32_t pid = 1000; pid < 1100; pid++) {
		thread(m, pid, pid, 1000 * MS, 0, "", NULL);
		thread(m, pid, pid + 5000, 1000 * MS, 1, "t", NULL);
		tr2_model_thread_gone(m, pid, pid + 5000);
		tr2_model_proc_gone(m, pid);
	}
	tr2_model_kept(m, &procs, &threads);
	assert_int_equal(procs, 0);
	assert_int_equal(threads, 0);
	tr2_model_free(m);
	free(o.lines.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regions_and_threads),
		cmocka_unit_test(test_before_attach_and_gap),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_sids),
		cmocka_unit_test(test_shared_stream),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
