/* Unit tests of tr2-bpf --summary (loader/tr2_summary.c): events in, as
 * the session emits them; whole lines of tables and JSON out, against
 * values computed by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tr2_summary.h"
#include "tr2_tgt.h"

/* Percentiles: nearest rank, interpolated in its log2 slot, kept in [min, max]. */
static void test_percentile(void **state)
{
	uint64_t h[TR2_HIST_SLOTS] = { 0 };

	/* 4 durations in [1024, 2048): rank 2 is 1024 + 1024 * 2/4. */
	h[10] = 4;
	assert_int_equal(tr2_hist_percentile(h, 4, 1030, 2000, 50), 1536);
	/* rank 4: 1024 + 1024 * 4/4 = 2048, above the max. */
	assert_int_equal(tr2_hist_percentile(h, 4, 1030, 2000, 99), 2000);
	/* rank 1: 1024 + 256 = 1280. */
	assert_int_equal(tr2_hist_percentile(h, 4, 1030, 2000, 25), 1280);

	/* 1 in [8, 16), 3 in [32, 64). */
	memset(h, 0, sizeof(h));
	h[3] = 1;
	h[5] = 3;
	assert_int_equal(tr2_hist_percentile(h, 4, 9, 60, 25), 16);   /* rank 1: 8 + 8 */
	assert_int_equal(tr2_hist_percentile(h, 4, 9, 60, 50), 42);   /* rank 2: 32 + 32/3 */
	assert_int_equal(tr2_hist_percentile(h, 4, 9, 60, 99), 60);   /* rank 4: 64, the max */

	/* Slot 0 is [0, 2). */
	memset(h, 0, sizeof(h));
	h[0] = 2;
	assert_int_equal(tr2_hist_percentile(h, 2, 0, 1, 50), 1);     /* rank 1: 0 + 2/2 */

	/* 99 in [16, 32), one outlier in [2^20, 2^21). */
	memset(h, 0, sizeof(h));
	h[4] = 99;
	h[20] = 1;
	assert_int_equal(tr2_hist_percentile(h, 100, 16, 1500000, 50), 24);  /* 16 + 16 * 50/99 */
	assert_int_equal(tr2_hist_percentile(h, 100, 16, 1500000, 99), 32);  /* rank 99 */
	assert_int_equal(tr2_hist_percentile(h, 100, 16, 1500000, 100), 1500000);

	/* Nothing counted. */
	memset(h, 0, sizeof(h));
	assert_int_equal(tr2_hist_percentile(h, 0, 0, 0, 50), 0);
}

/* bcc's print_log2_hist layout. */
static void test_hist_print(void **state)
{
	uint64_t h[TR2_HIST_SLOTS] = { 0 };
	struct tr2_buf b = { 0 };

	tr2_hist_print(&b, h, TR2_HIST_SLOTS, "nsecs");
	assert_int_equal(b.len, 0);   /* empty: nothing */
	h[0] = 1;
	h[2] = 4;
	tr2_hist_print(&b, h, TR2_HIST_SLOTS, "nsecs");
	assert_string_equal(b.p,
		"     nsecs               : count    distribution\n"
		"         0 -> 1          : 1        |**********                              |\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 4        |****************************************|\n");
	tr2_buf_free(&b);
}

static struct tr2_agg val(uint64_t count, int64_t sum, int64_t min, int64_t max)
{
	struct tr2_agg v;

	memset(&v, 0, sizeof(v));
	v.count = count;
	v.sum = sum;
	v.min = min;
	v.max = max;
	return v;
}

