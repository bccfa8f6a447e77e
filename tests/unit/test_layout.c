/* test_layout.c: the column rules of NORMAL and PERF at their edges (git's
 * perf_fmt_prepare and normal_fmt_prepare), the sid depth, the time
 * columns, and how control bytes are kept off the next line. */
#include "unit.h"
#include "tr2_time.h"

#define SID "20261121T204014.648864Z-H0a7c9cdf-P000035e3"

static struct tr2_ev cmd_mode(const char *file, int line)
{
	struct tr2_ev ev = ev_new(TR2_EV_CMD_MODE, SID, file, line);

	ev.mode = "m";
	return ev;
}

/* file:line: 28 bytes fit; 29 become "..." and the last 25 */
static void test_perf_file_line_width(void **state)
{
	struct tr2_ev ev = cmd_mode("abcdefghijklmnopqrstuvw.c", 12);  /* 28 bytes with ":12" */

	PERF(ev, "01:02:03.000004",
	     "01:02:03.000004 abcdefghijklmnopqrstuvw.c:12 | d0 | main                     | cmd_mode     |     |           |           |              | m\n");
	ev.file = "xabcdefghijklmnopqrstuvw.c";  /* 29 */
	PERF(ev, "01:02:03.000004",
	     "01:02:03.000004 ...defghijklmnopqrstuvw.c:12 | d0 | main                     | cmd_mode     |     |           |           |              | m\n");
	ev.line = 1234567890;  /* only the line number fits after "..." */
	ev.file = "a/very/long/path/to/some/file.c";
	PERF(ev, "01:02:03.000004",
	     "01:02:03.000004 ...to/some/file.c:1234567890 | d0 | main                     | cmd_mode     |     |           |           |              | m\n");
}

/* no file: the column stays, blank */
static void test_no_file(void **state)
{
	struct tr2_ev ev = cmd_mode(NULL, 0);

	PERF(ev, "23:59:59.999999",
	     "23:59:59.999999                              | d0 | main                     | cmd_mode     |     |           |           |              | m\n");
	NORMAL(ev, "23:59:59.999999",
	       "23:59:59.999999                                   cmd_mode m\n");
	ev.file = "";
	NORMAL(ev, "23:59:59.999999",
	       "23:59:59.999999                                   cmd_mode m\n");
}

/* NORMAL pads "<time> <file>:<line> " to 50 bytes and never cuts */
static void test_normal_file_line_width(void **state)
{
	struct tr2_ev ev = cmd_mode("abcdefghijklmnopqrstuvwxyz0123456.c", 1);  /* 16+37+1 > 50 */

	NORMAL(ev, "00:00:00.000000",
	       "00:00:00.000000 abcdefghijklmnopqrstuvwxyz0123456.c:1 cmd_mode m\n");
	ev.file = "abcdefghijklmnopqrstuvwxyz012.c";  /* exactly 50 with ":1 " */
	NORMAL(ev, "00:00:00.000000",
	       "00:00:00.000000 abcdefghijklmnopqrstuvwxyz012.c:1 cmd_mode m\n");
	ev.file = "abcdefghijklmnopqrstuvwxyz01.c";  /* 49: one space of padding */
	NORMAL(ev, "00:00:00.000000",
	       "00:00:00.000000 abcdefghijklmnopqrstuvwxyz01.c:1  cmd_mode m\n");
}

/* category "%-12.12s"; thread "%-24s" (never cut); repo "r<id> " in 3 bytes */
static void test_perf_columns(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_DATA, SID, "a.c", 1);

	ev.key = "k";
	ev.value = "v";
	ev.category = "twelve_bytes";
	ev.repo = 12;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = 12345678901;  /* wider than %9.6f */
	ev.t_rel_us = 1;
	PERF_BRIEF(ev, "d0 | main                     | data         | r12  | 12345.678901 |  0.000001 | twelve_bytes | k:v\n");
	ev.category = "thirteen_byte";
	ev.thread = "th123:a_very_long_thread_name";
	ev.repo = 0;
	PERF_BRIEF(ev, "d0 | th123:a_very_long_thread_name | data         |     | 12345.678901 |  0.000001 | thirteen_byt | k:v\n");
	/* a repository struct whose id is still 0: git's "r0" */
	ev.has_repo = true;
	ev.category = NULL;
	ev.thread = "main";
	PERF_BRIEF(ev, "d0 | main                     | data         | r0  | 12345.678901 |  0.000001 |              | k:v\n");
	EVENT_BRIEF(ev, "2026-11-21T00:00:00.000000Z",
		    "{\"event\":\"data\",\"sid\":\"" SID "\",\"thread\":\"main\",\"repo\":0,\"t_abs\":12345.678901,\"t_rel\":0.000001,\"nesting\":1,\"category\":\"\",\"key\":\"k\",\"value\":\"v\"}\n");
	/* repo only where git writes it */
	ev.kind = TR2_EV_CMD_MODE;
	ev.mode = "m";
	ev.repo = 3;
	PERF_BRIEF(ev, "d0 | main                     | cmd_mode     |     |           |           |              | m\n");
	EVENT_BRIEF(ev, "2026-11-21T00:00:00.000000Z",
		    "{\"event\":\"cmd_mode\",\"sid\":\"" SID "\",\"thread\":\"main\",\"name\":\"m\"}\n");
}

