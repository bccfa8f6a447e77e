/* Unit tests of the ring-buffer record decoder (loader/tr2_decode.c): calls
 * written by the runtime's encoder (usdt/tr2_wire.c) into batches as
 * usdt/tr2_batch.c and the eBPF side make them (tr2_rec_build.h) come back
 * field for field; malformed records and calls are refused with their
 * reasons. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tr2_decode.h"
#include "tr2_rec_build.h"

#define PID 100
#define TID 101
#define T0 1000000000000ull   /* CLOCK_MONOTONIC, ns: a machine up for 1000 s */
#define FILE_C "builtin/status.c"
#define P(kind) TRACE2__P_##kind

/* The traced thread (the runtime's side) and what it sent, in order. */
static struct rb_thread th;
static struct {
	struct tr2_call c;
	int32_t depth;
} sent[256];
static int nsent, nread;
static uint64_t now;

/* The reader (tr2-bpf's side): the record taken, the next call's offset,
 * the thread's literals. */
static unsigned char rec[TR2_REC_MAX];
static struct tr2_rec hdr;
static const unsigned char *data;
static size_t len, off;
static struct tr2_literals lits;
static struct tr2_decoded_call dec;

static int setup(void **state)
{
	rb_thread_init(&th, PID, TID);
	nsent = nread = 0;
	now = T0;
	memset(&lits, 0, sizeof(lits));
	return 0;
}

static int teardown(void **state)
{
	tr2_literals_clear(&lits);
	return 0;
}

/* The thread makes call c (its pid, tid and time filled in here). */
static void put(struct tr2_call c)
{
	c.pid = PID;
	c.tid = TID;
	c.ts_ns = now += 1000;
	sent[nsent].c = c;
	sent[nsent++].depth = th.depth;
	rb_call(&th, &c);
}

/* The record of `size` bytes in rec, as tr2-bpf takes it: checked, then
 * its calls read from the start. */
static void take(size_t size)
{
	const char *why = NULL;

	assert_int_equal(tr2_decode_rec(rec, size, &hdr, &why), 0);
	assert_null(why);
	assert_int_equal(hdr.size, size);
	data = rec + sizeof(hdr);
	len = size - sizeof(hdr);
	off = 0;
}

static void assert_str(const char *got, const char *want)
{
	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
}

/* The decoded call is w, made at region depth `depth`: every field. */
static void assert_call(const struct tr2_call *w, int32_t depth)
{
	const struct tr2_call *c = &dec.call;
	int i;

	assert_int_equal(c->probe, w->probe);
	assert_int_equal(c->pid, w->pid);
	assert_int_equal(c->tid, w->tid);
	assert_int_equal(c->ts_ns, w->ts_ns);
	assert_str(c->file, w->file);
	assert_int_equal(c->line, w->line);
	assert_int_equal(c->repo_id, w->repo_id);
	assert_int_equal(c->id, w->id);
	assert_int_equal(c->code, w->code);
	assert_int_equal(c->pid_arg, w->pid_arg);
	assert_int_equal(c->use_shell, w->use_shell);
	assert_int_equal(c->per_thread, w->per_thread);
	for (i = 0; i < 4; i++)
		assert_str(c->s[i], w->s[i]);
	/* a NULL vector comes back NULL (TR2_WIRE_NOVEC), an empty one empty */
	if (!w->vec) {
		assert_null(c->vec);
	} else {
		assert_non_null(c->vec);
		for (i = 0; w->vec[i]; i++)
			assert_str(c->vec[i], w->vec[i]);
		assert_null(c->vec[i]);
	}
	assert_true(c->value == w->value);
	assert_true(c->metric == w->metric);
	assert_int_equal(c->module, 0);     /* the runtime's own: not sent */
	assert_int_equal(c->literals, 0);
	assert_int_equal(dec.depth, depth);
}

/* Reads the next call: it is the next one sent. */
static void read_next(void)
{
	const char *why = NULL;
	uint64_t ts = 0;

	assert_int_equal(tr2_batch_peek(data, len, off, &ts), 1);
	assert_int_equal(ts, sent[nread].c.ts_ns);
	assert_int_equal(tr2_batch_next(&hdr, data, len, &off, &lits, &dec, &why), 1);
	assert_null(why);
	assert_call(&sent[nread].c, sent[nread].depth);
	nread++;
}

static void expect_end(void)
{
	const char *why = NULL;
	uint64_t ts = 0;

	assert_int_equal(tr2_batch_peek(data, len, off, &ts), 0);
	assert_int_equal(tr2_batch_next(&hdr, data, len, &off, &lits, &dec, &why), 0);
	assert_int_equal(off, len);
}

/* Reads every call sent and not read yet, then the record's end. */
static void read_rest(void)
{
	while (nread < nsent)
		read_next();
	expect_end();
}

/* The next call is refused as naming a literal the reader does not hold:
 * lost, and skipped. */
static void expect_lost(void)
{
	const char *why = NULL;

	assert_int_equal(tr2_batch_next(&hdr, data, len, &off, &lits, &dec, &why), -2);
	assert_string_equal(why, "a call that names a literal string of lost calls");
	nread++;
}

/* ---- round trips ---- */