static void test_merge(void **state)
{
	struct tr2_agg a = val(2, 3000, 1000, 2000), b = val(1, 4000, 4000, 4000), none = val(0, 0, 0, 0);

	a.hist[9] = a.hist[10] = 1;
	a.last = 7;
	b.hist[10] = 1;
	b.open = 2;
	b.before = 1;
	b.last = 9;
	tr2_agg_merge(&a, &b);
	assert_int_equal(a.count, 3);
	assert_int_equal(a.sum, 7000);
	assert_int_equal(a.min, 1000);
	assert_int_equal(a.max, 4000);
	assert_int_equal(a.hist[9], 1);
	assert_int_equal(a.hist[10], 2);
	assert_int_equal(a.open, 2);
	assert_int_equal(a.before, 1);
	assert_int_equal(a.last, 9);
	/* An aggregate without values (only open regions) changes no min, max or last. */
	none.open = 1;
	tr2_agg_merge(&a, &none);
	assert_int_equal(a.min, 1000);
	assert_int_equal(a.max, 4000);
	assert_int_equal(a.last, 9);
	assert_int_equal(a.open, 3);
	/* Into an empty one: takes the other's. */
	none = val(0, 0, 0, 0);
	tr2_agg_merge(&none, &b);
	assert_int_equal(none.min, 4000);
	assert_int_equal(none.max, 4000);
}

/* --- events, as the session emits them -------------------------------------- */

/* A region event of process pid (session sid) at nesting (git's: 1 at the
 * top level; enter: before the push, leave: after the pop); a leave with
 * t_rel_ns >= 0 closes a region that long, with -1 one entered before the
 * attach. */
static void region(struct tr2_summary *s, uint32_t pid, const char *sid, enum tr2_ev_kind kind,
		   const char *cat, const char *label, int nesting, int64_t t_rel_ns)
{
	struct tr2_ev ev = { .kind = kind, .sid = sid, .thread = "main", .category = cat, .label = label,
			     .nesting = nesting };

	if (kind == TR2_EV_REGION_LEAVE && t_rel_ns >= 0) {
		ev.has_t_rel = 1;
		ev.t_rel_ns = t_rel_ns;
		ev.t_rel_us = t_rel_ns / 1000;
	}
	tr2_summary_event(s, pid, &ev);
}

/* A region of (cat, label) entered and left after t_ns, at the top level. */
static void closed(struct tr2_summary *s, uint32_t pid, const char *sid, const char *cat, const char *label,
		   int64_t t_ns)
{
	region(s, pid, sid, TR2_EV_REGION_ENTER, cat, label, 1, -1);
	region(s, pid, sid, TR2_EV_REGION_LEAVE, cat, label, 1, t_ns);
}

/* An integer data event; and a string one, which is not aggregated. */
static void data(struct tr2_summary *s, uint32_t pid, const char *sid, const char *cat, const char *key,
		 int64_t v)
{
	struct tr2_ev ev = { .kind = TR2_EV_DATA, .sid = sid, .thread = "main", .category = cat, .key = key,
			     .value = "(its decimal)", .has_intval = 1, .intval = v, .nesting = 1 };

	tr2_summary_event(s, pid, &ev);
	ev.has_intval = 0;
	ev.intval = 0;
	ev.value = "text";
	tr2_summary_event(s, pid, &ev);
}

static void cmd_name(struct tr2_summary *s, uint32_t pid, const char *sid, const char *name)
{
	struct tr2_ev ev = { .kind = TR2_EV_CMD_NAME, .sid = sid, .thread = "main", .name = name,
			     .hierarchy = name, .nesting = 1 };

	tr2_summary_event(s, pid, &ev);
}

static void start(struct tr2_summary *s, uint32_t pid, const char *sid, const char *argv0)
{
	const char *argv[] = { argv0, "--an-arg", NULL };
	struct tr2_ev ev = { .kind = TR2_EV_START, .sid = sid, .thread = "main", .argv = argv, .nesting = 1 };

	tr2_summary_event(s, pid, &ev);
}

/* The text table alone, stamped "T" at 1 s, not final. */
static const char *table(struct tr2_summary *s, struct tr2_buf *t)
{
	t->len = 0;
	tr2_summary_format(s, t, NULL, "T", 1, 0);
	return t->p;
}

#define HEAD "T tr2-bpf summary after 1.000 s: durations in seconds, p50 and p99 approximate\n"
#define REGIONS "    count      total       mean        min        max        p50        p99  open before  category label\n"
#define DATA "    count        sum        min        max       last  category key\n"

/*
 * One process: closed regions (count, total, min, max, log2 slots), one
 * left open, one entered before the attach; integer data; its cmd_name;
 * events that are not aggregated (string data, other kinds) change
 * nothing.  Regions sorted by total; whole table and JSON lines.
 */
