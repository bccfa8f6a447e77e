/* test_seeds.c: the examples of git's Trace2 document (../shared/seeds/000,
 * newest revision, and 003 for threads).  The EVENT examples are exact lines
 * and compared exactly.  The document's NORMAL and PERF examples lost their
 * column padding (HTML collapses spaces; seed 003's PERF examples predate the
 * 12-byte category column), so those are compared with runs of spaces
 * squeezed to one and trailing spaces dropped -- the content and order of
 * every column, not their widths, which test_golden checks against git. */
#include "unit.h"

static const char *squeeze(const char *s)
{
	static char out[1024];
	size_t n = 0;

	for (; *s && n < sizeof(out) - 1; s++) {
		if (*s == ' ' && n && out[n - 1] == ' ')
			continue;
		if (*s == '\n' && n && out[n - 1] == ' ')
			n--;
		out[n++] = *s;
	}
	out[n] = '\0';
	return out;
}

/* Compares ev's line, squeezed, with the document's line (which has no '\n'). */
#define SEED(tgt, brief, ev, time, doc)                                              \
	do {                                                                         \
		(ev).time_us = at(time);                                             \
		assert_string_equal(squeeze(fmt_ev(&(tgt), &(ev), (brief), 10)), doc "\n"); \
	} while (0)

#define SID_DOC "20190408T191610.507018Z-H9b68c35f-P000059a8"

static const char *const argv_version[] = { "git", "version", NULL };

/* "The Normal Format Target", "The Performance Format Target", "The Event Format Target" */
static void test_git_version(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_VERSION, SID_DOC, "common-main.c", 38);

	ev.evt = "3";
	ev.exe = "2.20.1.155.g426c96fcdb";
	SEED(tr2_tgt_normal, 0, ev, "12:28:42.620009", "12:28:42.620009 common-main.c:38 version 2.20.1.155.g426c96fcdb");
	SEED(tr2_tgt_perf, 0, ev, "12:28:42.620675", "12:28:42.620675 common-main.c:38 | d0 | main | version | | | | | 2.20.1.155.g426c96fcdb");
	EVENT(ev, "2019-01-16T17:28:42.620713Z",
	      "{\"event\":\"version\",\"sid\":\"20190408T191610.507018Z-H9b68c35f-P000059a8\",\"thread\":\"main\",\"time\":\"2019-01-16T17:28:42.620713Z\",\"file\":\"common-main.c\",\"line\":38,\"evt\":\"3\",\"exe\":\"2.20.1.155.g426c96fcdb\"}\n");

	ev = ev_new(TR2_EV_START, SID_DOC, "common-main.c", 39);
	ev.argv = argv_version;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001173");
	SEED(tr2_tgt_normal, 0, ev, "12:28:42.620989", "12:28:42.620989 common-main.c:39 start git version");
	SEED(tr2_tgt_perf, 0, ev, "12:28:42.621001", "12:28:42.621001 common-main.c:39 | d0 | main | start | | 0.001173 | | | git version");
	EVENT(ev, "2019-01-16T17:28:42.621027Z",
	      "{\"event\":\"start\",\"sid\":\"20190408T191610.507018Z-H9b68c35f-P000059a8\",\"thread\":\"main\",\"time\":\"2019-01-16T17:28:42.621027Z\",\"file\":\"common-main.c\",\"line\":39,\"t_abs\":0.001173,\"argv\":[\"git\",\"version\"]}\n");

	ev = ev_new(TR2_EV_CMD_NAME, SID_DOC, "git.c", 432);
	ev.name = "version";
	ev.hierarchy = "version";
	SEED(tr2_tgt_normal, 0, ev, "12:28:42.621101", "12:28:42.621101 git.c:432 cmd_name version (version)");
	SEED(tr2_tgt_perf, 0, ev, "12:28:42.621111", "12:28:42.621111 git.c:432 | d0 | main | cmd_name | | | | | version (version)");
	EVENT(ev, "2019-01-16T17:28:42.621122Z",
	      "{\"event\":\"cmd_name\",\"sid\":\"20190408T191610.507018Z-H9b68c35f-P000059a8\",\"thread\":\"main\",\"time\":\"2019-01-16T17:28:42.621122Z\",\"file\":\"git.c\",\"line\":432,\"name\":\"version\",\"hierarchy\":\"version\"}\n");

	ev = ev_new(TR2_EV_EXIT, SID_DOC, "git.c", 662);
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001227");
	SEED(tr2_tgt_normal, 0, ev, "12:28:42.621215", "12:28:42.621215 git.c:662 exit elapsed:0.001227 code:0");
	SEED(tr2_tgt_perf, 0, ev, "12:28:42.621225", "12:28:42.621225 git.c:662 | d0 | main | exit | | 0.001227 | | | code:0");
	EVENT(ev, "2019-01-16T17:28:42.621236Z",
	      "{\"event\":\"exit\",\"sid\":\"20190408T191610.507018Z-H9b68c35f-P000059a8\",\"thread\":\"main\",\"time\":\"2019-01-16T17:28:42.621236Z\",\"file\":\"git.c\",\"line\":662,\"t_abs\":0.001227,\"code\":0}\n");

	ev = ev_new(TR2_EV_ATEXIT, SID_DOC, "trace2/tr2_tgt_normal.c", 124);
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001265");
	SEED(tr2_tgt_normal, 0, ev, "12:28:42.621250", "12:28:42.621250 trace2/tr2_tgt_normal.c:124 atexit elapsed:0.001265 code:0");
	ev.file = "trace2/tr2_tgt_perf.c";
	ev.line = 211;
	SEED(tr2_tgt_perf, 0, ev, "12:28:42.621259", "12:28:42.621259 trace2/tr2_tgt_perf.c:211 | d0 | main | atexit | | 0.001265 | | | code:0");
	ev.file = "trace2/tr2_tgt_event.c";
	ev.line = 163;
	EVENT(ev, "2019-01-16T17:28:42.621268Z",
	      "{\"event\":\"atexit\",\"sid\":\"20190408T191610.507018Z-H9b68c35f-P000059a8\",\"thread\":\"main\",\"time\":\"2019-01-16T17:28:42.621268Z\",\"file\":\"trace2/tr2_tgt_event.c\",\"line\":163,\"t_abs\":0.001265,\"code\":0}\n");
}