/* times the producer does not know stay blank (PERF) or absent (EVENT) */
static void test_unknown_times(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_LEAVE, SID, "a.c", 1);

	ev.category = "c";
	ev.label = "l";
	PERF_BRIEF(ev, "d0 | main                     | region_leave |     |           |           | c            | label:l\n");
	EVENT_BRIEF(ev, "2026-11-21T00:00:00.000000Z",
		    "{\"event\":\"region_leave\",\"sid\":\"" SID "\",\"thread\":\"main\",\"nesting\":1,\"category\":\"c\",\"label\":\"l\"}\n");
}

/* dots: 2 * (nesting - 1) on every PERF line; none for nesting 0 */
static void test_nesting_dots(void **state)
{
	struct tr2_ev ev = cmd_mode("a.c", 1);

	ev.nesting = 5;
	PERF_BRIEF(ev, "d0 | main                     | cmd_mode     |     |           |           |              | ........m\n");
	ev.nesting = 0;
	PERF_BRIEF(ev, "d0 | main                     | cmd_mode     |     |           |           |              | m\n");
	ev.nesting = 51;  /* git had a 100-dot buffer once; any depth works now */
	{
		char want[300];

		snprintf(want, sizeof(want),
			 "d0 | main                     | cmd_mode     |     |           |           |              | %.100sm\n",
			 "...................................................................................................."
			 "....................................................................................................");
		PERF_BRIEF(ev, want);
	}
}

/* depth: the number of '/' in the sid */
static void test_sid_depth(void **state)
{
	struct tr2_ev ev = cmd_mode("a.c", 1);

	ev.sid = "a/b/c";
	PERF_BRIEF(ev, "d2 | main                     | cmd_mode     |     |           |           |              | m\n");
	ev.sid = "a/b/c/d/e/f/g/h/i/j/k";
	PERF_BRIEF(ev, "d10 | main                     | cmd_mode     |     |           |           |              | m\n");
	ev.sid = NULL;
	PERF_BRIEF(ev, "d0 | main                     | cmd_mode     |     |           |           |              | m\n");
}

/* local time for NORMAL/PERF, UTC for EVENT; each from the event's own time */
static void test_time_columns(void **state)
{
	struct tr2_buf b = { 0 };

	tr2_time_add_utc(&b, at("2024-02-29T23:59:59.000001Z"));
	assert_string_equal(b.p, "2024-02-29T23:59:59.000001Z");
	b.len = 0;
	tr2_time_add_utc(&b, 0);
	assert_string_equal(b.p, "1970-01-01T00:00:00.000000Z");
	b.len = 0;
	tr2_time_add_utc(&b, -1);  /* before the epoch: still 0..999999 µs */
	assert_string_equal(b.p, "1969-12-31T23:59:59.999999Z");
	b.len = 0;
	tr2_time_add_utc(&b, at("2100-03-01T00:00:00.000000Z"));
	assert_string_equal(b.p, "2100-03-01T00:00:00.000000Z");
	b.len = 0;
	tr2_time_add_local(&b, at("2026-11-21T20:26:08.012009Z"));  /* TZ=UTC */
	assert_string_equal(b.p, "20:26:08.012009");
	b.len = 0;
	tr2_time_add_local(&b, at("2026-11-21T20:26:08.999999Z"));  /* same second, cached */
	assert_string_equal(b.p, "20:26:08.999999");
	b.len = 0;
	tr2_time_add_local(&b, at("2026-11-21T20:26:09.000000Z"));
	assert_string_equal(b.p, "20:26:09.000000");
	tr2_buf_free(&b);
}

/*
 * Control bytes are written as they are in NORMAL and PERF, as git writes
 * them (a newline continues the event on the next line); in argv they make
 * git quote the argument.  Padding counts bytes.
 */