static void test_table(void **state)
{
	struct tr2_summary *s = tr2_summary_new(0, 1, NULL, 0, 0);
	struct tr2_ev version = { .kind = TR2_EV_VERSION, .sid = "S1", .thread = "main", .evt = "4" };
	struct tr2_buf t = { 0 }, js = { 0 };
	unsigned long procs, keys;

	tr2_summary_event(s, 100, &version);
	start(s, 100, "S1", "/usr/bin/git");
	cmd_name(s, 100, "S1", "git status");
	closed(s, 100, "S1", "index", "read", 1000);    /* slot 9: [512, 1024) */
	closed(s, 100, "S1", "index", "read", 2000);    /* slot 10 */
	closed(s, 100, "S1", "status", "scan", 10000000);  /* slot 23 */
	region(s, 100, "S1", TR2_EV_REGION_ENTER, "index", "read", 1, -1);
	closed(s, 100, "S1", "index", "read", 4000);    /* nested: slot 11 */
	region(s, 100, "S1", TR2_EV_REGION_LEAVE, "index", "read", 1, -1);
	data(s, 100, "S1", "index", "entries", 10);
	data(s, 100, "S1", "index", "entries", 20);
	tr2_summary_format(s, &t, &js, "STAMP", 1.5, 1);
	assert_string_equal(t.p,
		"STAMP tr2-bpf summary after 1.500 s, final: durations in seconds, p50 and p99 approximate\n"
		"\n"
		"pid 100 git status\n"
		REGIONS
		"        1   0.010000   0.010000   0.010000   0.010000   0.010000   0.010000     0      0  status   scan\n"
		"        3   0.000007   0.000002   0.000001   0.000004   0.000002   0.000004     1      1  index    read\n"
		DATA
		"        2         30         10         20         20  index    entries\n");
	assert_string_equal(js.p,
		"{\"time\":\"STAMP\",\"elapsed\":1.500,\"final\":true,\"processes\":[{\"pid\":100,\"name\":\"git status\","
		"\"regions\":[{\"category\":\"status\",\"label\":\"scan\",\"count\":1,\"open\":0,\"before\":0,"
		"\"total_ns\":10000000,\"total\":0.010000,\"min_ns\":10000000,\"max_ns\":10000000,\"mean\":0.010000,"
		"\"min\":0.010000,\"max\":0.010000,\"p50\":0.010000,\"p99\":0.010000,"
		"\"hist\":[{\"low\":8388608,\"high\":16777215,\"count\":1}]},"
		"{\"category\":\"index\",\"label\":\"read\",\"count\":3,\"open\":1,\"before\":1,"
		"\"total_ns\":7000,\"total\":0.000007,\"min_ns\":1000,\"max_ns\":4000,\"mean\":0.000002,"
		"\"min\":0.000001,\"max\":0.000004,\"p50\":0.000002,\"p99\":0.000004,"
		"\"hist\":[{\"low\":512,\"high\":1023,\"count\":1},{\"low\":1024,\"high\":2047,\"count\":1},"
		"{\"low\":2048,\"high\":4095,\"count\":1}]}],"
		"\"data\":[{\"category\":\"index\",\"key\":\"entries\",\"count\":2,\"sum\":30,\"min\":10,\"max\":20,\"last\":20}]}],"
		"\"not_aggregated\":{\"key_space_full\":0,\"too_deep\":0}}\n");
	assert_int_equal(tr2_summary_lost(s), 0);
	tr2_summary_kept(s, &procs, &keys);
	assert_int_equal(procs, 1);
	assert_int_equal(keys, 3);
	tr2_buf_free(&t);
	tr2_buf_free(&js);
	tr2_summary_free(s);
}

/*
 * A leave under other strings than its enter counts where its strings say
 * (as PERF shows it) and leaves the enter's region open; no count goes
 * below 0.  A region with no strings is ("", "").
 */
