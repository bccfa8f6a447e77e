/* Unit tests of the ring-buffer record decoder (loader/tr2_decode.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tr2_decode.h"

/* Builds a record the way bpf/tr2.bpf.c does. */
struct builder {
	unsigned char buf[TR2_REC_MAX + 64];
	struct tr2_rec hdr;
	size_t len;
};

static void start(struct builder *b, unsigned kind)
{
	memset(b, 0, sizeof(*b));
	b->hdr.kind = kind;
	b->hdr.pid = 100;
	b->hdr.tid = 101;
	b->hdr.line = 42;
	b->hdr.ts_ns = 123456789;
	b->len = sizeof(b->hdr);
}

static void put_word(struct builder *b, uint16_t word, const void *bytes, size_t n)
{
	memcpy(b->buf + b->len, &word, 2);
	memcpy(b->buf + b->len + 2, bytes, n);
	b->len += 2 + n;
	b->hdr.nstr++;
}

static void put(struct builder *b, const char *s)
{
	if (!s)
		put_word(b, TR2_STR_NULL, "", 0);
	else
		put_word(b, (uint16_t)strlen(s), s, strlen(s));
}

static size_t finish(struct builder *b)
{
	b->hdr.size = (uint16_t)b->len;
	memcpy(b->buf, &b->hdr, sizeof(b->hdr));
	return b->len;
}

static struct tr2_decoded dec;
static struct tr2_sites *sites;

static void region_enter_decodes(void **state)
{
	struct builder b;
	const char *why = NULL;

	start(&b, TR2_REC_REGION_ENTER);
	b.hdr.num[0] = 1;
	put(&b, "dirscan.c");
	put(&b, "scan");
	put(&b, "directory");
	put(&b, NULL);
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	assert_int_equal(dec.hdr.kind, TR2_REC_REGION_ENTER);
	assert_int_equal(dec.hdr.line, 42);
	assert_int_equal(dec.hdr.num[0], 1);
	assert_int_equal(dec.nstr, 4);
	assert_string_equal(dec.str[0], "dirscan.c");
	assert_string_equal(dec.str[1], "scan");
	assert_string_equal(dec.str[2], "directory");
	assert_null(dec.str[3]);
	assert_null(dec.vec[0]);
}

static void vector_and_marks(void **state)
{
	struct builder b;
	const char *why = NULL;
	char big[TR2_STR_MAX - 1];

	memset(big, 'x', sizeof(big));
	start(&b, TR2_REC_CHILD_START);
	put(&b, "f.c");
	put(&b, NULL);                                    /* class */
	put_word(&b, TR2_STR_FAULT, "", 0);               /* hook_name: bad pointer */
	put_word(&b, (uint16_t)(sizeof(big) | TR2_STR_TRUNC), big, sizeof(big)); /* cd */
	put(&b, "ls");
	put(&b, "-l");
	put(&b, "");
	b.hdr.nvec = 3;
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	assert_null(dec.str[1]);
	assert_string_equal(dec.str[2], TR2_FAULT_MARK);
	assert_int_equal(strlen(dec.str[3]), sizeof(big) + strlen(TR2_TRUNC_MARK));
	assert_string_equal(dec.str[3] + sizeof(big), TR2_TRUNC_MARK);
	assert_string_equal(dec.vec[0], "ls");
	assert_string_equal(dec.vec[1], "-l");
	assert_string_equal(dec.vec[2], "");
	assert_null(dec.vec[3]);
}

static void cut_record_fills_missing_strings(void **state)
{
	struct builder b;
	const char *why = NULL;

	start(&b, TR2_REC_DATA);
	b.hdr.flags = TR2_RECF_CUT;
	put(&b, "f.c");
	put(&b, "cat");
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	assert_int_equal(dec.nstr, 4);
	assert_string_equal(dec.str[2], TR2_TRUNC_MARK);
	assert_string_equal(dec.str[3], TR2_TRUNC_MARK);
}

static void expect_reject(struct builder *b, size_t size, const char *reason)
{
	const char *why = NULL;

	assert_int_equal(tr2_decode(b->buf, size, sites, &dec, &why), -1);
	assert_string_equal(why, reason);
}

