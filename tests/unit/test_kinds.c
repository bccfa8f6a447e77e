/* test_kinds.c: the event kinds git 2.39.5 does not write on Linux, laid out
 * by the rules of git's sources (trace2/tr2_tgt_*.c, newest for timers,
 * counters, child_ready and EVENT printf): threads (only fsmonitor and
 * simple-ipc start threads in 2.39), child_ready, printf, timer, th_timer,
 * counter, th_counter, cmd_path (Windows/macOS only), and too_many_files,
 * which is a real git line from a GIT_TRACE2_MAX_FILES run. */
#include "unit.h"

#define SID "20261121T204014.648864Z-H0a7c9cdf-P000035e3"

static void test_thread_start_exit(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_THREAD_START, SID, "preload-index.c", 100);

	ev.thread = "th01:preload_thread";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.002699");
	SKIPPED(tr2_tgt_normal, ev);
	PERF(ev, "20:40:14.651000",
	     "20:40:14.651000 preload-index.c:100          | d0 | th01:preload_thread      | thread_start |     |  0.002699 |           |              | \n");
	PERF_BRIEF(ev, "d0 | th01:preload_thread      | thread_start |     |  0.002699 |           |              | \n");
	EVENT(ev, "2026-11-21T20:40:14.651002Z",
	      "{\"event\":\"thread_start\",\"sid\":\"" SID "\",\"thread\":\"th01:preload_thread\",\"time\":\"2026-11-21T20:40:14.651002Z\",\"file\":\"preload-index.c\",\"line\":100}\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:14.651002Z",
		    "{\"event\":\"thread_start\",\"sid\":\"" SID "\",\"thread\":\"th01:preload_thread\"}\n");

	ev.kind = TR2_EV_THREAD_EXIT;
	ev.line = 140;
	ev.has_t_rel = true;
	ev.t_abs_us = secs("0.009561");
	ev.t_rel_us = secs("0.006862");
	SKIPPED(tr2_tgt_normal, ev);
	PERF(ev, "20:40:14.658000",
	     "20:40:14.658000 preload-index.c:140          | d0 | th01:preload_thread      | thread_exit  |     |  0.009561 |  0.006862 |              | \n");
	EVENT(ev, "2026-11-21T20:40:14.658001Z",
	      "{\"event\":\"thread_exit\",\"sid\":\"" SID "\",\"thread\":\"th01:preload_thread\",\"time\":\"2026-11-21T20:40:14.658001Z\",\"file\":\"preload-index.c\",\"line\":140,\"t_rel\":0.006862}\n");
}

static void test_child_ready(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_CHILD_READY, SID, "run-command.c", 1927);

	ev.child_id = 2;
	ev.pid = 14708;
	ev.ready = "ready";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.210000");
	ev.t_rel_us = secs("0.110605");
	NORMAL(ev, "20:40:14.700000",
	       "20:40:14.700000 run-command.c:1927                child_ready[2] pid:14708 ready:ready elapsed:0.110605\n");
	PERF(ev, "20:40:14.700000",
	     "20:40:14.700000 run-command.c:1927           | d0 | main                     | child_ready  |     |  0.210000 |  0.110605 |              | [ch2] pid:14708 ready:ready\n");
	EVENT(ev, "2026-11-21T20:40:14.700000Z",
	      "{\"event\":\"child_ready\",\"sid\":\"" SID "\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:14.700000Z\",\"file\":\"run-command.c\",\"line\":1927,\"child_id\":2,\"pid\":14708,\"ready\":\"ready\",\"t_rel\":0.110605}\n");
}

/* git writes trace2_printf in NORMAL and PERF; EVENT since git 2.47 ("evt":"4") */
static void test_printf(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_PRINTF, SID, "t/helper/test-trace2.c", 90);

	ev.msg = "Hello world";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001000");
	NORMAL(ev, "20:40:14.700000",
	       "20:40:14.700000 t/helper/test-trace2.c:90         Hello world\n");
	NORMAL_BRIEF(ev, "Hello world\n");
	PERF(ev, "20:40:14.700000",
	     "20:40:14.700000 t/helper/test-trace2.c:90    | d0 | main                     | printf       |     |  0.001000 |           |              | Hello world\n");
	EVENT(ev, "2026-11-21T20:40:14.700000Z",
	      "{\"event\":\"printf\",\"sid\":\"" SID "\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:14.700000Z\",\"file\":\"t/helper/test-trace2.c\",\"line\":90,\"t_abs\":0.001000,\"msg\":\"Hello world\"}\n");
}

