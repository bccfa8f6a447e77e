/* test_json.c: EVENT strings and data_json values.  Escapes follow git's
 * json-writer.c; invalid UTF-8 becomes U+FFFD and invalid data_json text a
 * string (tr2's deviations, tr2_json.h); every line parses as JSON. */
#include "unit.h"
#include "tr2_json.h"

#define FFFD "\xef\xbf\xbd"
#define SID "20261121T204014.648864Z-H0a7c9cdf-P000035e3"

static const char *json_str(const char *s)
{
	static struct tr2_buf b;

	b.len = 0;
	tr2_json_add_string(&b, s);
	return b.p;
}

static const char *json_val(const char *s)
{
	static struct tr2_buf b;

	b.len = 0;
	tr2_json_add_value(&b, s);
	return b.p;
}

/* The line is one JSON object, for a strict, UTF-8-validating parser
 * (simdjson, through tr2_json_is_valid). */
static void assert_valid_json_line(const char *line)
{
	size_t len = strlen(line);

	assert_true(len > 0 && line[len - 1] == '\n');
	assert_null(memchr(line, '\n', len - 1));
	assert_int_equal(line[0], '{');   /* one value, so one object */
	assert_true(tr2_json_is_valid(line));
}

/* git's append_quoted_string */
static void test_git_escapes(void **state)
{
	assert_string_equal(json_str("plain"), "\"plain\"");
	assert_string_equal(json_str(""), "\"\"");
	assert_string_equal(json_str(NULL), "\"\"");
	assert_string_equal(json_str("q\"b\\s/"), "\"q\\\"b\\\\s/\"");
	assert_string_equal(json_str("\n\r\t\f\b"), "\"\\n\\r\\t\\f\\b\"");
	assert_string_equal(json_str("\x01\x1f\x0b\x1b"), "\"\\u0001\\u001f\\u000b\\u001b\"");
	assert_string_equal(json_str("del\x7f"), "\"del\x7f\"");
}

static void test_valid_utf8(void **state)
{
	const char *s = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf \xf4\x8f\xbf\xbf \xed\x9f\xbf";

	assert_string_equal(json_str(s), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf \xf4\x8f\xbf\xbf \xed\x9f\xbf\"");
}