static void bad_records_are_rejected(void **state)
{
	struct builder b;
	size_t n;

	start(&b, TR2_REC_PRINTF);
	put(&b, "f.c");
	put(&b, "hello");
	n = finish(&b);
	expect_reject(&b, 10, "record shorter than its header");
	expect_reject(&b, n - 1, "record size does not match its header");

	b.buf[offsetof(struct tr2_rec, kind)] = TR2_REC__COUNT;
	expect_reject(&b, n, "unknown record kind");

	start(&b, TR2_REC_PRINTF);
	put(&b, "f.c");
	n = finish(&b);
	expect_reject(&b, n, "record has the wrong number of strings for its kind");

	start(&b, TR2_REC_PRINTF);
	put(&b, "f.c");
	put_word(&b, 50, "short", 5);   /* claims 50 bytes, has 5 */
	n = finish(&b);
	expect_reject(&b, n, "string runs past the end of the record");

	start(&b, TR2_REC_PRINTF);
	put(&b, "f.c");
	put(&b, "hello");
	b.buf[b.len++] = 'x';
	n = finish(&b);
	expect_reject(&b, n, "bytes left over after the record's strings");

	start(&b, TR2_REC_START);
	put(&b, "f.c");
	b.hdr.nvec = 2;
	n = finish(&b);
	expect_reject(&b, n, "record has too many strings");
}

/* A region_enter from site 7 of thread 101: category and label literal,
 * msg a NULL literal: all strings interned (bits 0-3). */
static size_t region_at_site(struct builder *b, unsigned tid, int ref, const char *label)
{
	start(b, TR2_REC_REGION_ENTER);
	b->hdr.tid = tid;
	b->hdr.site = 7;
	b->hdr.interned = 0xf;
	if (ref) {
		b->hdr.flags = TR2_RECF_REF;
		return finish(b);
	}
	put(b, "dirscan.c");
	put(b, "scan");
	put(b, label);
	put(b, NULL);
	return finish(b);
}

static void interned_strings_come_back(void **state)
{
	struct builder b;
	const char *why = NULL;

	assert_int_equal(tr2_decode(b.buf, region_at_site(&b, 101, 0, "directory"), sites, &dec, &why), 0);
	assert_int_equal(tr2_decode(b.buf, region_at_site(&b, 101, 1, NULL), sites, &dec, &why), 0);
	assert_int_equal(dec.nstr, 4);
	assert_string_equal(dec.str[0], "dirscan.c");
	assert_string_equal(dec.str[1], "scan");
	assert_string_equal(dec.str[2], "directory");
	assert_null(dec.str[3]);
	assert_int_equal(tr2_sites_refs(sites), 1);

	/* Another thread has not sent them: its reference is refused. */
	expect_reject(&b, region_at_site(&b, 102, 1, NULL),
		      "record refers to call-site strings that were never sent");

	/* Sent again (the site lost its slot on the eBPF side): the new copy wins. */
	assert_int_equal(tr2_decode(b.buf, region_at_site(&b, 101, 0, "other"), sites, &dec, &why), 0);
	assert_int_equal(tr2_decode(b.buf, region_at_site(&b, 101, 1, NULL), sites, &dec, &why), 0);
	assert_string_equal(dec.str[2], "other");

	/* A reference whose bits differ from the site's is refused. */
	region_at_site(&b, 101, 1, NULL);
	b.hdr.interned = 0x7;
	put(&b, "msg");
	expect_reject(&b, finish(&b), "record refers to call-site strings that were never sent");

	/* Only some strings interned: the others travel every time, in order. */
	start(&b, TR2_REC_DATA);
	b.hdr.site = 9;
	b.hdr.interned = 0x3;   /* file, category; key and value are not literals */
	put(&b, "f.c");
	put(&b, "cat");
	put(&b, "key1");
	put(&b, NULL);
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	start(&b, TR2_REC_DATA);
	b.hdr.site = 9;
	b.hdr.interned = 0x3;
	b.hdr.flags = TR2_RECF_REF;
	put(&b, "key2");
	put(&b, "v");
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	assert_string_equal(dec.str[0], "f.c");
	assert_string_equal(dec.str[1], "cat");
	assert_string_equal(dec.str[2], "key2");
	assert_string_equal(dec.str[3], "v");

	/* THREAD_INFO (a new thread state on the eBPF side) and THREAD_GONE
	 * end the thread's copies. */
	start(&b, TR2_REC_THREAD_INFO);
	put(&b, "");
	put(&b, "comm");
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	expect_reject(&b, region_at_site(&b, 101, 1, NULL),
		      "record refers to call-site strings that were never sent");
	assert_int_equal(tr2_decode(b.buf, region_at_site(&b, 101, 0, "directory"), sites, &dec, &why), 0);
	start(&b, TR2_REC_THREAD_GONE);
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	expect_reject(&b, region_at_site(&b, 101, 1, NULL),
		      "record refers to call-site strings that were never sent");

	/* Interned bits beyond the kind's fixed strings, or without a site. */
	start(&b, TR2_REC_PRINTF);
	b.hdr.site = 3;
	b.hdr.interned = 0x4;
	put(&b, "f.c");
	put(&b, "hello");
	expect_reject(&b, finish(&b), "record has interned strings that are not its call site's");
	start(&b, TR2_REC_PRINTF);
	b.hdr.interned = 0x1;
	put(&b, "f.c");
	put(&b, "hello");
	expect_reject(&b, finish(&b), "record has interned strings that are not its call site's");
}

