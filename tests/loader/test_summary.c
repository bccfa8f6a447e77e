/* Unit tests of tr2-bpf --summary's arithmetic and tables
 * (loader/tr2_summary.c), against values computed by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tr2_summary.h"
#include "tr2_tgt.h"

/* Percentiles: nearest rank, interpolated in its log2 slot, kept in [min, max]. */
static void test_percentile(void **state)
{
	__u64 h[TR2_AGG_SLOTS] = { 0 };

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
	__u64 h[TR2_AGG_SLOTS] = { 0 };
	struct tr2_buf b = { 0 };

	tr2_hist_print(&b, h, TR2_AGG_SLOTS, "nsecs");
	assert_int_equal(b.len, 0);   /* empty: nothing */
	h[0] = 1;
	h[2] = 4;
	tr2_hist_print(&b, h, TR2_AGG_SLOTS, "nsecs");
	assert_string_equal(b.p,
		"     nsecs               : count    distribution\n"
		"         0 -> 1          : 1        |**********                              |\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 4        |****************************************|\n");
	tr2_buf_free(&b);
}

static struct tr2_agg_val val(uint64_t count, int64_t sum, int64_t min, int64_t max)
{
	struct tr2_agg_val v;

	memset(&v, 0, sizeof(v));
	v.count = count;
	v.sum = sum;
	v.min = count ? min : INT64_MAX;
	v.max = count ? max : INT64_MIN;
	return v;
}