/* seeds/000 "Stopwatch Timer Events": test1 started and stopped 3 times */
static void test_timer(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_TIMER, SID, "trace2/tr2_tgt_perf.c", 580);

	ev.category = "test";
	ev.name = "test1";
	ev.intervals = 3;
	ev.t_total_us = secs("3.001686");
	ev.t_min_us = secs("1.000254");
	ev.t_max_us = secs("1.000929");
	PERF_BRIEF(ev, "d0 | main                     | timer        |     |           |           | test         | name:test1 intervals:3 total:3.001686 min:1.000254 max:1.000929\n");
	PERF(ev, "20:40:17.700000",
	     "20:40:17.700000 trace2/tr2_tgt_perf.c:580    | d0 | main                     | timer        |     |           |           | test         | name:test1 intervals:3 total:3.001686 min:1.000254 max:1.000929\n");
	ev.file = "trace2/tr2_tgt_normal.c";
	ev.line = 350;
	NORMAL(ev, "20:40:17.700000",
	       "20:40:17.700000 trace2/tr2_tgt_normal.c:350       timer test/test1 intervals:3 total:3.001686 min:1.000254 max:1.000929\n");
	ev.file = "trace2/tr2_tgt_event.c";
	ev.line = 640;
	EVENT(ev, "2026-11-21T20:40:17.700000Z",
	      "{\"event\":\"timer\",\"sid\":\"" SID "\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:17.700000Z\",\"file\":\"trace2/tr2_tgt_event.c\",\"line\":640,\"category\":\"test\",\"name\":\"test1\",\"intervals\":3,\"t_total\":3.001686,\"t_min\":1.000254,\"t_max\":1.000929}\n");

	/* per thread; "%8.6f" widens past 8 bytes for 10 s and more */
	ev.kind = TR2_EV_TH_TIMER;
	ev.thread = "th02:ut_009";
	ev.intervals = 1;
	ev.t_total_us = ev.t_min_us = ev.t_max_us = secs("12.000001");
	NORMAL_BRIEF(ev, "th_timer test/test1 intervals:1 total:12.000001 min:12.000001 max:12.000001\n");
	PERF_BRIEF(ev, "d0 | th02:ut_009              | th_timer     |     |           |           | test         | name:test1 intervals:1 total:12.000001 min:12.000001 max:12.000001\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"th_timer\",\"sid\":\"" SID "\",\"thread\":\"th02:ut_009\",\"category\":\"test\",\"name\":\"test1\",\"intervals\":1,\"t_total\":12.000001,\"t_min\":12.000001,\"t_max\":12.000001}\n");
}

static void test_counter(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_COUNTER, SID, "trace2/tr2_tgt_event.c", 660);

	ev.category = "test";
	ev.name = "test1";
	ev.count = 23;
	EVENT(ev, "2026-11-21T20:40:17.700000Z",
	      "{\"event\":\"counter\",\"sid\":\"" SID "\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:17.700000Z\",\"file\":\"trace2/tr2_tgt_event.c\",\"line\":660,\"category\":\"test\",\"name\":\"test1\",\"count\":23}\n");
	NORMAL_BRIEF(ev, "counter test/test1 value:23\n");
	PERF_BRIEF(ev, "d0 | main                     | counter      |     |           |           | test         | name:test1 value:23\n");

	ev.kind = TR2_EV_TH_COUNTER;
	ev.thread = "th01:ut_010";
	ev.count = 5;
	NORMAL_BRIEF(ev, "th_counter test/test1 value:5\n");
	PERF_BRIEF(ev, "d0 | th01:ut_010              | th_counter   |     |           |           | test         | name:test1 value:5\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"th_counter\",\"sid\":\"" SID "\",\"thread\":\"th01:ut_010\",\"category\":\"test\",\"name\":\"test1\",\"count\":5}\n");
}

static void test_cmd_path(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_CMD_PATH, SID, "git.c", 800);

	ev.path = "C:/work/gfw/git.exe";
	NORMAL_BRIEF(ev, "cmd_path C:/work/gfw/git.exe\n");
	PERF_BRIEF(ev, "d0 | main                     | cmd_path     |     |           |           |              | C:/work/gfw/git.exe\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"cmd_path\",\"sid\":\"" SID "\",\"thread\":\"main\",\"path\":\"C:/work/gfw/git.exe\"}\n");
}

/* git's sentinel file after GIT_TRACE2_MAX_FILES=4 (real git lines) */
static void test_too_many_files(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_TOO_MANY_FILES, SID, "common-main.c", 50);

	EVENT(ev, "2026-11-21T20:40:14.648971Z",
	      "{\"event\":\"too_many_files\",\"sid\":\"20261121T204014.648864Z-H0a7c9cdf-P000035e3\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:14.648971Z\",\"file\":\"common-main.c\",\"line\":50}\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:14.648971Z",
		    "{\"event\":\"too_many_files\",\"sid\":\"20261121T204014.648864Z-H0a7c9cdf-P000035e3\",\"thread\":\"main\"}\n");
	SKIPPED(tr2_tgt_normal, ev);
	SKIPPED(tr2_tgt_perf, ev);
}