/* A TR2_REC_METRICS record: the header, then num[0] struct tr2_metric,
 * unaligned (the header's size need not be a multiple of 8). */
static size_t metrics_record(struct builder *b, const struct tr2_metric *m, unsigned n)
{
	start(b, TR2_REC_METRICS);
	b->hdr.line = 0;
	b->hdr.num[0] = n;
	memcpy(b->buf + b->len, m, n * sizeof(*m));
	b->len += n * sizeof(*m);
	return finish(b);
}

static const struct tr2_metric two_sums[2] = {
	{ .id = 0x401000, .recursion = 1, .defined = 1, .start_ns = 99, .intervals = 3,
	  .total_ns = 3000000, .min_ns = 500000, .max_ns = 1500000 },
	{ .id = 0x402000, .is_counter = 1, .defined = 1, .count = -7 },
};

static void metrics_decode(void **state)
{
	struct builder b;
	const char *why = NULL;
	size_t n = metrics_record(&b, two_sums, 2);

	assert_int_equal(n, sizeof(struct tr2_rec) + 2 * sizeof(struct tr2_metric));
	assert_int_equal(tr2_decode(b.buf, n, sites, &dec, &why), 0);
	assert_int_equal(dec.hdr.kind, TR2_REC_METRICS);
	assert_int_equal(dec.hdr.num[1], 0);
	assert_int_equal(dec.nstr, 0);
	assert_null(dec.vec[0]);
	assert_int_equal(dec.nmetrics, 2);
	assert_int_equal(dec.metrics[0].id, 0x401000);
	assert_int_equal(dec.metrics[0].is_counter, 0);
	assert_int_equal(dec.metrics[0].defined, 1);
	assert_int_equal(dec.metrics[0].recursion, 1);
	assert_int_equal(dec.metrics[0].start_ns, 99);
	assert_int_equal(dec.metrics[0].intervals, 3);
	assert_int_equal(dec.metrics[0].total_ns, 3000000);
	assert_int_equal(dec.metrics[0].min_ns, 500000);
	assert_int_equal(dec.metrics[0].max_ns, 1500000);
	assert_int_equal(dec.metrics[0].count, 0);
	assert_int_equal(dec.metrics[1].id, 0x402000);
	assert_int_equal(dec.metrics[1].is_counter, 1);
	assert_int_equal(dec.metrics[1].intervals, 0);
	assert_int_equal(dec.metrics[1].total_ns, 0);
	assert_true(dec.metrics[1].count == -7);
	assert_memory_equal(dec.metrics, two_sums, sizeof(two_sums));

	/* A thread that ended without thread_exit: num[1] = 1 comes through. */
	metrics_record(&b, two_sums, 1);
	b.hdr.num[1] = 1;
	n = finish(&b);
	assert_int_equal(tr2_decode(b.buf, n, sites, &dec, &why), 0);
	assert_int_equal(dec.hdr.num[1], 1);
	assert_int_equal(dec.nmetrics, 1);
	assert_memory_equal(&dec.metrics[0], &two_sums[0], sizeof(two_sums[0]));

	/* Another kind after it: no sums left over. */
	start(&b, TR2_REC_THREAD_GONE);
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	assert_int_equal(dec.nmetrics, 0);
}