static void test_merge(void **state)
{
	struct tr2_agg_val a = val(2, 3000, 1000, 2000), b = val(1, 4000, 4000, 4000), none = val(0, 0, 0, 0);

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
	/* An entry without values (only open regions) changes no min, max or last. */
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

static void put_exec(struct tr2_summary *s, uint32_t pid, uint64_t exec_id, uint32_t flags, uint64_t cat,
		     uint64_t label, const char *catname, const char *labelname, struct tr2_agg_val v)
{
	struct tr2_agg_key k = { .pid = pid, .flags = flags, .exec_id = exec_id, .cat = cat, .label = label };

	strcpy(v.cat, catname);
	strcpy(v.label, labelname);
	tr2_summary_put(s, &k, &v);
}

static void put(struct tr2_summary *s, uint32_t pid, uint32_t flags, uint64_t cat, uint64_t label,
		const char *catname, const char *labelname, struct tr2_agg_val v)
{
	put_exec(s, pid, 1, flags, cat, label, catname, labelname, v);
}

/* Two keys with the same strings (one literal at two addresses) make one
 * row; regions sorted by total; whole table and JSON lines. */
static void test_table(void **state)
{
	struct tr2_summary *s = tr2_summary_new(-1, -1, 0, 1, NULL, 0, 0);
	struct tr2_agg_val a = val(2, 3000, 1000, 2000), b = val(1, 4000, 4000, 4000);
	struct tr2_agg_val c = val(1, 10000000, 10000000, 10000000), d = val(2, 30, 10, 20);
	struct tr2_buf t = { 0 }, js = { 0 };

	a.hist[9] = a.hist[10] = 1;
	b.hist[11] = 1;
	b.open = 1;
	b.before = 1;
	c.hist[23] = 1;
	d.last = 20;
	put(s, 100, TR2_AGGK_REGION | TR2_AGGK_CAT_LIT | TR2_AGGK_LABEL_LIT, 0x1000, 0x2000, "index", "read", a);
	put(s, 100, TR2_AGGK_REGION | TR2_AGGK_CAT_LIT | TR2_AGGK_LABEL_LIT, 0x3000, 0x4000, "index", "read", b);
	put(s, 100, TR2_AGGK_REGION, 0x5000, 0x6000, "status", "scan", c);
	put(s, 100, TR2_AGGK_DATA, 0x1000, 0x7000, "index", "entries", d);
	/* A later read of a key replaces its value. */
	put(s, 100, TR2_AGGK_DATA, 0x1000, 0x7000, "index", "entries", d);
	tr2_summary_set_name(s, 100, "git status");
	tr2_summary_format(s, &t, &js, "STAMP", 1.5, 1);
	assert_string_equal(t.p,
		"STAMP tr2-bpf summary after 1.500 s, final: durations in seconds, p50 and p99 approximate\n"
		"\n"
		"pid 100 git status\n"
		"    count      total       mean        min        max        p50        p99  open before  category label\n"
		"        1   0.010000   0.010000   0.010000   0.010000   0.010000   0.010000     0      0  status   scan\n"
		"        3   0.000007   0.000002   0.000001   0.000004   0.000002   0.000004     1      1  index    read\n"
		"    count        sum        min        max       last  category key\n"
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
	/* Events: 2 per closed region, 1 per open one or early leave, 1 per value. */
	assert_int_equal(tr2_summary_events(s), 2 * 3 + 1 + 1 + 2 * 1 + 2);
	assert_int_equal(tr2_summary_lost(s), 0);
	tr2_buf_free(&t);
	tr2_buf_free(&js);
	tr2_summary_free(s);
}

/* Processes apart, by pid; a process with no name yet is "?"; an empty table says so. */
static void test_processes(void **state)
{
	struct tr2_summary *s = tr2_summary_new(-1, -1, 0, 1, NULL, 0, 0);
	struct tr2_buf t = { 0 };

	tr2_summary_format(s, &t, NULL, "T", 0, 0);
	assert_string_equal(t.p, "T tr2-bpf summary after 0.000 s: durations in seconds, p50 and p99 approximate\n"
				 "no regions or data values yet\n");
	t.len = 0;
	put(s, 7, TR2_AGGK_DATA, 1, 2, "c", "k", val(1, 5, 5, 5));
	put(s, 5, TR2_AGGK_DATA, 1, 2, "c", "k", val(1, -3, -3, -3));
	tr2_summary_set_name(s, 7, "seven");
	tr2_summary_format(s, &t, NULL, "T", 0, 0);
	assert_string_equal(t.p,
		"T tr2-bpf summary after 0.000 s: durations in seconds, p50 and p99 approximate\n"
		"\n"
		"pid 5 ?\n"
		"    count        sum        min        max       last  category key\n"
		"        1         -3         -3         -3          0  c        k\n"
		"\n"
		"pid 7 seven\n"
		"    count        sum        min        max       last  category key\n"
		"        1          5          5          5          0  c        k\n");
	tr2_buf_free(&t);
	tr2_summary_free(s);
}

/* A tracer record of kind for pid, as tr2_summary_record gets it. */
static void record(struct tr2_summary *s, enum tr2_rec_kind kind, uint32_t pid)
{
	static struct tr2_decoded d;

	memset(&d.hdr, 0, sizeof(d.hdr));
	d.hdr.kind = kind;
	d.hdr.pid = d.hdr.tid = pid;
	d.nstr = 0;
	tr2_summary_record(s, &d);
}

#define REG (TR2_AGGK_REGION | TR2_AGGK_CAT_LIT | TR2_AGGK_LABEL_LIT)

/*
 * Per program: the processes of one name add up (counts, sums, min, max,
 * open, before, histograms; a data row's last is the live process's of the
 * highest pid), whatever the addresses of their strings; the header says
 * how many processes; programs by name, "?" for the unnamed.
 */
static void test_per_program(void **state)
{
	struct tr2_summary *s = tr2_summary_new(-1, -1, 1, 1, NULL, 0, 0);
	struct tr2_agg_val a = val(2, 3000, 1000, 2000), b = val(1, 4000, 4000, 4000), d1 = val(2, 30, 10, 20),
			   d2 = val(1, 7, 7, 7), c = val(1, 10000000, 10000000, 10000000);
	struct tr2_buf t = { 0 }, js = { 0 };

	tr2_summary_set_per_program(s, 1);
	a.hist[9] = a.hist[10] = 1;
	b.hist[11] = 1;
	b.open = 1;
	b.before = 1;
	c.hist[23] = 1;
	d1.last = 20;
	d2.last = 7;
	/* two fetch processes, one string at other addresses in each */
	put(s, 20, REG, 0x1000, 0x2000, "index", "read", a);
	put(s, 21, REG, 0x5000, 0x6000, "index", "read", b);
	put(s, 21, TR2_AGGK_DATA, 0x5000, 0x7000, "index", "entries", d2);
	put(s, 20, TR2_AGGK_DATA, 0x1000, 0x7000, "index", "entries", d1);
	put(s, 30, REG, 0x1000, 0x3000, "status", "scan", c);
	put(s, 40, TR2_AGGK_DATA, 1, 2, "c", "k", val(1, 5, 5, 5));
	tr2_summary_set_name(s, 20, "fetch");
	tr2_summary_set_name(s, 21, "fetch");
	tr2_summary_set_name(s, 30, "status");
	tr2_summary_format(s, &t, &js, "STAMP", 2, 1);
	assert_string_equal(t.p,
		"STAMP tr2-bpf summary after 2.000 s, final: durations in seconds, p50 and p99 approximate\n"
		"\n"
		"program ?: 1 process\n"
		"    count        sum        min        max       last  category key\n"
		"        1          5          5          5          0  c        k\n"
		"\n"
		"program fetch: 2 processes\n"
		"    count      total       mean        min        max        p50        p99  open before  category label\n"
		"        3   0.000007   0.000002   0.000001   0.000004   0.000002   0.000004     1      1  index    read\n"
		"    count        sum        min        max       last  category key\n"
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
		"    count      total       mean        min        max        p50        p99  open before  category label\n"
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
		"\"data\":[{\"category\":\"c\",\"key\":\"k\",\"count\":1,\"sum\":5,\"min\":5,\"max\":5,\"last\":0}]},"
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
 * Per program, processes that end: added into their program at the next
 * table under the name they had, their entries and names forgotten (a new
 * process with the same pid is another process); the sums go on from
 * there, events are still counted, and a process that exec'd counts once
 * per image.
 */
static void test_per_program_ended(void **state)
{
	struct tr2_summary *s = tr2_summary_new(-1, -1, 0, 1, NULL, 0, 0);
	struct tr2_buf t = { 0 };
	struct tr2_agg_val d;
	uint64_t events;

	tr2_summary_set_per_program(s, 1);
	for (uint32_t pid = 100; pid < 103; pid++) {
		d = val(1, pid, pid, pid);
		d.last = pid;
		put(s, pid, TR2_AGGK_DATA, 1, 2, "c", "k", d);
		put(s, pid, REG, 3, 4, "r", "a", val(1, 1000 * pid, 1000 * pid, 1000 * pid));
		put(s, pid, REG, 3, 5, "r", "big", val(2, 5000 * pid, 2000 * pid, 3000 * pid));
		tr2_summary_set_name(s, pid, "git");
	}
	events = tr2_summary_events(s);
	assert_int_equal(events, 3 * (1 + 2 + 4));
	/* (no histograms here: p50 and p99 show the max) */
	/* 100 and 101 end (101 first); a new 100 comes, named otherwise */
	record(s, TR2_REC_PROC_GONE, 101);
	record(s, TR2_REC_PROC_GONE, 100);
	tr2_summary_format(s, &t, NULL, "T", 1, 0);
	assert_string_equal(t.p,
		"T tr2-bpf summary after 1.000 s: durations in seconds, p50 and p99 approximate\n"
		"\n"
		"program git: 3 processes\n"
		"    count      total       mean        min        max        p50        p99  open before  category label\n"
		"        6   0.001515   0.000252   0.000200   0.000306   0.000306   0.000306     0      0  r        big\n"
		"        3   0.000303   0.000101   0.000100   0.000102   0.000102   0.000102     0      0  r        a\n"
		"    count        sum        min        max       last  category key\n"
		"        3        303        100        102        102  c        k\n");
	assert_int_equal(tr2_summary_events(s), events);
	put(s, 100, TR2_AGGK_DATA, 1, 2, "c", "k", val(1, 7, 7, 7));
	tr2_summary_set_name(s, 100, "gc");
	/* 102 exec'd: a second image, same name */
	put_exec(s, 102, 2, TR2_AGGK_DATA, 1, 2, "c", "k", val(1, 1, 1, 1));
	record(s, TR2_REC_PROC_GONE, 102);
	t.len = 0;
	tr2_summary_format(s, &t, NULL, "T", 2, 1);
	assert_string_equal(t.p,
		"T tr2-bpf summary after 2.000 s, final: durations in seconds, p50 and p99 approximate\n"
		"\n"
		"program gc: 1 process\n"
		"    count        sum        min        max       last  category key\n"
		"        1          7          7          7          0  c        k\n"
		"\n"
		"program git: 4 processes\n"
		"    count      total       mean        min        max        p50        p99  open before  category label\n"
		"        6   0.001515   0.000252   0.000200   0.000306   0.000306   0.000306     0      0  r        big\n"
		"        3   0.000303   0.000101   0.000100   0.000102   0.000102   0.000102     0      0  r        a\n"
		"    count        sum        min        max       last  category key\n"
		"        4        304          1        102          0  c        k\n");
	assert_int_equal(tr2_summary_events(s), events + 2);
	/* a gone process that had nothing to add counts nowhere */
	record(s, TR2_REC_PROC_GONE, 999);
	t.len = 0;
	tr2_summary_format(s, &t, NULL, "T", 3, 1);
	assert_non_null(strstr(t.p, "program git: 4 processes\n"));
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
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_per_program),
		cmocka_unit_test(test_per_program_ended),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