/*
 * Values the producers may leave out: def_param without a value (newer git
 * omits it), without a scope (git before 2.38: no scope at all), exec without
 * exe, error and region without message, region without label.
 */
static void test_absent_values(void **state)
{
	static const char *const no_args[] = { NULL };
	struct tr2_ev ev = ev_new(TR2_EV_DEF_PARAM, SID, "git.c", 462);

	ev.scope = "command";
	ev.param = "status.relativepaths";
	NORMAL_BRIEF(ev, "def_param scope:command status.relativepaths\n");
	PERF_BRIEF(ev, "d0 | main                     | def_param    |     |           |           | scope:comman | status.relativepaths\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"def_param\",\"sid\":\"" SID "\",\"thread\":\"main\",\"scope\":\"command\",\"param\":\"status.relativepaths\"}\n");

	ev.scope = NULL;
	ev.value = "1";
	NORMAL_BRIEF(ev, "def_param status.relativepaths=1\n");
	PERF_BRIEF(ev, "d0 | main                     | def_param    |     |           |           |              | status.relativepaths:1\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"def_param\",\"sid\":\"" SID "\",\"thread\":\"main\",\"param\":\"status.relativepaths\",\"value\":\"1\"}\n");

	ev = ev_new(TR2_EV_EXEC, SID, "run-command.c", 235);
	ev.exec_id = 3;
	ev.argv = no_args;
	NORMAL_BRIEF(ev, "exec[3] \n");
	PERF_BRIEF(ev, "d0 | main                     | exec         |     |           |           |              | id:3 argv:[]\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"exec\",\"sid\":\"" SID "\",\"thread\":\"main\",\"exec_id\":3,\"argv\":[]}\n");

	ev = ev_new(TR2_EV_EXEC_RESULT, SID, "run-command.c", 244);
	ev.code = -1;  /* no " err:" for codes <= 0 */
	NORMAL_BRIEF(ev, "exec_result[0] code:-1\n");

	ev = ev_new(TR2_EV_ERROR, SID, "usage.c", 60);
	NORMAL_BRIEF(ev, "error\n");
	PERF_BRIEF(ev, "d0 | main                     | error        |     |           |           |              | \n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"error\",\"sid\":\"" SID "\",\"thread\":\"main\"}\n");

	ev = ev_new(TR2_EV_REGION_ENTER, SID, "dir.c", 1);
	ev.category = "dir";
	ev.msg = "xdiff/";
	PERF_BRIEF(ev, "d0 | main                     | region_enter |     |           |           | dir          |  xdiff/\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"region_enter\",\"sid\":\"" SID "\",\"thread\":\"main\",\"nesting\":1,\"category\":\"dir\",\"msg\":\"xdiff/\"}\n");

	ev = ev_new(TR2_EV_CMD_NAME, SID, "git.c", 461);
	ev.name = "version";
	ev.hierarchy = "";
	NORMAL_BRIEF(ev, "cmd_name version\n");
	EVENT_BRIEF(ev, "2026-11-21T20:40:17.700000Z",
		    "{\"event\":\"cmd_name\",\"sid\":\"" SID "\",\"thread\":\"main\",\"name\":\"version\"}\n");
}

static void test_kind_names(void **state)
{
	for (int k = 0; k < TR2_EV__COUNT; k++) {
		const char *name = tr2_ev_kind_name(k);

		assert_non_null(name);
		assert_int_equal(tr2_ev_kind_from_name(name), k);
	}
	assert_null(tr2_ev_kind_name(TR2_EV__COUNT));
	assert_null(tr2_ev_kind_name(-1));
	assert_int_equal(tr2_ev_kind_from_name("region_leave"), TR2_EV_REGION_LEAVE);
	assert_int_equal(tr2_ev_kind_from_name("too_many_files"), TR2_EV_TOO_MANY_FILES);
	assert_int_equal(tr2_ev_kind_from_name("data-json"), -1);
	assert_int_equal(tr2_ev_kind_from_name(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_start_exit),
		cmocka_unit_test(test_child_ready),
		cmocka_unit_test(test_printf),
		cmocka_unit_test(test_timer),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_cmd_path),
		cmocka_unit_test(test_too_many_files),
		cmocka_unit_test(test_absent_values),
		cmocka_unit_test(test_kind_names),
	};

	return cmocka_run_group_tests_name("kinds from git's sources", tests, NULL, NULL);
}
