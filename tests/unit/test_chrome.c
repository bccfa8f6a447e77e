/* test_chrome.c: whole lines of the chrome and folded targets, through a
 * real struct tr2_target writing to a file (tr2_target_init, emit, finish),
 * for a small made-up process: two threads, nested regions, a region
 * entered before the trace, a child, data, a lost-events marker, a
 * counter and a region left open at exit. */
#include <fcntl.h>
#include <unistd.h>
#include "tr2_dst.h"
#include "unit.h"

#define SID "20261121T202608.011966Z-H0a7c9cdf-P00000eef"
#define SID_CHILD SID "/20261121T202608.020000Z-H0a7c9cdf-P00000ef0"
#define T0 "2026-11-21T20:26:08.012000Z"

/* A target of format tgt writing to a new temporary file (or directory
 * when dir); returns the path in path. */
static void open_target(struct tr2_target *t, const struct tr2_tgt *tgt, char *path, bool dir)
{
	struct tr2_tgt_opts opts = { 0 };
	char err[256];
	struct tr2_dst *d;

	strcpy(path, "/tmp/tr2-unit-chrome.XXXXXX");
	if (dir) {
		assert_non_null(mkdtemp(path));
	} else {
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		close(fd);
	}
	d = tr2_dst_open(path, TR2_DST_MODE_GIT, err, sizeof(err));
	assert_non_null(d);
	tr2_target_init(t, tgt, &opts, d);
}

/* The whole file, NUL-terminated (caller frees); removes it. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(f);
	n = fread(s, 1, (1 << 16) - 1, f);
	s[n] = '\0';
	fclose(f);
	unlink(path);
	return s;
}

/* Ends t (tr2_target_finish), closes its file and returns what it holds
 * (see slurp). */
static char *finish_and_read(struct tr2_target *t, const char *path)
{
	assert_int_equal(tr2_target_finish(t), 0);
	tr2_dst_close(t->dst);
	return slurp(path);
}

/* An event of the test process at T0 + us µs + ns ns. */
static struct tr2_ev ev_at(enum tr2_ev_kind kind, const char *thread, int us, int ns)
{
	struct tr2_ev ev = ev_new(kind, SID, "t.c", 10 + kind);

	ev.thread = thread;
	ev.time_us = at(T0) + us;
	ev.time_ns = ns;
	return ev;
}

/* The events of the made-up trace, written to t. */
static void emit_trace(struct tr2_target *t)
{
	static const char *const argv[] = { "/usr/bin/prog", "-x", NULL };
	static const char *const du[] = { "du", "-sk", NULL };
	struct tr2_ev ev;

	ev = ev_at(TR2_EV_START, "main", 0, 5);
	ev.argv = argv;
	assert_int_equal(tr2_target_emit(t, &ev), 0);
	ev = ev_at(TR2_EV_REGION_ENTER, "main", 10, 0);
	ev.category = "scan";
	ev.label = "pass";
	ev.msg = "pass \"1\"";
	ev.repo = 1;
	tr2_target_emit(t, &ev);
	ev = ev_at(TR2_EV_REGION_ENTER, "main", 20, 250);
	ev.category = "scan";
	ev.label = "walk";
	tr2_target_emit(t, &ev);
	ev = ev_at(TR2_EV_REGION_LEAVE, "main", 50, 250);
	ev.category = "scan";
	ev.label = "walk";
	tr2_target_emit(t, &ev);
	/* a thread whose region began before the trace, 100 µs before its leave */
	ev = ev_at(TR2_EV_REGION_LEAVE, "th01:reader", 60, 0);
	ev.category = "read";
	ev.label = "files";
	ev.has_t_rel = true;
	ev.t_rel_us = 100;
	tr2_target_emit(t, &ev);
	ev = ev_at(TR2_EV_DATA_JSON, "main", 70, 0);
	ev.category = "scan";
	ev.key = "sizes";
	ev.value = "[1, 2]";
	tr2_target_emit(t, &ev);
	ev = ev_at(TR2_EV_DATA, "main", 71, 0);
	ev.file = NULL;
	ev.category = "tr2";
	ev.key = "lost_events";
	ev.value = "5";
	tr2_target_emit(t, &ev);
	ev = ev_at(TR2_EV_CHILD_START, "main", 80, 0);
	ev.child_class = "check";
	ev.argv = du;
	tr2_target_emit(t, &ev);
	ev = ev_at(TR2_EV_CHILD_EXIT, "main", 180, 0);
	ev.pid = 0xef0;
	ev.code = 0;
	tr2_target_emit(t, &ev);
	ev = ev_at(TR2_EV_COUNTER, "main", 190, 0);
	ev.category = "read";
	ev.name = "bytes";
	ev.count = 9526;
	tr2_target_emit(t, &ev);
	/* scan:pass is still open */
	ev = ev_at(TR2_EV_ATEXIT, "main", 200, 0);
	tr2_target_emit(t, &ev);
}