static const char *const argv_git[] = { "git", "-C", "/src/repo", "status", "--short", NULL };
static const char *const ancestry[] = { "bash", "sshd", "systemd", NULL };
static const char *const alias_argv[] = { "status", "-sb", NULL };
static const char *const hook_argv[] = { ".git/hooks/pre-commit", NULL };
static const char *const exec_argv[] = { "git-foo", "--bar", "", NULL };

/* One call of each probe, with every field the probe has, as
 * usdt/tr2_probe.c fills them (literal flags included). */
static void every_kind_round_trips(void **state)
{
	const struct tr2_call calls[] = {
		{ .probe = P(version), .file = FILE_C, .line = 10, .s = { "2.45.0", "3" } },
		{ .probe = P(start), .file = FILE_C, .line = 11, .vec = argv_git },
		{ .probe = P(cmd_path), .file = FILE_C, .line = 12, .s = { "/usr/bin/git" } },
		{ .probe = P(cmd_ancestry), .file = FILE_C, .line = 13, .vec = ancestry },
		{ .probe = P(cmd_name), .file = FILE_C, .line = 14, .s = { "status" } },
		{ .probe = P(cmd_mode), .file = FILE_C, .line = 15, .s = { "branch" } },
		{ .probe = P(alias), .file = FILE_C, .line = 16, .s = { "st" }, .vec = alias_argv },
		{ .probe = P(def_param), .file = FILE_C, .line = 17, .s = { "core.editor", "vim", "global" } },
		{ .probe = P(def_repo), .file = FILE_C, .line = 18, .repo_id = 1, .s = { "/src/repo" } },
		{ .probe = P(region_enter), .file = FILE_C, .line = 19, .repo_id = 1,
		  .s = { "index", "do_read_index", ".git/index" }, .literals = 2 | 4 },
		{ .probe = P(data), .file = FILE_C, .line = 20, .repo_id = 1, .s = { "index", "read/cache_nr" },
		  .value = INT64_MIN, .literals = 2 | 4 | 8 },
		{ .probe = P(data), .file = FILE_C, .line = 21, .s = { "index", "path", "a/b" },
		  .value = INT64_MAX, .literals = 2 | 4 },
		{ .probe = P(data_json), .file = FILE_C, .line = 22, .repo_id = 1,
		  .s = { "fsmonitor", "stats", "{\"n\":1}" }, .literals = 2 | 4 | 8 },
		{ .probe = P(region_leave), .file = FILE_C, .line = 23, .repo_id = 1,
		  .s = { "index", "do_read_index", ".git/index" }, .literals = 2 | 4 },
		{ .probe = P(child_start), .file = FILE_C, .line = 24, .id = 3, .use_shell = 1,
		  .s = { "hook", "pre-commit", "/src/repo" }, .vec = hook_argv },
		{ .probe = P(child_ready), .file = FILE_C, .line = 25, .id = 3, .pid_arg = 4300, .s = { "ready" } },
		{ .probe = P(child_exit), .file = FILE_C, .line = 26, .id = 3, .pid_arg = 4300, .code = 1 },
		{ .probe = P(thread_start), .file = FILE_C, .line = 27, .id = 2, .s = { "preload" } },
		{ .probe = P(timer_start), .file = FILE_C, .line = 28, .metric = 0xffff800012345678ull,
		  .per_thread = 1, .s = { "test", "timer1" }, .literals = 2 | 4 },
		{ .probe = P(timer_stop), .file = FILE_C, .line = 29, .metric = 0xffff800012345678ull,
		  .per_thread = 1, .s = { "test", "timer1" }, .literals = 2 | 4 },
		{ .probe = P(counter_add), .file = FILE_C, .line = 30, .metric = 0x55d0c0de1000ull,
		  .s = { "test", "counter1" }, .value = -7, .literals = 2 | 4 },
		{ .probe = P(thread_exit), .file = FILE_C, .line = 31 },
		{ .probe = P(printf), .file = FILE_C, .line = 32, .s = { "hello 42" } },
		{ .probe = P(error), .file = FILE_C, .line = 33, .s = { "fatal: not a repo", "fatal: %s" } },
		{ .probe = P(exec), .file = FILE_C, .line = 34, .id = 2, .s = { "/usr/bin/git-foo" },
		  .vec = exec_argv },
		{ .probe = P(exec_result), .file = FILE_C, .line = 35, .id = 2, .code = -1 },
		{ .probe = P(signal), .file = FILE_C, .line = -36, .code = 13 },
		{ .probe = P(exit), .file = FILE_C, .line = 37, .code = 128 },
		{ .probe = P(atexit), .file = FILE_C, .line = 38, .code = 2147483647 },
		{ .probe = P(cmd_name), .file = FILE_C, .line = 39, .s = { "status", "git/status" } },
	};
	int n = sizeof(calls) / sizeof(calls[0]), seen[TRACE2__NPROBES] = { 0 }, events = 0;

	for (int i = 0; i < n; i++) {
		put(calls[i]);
		seen[calls[i].probe] = 1;
		events += calls[i].probe < P(timer_start);
	}
	for (int p = 0; p < TRACE2__NPROBES; p++)
		assert_true(seen[p]);
	take(rb_batch(&th, rec, now + 500));
	assert_int_equal(hdr.kind, TR2_REC_BATCH);
	assert_int_equal(hdr.pid, PID);
	assert_int_equal(hdr.tid, TID);
	assert_int_equal(hdr.ts_ns, now + 500);
	assert_int_equal(hdr.num[0], events);   /* timer and counter calls are not counted */
	assert_int_equal(hdr.num[1], 0);
	assert_int_equal(hdr.num[2], 0);
	read_rest();
	assert_int_equal(sent[14].depth, 0);
	assert_int_equal(sent[10].depth, 1);   /* inside the region */
}