static void test_control_bytes(void **state)
{
	static const char *const argv[] = { "git", "commit", "-m", "a\nb", "t\tab", "\x1b[31m", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_START, SID, "common-main.c", 51);

	ev.argv = argv;
	NORMAL_BRIEF(ev, "start git commit -m 'a\nb' 't\tab' '\x1b[31m'\n");
	PERF_BRIEF(ev, "d0 | main                     | start        |     |           |           |              | git commit -m 'a\nb' 't\tab' '\x1b[31m'\n");

	ev = ev_new(TR2_EV_PRINTF, SID, "a.c", 1);
	ev.msg = "cr\r lf\n nul-less \x01\x7f caf\xc3\xa9 \xff";
	NORMAL_BRIEF(ev, "cr\r lf\n nul-less \x01\x7f caf\xc3\xa9 \xff\n");
	PERF_BRIEF(ev, "d0 | main                     | printf       |     |           |           |              | cr\r lf\n nul-less \x01\x7f caf\xc3\xa9 \xff\n");

	/* in the padded columns too */
	ev = cmd_mode("new\nline.c", 7);
	ev.thread = "th01:x\ny";
	PERF(ev, "00:00:00.000000",
	     "00:00:00.000000 new\nline.c:7                 | d0 | th01:x\ny                 | cmd_mode     |     |           |           |              | m\n");
	NORMAL(ev, "00:00:00.000000",
	       "00:00:00.000000 new\nline.c:7                      cmd_mode m\n");
}

/* git's sq_quote_buf_pretty: bare when only [A-Za-z0-9+,-./:=@_^], '' for "" */
static void test_argv_quoting(void **state)
{
	static const char *const argv[] = { "git", "log", "--format=%H", "", "a b", "it's", "wow!",
					    "x+y,z-1./:=@_^", "caf\xc3\xa9", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_START, SID, "common-main.c", 51);

	ev.argv = argv;
	NORMAL_BRIEF(ev, "start git log '--format=%H' '' 'a b' 'it'\\''s' 'wow'\\!'' x+y,z-1./:=@_^ 'caf\xc3\xa9'\n");
	ev.argv = NULL;
	NORMAL_BRIEF(ev, "start \n");
	EVENT_BRIEF(ev, "2026-11-21T00:00:00.000000Z",
		    "{\"event\":\"start\",\"sid\":\"" SID "\",\"thread\":\"main\",\"argv\":[]}\n");
}

/* targets append to what the buffer holds */
static void test_appends(void **state)
{
	struct tr2_buf b = { 0 };
	struct tr2_tgt_opts opts = { .brief = 1 };
	struct tr2_ev ev = cmd_mode("a.c", 1);

	tr2_buf_adds(&b, "x");
	tr2_tgt_normal.fn[TR2_EV_CMD_MODE](&b, &ev, &opts);
	tr2_tgt_normal.fn[TR2_EV_CMD_MODE](&b, &ev, &opts);
	assert_string_equal(b.p, "xcmd_mode m\ncmd_mode m\n");
	opts.brief = 0;
	b.len = 0;
	tr2_buf_adds(&b, "prefix-longer-than-the-time ");
	ev.time_us = at("00:00:00.000000");
	tr2_tgt_perf.fn[TR2_EV_CMD_MODE](&b, &ev, &opts);
	assert_string_equal(b.p, "prefix-longer-than-the-time 00:00:00.000000 a.c:1                        | d0 | main                     | cmd_mode     |     |           |           |              | m\n");
	tr2_buf_free(&b);
}

static void test_buf(void **state)
{
	struct tr2_buf b = { 0 };

	tr2_buf_addf(&b, "%s-%d", "abc", 42);
	for (int i = 0; i < 100; i++)
		tr2_buf_addf(&b, "%0100d", i);  /* forces regrowth inside addf */
	assert_int_equal(b.len, 6 + 100 * 100);
	assert_memory_equal(b.p, "abc-42", 6);
	assert_int_equal(b.p[b.len], '\0');
	b.len = 0;
	tr2_buf_add_int(&b, INT64_MIN);
	tr2_buf_addch(&b, ' ');
	tr2_buf_add_uint(&b, UINT64_MAX);
	tr2_buf_addch(&b, ' ');
	tr2_buf_add_secs(&b, -1500000, 10);
	assert_string_equal(b.p, "-9223372036854775808 18446744073709551615  -1.500000");
	tr2_buf_free(&b);
	assert_null(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_file_line_width),
		cmocka_unit_test(test_no_file),
		cmocka_unit_test(test_normal_file_line_width),
		cmocka_unit_test(test_perf_columns),
		cmocka_unit_test(test_unknown_times),
		cmocka_unit_test(test_nesting_dots),
		cmocka_unit_test(test_sid_depth),
		cmocka_unit_test(test_time_columns),
		cmocka_unit_test(test_control_bytes),
		cmocka_unit_test(test_argv_quoting),
		cmocka_unit_test(test_appends),
		cmocka_unit_test(test_buf),
	};

	return cmocka_run_group_tests_name("NORMAL and PERF layout", tests, NULL, NULL);
}