/* "PERF Format": region lines with time and file */
static void test_perf_regions(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_ENTER, SID_DOC, "wt-status.c", 2310);

	ev.repo = 1;
	ev.category = "status";
	ev.label = "print";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.126064");
	SEED(tr2_tgt_perf, 0, ev, "15:33:33.532712",
	     "15:33:33.532712 wt-status.c:2310 | d0 | main | region_enter | r1 | 0.126064 | | status | label:print");
	ev.kind = TR2_EV_REGION_LEAVE;
	ev.line = 2331;
	ev.has_t_rel = true;
	ev.t_abs_us = secs("0.127568");
	ev.t_rel_us = secs("0.001504");
	SEED(tr2_tgt_perf, 0, ev, "15:33:33.532712",
	     "15:33:33.532712 wt-status.c:2331 | d0 | main | region_leave | r1 | 0.127568 | 0.001504 | status | label:print");
}

/* "Regions": nested read_recursive regions without a repository, with dots */
static void test_perf_nested_regions(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_ENTER, SID_DOC, "dir.c", 1);

	ev.category = "dir";
	ev.label = "read_recursive";
	ev.has_t_abs = true;
	ev.nesting = 2;
	ev.t_abs_us = secs("0.015132");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | main | region_enter | | 0.015132 | | dir | ..label:read_recursive");
	ev.nesting = 5;
	ev.msg = "git-gui/po/glossary/";
	ev.t_abs_us = secs("0.016810");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000",
	     "d0 | main | region_enter | | 0.016810 | | dir | ........label:read_recursive git-gui/po/glossary/");
	ev.kind = TR2_EV_REGION_LEAVE;
	ev.has_t_rel = true;
	ev.t_abs_us = secs("0.016863");
	ev.t_rel_us = secs("0.000053");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000",
	     "d0 | main | region_leave | | 0.016863 | 0.000053 | dir | ........label:read_recursive git-gui/po/glossary/");
}

/* "Data Messages" and "Config (def param) Events" */
static void test_perf_data_and_params(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_DATA, SID_DOC, "read-cache.c", 1);

	ev.repo = 1;
	ev.category = "index";
	ev.key = "read/cache_nr";
	ev.value = "3552";
	ev.nesting = 2;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.002520");
	ev.t_rel_us = secs("0.000729");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | main | data | r1 | 0.002520 | 0.000729 | index | ..read/cache_nr:3552");

	ev = ev_new(TR2_EV_DATA, SID_DOC, "repo-settings.c", 1);
	ev.has_repo = true;  /* a repository whose id is still 0 */
	ev.category = "fsync";
	ev.key = "fsync/writeout-only";
	ev.value = "0";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = ev.t_rel_us = secs("0.002100");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | main | data | r0 | 0.002100 | 0.002100 | fsync | fsync/writeout-only:0");

	ev = ev_new(TR2_EV_DEF_PARAM, SID_DOC, "git.c", 1);
	ev.scope = "system";
	ev.param = "color.ui";
	ev.value = "never";
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | main | def_param | | | | scope:system | color.ui:never");
	ev.scope = "local";
	ev.value = "auto";
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | main | def_param | | | | scope:local | color.ui:auto");
}