/* NULL strings stay NULL, empty ones empty; trailing NULLs are not sent. */
static void null_and_empty_strings(void **state)
{
	static const char *const empty_argv[] = { NULL };
	static const char *const one_empty[] = { "", NULL };

	put((struct tr2_call){ .probe = P(region_enter), .line = 1, .literals = 2 | 4 | 8 });
	assert_int_equal(th.enc.nstr, 0);
	assert_int_equal(th.enc.word[0], TR2_STR_NULL);
	put((struct tr2_call){ .probe = P(def_param), .line = 2, .s = { NULL, "", "scope" } });
	assert_int_equal(th.enc.nstr, 3);
	assert_int_equal(th.enc.word[1], TR2_STR_NULL);
	assert_int_equal(th.enc.word[2], 0);
	put((struct tr2_call){ .probe = P(data), .file = "", .line = 3, .s = { "", NULL, NULL },
			       .literals = 2 | 4 | 8 });
	put((struct tr2_call){ .probe = P(start), .line = 4, .vec = empty_argv });
	put((struct tr2_call){ .probe = P(start), .line = 5, .vec = one_empty });
	put((struct tr2_call){ .probe = P(cmd_ancestry), .line = 6 });
	put((struct tr2_call){ .probe = P(region_leave), .line = 7, .literals = 2 | 4 | 8 });
	take(rb_batch(&th, rec, now));
	read_rest();
	for (int i = 0; i < TR2_INTERNED; i++)   /* "" was a literal twice */
		assert_true(!lits.str[i] || !strcmp(lits.str[i], ""));
}

/* The word of the string at index i (the file, s[], the vector) of the
 * last call the thread wrote: a literal's definition or name. */
static int word_kind(int i)
{
	return th.enc.word[i] & TR2_STR_REF;
}

/* Literals are defined at their first use in an epoch and named by id
 * after that, within a batch and across the copies of one epoch. */
static void literals_named_by_id_in_an_epoch(void **state)
{
	struct tr2_call enter = { .probe = P(region_enter), .file = FILE_C, .line = 40, .repo_id = 1,
				  .s = { "index", "refresh" }, .literals = 2 | 4 };
	uint32_t first_size, first_len;
	uint8_t file_id, cat_id;

	enter.s[2] = "msg 1";   /* not a literal */
	put(enter);
	assert_int_equal(word_kind(0), TR2_STR_DEF);
	assert_int_equal(word_kind(1), TR2_STR_DEF);
	assert_int_equal(word_kind(2), TR2_STR_DEF);
	assert_int_equal(th.enc.word[3], 5);
	first_size = th.enc.size;
	file_id = th.enc.id[0];
	cat_id = th.enc.id[1];
	enter.s[2] = "msg 2";
	put(enter);
	assert_int_equal(th.enc.word[0], TR2_STR_REF | file_id);
	assert_int_equal(th.enc.word[1], TR2_STR_REF | cat_id);
	assert_int_equal(word_kind(2), TR2_STR_REF);
	assert_true(th.enc.size < first_size);
	first_len = (uint32_t)th.len;
	take(rb_copy(&th, rec, now, 0));   /* a copy at a tick: the epoch goes on */
	read_rest();
	assert_string_equal(lits.str[file_id], FILE_C);
	assert_string_equal(lits.str[cat_id], "index");

	/* The next copy names them by id still. */
	put((struct tr2_call){ .probe = P(region_leave), .file = FILE_C, .line = 41, .repo_id = 1,
			       .s = { "index", "refresh" }, .literals = 2 | 4 });
	assert_int_equal(th.enc.word[0], TR2_STR_REF | file_id);
	assert_int_equal(th.enc.word[1], TR2_STR_REF | cat_id);
	take(rb_copy(&th, rec, now, 0));
	assert_int_equal(hdr.num[2], first_len);   /* where the last copy ended */
	read_rest();
}

/* After a batch an epoch starts: its first call is flagged, literals are
 * defined again, and the reader forgets the old ones. */
static void epoch_starts_again(void **state)
{
	struct tr2_call enter = { .probe = P(region_enter), .file = FILE_C, .line = 50,
				  .s = { "old", "label" }, .literals = 2 | 4 };
	uint32_t first_size;
	uint8_t old_id;

	put(enter);
	old_id = th.enc.id[1];
	take(rb_batch(&th, rec, now));
	assert_true(data[offsetof(struct tr2_wire, flags)] & TR2_WIRE_EPOCH);
	read_rest();
	assert_string_equal(lits.str[old_id], "old");

	enter.s[0] = "new";
	put(enter);
	assert_int_equal(word_kind(0), TR2_STR_DEF);   /* the file again */
	assert_int_equal(word_kind(1), TR2_STR_DEF);
	first_size = th.enc.size;
	put(enter);
	take(rb_batch(&th, rec, now));
	assert_true(data[offsetof(struct tr2_wire, flags)] & TR2_WIRE_EPOCH);
	assert_false(data[first_size + offsetof(struct tr2_wire, flags)] & TR2_WIRE_EPOCH);
	read_next();
	if (old_id != th.enc.id[1] && old_id != th.enc.id[0] && old_id != th.enc.id[2])
		assert_null(lits.str[old_id]);
	read_rest();
}