static void test_leave_strings(void **state)
{
	struct tr2_summary *s = tr2_summary_new(0, 1, NULL, 0, 0);
	struct tr2_buf t = { 0 };

	cmd_name(s, 1, "S", "p");
	region(s, 1, "S", TR2_EV_REGION_ENTER, "a", "x", 1, -1);
	region(s, 1, "S", TR2_EV_REGION_LEAVE, "a", "y", 1, 3000000);
	closed(s, 1, "S", NULL, NULL, 1000000);
	assert_string_equal(table(s, &t), HEAD
		"\n"
		"pid 1 p\n"
		REGIONS
		"        1   0.003000   0.003000   0.003000   0.003000   0.003000   0.003000     0      0  a        y\n"
		"        1   0.001000   0.001000   0.001000   0.001000   0.001000   0.001000     0      0           \n"
		"        0          -          -          -          -          -          -     1      0  a        x\n");
	tr2_buf_free(&t);
	tr2_summary_free(s);
}

/*
 * Processes apart, by pid, each image of a pid (a new sid: exec) apart
 * after the one before; names: cmd_name, else argv[0], else comm, else
 * "?"; a comm that came before the first event names the process, one that
 * comes for the next image (exec) does not rename the last one.  An empty
 * table says so.
 */
static void test_processes(void **state)
{
	struct tr2_summary *s = tr2_summary_new(0, 1, NULL, 0, 0);
	struct tr2_buf t = { 0 };

	assert_string_equal(table(s, &t), HEAD "no regions or data values yet\n");
	data(s, 7, "S7", "c", "k", 5);
	data(s, 5, "S5", "c", "k", -3);
	cmd_name(s, 7, "S7", "seven");
	/* pid 9: comm, then argv[0], then cmd_name; a later argv[0] is not a better name */
	tr2_summary_comm(s, 9, "comm9");
	data(s, 9, "S9", "c", "k", 1);
	assert_non_null(strstr(table(s, &t), "\npid 9 comm9\n"));
	start(s, 9, "S9", "/bin/nine");
	assert_non_null(strstr(table(s, &t), "\npid 9 /bin/nine\n"));
	cmd_name(s, 9, "S9", "nine");
	start(s, 9, "S9", "/bin/other");
	assert_non_null(strstr(table(s, &t), "\npid 9 nine\n"));
	/* pid 11 exec'd: its comm before the new image's first event; then
	 * pid 5 exec'd, a program with no name */
	tr2_summary_comm(s, 11, "sh");
	data(s, 11, "S11", "c", "k", 11);
	tr2_summary_comm(s, 11, "prog");
	data(s, 11, "S11/S11b", "c", "k", 12);
	data(s, 5, "S5b", "c", "k", 6);
	assert_string_equal(table(s, &t), HEAD
		"\n"
		"pid 5 ?\n"
		DATA
		"        1         -3         -3         -3         -3  c        k\n"
		"\n"
		"pid 5 ?\n"
		DATA
		"        1          6          6          6          6  c        k\n"
		"\n"
		"pid 7 seven\n"
		DATA
		"        1          5          5          5          5  c        k\n"
		"\n"
		"pid 9 nine\n"
		DATA
		"        1          1          1          1          1  c        k\n"
		"\n"
		"pid 11 sh\n"
		DATA
		"        1         11         11         11         11  c        k\n"
		"\n"
		"pid 11 prog\n"
		DATA
		"        1         12         12         12         12  c        k\n");
	/* per process, ended processes stay in the tables */
	for (uint32_t pid = 5; pid <= 11; pid++)
		tr2_summary_proc_gone(s, pid);
	assert_string_equal(strstr(table(s, &t), "\npid 11 prog\n"),
		"\npid 11 prog\n"
		DATA
		"        1         12         12         12         12  c        k\n");
	assert_int_equal(tr2_summary_lost(s), 0);
	tr2_buf_free(&t);
	tr2_summary_free(s);
}

/*
 * The bounds: room for 3 keys; an event whose key finds none is counted
 * (key space full), as are regions nested deeper than 32 (both their enter
 * and their leave); the keys of a process that has ended leave the key
 * space, its rows stay; the table and JSON say what was not aggregated.
 */