/* "Thread Events" (seeds/003, same in 000) */
static void test_perf_threads(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_THREAD_START, SID_DOC, "preload-index.c", 1);

	ev.thread = "th01:preload_thread";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.002699");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | th01:preload_thread | thread_start | | 0.002699 | | |");

	ev = ev_new(TR2_EV_DATA, SID_DOC, "preload-index.c", 1);
	ev.thread = "th02:preload_thread";
	ev.repo = 1;
	ev.category = "index";
	ev.key = "offset";
	ev.value = "2032";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.002751");
	ev.t_rel_us = secs("0.000030");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | th02:preload_thread | data | r1 | 0.002751 | 0.000030 | index | offset:2032");

	ev = ev_new(TR2_EV_THREAD_EXIT, SID_DOC, "preload-index.c", 1);
	ev.thread = "th05:preload_thread";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.008781");
	ev.t_rel_us = secs("0.006069");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000", "d0 | th05:preload_thread | thread_exit | | 0.008781 | 0.006069 | |");
}

/* "Stopwatch Timer Events" */
static void test_perf_timer(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_TIMER, SID_DOC, "trace2/tr2_tgt_perf.c", 1);

	ev.category = "test";
	ev.name = "test1";
	ev.intervals = 3;
	ev.t_total_us = secs("3.001686");
	ev.t_min_us = secs("1.000254");
	ev.t_max_us = secs("1.000929");
	SEED(tr2_tgt_perf, 1, ev, "00:00:00.000000",
	     "d0 | main | timer | | | | test | name:test1 intervals:3 total:3.001686 min:1.000254 max:1.000929");
}

/* "Child Processes": fetch with GIT_TRACE2_BRIEF, and its gc child */
static void test_normal_brief_fetch(void **state)
{
	static const char *const argv_fetch[] = { "git", "fetch", "origin", NULL };
	static const char *const argv_gc[] = { "git", "gc", "--auto", NULL };
	static const char *const argv_child[] = { "/Users/jeffhost/work/gfw/git", "gc", "--auto", NULL };
	const char *child = SID_DOC "/20190408T191610.600000Z-H9b68c35f-P00005000";
	struct tr2_ev ev = ev_new(TR2_EV_VERSION, SID_DOC, "common-main.c", 38);

	ev.exe = "2.20.1.vfs.1.1.47.g534dbe1ad1";
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "version 2.20.1.vfs.1.1.47.g534dbe1ad1");
	ev = ev_new(TR2_EV_START, SID_DOC, "common-main.c", 39);
	ev.argv = argv_fetch;
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "start git fetch origin");
	ev = ev_new(TR2_EV_DEF_REPO, SID_DOC, "repository.c", 1);
	ev.repo = 1;
	ev.worktree = "/Users/jeffhost/work/gfw";
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "worktree /Users/jeffhost/work/gfw");
	ev = ev_new(TR2_EV_CMD_NAME, SID_DOC, "git.c", 1);
	ev.name = "fetch";
	ev.hierarchy = "fetch";
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "cmd_name fetch (fetch)");
	ev = ev_new(TR2_EV_CHILD_START, SID_DOC, "run-command.c", 1);
	ev.child_id = 3;
	ev.argv = argv_gc;
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "child_start[3] git gc --auto");
	ev = ev_new(TR2_EV_START, child, "common-main.c", 39);
	ev.argv = argv_child;
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "start /Users/jeffhost/work/gfw/git gc --auto");
	ev = ev_new(TR2_EV_CMD_NAME, child, "git.c", 1);
	ev.name = "gc";
	ev.hierarchy = "fetch/gc";
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "cmd_name gc (fetch/gc)");
	ev = ev_new(TR2_EV_CHILD_EXIT, SID_DOC, "run-command.c", 1);
	ev.child_id = 1;
	ev.pid = 14707;
	ev.has_t_rel = true;
	ev.t_rel_us = secs("0.076353");
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "child_exit[1] pid:14707 code:0 elapsed:0.076353");
	ev = ev_new(TR2_EV_EXIT, SID_DOC, "git.c", 1);
	ev.has_t_abs = true;
	ev.t_abs_us = secs("5.198503");
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "exit elapsed:5.198503 code:0");
	ev.kind = TR2_EV_ATEXIT;
	ev.t_abs_us = secs("5.198541");
	SEED(tr2_tgt_normal, 1, ev, "00:00:00.000000", "atexit elapsed:5.198541 code:0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git_version),
		cmocka_unit_test(test_perf_regions),
		cmocka_unit_test(test_perf_nested_regions),
		cmocka_unit_test(test_perf_data_and_params),
		cmocka_unit_test(test_perf_threads),
		cmocka_unit_test(test_perf_timer),
		cmocka_unit_test(test_normal_brief_fetch),
	};

	return cmocka_run_group_tests_name("examples of git's Trace2 document", tests, NULL, NULL);
}