/* Two literals in one slot: the second takes the first's id within the
 * call that names the first by it; the first is read as it was. */
static void literal_takes_anothers_id_in_one_call(void **state)
{
	static char pool[1024][24];
	struct tr2_interned fresh = { .epoch = 1 };
	struct tr2_wire_enc e;
	const char *a = pool[0], *b = NULL;
	uint8_t id;

	for (int i = 0; i < 1024; i++)
		snprintf(pool[i], sizeof(pool[i]), "literal-%d", i);
	for (int i = 1; i < 1024 && !b; i++) {
		struct tr2_call probe = { .probe = P(region_enter), .s = { a, pool[i] }, .literals = 2 | 4 };

		memset(fresh.slot, 0, sizeof(fresh.slot));
		tr2_wire_measure(&probe, &fresh, &e);
		if (e.id[1] == e.id[2])
			b = pool[i];
	}
	assert_non_null(b);

	put((struct tr2_call){ .probe = P(region_enter), .line = 60, .s = { a }, .literals = 2 });
	assert_int_equal(word_kind(1), TR2_STR_DEF);
	id = th.enc.id[1];
	put((struct tr2_call){ .probe = P(region_enter), .line = 61, .s = { a, b }, .literals = 2 | 4 });
	assert_int_equal(th.enc.word[1], TR2_STR_REF | id);
	assert_int_equal(word_kind(2), TR2_STR_DEF);
	assert_int_equal(th.enc.id[2], id);
	put((struct tr2_call){ .probe = P(region_leave), .line = 62, .s = { a, b }, .literals = 2 | 4 });
	assert_int_equal(word_kind(1), TR2_STR_DEF);   /* b holds the slot now */
	assert_int_equal(word_kind(2), TR2_STR_DEF);
	put((struct tr2_call){ .probe = P(region_leave), .line = 63, .s = { b }, .literals = 2 });
	assert_int_equal(th.enc.word[1], TR2_STR_REF | id);
	take(rb_batch(&th, rec, now));
	read_rest();
	assert_string_equal(lits.str[id], b);
}