#define TS "1795292768012"  /* T0 in ms */
#define META "\"pid\":3823,\"tid\":3823,\"args\":{\"name\":"

static void test_chrome_lines(void **state)
{
	struct tr2_target t;
	char path[64];
	char *out;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, path, false);
	emit_trace(&t);
	out = finish_and_read(&t, path);
	assert_string_equal(out,
"[{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":" TS "000.005," META "\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\"}}\n"
",{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":" TS "000.005," META "\"main\"}}\n"
",{\"name\":\"start\",\"ph\":\"i\",\"ts\":" TS "000.005,\"pid\":3823,\"tid\":3823,\"s\":\"t\",\"args\":{\"argv\":[\"/usr/bin/prog\",\"-x\"],\"file\":\"t.c\",\"line\":11}}\n"
",{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":" TS "000.005," META "\"prog (20261121T202608.011966Z-H0a7c9cdf-P00000eef)\"}}\n"
",{\"name\":\"scan:pass\",\"ph\":\"B\",\"ts\":" TS "010.000,\"pid\":3823,\"tid\":3823,\"cat\":\"scan\",\"args\":{\"msg\":\"pass \\\"1\\\"\",\"repo\":1,\"file\":\"t.c\",\"line\":30}}\n"
",{\"name\":\"scan:walk\",\"ph\":\"B\",\"ts\":" TS "020.250,\"pid\":3823,\"tid\":3823,\"cat\":\"scan\",\"args\":{\"file\":\"t.c\",\"line\":30}}\n"
",{\"name\":\"scan:walk\",\"ph\":\"E\",\"ts\":" TS "050.250,\"pid\":3823,\"tid\":3823,\"args\":{\"file\":\"t.c\",\"line\":30}}\n"
",{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":" TS "060.000,\"pid\":3823,\"tid\":4194305,\"args\":{\"name\":\"th01:reader\"}}\n"
",{\"name\":\"read:files\",\"ph\":\"X\",\"ts\":1795292768011960.000,\"pid\":3823,\"tid\":4194305,\"dur\":100.000,\"cat\":\"read\",\"args\":{\"before_trace\":true,\"file\":\"t.c\",\"line\":31}}\n"
",{\"name\":\"scan/sizes\",\"ph\":\"i\",\"ts\":" TS "070.000,\"pid\":3823,\"tid\":3823,\"s\":\"t\",\"cat\":\"scan\",\"args\":{\"value\":[1, 2],\"file\":\"t.c\",\"line\":33}}\n"
",{\"name\":\"tr2/lost_events\",\"ph\":\"i\",\"ts\":" TS "071.000,\"pid\":3823,\"tid\":3823,\"s\":\"g\",\"cname\":\"terrible\",\"cat\":\"tr2\",\"args\":{\"value\":\"5\"}}\n"
",{\"name\":\"child_start\",\"ph\":\"i\",\"ts\":" TS "080.000,\"pid\":3823,\"tid\":3823,\"s\":\"t\",\"args\":{\"child_id\":0,\"child_class\":\"check\",\"argv\":[\"du\",\"-sk\"],\"file\":\"t.c\",\"line\":21}}\n"
",{\"name\":\"child:check\",\"ph\":\"X\",\"ts\":" TS "080.000,\"pid\":3823,\"tid\":3823,\"dur\":100.000,\"args\":{\"child_id\":0,\"pid\":3824,\"code\":0,\"file\":\"t.c\",\"line\":22}}\n"
",{\"name\":\"read/bytes\",\"ph\":\"C\",\"ts\":" TS "190.000,\"pid\":3823,\"tid\":3823,\"cat\":\"counter\",\"args\":{\"count\":9526}}\n"
",{\"name\":\"scan:pass\",\"ph\":\"E\",\"ts\":" TS "200.000,\"pid\":3823,\"tid\":3823,\"args\":{\"msg\":\"pass \\\"1\\\"\",\"repo\":1,\"file\":\"t.c\",\"line\":30}}\n"
",{\"name\":\"atexit\",\"ph\":\"i\",\"ts\":" TS "200.000,\"pid\":3823,\"tid\":3823,\"s\":\"t\",\"args\":{\"code\":0,\"file\":\"t.c\",\"line\":13}}\n"
"]\n");
	free(out);
}