static void bad_metrics_are_rejected(void **state)
{
	static const char reason[] = "timer and counter sums of the wrong size";
	struct tr2_metric many[TR2_THREAD_METRICS + 1];
	struct builder b;
	const char *why = NULL;
	size_t n;

	memset(many, 0, sizeof(many));
	for (unsigned i = 0; i <= TR2_THREAD_METRICS; i++)
		many[i].id = 0x401000 + i;

	/* num[0] = 0: none, though the thread ended. */
	expect_reject(&b, metrics_record(&b, two_sums, 0), reason);

	/* num[0] = 17: more than a thread has slots, the bytes there. */
	expect_reject(&b, metrics_record(&b, many, TR2_THREAD_METRICS + 1), reason);

	/* num[0] = 16 is the most. */
	n = metrics_record(&b, many, TR2_THREAD_METRICS);
	assert_int_equal(tr2_decode(b.buf, n, sites, &dec, &why), 0);
	assert_int_equal(dec.nmetrics, TR2_THREAD_METRICS);
	assert_int_equal(dec.metrics[TR2_THREAD_METRICS - 1].id, 0x401000 + TR2_THREAD_METRICS - 1);

	/* num[0] negative, or far out of range. */
	metrics_record(&b, two_sums, 2);
	b.hdr.num[0] = -1;
	expect_reject(&b, finish(&b), reason);
	metrics_record(&b, two_sums, 2);
	b.hdr.num[0] = INT64_MAX;
	expect_reject(&b, finish(&b), reason);

	/* One byte short, one byte over, for num[0] = 2 (the size word agrees). */
	metrics_record(&b, two_sums, 2);
	b.len--;
	expect_reject(&b, finish(&b), reason);
	metrics_record(&b, two_sums, 2);
	b.buf[b.len++] = 0;
	expect_reject(&b, finish(&b), reason);

	/* Sums for 1 in a record that claims 2. */
	metrics_record(&b, two_sums, 1);
	b.hdr.num[0] = 2;
	expect_reject(&b, finish(&b), reason);

	/* A header's size that disagrees with the bytes is caught first. */
	n = metrics_record(&b, two_sums, 2);
	expect_reject(&b, n - 1, "record size does not match its header");

	/* The kind has no strings. */
	metrics_record(&b, two_sums, 2);
	put(&b, "f.c");
	expect_reject(&b, finish(&b), "record has the wrong number of strings for its kind");
}

static void proc_gone_decodes(void **state)
{
	struct builder b;
	const char *why = NULL;

	start(&b, TR2_REC_PROC_GONE);
	b.hdr.tid = b.hdr.pid;
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	assert_int_equal(dec.hdr.kind, TR2_REC_PROC_GONE);
	assert_int_equal(dec.hdr.pid, 100);
	assert_int_equal(dec.hdr.tid, 100);
	assert_int_equal(dec.hdr.ts_ns, 123456789);
	assert_int_equal(dec.nstr, 0);
	assert_int_equal(dec.nmetrics, 0);

	/* No strings, no trailing bytes. */
	start(&b, TR2_REC_PROC_GONE);
	put(&b, "x");
	expect_reject(&b, finish(&b), "record has the wrong number of strings for its kind");
	start(&b, TR2_REC_PROC_GONE);
	b.buf[b.len++] = 0;
	expect_reject(&b, finish(&b), "bytes left over after the record's strings");
}

/* EXECVE and NEW_OBJECT: num[0] stopped, num[1], num[2] the unknown
 * object's dev and inode, carried through as they are. */
static void execve_carries_object(void **state)
{
	static const unsigned kinds[] = { TR2_REC_EXECVE, TR2_REC_NEW_OBJECT };
	struct builder b;
	const char *why = NULL;

	for (unsigned i = 0; i < 2; i++) {
		start(&b, kinds[i]);
		b.hdr.num[0] = 1;
		b.hdr.num[1] = (int64_t)(8u << 20 | 3);
		b.hdr.num[2] = (int64_t)0xfedcba9876543210ull;
		assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
		assert_int_equal(dec.hdr.kind, kinds[i]);
		assert_int_equal(dec.hdr.num[0], 1);
		assert_int_equal(dec.hdr.num[1], 8u << 20 | 3);
		assert_true((uint64_t)dec.hdr.num[2] == 0xfedcba9876543210ull);
		assert_int_equal(dec.nstr, 0);
		assert_int_equal(dec.nmetrics, 0);
	}
	/* Not stopped: all zero. */
	start(&b, TR2_REC_EXECVE);
	assert_int_equal(tr2_decode(b.buf, finish(&b), sites, &dec, &why), 0);
	assert_int_equal(dec.hdr.num[0], 0);
	assert_int_equal(dec.hdr.num[1], 0);
	assert_int_equal(dec.hdr.num[2], 0);
}

static int setup(void **state)
{
	sites = tr2_sites_new();
	return 0;
}

static int teardown(void **state)
{
	tr2_sites_free(sites);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(region_enter_decodes),
		cmocka_unit_test(vector_and_marks),
		cmocka_unit_test(cut_record_fills_missing_strings),
		cmocka_unit_test(bad_records_are_rejected),
		cmocka_unit_test(interned_strings_come_back),
		cmocka_unit_test(metrics_decode),
		cmocka_unit_test(bad_metrics_are_rejected),
		cmocka_unit_test(proc_gone_decodes),
		cmocka_unit_test(execve_carries_object),
	};

	return cmocka_run_group_tests_name("decode", tests, setup, teardown);
}