static void test_bounds(void **state)
{
	struct tr2_summary *s = tr2_summary_new(0, 1, NULL, 0, 0);
	struct tr2_buf t = { 0 }, js = { 0 };
	unsigned long procs, keys;

	tr2_summary_set_keys(s, 3);
	cmd_name(s, 1, "S1", "one");
	closed(s, 1, "S1", "r", "a", 1000);
	data(s, 1, "S1", "d", "k", 4);
	/* nested 32 deep: aggregated; 33: not */
	region(s, 1, "S1", TR2_EV_REGION_ENTER, "r", "deep", 32, -1);
	region(s, 1, "S1", TR2_EV_REGION_ENTER, "r", "deep", 33, -1);
	region(s, 1, "S1", TR2_EV_REGION_LEAVE, "r", "deep", 33, 500);
	region(s, 1, "S1", TR2_EV_REGION_LEAVE, "r", "deep", 32, 2000);
	/* a fourth key: no room, its enter and leave and a value counted */
	closed(s, 1, "S1", "r", "b", 1000);
	data(s, 1, "S1", "d", "other", 1);
	/* known keys still take values */
	data(s, 1, "S1", "d", "k", 6);
	assert_int_equal(tr2_summary_lost(s), 5);
	/* 1 ends: its keys leave the key space; 2 takes 3 keys of its own */
	tr2_summary_proc_gone(s, 1);
	cmd_name(s, 2, "S2", "two");
	data(s, 2, "S2", "d", "k", 1);
	data(s, 2, "S2", "d", "l", 2);
	data(s, 2, "S2", "d", "m", 3);
	data(s, 2, "S2", "d", "n", 4);
	tr2_summary_format(s, &t, &js, "T", 1, 0);
	assert_string_equal(t.p, HEAD
		"\n"
		"pid 1 one\n"
		REGIONS
		"        1   0.000002   0.000002   0.000002   0.000002   0.000002   0.000002     0      0  r        deep\n"
		"        1   0.000001   0.000001   0.000001   0.000001   0.000001   0.000001     0      0  r        a\n"
		DATA
		"        2         10          4          6          6  d        k\n"
		"\n"
		"pid 2 two\n"
		DATA
		"        1          1          1          1          1  d        k\n"
		"        1          2          2          2          2  d        l\n"
		"        1          3          3          3          3  d        m\n"
		"\n"
		"not aggregated: 6 events (key space full: 4; regions nested deeper than 32: 2)\n");
	assert_non_null(strstr(js.p, "],\"not_aggregated\":{\"key_space_full\":4,\"too_deep\":2}}\n"));
	assert_int_equal(tr2_summary_lost(s), 6);
	tr2_summary_kept(s, &procs, &keys);
	assert_int_equal(procs, 2);
	assert_int_equal(keys, 6);
	tr2_buf_free(&t);
	tr2_buf_free(&js);
	tr2_summary_free(s);
}

/*
 * Per program: the processes of one name add up (counts, sums, min, max,
 * open, before, histograms; a data row's last is the live process's of the
 * highest pid); the header says how many processes; programs by name, "?"
 * for the unnamed.
 */