/* A child process in the trace: a flow arrow from the child slice to it. */
static void test_chrome_flow(void **state)
{
	struct tr2_target t;
	char path[64];
	char *out, *flow;
	struct tr2_ev ev;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, path, false);
	ev = ev_at(TR2_EV_CHILD_START, "main", 0, 0);
	ev.child_class = "check";
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_VERSION, "main", 5, 0);
	ev.sid = SID_CHILD;
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_CHILD_EXIT, "main", 9, 0);
	ev.pid = 0xef0;
	tr2_target_emit(&t, &ev);
	out = finish_and_read(&t, path);
	flow = strstr(out, ",{\"name\":\"child\",\"ph\":\"s\"");
	assert_non_null(flow);
	assert_string_equal(flow,
",{\"name\":\"child\",\"ph\":\"s\",\"ts\":" TS "000.000,\"pid\":3823,\"tid\":3823,\"id\":1,\"cat\":\"child\"}\n"
",{\"name\":\"child\",\"ph\":\"f\",\"ts\":" TS "005.000,\"pid\":3824,\"tid\":3824,\"id\":1,\"cat\":\"child\"}\n"
"]\n");
	free(out);
}

/* tr2-bpf attached inside a region: its region_leave has no t_rel, so the
 * slice starts at the thread's first event. */
static void test_chrome_before_trace(void **state)
{
	struct tr2_target t;
	char path[64];
	char *out, *x;
	struct tr2_ev ev;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, path, false);
	ev = ev_at(TR2_EV_PRINTF, "th03:w", 10, 0);
	ev.msg = "m";
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_REGION_LEAVE, "th03:w", 40, 500);
	ev.category = "c";
	ev.label = "l";
	ev.msg = "x";
	tr2_target_emit(&t, &ev);
	out = finish_and_read(&t, path);
	x = strstr(out, ",{\"name\":\"c:l\"");
	assert_non_null(x);
	assert_string_equal(x,
",{\"name\":\"c:l\",\"ph\":\"X\",\"ts\":" TS "010.000,\"pid\":3823,\"tid\":4194305,\"dur\":30.500,\"cat\":\"c\",\"args\":{\"before_trace\":true,\"msg\":\"x\",\"file\":\"t.c\",\"line\":31}}\n"
"]\n");
	free(out);
}

/* A region's split by scheduler state: in its E's args after its B's;
 * the thread's states on a track of their own under it, "X" slices. */