/* one U+FFFD per maximal ill-formed subpart (Unicode 15, 3.9) */
static void test_invalid_utf8(void **state)
{
	assert_string_equal(json_str("a\x80z"), "\"a" FFFD "z\"");          /* lone continuation */
	assert_string_equal(json_str("\xff\xfe"), "\"" FFFD FFFD "\"");      /* never valid */
	assert_string_equal(json_str("\xc3"), "\"" FFFD "\"");               /* truncated at the end */
	assert_string_equal(json_str("\xe2\x82z"), "\"" FFFD "z\"");        /* truncated: one U+FFFD */
	assert_string_equal(json_str("\xf0\x9f\x98"), "\"" FFFD "\"");
	assert_string_equal(json_str("\xc0\xaf"), "\"" FFFD FFFD "\"");      /* overlong '/' */
	assert_string_equal(json_str("\xe0\x80\xaf"), "\"" FFFD FFFD FFFD "\"");
	assert_string_equal(json_str("\xed\xa0\x80"), "\"" FFFD FFFD FFFD "\""); /* surrogate */
	assert_string_equal(json_str("\xf4\x90\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\""); /* > U+10FFFF */
	assert_string_equal(json_str("\xc3\"x"), "\"" FFFD "\\\"x\"");       /* the quote survives */
	assert_string_equal(json_str("\xe2\x82\n"), "\"" FFFD "\\n\"");
}

/* data_json: valid JSON embedded as it is, with git's line-break removal */
static void test_data_json_valid(void **state)
{
	assert_string_equal(json_val("{\"a\":1}"), "{\"a\":1}");
	assert_string_equal(json_val("[1, 2.5e-3, -0, true, false, null, \"s\"]"),
			    "[1, 2.5e-3, -0, true, false, null, \"s\"]");
	assert_string_equal(json_val("42"), "42");
	assert_string_equal(json_val("\"str\""), "\"str\"");
	assert_string_equal(json_val("null"), "null");
	assert_string_equal(json_val(" {} "), " {} ");
	assert_string_equal(json_val("{\"esc\":\"\\n\\u00e9\\\"\\/\"}"), "{\"esc\":\"\\n\\u00e9\\\"\\/\"}");
	/* pretty-printed: line breaks and the indentation after them go */
	assert_string_equal(json_val("{\n  \"a\": [\n    1,\n    2\n  ],\r\n  \"b\": \"x  y\"\n}\n"),
			    "{\"a\": [1,2],\"b\": \"x  y\"}");
	assert_string_equal(json_val(NULL), "null");
	assert_true(tr2_json_is_valid("123456789012345678901234567890"));
	assert_true(tr2_json_is_valid("{\"k\":\"caf\xc3\xa9\"}"));
	assert_true(tr2_json_is_valid("[1.7976931348623157e308, 1e-999, \"\\ud83d\\ude00\\u0000\"]"));
	assert_true(tr2_json_is_valid("{\"a\":1,\"a\":2}"));
}

/* anything else is written as a string */
static void test_data_json_invalid(void **state)
{
	static const char *const bad[] = {
		"", " ", "{", "{\"a\":1", "{\"a\":1}}", "{\"a\":1} x", "{\"a\":1}{}", "[1,]", "{'a':1}",
		"NaN", "Infinity", "-Infinity", "nan", "1.", ".5", "01", "+1", "1e", "tru", "True",
		"\"a\tb\"", "\"a\x01\"", "\"\\x\"", "\"\xff\"", "{\"a\":\"\xc0\xaf\"}", "\x0c{}",
		"undefined", "{a:1}",
		/* bytes after a scalar (tr2_read_json.cc: simdjson 3.0's scalar
		 * documents let "falses" through) */
		"falses", "nullx ", "true1", "1 2", "1],[2",
		/* valid by RFC 8259's grammar, refused as its sections 6 and 8.2 allow */
		"1e999", "[-1e309]", "\"\\ud800\"", "[\"\\udc00x\"]", "{\"\\ud800\":1}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tr2_buf want = { 0 };

		if (tr2_json_is_valid(bad[i]))
			fail_msg("accepted as JSON: '%s'", bad[i]);
		tr2_json_add_string(&want, bad[i]);
		assert_string_equal(json_val(bad[i]), want.p);
		tr2_buf_free(&want);
	}
	assert_string_equal(json_val("{bad"), "\"{bad\"");
}

/* n arrays, one in the other, in deep (at least 2n + 1 bytes) */
static const char *nested(char *deep, size_t n)
{
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	return deep;
}

static void test_data_json_depth(void **state)
{
	char deep[601];

	assert_true(tr2_json_is_valid(nested(deep, 200)));
	assert_true(tr2_json_is_valid(nested(deep, 255)));   /* the limit */
	assert_false(tr2_json_is_valid(nested(deep, 256)));
	assert_false(tr2_json_is_valid(nested(deep, 300)));
	assert_string_equal(json_val(deep), json_str(deep));
}

/* whole EVENT lines with hostile strings in every string field */
static void test_event_lines_stay_json(void **state)
{
	static const char *const argv[] = { "\"", "\\", "\n", "\xff", "\xe2\x82", "ok", NULL };
	const char *nasty = "q\" b\\ nl\n cr\r ctl\x01 bad\x80\xc3 end";
	struct tr2_ev ev = ev_new(TR2_EV_START, nasty, nasty, 1);
	enum tr2_ev_kind kinds[] = { TR2_EV_VERSION, TR2_EV_START, TR2_EV_ERROR, TR2_EV_CMD_PATH,
				     TR2_EV_CMD_ANCESTRY, TR2_EV_CMD_NAME, TR2_EV_CMD_MODE, TR2_EV_ALIAS,
				     TR2_EV_CHILD_START, TR2_EV_CHILD_READY, TR2_EV_EXEC, TR2_EV_DEF_PARAM,
				     TR2_EV_DEF_REPO, TR2_EV_REGION_ENTER, TR2_EV_DATA, TR2_EV_DATA_JSON,
				     TR2_EV_PRINTF, TR2_EV_TIMER, TR2_EV_COUNTER };

	ev.thread = nasty;
	ev.evt = ev.exe = ev.msg = ev.fmt = ev.path = ev.name = ev.hierarchy = ev.mode = nasty;
	ev.alias = ev.child_class = ev.hook_name = ev.cd = ev.ready = ev.param = ev.value = nasty;
	ev.scope = ev.worktree = ev.category = ev.label = ev.key = nasty;
	ev.argv = ev.ancestry = argv;
	ev.has_t_abs = ev.has_t_rel = true;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		ev.kind = kinds[i];
		assert_valid_json_line(fmt_ev(&tr2_tgt_event, &ev, 0, 10));
		assert_valid_json_line(fmt_ev(&tr2_tgt_event, &ev, 1, 10));
	}

	ev = ev_new(TR2_EV_ERROR, SID, "usage.c", 60);
	ev.msg = "it's \"quoted\"\n\tand \xc3\xa9 and \xc3";
	ev.fmt = "%s";
	ev.time_us = at("2026-11-21T00:00:00.000000Z");
	assert_string_equal(fmt_ev(&tr2_tgt_event, &ev, 0, 10),
			    "{\"event\":\"error\",\"sid\":\"" SID "\",\"thread\":\"main\",\"time\":\"2026-11-21T00:00:00.000000Z\",\"file\":\"usage.c\",\"line\":60,\"msg\":\"it's \\\"quoted\\\"\\n\\tand \xc3\xa9 and " FFFD "\",\"fmt\":\"%s\"}\n");

	ev = ev_new(TR2_EV_DATA_JSON, SID, "a.c", 1);
	ev.category = "c";
	ev.key = "k";
	ev.value = "{\"broken\": [1, 2}";
	EVENT_BRIEF(ev, "2026-11-21T00:00:00.000000Z",
		    "{\"event\":\"data_json\",\"sid\":\"" SID "\",\"thread\":\"main\",\"nesting\":1,\"category\":\"c\",\"key\":\"k\",\"value\":\"{\\\"broken\\\": [1, 2}\"}\n");
	ev.value = "{\n  \"ok\": [1, 2]\n}";
	EVENT_BRIEF(ev, "2026-11-21T00:00:00.000000Z",
		    "{\"event\":\"data_json\",\"sid\":\"" SID "\",\"thread\":\"main\",\"nesting\":1,\"category\":\"c\",\"key\":\"k\",\"value\":{\"ok\": [1, 2]}}\n");
	/* PERF writes the text as it is, line breaks included, as git does */
	PERF_BRIEF(ev, "d0 | main                     | data_json    |     |           |           | c            | k:{\n  \"ok\": [1, 2]\n}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git_escapes),
		cmocka_unit_test(test_valid_utf8),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_data_json_valid),
		cmocka_unit_test(test_data_json_invalid),
		cmocka_unit_test(test_data_json_depth),
		cmocka_unit_test(test_event_lines_stay_json),
	};

	return cmocka_run_group_tests_name("EVENT escaping", tests, NULL, NULL);
}