static void test_per_program(void **state)
{
	struct tr2_summary *s = tr2_summary_new(1, 1, NULL, 0, 0);
	struct tr2_buf t = { 0 }, js = { 0 };

	tr2_summary_set_per_program(s, 1);
	cmd_name(s, 20, "S20", "fetch");
	cmd_name(s, 21, "S21", "fetch");
	cmd_name(s, 30, "S30", "status");
	closed(s, 20, "S20", "index", "read", 1000);
	closed(s, 20, "S20", "index", "read", 2000);
	closed(s, 21, "S21", "index", "read", 4000);
	region(s, 21, "S21", TR2_EV_REGION_ENTER, "index", "read", 1, -1);
	region(s, 21, "S21", TR2_EV_REGION_LEAVE, "index", "read", 1, -1);
	data(s, 21, "S21", "index", "entries", 7);
	data(s, 20, "S20", "index", "entries", 10);
	data(s, 20, "S20", "index", "entries", 20);
	closed(s, 30, "S30", "status", "scan", 10000000);
	data(s, 40, "S40", "c", "k", 5);
	tr2_summary_format(s, &t, &js, "STAMP", 2, 1);
	assert_string_equal(t.p,
		"STAMP tr2-bpf summary after 2.000 s, final: durations in seconds, p50 and p99 approximate\n"
		"\n"
		"program ?: 1 process\n"
		DATA
		"        1          5          5          5          5  c        k\n"
		"\n"
		"program fetch: 2 processes\n"
		REGIONS
		"        3   0.000007   0.000002   0.000001   0.000004   0.000002   0.000004     1      1  index    read\n"
		DATA
		"        3         37          7         20          7  index    entries\n"
		"\n"
		"index read\n"
		"     nsecs               : count    distribution\n"
		"         0 -> 1          : 0        |                                        |\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 0        |                                        |\n"
		"         8 -> 15         : 0        |                                        |\n"
		"        16 -> 31         : 0        |                                        |\n"
		"        32 -> 63         : 0        |                                        |\n"
		"        64 -> 127        : 0        |                                        |\n"
		"       128 -> 255        : 0        |                                        |\n"
		"       256 -> 511        : 0        |                                        |\n"
		"       512 -> 1023       : 1        |****************************************|\n"
		"      1024 -> 2047       : 1        |****************************************|\n"
		"      2048 -> 4095       : 1        |****************************************|\n"
		"\n"
		"program status: 1 process\n"
		REGIONS
		"        1   0.010000   0.010000   0.010000   0.010000   0.010000   0.010000     0      0  status   scan\n"
		"\n"
		"status scan\n"
		"     nsecs               : count    distribution\n"
		"         0 -> 1          : 0        |                                        |\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 0        |                                        |\n"
		"         8 -> 15         : 0        |                                        |\n"
		"        16 -> 31         : 0        |                                        |\n"
		"        32 -> 63         : 0        |                                        |\n"
		"        64 -> 127        : 0        |                                        |\n"
		"       128 -> 255        : 0        |                                        |\n"
		"       256 -> 511        : 0        |                                        |\n"
		"       512 -> 1023       : 0        |                                        |\n"
		"      1024 -> 2047       : 0        |                                        |\n"
		"      2048 -> 4095       : 0        |                                        |\n"
		"      4096 -> 8191       : 0        |                                        |\n"
		"      8192 -> 16383      : 0        |                                        |\n"
		"     16384 -> 32767      : 0        |                                        |\n"
		"     32768 -> 65535      : 0        |                                        |\n"
		"     65536 -> 131071     : 0        |                                        |\n"
		"    131072 -> 262143     : 0        |                                        |\n"
		"    262144 -> 524287     : 0        |                                        |\n"
		"    524288 -> 1048575    : 0        |                                        |\n"
		"   1048576 -> 2097151    : 0        |                                        |\n"
		"   2097152 -> 4194303    : 0        |                                        |\n"
		"   4194304 -> 8388607    : 0        |                                        |\n"
		"   8388608 -> 16777215   : 1        |****************************************|\n");
	assert_string_equal(js.p,
		"{\"time\":\"STAMP\",\"elapsed\":2.000,\"final\":true,\"programs\":["
		"{\"name\":\"?\",\"processes\":1,\"regions\":[],"
		"\"data\":[{\"category\":\"c\",\"key\":\"k\",\"count\":1,\"sum\":5,\"min\":5,\"max\":5,\"last\":5}]},"
		"{\"name\":\"fetch\",\"processes\":2,"
		"\"regions\":[{\"category\":\"index\",\"label\":\"read\",\"count\":3,\"open\":1,\"before\":1,"
		"\"total_ns\":7000,\"total\":0.000007,\"min_ns\":1000,\"max_ns\":4000,\"mean\":0.000002,"
		"\"min\":0.000001,\"max\":0.000004,\"p50\":0.000002,\"p99\":0.000004,"
		"\"hist\":[{\"low\":512,\"high\":1023,\"count\":1},{\"low\":1024,\"high\":2047,\"count\":1},"
		"{\"low\":2048,\"high\":4095,\"count\":1}]}],"
		"\"data\":[{\"category\":\"index\",\"key\":\"entries\",\"count\":3,\"sum\":37,\"min\":7,\"max\":20,\"last\":7}]},"
		"{\"name\":\"status\",\"processes\":1,"
		"\"regions\":[{\"category\":\"status\",\"label\":\"scan\",\"count\":1,\"open\":0,\"before\":0,"
		"\"total_ns\":10000000,\"total\":0.010000,\"min_ns\":10000000,\"max_ns\":10000000,\"mean\":0.010000,"
		"\"min\":0.010000,\"max\":0.010000,\"p50\":0.010000,\"p99\":0.010000,"
		"\"hist\":[{\"low\":8388608,\"high\":16777215,\"count\":1}]}],\"data\":[]}],"
		"\"not_aggregated\":{\"key_space_full\":0,\"too_deep\":0}}\n");
	tr2_buf_free(&t);
	tr2_buf_free(&js);
	tr2_summary_free(s);
}