static void test_chrome_split(void **state)
{
	struct tr2_target t;
	char path[64];
	char *out, *e;
	struct tr2_ev ev;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, path, false);
	ev = ev_at(TR2_EV_REGION_ENTER, "main", 10, 0);
	ev.category = "io";
	ev.label = "read";
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_THREAD_STATE, "main", 10, 0);
	ev.file = NULL;
	ev.state = TR2_STATE_CPU;
	ev.dur_ns = 2500;
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_THREAD_STATE, "main", 12, 500);
	ev.file = NULL;
	ev.state = TR2_STATE_BLOCKED;
	ev.dur_ns = 27500;
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_REGION_LEAVE, "main", 40, 0);
	ev.category = "io";
	ev.label = "read";
	ev.has_split = true;
	ev.split_wall_ns = 30000;
	ev.split_ns[TR2_STATE_CPU] = 2500;
	ev.split_ns[TR2_STATE_BLOCKED] = 27500;
	tr2_target_emit(&t, &ev);
	out = finish_and_read(&t, path);
	e = strstr(out, ",{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":" TS "010.000,\"pid\":3823,\"tid\":4194305");
	assert_non_null(e);
	assert_string_equal(e,
",{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":" TS "010.000,\"pid\":3823,\"tid\":4194305,\"args\":{\"name\":\"main states\"}}\n"
",{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":" TS "010.000,\"pid\":3823,\"tid\":3823,\"args\":{\"sort_index\":0}}\n"
",{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":" TS "010.000,\"pid\":3823,\"tid\":4194305,\"args\":{\"sort_index\":1}}\n"
",{\"name\":\"Running\",\"ph\":\"X\",\"ts\":" TS "010.000,\"pid\":3823,\"tid\":4194305,\"dur\":2.000,\"cat\":\"thread_state\",\"cname\":\"thread_state_running\"}\n"
",{\"name\":\"Uninterruptible Sleep\",\"ph\":\"X\",\"ts\":" TS "012.000,\"pid\":3823,\"tid\":4194305,\"dur\":28.000,\"cat\":\"thread_state\",\"cname\":\"thread_state_uninterruptible\"}\n"
",{\"name\":\"io:read\",\"ph\":\"E\",\"ts\":" TS "040.000,\"pid\":3823,\"tid\":3823,\"args\":{\"file\":\"t.c\",\"line\":30,\"on_cpu_us\":2.500,\"runnable_us\":0.000,\"blocked_us\":27.500,\"asleep_us\":0.000}}\n"
"]\n");
	free(out);
}

/* Nothing traced: still a JSON array. */
static void test_chrome_empty(void **state)
{
	struct tr2_target t;
	char path[64];
	char *out;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, path, false);
	out = finish_and_read(&t, path);
	assert_string_equal(out, "[]\n");
	free(out);
}

/* A directory destination: the process's file is one whole array, its
 * ']' after atexit. */
static void test_chrome_per_process(void **state)
{
	struct tr2_target t;
	char dir[64], path[128];
	char *out;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, dir, true);
	emit_trace(&t);
	snprintf(path, sizeof(path), "%s/%s", dir, "20261121T202608.011966Z-H0a7c9cdf-P00000eef");
	out = finish_and_read(&t, path);
	assert_memory_equal(out, "[{\"name\":\"process_name\"", 23);
	assert_non_null(strstr(out, "\"name\":\"atexit\""));
	assert_string_equal(strstr(out, "\"name\":\"atexit\""),
			    "\"name\":\"atexit\",\"ph\":\"i\",\"ts\":" TS "200.000,\"pid\":3823,\"tid\":3823,\"s\":\"t\",\"args\":{\"code\":0,\"file\":\"t.c\",\"line\":13}}\n]\n");
	free(out);
	rmdir(dir);
}

/* A process gone without its atexit (killed, exec'd), on a per-process
 * destination: tr2_target_end_process ends its array then, with its open
 * regions' ends at its last event, and closes its file; finish writes
 * nothing more for it. */
static void test_chrome_end_process(void **state)
{
	struct tr2_target t;
	char dir[64], path[128];
	struct tr2_ev ev;
	char *out;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, dir, true);
	ev = ev_at(TR2_EV_VERSION, "main", 0, 0);
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_REGION_ENTER, "main", 10, 0);
	ev.category = "scan";
	ev.label = "pass";
	tr2_target_emit(&t, &ev);
	ev = ev_at(TR2_EV_DATA, "main", 30, 0);
	ev.category = "scan";
	ev.key = "n";
	ev.value = "1";
	tr2_target_emit(&t, &ev);
	assert_int_equal(tr2_target_end_process(&t, SID, 0), 0);
	assert_int_equal(tr2_target_end_process(&t, SID, 0), 0);        /* again: nothing */
	assert_int_equal(tr2_target_end_process(&t, "unknown", 0), 0);  /* never seen: nothing */
	snprintf(path, sizeof(path), "%s/%s", dir, "20261121T202608.011966Z-H0a7c9cdf-P00000eef");
	assert_int_equal(tr2_target_finish(&t), 0);
	tr2_dst_close(t.dst);
	out = slurp(path);
	assert_memory_equal(out, "[{\"name\":\"process_name\"", 23);
	assert_string_equal(strstr(out, ",{\"name\":\"scan:pass\",\"ph\":\"E\""),
			    ",{\"name\":\"scan:pass\",\"ph\":\"E\",\"ts\":" TS "030.000,\"pid\":3823,\"tid\":3823,"
			    "\"args\":{\"file\":\"t.c\",\"line\":30}}\n]\n");
	free(out);
	assert_int_equal(rmdir(dir), 0);   /* one file only: nothing came after */
}

