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
	};

	return cmocka_run_group_tests_name("decode", tests, setup, teardown);
}