/* `n` bytes of c, NUL-terminated, in a static buffer (one at a time). */
static const char *repeat(char c, size_t n)
{
	static char buf[2][8192];
	static int which;
	char *s = buf[which ^= 1];

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* `n` bytes of c, then TR2_TRUNC_MARK. */
static const char *cut(char c, size_t n)
{
	static char buf[8192];

	memset(buf, c, n);
	strcpy(buf + n, TR2_TRUNC_MARK);
	return buf;
}

static void expect_s0(const char *want)
{
	const char *why = NULL;

	assert_int_equal(tr2_batch_next(&hdr, data, len, &off, &lits, &dec, &why), 1);
	assert_string_equal(dec.call.s[0], want);
	nread++;
}

/* Strings of 4095 bytes or more are cut there and marked; a literal that
 * long is sent cut at every call, never defined. */
static void long_strings_cut_at_4095(void **state)
{
	char *lit = strdup(repeat('L', 5000));

	put((struct tr2_call){ .probe = P(printf), .s = { repeat('a', 5000) } });
	assert_int_equal(th.enc.word[1], TR2_STR_TRUNC | (TR2_STR_MAX - 1));
	put((struct tr2_call){ .probe = P(printf), .s = { repeat('b', TR2_STR_MAX - 1) } });
	assert_int_equal(th.enc.word[1], TR2_STR_TRUNC | (TR2_STR_MAX - 1));
	put((struct tr2_call){ .probe = P(printf), .s = { repeat('c', TR2_STR_MAX - 2) } });
	assert_int_equal(th.enc.word[1], TR2_STR_MAX - 2);
	take(rb_copy(&th, rec, now, 0));
	expect_s0(cut('a', TR2_STR_MAX - 1));
	expect_s0(cut('b', TR2_STR_MAX - 1));
	expect_s0(repeat('c', TR2_STR_MAX - 2));
	expect_end();

	put((struct tr2_call){ .probe = P(region_enter), .s = { lit }, .literals = 2 });
	assert_int_equal(th.enc.word[1], TR2_STR_TRUNC | (TR2_STR_MAX - 1));
	put((struct tr2_call){ .probe = P(region_leave), .s = { lit }, .literals = 2 });
	assert_int_equal(th.enc.word[1], TR2_STR_TRUNC | (TR2_STR_MAX - 1));
	take(rb_copy(&th, rec, now, 0));
	expect_s0(cut('L', TR2_STR_MAX - 1));
	expect_s0(cut('L', TR2_STR_MAX - 1));
	expect_end();
	free(lit);
}

/* A call too big for a thread's buffer has its last strings cut to fit. */
static void strings_cut_to_fit_the_buffer(void **state)
{
	char *arg[5];
	const char *argv[6];
	const char *why = NULL;

	for (int i = 0; i < 5; i++)
		argv[i] = arg[i] = strdup(repeat((char)('p' + i), 4000));
	argv[5] = NULL;
	put((struct tr2_call){ .probe = P(start), .file = FILE_C, .vec = argv });
	/* 24 bytes of header and 6 words: 36; the budget is 16384 - 8 - 36 =
	 * 16340; the file (DEF: its id and 16 bytes) leaves 16323, four
	 * arguments 323: the fifth is cut to 323 bytes */
	assert_int_equal(th.enc.word[0], TR2_STR_DEF | strlen(FILE_C));
	for (int i = 1; i < 5; i++)
		assert_int_equal(th.enc.word[i], 4000);
	assert_int_equal(th.enc.word[5], TR2_STR_TRUNC | 323);
	assert_int_equal(th.enc.size, 16376);
	take(rb_batch(&th, rec, now));
	assert_int_equal(tr2_batch_next(&hdr, data, len, &off, &lits, &dec, &why), 1);
	assert_string_equal(dec.call.file, FILE_C);
	for (int i = 0; i < 4; i++)
		assert_string_equal(dec.call.vec[i], argv[i]);
	assert_string_equal(dec.call.vec[4], cut('t', 323));
	assert_null(dec.call.vec[5]);
	expect_end();
	for (int i = 0; i < 5; i++)
		free(arg[i]);
}

/* Vectors longer than TR2_ARGV_MAX are cut there, flagged. */
static void vectors_cut_at_argv_max(void **state)
{
	static char args[TR2_ARGV_MAX + 6][16];
	const char *argv[TR2_ARGV_MAX + 7];
	const char *why = NULL;
	int i;

	for (i = 0; i < TR2_ARGV_MAX + 6; i++) {
		snprintf(args[i], sizeof(args[i]), "a%d", i);
		argv[i] = args[i];
	}
	argv[i] = NULL;
	put((struct tr2_call){ .probe = P(exec), .id = 1, .s = { "git-x" }, .vec = argv });
	assert_int_equal(th.enc.nvec, TR2_ARGV_MAX);
	take(rb_batch(&th, rec, now));
	assert_int_equal(data[offsetof(struct tr2_wire, nvec)], TR2_ARGV_MAX);
	assert_true(data[offsetof(struct tr2_wire, flags)] & TR2_WIRE_CUT);
	assert_int_equal(tr2_batch_next(&hdr, data, len, &off, &lits, &dec, &why), 1);
	assert_string_equal(dec.call.s[0], "git-x");
	for (i = 0; i < TR2_ARGV_MAX; i++)
		assert_string_equal(dec.call.vec[i], args[i]);
	assert_null(dec.call.vec[TR2_ARGV_MAX]);
	expect_end();
}

/* Padding (where a call would have wrapped around the buffer's end) is
 * skipped by tr2_batch_next and tr2_batch_peek. */
static void padding_is_skipped(void **state)
{
	uint64_t ts;

	rb_pad(&th, 16);
	put((struct tr2_call){ .probe = P(cmd_name), .file = FILE_C, .line = 70, .s = { "fetch" } });
	rb_pad(&th, 40);
	rb_pad(&th, 4);
	put((struct tr2_call){ .probe = P(exit), .file = FILE_C, .line = 71 });
	rb_pad(&th, 8);
	take(rb_batch(&th, rec, now));
	assert_int_equal(tr2_batch_peek(data, len, 0, &ts), 1);
	assert_int_equal(ts, sent[0].c.ts_ns);
	read_rest();

	/* padding alone */
	rb_pad(&th, 24);
	take(rb_copy(&th, rec, now, 0));
	expect_end();
}

/* ---- refusals ---- */

static void expect_bad_rec(const void *bytes, size_t size, const char *reason)
{
	struct tr2_rec h;
	const char *why = NULL;

	assert_int_equal(tr2_decode_rec(bytes, size, &h, &why), -1);
	assert_string_equal(why, reason);
}

/* A record of kind `kind` with header size `size` in rec, `size` bytes. */
static size_t make_rec(unsigned kind, size_t size)
{
	struct tr2_rec h = { .size = (uint16_t)size, .kind = (uint8_t)kind, .pid = PID, .tid = TID,
			     .thread_id = 3, .ts_ns = T0, .num = { 1, 2, 3 } };

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	return size;
}

static void set_num(int i, int64_t v)
{
	memcpy(rec + offsetof(struct tr2_rec, num) + 8 * i, &v, 8);
}

static void bad_records_are_refused(void **state)
{
	const size_t hsz = sizeof(struct tr2_rec), tisz = sizeof(struct tr2_rec_thread_info);
	struct tr2_rec h;
	const char *why = NULL;
	uint64_t ts;

	/* every kind at its size passes, its header copied whole */
	for (unsigned k = 0; k < TR2_REC__COUNT; k++) {
		size_t n = make_rec(k, k == TR2_REC_THREAD_INFO ? tisz : k == TR2_REC_BATCH ? hsz + 64 : hsz);

		assert_int_equal(tr2_decode_rec(rec, n, &h, &why), 0);
		assert_int_equal(memcmp(&h, rec, hsz), 0);
	}
	assert_null(why);

	make_rec(TR2_REC_FORK, hsz);
	expect_bad_rec(rec, 0, "record shorter than its header");
	expect_bad_rec(rec, hsz - 1, "record shorter than its header");
	expect_bad_rec(rec, hsz + 8, "record size does not match its header");
	make_rec(TR2_REC_BATCH, hsz + 100);
	expect_bad_rec(rec, hsz + 96, "record size does not match its header");
	make_rec(TR2_REC_BATCH, hsz);
	expect_bad_rec(rec, hsz + 1, "record size does not match its header");

	expect_bad_rec(rec, make_rec(TR2_REC__COUNT, hsz), "unknown record kind");
	expect_bad_rec(rec, make_rec(0xff, hsz), "unknown record kind");

	make_rec(TR2_REC_PROC_GONE, hsz);
	ts = TR2_TS_MAX;
	memcpy(rec + offsetof(struct tr2_rec, ts_ns), &ts, 8);
	expect_bad_rec(rec, hsz, "record time out of range");
	ts = UINT64_MAX;
	memcpy(rec + offsetof(struct tr2_rec, ts_ns), &ts, 8);
	expect_bad_rec(rec, hsz, "record time out of range");
	ts = TR2_TS_MAX - 1;
	memcpy(rec + offsetof(struct tr2_rec, ts_ns), &ts, 8);
	assert_int_equal(tr2_decode_rec(rec, hsz, &h, &why), 0);

	expect_bad_rec(rec, make_rec(TR2_REC_THREAD_INFO, hsz), "record size wrong for its kind");
	expect_bad_rec(rec, make_rec(TR2_REC_THREAD_INFO, tisz - 1), "record size wrong for its kind");
	expect_bad_rec(rec, make_rec(TR2_REC_THREAD_INFO, tisz + 8), "record size wrong for its kind");
	for (unsigned k = TR2_REC_FORK; k < TR2_REC__COUNT; k++)
		expect_bad_rec(rec, make_rec(k, hsz + 8), "record size wrong for its kind");

	make_rec(TR2_REC_BATCH, hsz);
	set_num(0, -1);
	expect_bad_rec(rec, hsz, "batch counts out of range");
	set_num(0, TR2_TBUF_DATA / 8 + 1);
	expect_bad_rec(rec, hsz, "batch counts out of range");
	set_num(0, INT64_MIN);
	expect_bad_rec(rec, hsz, "batch counts out of range");
	set_num(0, TR2_TBUF_DATA / 8);
	set_num(1, -1);
	expect_bad_rec(rec, hsz, "batch counts out of range");
	set_num(1, INT64_MAX);
	set_num(2, INT64_MIN);   /* where it starts: any */
	assert_int_equal(tr2_decode_rec(rec, hsz, &h, &why), 0);
	assert_int_equal(h.num[0], TR2_TBUF_DATA / 8);
	assert_true(h.num[1] == INT64_MAX && h.num[2] == INT64_MIN);
}

/* A call written by hand, for what no encoder writes. */
struct raw {
	unsigned char b[8192];
	size_t len;
};

static void raw_start(struct raw *r, uint8_t probe, uint8_t nums, uint8_t nstr, uint8_t nvec, uint64_t ts)
{
	struct tr2_wire w = { .probe = probe, .nums = nums, .nstr = nstr, .nvec = nvec, .line = 7, .ts_ns = ts };

	memset(r, 0, sizeof(*r));
	memcpy(r->b, &w, sizeof(w));
	r->len = sizeof(w);
}

static void raw_bytes(struct raw *r, const void *p, size_t n)
{
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

static void raw_word(struct raw *r, uint16_t word)
{
	raw_bytes(r, &word, 2);
}

/* Pads to 8 and sets the size: the call's bytes. */
static size_t raw_end(struct raw *r)
{
	uint16_t size;

	r->len = (r->len + 7) & ~(size_t)7;
	size = (uint16_t)r->len;
	memcpy(r->b, &size, 2);
	return r->len;
}

static void set_size(struct raw *r, uint16_t size)
{
	memcpy(r->b, &size, 2);
}

/* The `n` bytes at p make no call: tr2_batch_next says why. */
static void expect_bad_call(const void *p, size_t n, const char *reason)
{
	struct tr2_rec h = { .pid = PID, .tid = TID };
	const char *why = NULL;
	size_t o = 0;

	assert_int_equal(tr2_batch_next(&h, p, n, &o, &lits, &dec, &why), -1);
	assert_string_equal(why, reason);
}

static void bad_calls_are_refused(void **state)
{
	static const char *const parse = "a call that does not parse", *const range = "call size out of range";
	struct tr2_rec h = { .pid = PID, .tid = TID };
	const char *why = NULL;
	size_t o = 0;
	struct raw r;
	uint64_t ts;
	int64_t num = 5;
	size_t n;

	lits.whole = 1;
	raw_start(&r, P(printf), 0, 1, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, 5);
	raw_bytes(&r, "hello", 5);
	n = raw_end(&r);
	assert_int_equal(tr2_batch_peek(r.b, n, 0, &ts), 1);

	/* sizes */
	set_size(&r, 0);
	expect_bad_call(r.b, n, range);
	assert_int_equal(tr2_batch_peek(r.b, n, 0, &ts), -1);
	set_size(&r, 3);
	expect_bad_call(r.b, n, range);
	set_size(&r, (uint16_t)(n + 8));
	expect_bad_call(r.b, n, range);
	assert_int_equal(tr2_batch_peek(r.b, n, 0, &ts), -1);
	set_size(&r, 16);
	expect_bad_call(r.b, n, parse);
	assert_int_equal(tr2_batch_peek(r.b, n, 0, &ts), -1);
	set_size(&r, 28);
	expect_bad_call(r.b, n, parse);
	set_size(&r, (uint16_t)n);
	expect_bad_call(r.b, 3, parse);   /* 1 to 3 bytes left */
	assert_int_equal(tr2_batch_peek(r.b, 3, 0, &ts), -1);
	expect_bad_call(r.b, n - 8, range);
	r.b[2] = TR2_WIRE_PAD;
	set_size(&r, 2);
	expect_bad_call(r.b, n, range);

	/* header fields */
	raw_start(&r, TRACE2__NPROBES, 0, 0, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	n = raw_end(&r);
	expect_bad_call(r.b, n, parse);
	r.b[2] = 0xfe;
	expect_bad_call(r.b, n, parse);
	r.b[2] = P(printf);
	r.b[offsetof(struct tr2_wire, nstr)] = 5;
	expect_bad_call(r.b, n, parse);
	r.b[offsetof(struct tr2_wire, nstr)] = 0;
	r.b[offsetof(struct tr2_wire, nvec)] = TR2_ARGV_MAX + 1;
	expect_bad_call(r.b, n, parse);
	r.b[offsetof(struct tr2_wire, nvec)] = 0;
	ts = TR2_TS_MAX;
	memcpy(r.b + offsetof(struct tr2_wire, ts_ns), &ts, 8);
	expect_bad_call(r.b, n, parse);
	assert_int_equal(tr2_batch_peek(r.b, n, 0, &ts), -1);
	ts = TR2_TS_MAX - 1;
	memcpy(r.b + offsetof(struct tr2_wire, ts_ns), &ts, 8);
	assert_int_equal(tr2_batch_peek(r.b, n, 0, &ts), 1);
	assert_int_equal(ts, TR2_TS_MAX - 1);

	/* numbers past the call */
	raw_start(&r, P(exit), TR2_WN_CODE | TR2_WN_VALUE, 0, 0, T0);
	raw_bytes(&r, &num, 8);
	n = raw_end(&r);
	expect_bad_call(r.b, n, parse);

	/* strings past the call: a word, a length, a definition's id */
	raw_start(&r, P(def_param), 0, 4, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_NULL);   /* 32 bytes: no room for the fifth word */
	n = raw_end(&r);
	assert_int_equal(n, 32);
	expect_bad_call(r.b, n, parse);
	raw_start(&r, P(printf), 0, 1, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, 50);
	raw_bytes(&r, "short", 5);
	n = raw_end(&r);
	expect_bad_call(r.b, n, parse);
	raw_start(&r, P(def_param), 0, 3, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_DEF | 1);   /* the call's last two bytes: no id */
	n = raw_end(&r);
	assert_int_equal(n, 32);
	expect_bad_call(r.b, n, parse);

	/* ids out of range */
	raw_start(&r, P(printf), 0, 1, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_REF | TR2_INTERNED);
	n = raw_end(&r);
	expect_bad_call(r.b, n, parse);
	raw_start(&r, P(printf), 0, 1, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_REF | 0x3ffe);
	n = raw_end(&r);
	expect_bad_call(r.b, n, parse);
	raw_start(&r, P(printf), 0, 1, 0, T0);
	raw_word(&r, TR2_STR_NULL);
	raw_word(&r, TR2_STR_DEF | 2);
	raw_bytes(&r, "\100hi", 3);   /* id 64 */
	n = raw_end(&r);
	expect_bad_call(r.b, n, parse);
	r.b[28] = TR2_INTERNED - 1;
	assert_int_equal(tr2_batch_next(&h, r.b, n, &o, &lits, &dec, &why), 1);
	assert_int_equal(o, n);
	assert_string_equal(dec.call.s[0], "hi");
	assert_string_equal(lits.str[TR2_INTERNED - 1], "hi");
}

/* A literal the runtime would not define (4000 bytes: it defines none of
 * 4095 or more, and names literals in 4 strings at most) named in more
 * strings than a decoded call has room for: the call does not parse. */
static void long_literal_named_too_often(void **state)
{
	struct tr2_rec h = { .pid = PID, .tid = TID };
	const char *why = NULL;
	struct raw r;
	size_t n, o = 0;

	raw_start(&r, P(printf), 0, 0, 0, T0);
	r.b[offsetof(struct tr2_wire, flags)] = TR2_WIRE_EPOCH;
	raw_word(&r, TR2_STR_DEF | 4000);
	raw_bytes(&r, "\7", 1);
	memset(r.b + r.len, 'L', 4000);
	r.len += 4000;
	n = raw_end(&r);
	assert_int_equal(tr2_batch_next(&h, r.b, n, &o, &lits, &dec, &why), 1);
	assert_int_equal(strlen(dec.call.file), 4000);

	/* 8 copies fit (the arena holds two buffers' worth of bytes) */
	raw_start(&r, P(start), 0, 0, 7, T0);
	for (int i = 0; i < 8; i++)
		raw_word(&r, TR2_STR_REF | 7);
	n = raw_end(&r);
	o = 0;
	assert_int_equal(tr2_batch_next(&h, r.b, n, &o, &lits, &dec, &why), 1);
	assert_int_equal(strlen(dec.call.vec[6]), 4000);
	assert_int_equal(dec.call.vec[6][3999], 'L');
	assert_null(dec.call.vec[7]);

	/* 9 do not */
	raw_start(&r, P(start), 0, 0, 8, T0);
	for (int i = 0; i < 9; i++)
		raw_word(&r, TR2_STR_REF | 7);
	n = raw_end(&r);
	expect_bad_call(r.b, n, "a call that does not parse");

	/* nor 69 */
	raw_start(&r, P(start), 0, 4, TR2_ARGV_MAX, T0);
	for (int i = 0; i < 5 + TR2_ARGV_MAX; i++)
		raw_word(&r, TR2_STR_REF | 7);
	n = raw_end(&r);
	expect_bad_call(r.b, n, "a call that does not parse");
}

/* A call naming a literal defined in calls the reader never saw (another
 * batch, lost) is lost; the calls after it are read, and its own
 * definitions count. */
static void ref_to_a_literal_not_held(void **state)
{
	char lost[TR2_REC_MAX];

	put((struct tr2_call){ .probe = P(version), .line = 80, .s = { "2.45.0" } });
	take(rb_copy(&th, rec, now, 0));
	read_rest();
	assert_int_equal(lits.whole, 1);

	/* this copy never reaches the reader */
	put((struct tr2_call){ .probe = P(region_enter), .file = FILE_C, .line = 81, .s = { "cat" },
			       .literals = 2 });
	rb_copy(&th, lost, now, 0);
	nread++;

	put((struct tr2_call){ .probe = P(region_leave), .file = FILE_C, .line = 82, .s = { "cat", "new" },
			       .literals = 2 | 4 });
	assert_int_equal(word_kind(0), TR2_STR_REF);
	assert_int_equal(word_kind(2), TR2_STR_DEF);
	put((struct tr2_call){ .probe = P(printf), .line = 83, .s = { "plain" } });
	put((struct tr2_call){ .probe = P(data), .line = 84, .s = { "new" }, .literals = 2 });
	assert_int_equal(word_kind(1), TR2_STR_REF);
	take(rb_copy(&th, rec, now, 0));
	expect_lost();
	read_rest();
}

/* After a gap (the session saw a batch of the thread go missing: whole =
 * 0), no id is trusted until the next epoch. */
static void ref_after_a_gap_waits_for_an_epoch(void **state)
{
	char lost[TR2_REC_MAX];
	uint64_t expected_from;
	uint8_t file_id;

	put((struct tr2_call){ .probe = P(cmd_name), .file = FILE_C, .line = 90, .s = { "fetch" } });
	take(rb_copy(&th, rec, now, 0));
	read_rest();
	expected_from = th.from;

	put((struct tr2_call){ .probe = P(cmd_mode), .file = FILE_C, .line = 91, .s = { "x" } });
	rb_copy(&th, lost, now, 0);
	nread++;

	put((struct tr2_call){ .probe = P(printf), .file = FILE_C, .line = 92, .s = { "a" } });
	assert_int_equal(word_kind(0), TR2_STR_REF);   /* still held by the reader: not trusted */
	file_id = th.enc.id[0];
	put((struct tr2_call){ .probe = P(printf), .line = 93, .s = { "no literal" } });
	put((struct tr2_call){ .probe = P(region_enter), .line = 94, .s = { "cat" }, .literals = 2 });
	put((struct tr2_call){ .probe = P(region_leave), .line = 95, .s = { "cat" }, .literals = 2 });
	assert_int_equal(word_kind(1), TR2_STR_REF);
	take(rb_batch(&th, rec, now));
	assert_true((uint64_t)hdr.num[2] != expected_from);   /* how the session sees the gap */
	lits.whole = 0;
	assert_string_equal(lits.str[file_id], FILE_C);
	expect_lost();
	read_next();
	read_next();   /* defines "cat" */
	expect_lost();
	expect_end();
	assert_int_equal(lits.whole, 0);

	/* the next epoch */
	put((struct tr2_call){ .probe = P(region_enter), .file = FILE_C, .line = 96, .s = { "cat" },
			       .literals = 2 });
	put((struct tr2_call){ .probe = P(region_leave), .file = FILE_C, .line = 97, .s = { "cat" },
			       .literals = 2 });
	assert_int_equal(word_kind(0), TR2_STR_REF);
	take(rb_batch(&th, rec, now));
	read_rest();
	assert_int_equal(lits.whole, 1);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(every_kind_round_trips),
		TEST(null_and_empty_strings),
		TEST(literals_named_by_id_in_an_epoch),
		TEST(epoch_starts_again),
		TEST(literal_takes_anothers_id_in_one_call),
		TEST(long_strings_cut_at_4095),
		TEST(strings_cut_to_fit_the_buffer),
		TEST(vectors_cut_at_argv_max),
		TEST(padding_is_skipped),
		TEST(bad_records_are_refused),
		TEST(bad_calls_are_refused),
		TEST(long_literal_named_too_often),
		TEST(ref_to_a_literal_not_held),
		TEST(ref_after_a_gap_waits_for_an_epoch),
	};

	return cmocka_run_group_tests_name("decode", tests, NULL, NULL);
}