/* Two processes running at once with one pid (pid namespaces, merged
 * traces): the second gets an id of its own; after the first has ended,
 * its pid is free again. */
static void test_chrome_same_pid(void **state)
{
	static const char *const sids[3] = {
		SID, "20261121T202609.000000Z-H0a7c9cdf-P00000eef", "20261121T202610.000000Z-H0a7c9cdf-P00000eef",
	};
	struct tr2_target t;
	char path[64];
	char *out, *p;
	struct tr2_ev ev;

	(void)state;
	open_target(&t, &tr2_tgt_chrome, path, false);
	for (int i = 0; i < 3; i++) {
		ev = ev_at(TR2_EV_VERSION, "main", i, 0);
		ev.sid = sids[i];
		tr2_target_emit(&t, &ev);
		if (i == 1) {
			ev = ev_at(TR2_EV_ATEXIT, "main", 5, 0);
			tr2_target_emit(&t, &ev);
		}
	}
	out = finish_and_read(&t, path);
	p = strstr(out, "P00000eef\"}}\n,{\"name\":\"thread_name\"");
	assert_non_null(p);
	p = strstr(p + 1, ",{\"name\":\"process_name\"");
	assert_non_null(p);
	assert_memory_equal(p, ",{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":" TS "001.000,\"pid\":4194305,", 73);
	p = strstr(p + 1, ",{\"name\":\"process_name\"");
	assert_non_null(p);
	assert_memory_equal(p, ",{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":" TS "002.000,\"pid\":3823,", 70);
	free(out);
}

static void test_folded_lines(void **state)
{
	struct tr2_target t;
	char path[64];
	char *out;

	(void)state;
	open_target(&t, &tr2_tgt_folded, path, false);
	emit_trace(&t);
	out = finish_and_read(&t, path);
	/* scan:pass from 10 to 200 µs less walk's 30: 160; the reader's region
	 * began before the trace and is in no stack */
	assert_string_equal(out,
			    "prog;main;scan:pass 160\n"
			    "prog;main;scan:pass;scan:walk 30\n");
	free(out);
}

/* Self time adds up over the times a stack was open; names lose ';'. */
static void test_folded_sum(void **state)
{
	struct tr2_target t;
	char path[64];
	char *out;
	struct tr2_ev ev;

	(void)state;
	open_target(&t, &tr2_tgt_folded, path, false);
	for (int i = 0; i < 3; i++) {
		ev = ev_at(TR2_EV_REGION_ENTER, "th02:w", 100 * i, 0);
		ev.category = "a;b";
		ev.label = "x";
		tr2_target_emit(&t, &ev);
		ev = ev_at(TR2_EV_REGION_LEAVE, "th02:w", 100 * i + 40, 600);
		tr2_target_emit(&t, &ev);
	}
	out = finish_and_read(&t, path);
	assert_string_equal(out, "pid 3823;th02:w;a:b:x 122\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chrome_lines),
		cmocka_unit_test(test_chrome_flow),
		cmocka_unit_test(test_chrome_before_trace),
		cmocka_unit_test(test_chrome_split),
		cmocka_unit_test(test_chrome_empty),
		cmocka_unit_test(test_chrome_per_process),
		cmocka_unit_test(test_chrome_end_process),
		cmocka_unit_test(test_chrome_same_pid),
		cmocka_unit_test(test_folded_lines),
		cmocka_unit_test(test_folded_sum),
	};

	return cmocka_run_group_tests_name("chrome and folded targets", tests, NULL, NULL);
}