/*
 * Per program, processes that end: added into their program then, under
 * the name they have then, and forgotten (a new process with the same pid
 * is another process); the sums go on from there; a process that exec'd
 * counts once per image, each under its own name; one with no values
 * counts nowhere.  A data row's last: the process that ended last, before
 * the live ones.
 */
static void test_per_program_ended(void **state)
{
	struct tr2_summary *s = tr2_summary_new(0, 1, NULL, 0, 0);
	struct tr2_buf t = { 0 };
	unsigned long procs, keys;
	char sid[16];

	tr2_summary_set_per_program(s, 1);
	for (uint32_t pid = 100; pid < 103; pid++) {
		snprintf(sid, sizeof(sid), "S%u", pid);
		cmd_name(s, pid, sid, "git");
		data(s, pid, sid, "c", "k", pid);
		closed(s, pid, sid, "r", "a", 1000 * pid);    /* slot 16: [65536, 131072) */
		closed(s, pid, sid, "r", "big", 2000 * pid);  /* slot 17 */
		closed(s, pid, sid, "r", "big", 3000 * pid);  /* slot 18 */
	}
	/* 101 and 100 end (101 first) */
	tr2_summary_proc_gone(s, 101);
	tr2_summary_proc_gone(s, 100);
	tr2_summary_kept(s, &procs, &keys);
	assert_int_equal(procs, 1);
	assert_int_equal(keys, 3 + 3);
	/* big, p50: rank 3 of 6, 131072 + 131072 * 3/3; a, p50: 65536 + 65536 * 2/3,
	 * above its max */
	assert_string_equal(table(s, &t), HEAD
		"\n"
		"program git: 3 processes\n"
		REGIONS
		"        6   0.001515   0.000252   0.000200   0.000306   0.000262   0.000306     0      0  r        big\n"
		"        3   0.000303   0.000101   0.000100   0.000102   0.000102   0.000102     0      0  r        a\n"
		DATA
		"        3        303        100        102        102  c        k\n");
	/* a new 100, named otherwise; 102 exec'd: a second image, same name,
	 * then ends; 103 has no values, then ends */
	cmd_name(s, 100, "S100b", "gc");
	data(s, 100, "S100b", "c", "k", 7);
	cmd_name(s, 102, "S102/S102b", "git");
	data(s, 102, "S102/S102b", "c", "k", 1);
	tr2_summary_proc_gone(s, 102);
	cmd_name(s, 103, "S103", "git");
	tr2_summary_proc_gone(s, 103);
	tr2_summary_proc_gone(s, 999);   /* never seen: nothing */
	assert_string_equal(table(s, &t), HEAD
		"\n"
		"program gc: 1 process\n"
		DATA
		"        1          7          7          7          7  c        k\n"
		"\n"
		"program git: 4 processes\n"
		REGIONS
		"        6   0.001515   0.000252   0.000200   0.000306   0.000262   0.000306     0      0  r        big\n"
		"        3   0.000303   0.000101   0.000100   0.000102   0.000102   0.000102     0      0  r        a\n"
		DATA
		"        4        304          1        102          1  c        k\n");
	/* kept: the live 100 and the program's keys, nothing of the ended */
	tr2_summary_kept(s, &procs, &keys);
	assert_int_equal(procs, 1);
	assert_int_equal(keys, 1 + 3);
	assert_int_equal(tr2_summary_lost(s), 0);
	tr2_buf_free(&t);
	tr2_summary_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile),
		cmocka_unit_test(test_hist_print),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_leave_strings),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_per_program),
		cmocka_unit_test(test_per_program_ended),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
