/* make_decode_corpus.c: writes the seed corpus of fuzz_decode: runs of
 * ring-buffer records (bpf/tr2_record.h) whose calls the runtime's own
 * encoder wrote (usdt/tr2_wire.c, through tests/loader/tr2_rec_build.h):
 * every probe kind in a process of its own, the tracer's records alone, and
 * runs as traced programs make them (a whole process with threads, timers
 * and counters; children, exec and follow mode; literals across copies and
 * epochs; a lost copy; padding; cut strings; threads out of order;
 * --category; hostile bytes).  With CRASHES_DIR, also the inputs kept there
 * as regression tests (tests/fuzz/README.md says what each one shows).
 * `make fuzz-corpus` runs it.
 *
 *   make_decode_corpus DIR [CRASHES_DIR]
 *
 * Literal ids come from the strings' addresses, so that the files are the
 * same from run to run this is linked -no-pie and names only static strings.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_decode.h"
#include "tr2_rec_build.h"

#define P(kind) TRACE2__P_##kind
#define PID 4242
#define TID2 4243
#define TID3 4244
#define CHILD 4300
#define T0 1000000000000ull   /* CLOCK_MONOTONIC, ns: a machine up for 1000 s */
#define STEP 10000ull         /* between two calls, ns */
#define TIMER 0x55d0c0de1000ll     /* the definitions' addresses: the metrics' ids */
#define COUNTER 0x55d0c0de1040ll
#define TH_TIMER 0x55d0c0de1080ll  /* per-thread ones */
#define TH_COUNTER 0x55d0c0de10c0ll
#define DEV 0x800003ll        /* an object not known yet (struct tr2_object_key) */
#define INO 1234567ll

static unsigned char out[1 << 20];   /* the file being built */
static size_t outlen, last;          /* its size, and where its last record starts */
static unsigned char rec[TR2_REC_MAX];
static const char *dir;
static uint64_t now;
static struct rb_thread th[4];

static void fail(const char *what)
{
	fprintf(stderr, "make_decode_corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void add(size_t n)
{
	if (n > sizeof(out) - outlen) {
		errno = ENOSPC;
		fail("a seed of more than 1 MiB");
	}
	memcpy(out + outlen, rec, n);
	last = outlen;
	outlen += n;
}

/* fuzz_decode flushes after the last record (its pad byte odd): what
 * waited more than TR2_SESSION_DELAY_NS before it is written. */
static void flush_here(void)
{
	out[last + offsetof(struct tr2_rec, flags)] |= 1;
}

static void save(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(out, 1, outlen, f) != outlen || fclose(f))
		fail(path);
	outlen = 0;
	now = T0;
}

static const char file_c[] = "tests/progs/tr2_allapi.c";
static const char *const argv1[] = { "build/tests/progs/tr2_allapi", "--flag", "arg two", NULL };
static const char *const ancestry[] = { "bash", "sshd", "systemd", NULL };
static const char *const alias_argv[] = { "status", "-sb", NULL };
static const char *const child_argv[] = { "git", "rev-parse", "HEAD", NULL };
static const char *const exec_argv[] = { "git-foo", "--bar", "", NULL };

/* A call of each kind with every field it has, as usdt/tr2_probe.c fills
 * them (literal flags included). */
static const struct tr2_call samples[TRACE2__NPROBES] = {
	[P(version)] = { .s = { "2.45.0" } },
	[P(start)] = { .vec = argv1 },
	[P(exit)] = { .code = 3 },
	[P(atexit)] = { .code = 3 },
	[P(signal)] = { .code = 15 },
	[P(error)] = { .s = { "fatal: bad object HEAD", "fatal: %s" } },
	[P(cmd_path)] = { .s = { "/usr/bin/git" } },
	[P(cmd_ancestry)] = { .vec = ancestry },
	[P(cmd_name)] = { .s = { "status" } },
	[P(cmd_mode)] = { .s = { "branch" } },
	[P(alias)] = { .s = { "st" }, .vec = alias_argv },
	[P(def_param)] = { .s = { "core.editor", "vim", "global" } },
	[P(def_repo)] = { .repo_id = 1, .s = { "/src/repo" } },
	[P(child_start)] = { .id = 0, .use_shell = 1, .s = { "hook", "pre-commit", "/src/repo" },
			     .vec = child_argv },
	[P(child_exit)] = { .id = 0, .pid_arg = CHILD, .code = 1 },
	[P(child_ready)] = { .id = 0, .pid_arg = CHILD, .s = { "ready" } },
	[P(exec)] = { .id = 1, .s = { "/usr/bin/git-foo" }, .vec = exec_argv },
	[P(exec_result)] = { .id = 1, .code = -1 },
	[P(thread_start)] = { .id = 1, .s = { "preload" } },
	[P(region_enter)] = { .repo_id = 1, .s = { "index", "do_read_index", ".git/index" },
			      .literals = 2 | 4 },
	[P(region_leave)] = { .repo_id = 1, .s = { "index", "do_read_index", ".git/index" },
			      .literals = 2 | 4 },
	[P(data)] = { .repo_id = 1, .s = { "index", "read/cache_nr" }, .value = 1234, .literals = 2 | 4 | 8 },
	[P(data_json)] = { .repo_id = 1, .s = { "fsmonitor", "stats", "{\"count\":1}" },
			   .literals = 2 | 4 | 8 },
	[P(printf)] = { .s = { "hello 42" } },
	[P(timer_start)] = { .metric = TIMER, .s = { "test", "timer" }, .literals = 2 | 4 },
	[P(timer_stop)] = { .metric = TIMER, .s = { "test", "timer" }, .literals = 2 | 4 },
	[P(counter_add)] = { .metric = COUNTER, .s = { "test", "counter" }, .value = 7, .literals = 2 | 4 },
};

static const char *const probe_names[TRACE2__NPROBES] = {
#define TRACE2__PROBE_NAME(probe) #probe,
	TRACE2__PROBES(TRACE2__PROBE_NAME)
};

/* Thread t makes call c, STEP after the last call. */
static void put(struct rb_thread *t, struct tr2_call c)
{
	c.ts_ns = now += STEP;
	if (!c.line)
		c.line = 100 + c.probe;
	rb_call(t, &c);
}

/* Thread t makes the sample call of `probe`. */
static void kind(struct rb_thread *t, int probe)
{
	struct tr2_call c = samples[probe];

	c.probe = probe;
	c.file = file_c;
	put(t, c);
}

#define CALL(t, kind, ...) put(t, (struct tr2_call){ .probe = P(kind), .file = file_c, __VA_ARGS__ })

/* The thread's calls since the last copy: sent as a batch (an epoch
 * starts), or copied (at a switch or a tick: the epoch goes on). */
static uint64_t stamp(void)
{
	return now + 500 < TR2_TS_MAX ? now + 500 : TR2_TS_MAX - 1;
}

static void batch(struct rb_thread *t)
{
	add(rb_batch(t, rec, stamp()));
}

static void copy(struct rb_thread *t)
{
	add(rb_copy(t, rec, stamp(), 0));
}

/* Thread t's announce, before its first batch: a process started 1 ms before T0. */
static void info(struct rb_thread *t, int thread_id, uint32_t ppid, const char *base_name, const char *sid)
{
	add(rb_thread_info(rec, t->pid, t->tid, thread_id, now, ppid, T0 - 1000000, now - 1000, base_name,
			   base_name[0] ? base_name : "tr2_allapi", sid));
}

static void record(unsigned kind, uint32_t pid, uint32_t tid, int64_t n0, int64_t n1, int64_t n2)
{
	add(rb_rec(rec, kind, pid, tid, now += STEP, n0, n1, n2));
}

/* A process's main thread: made, announced. */
static struct rb_thread *main_thread(uint32_t pid, uint32_t ppid, const char *sid)
{
	rb_thread_init(&th[0], pid, pid);
	info(&th[0], 0, ppid, "", sid);
	return &th[0];
}

/* Every probe kind, in a process that starts, makes the call (after what
 * it pairs with) and ends. */
static void every_kind(int probe)
{
	struct rb_thread *t = main_thread(PID, 1, "");

	kind(t, P(version));
	kind(t, P(start));
	if (probe == P(region_leave))
		kind(t, P(region_enter));
	if (probe == P(timer_stop))
		kind(t, P(timer_start));
	if (probe == P(child_exit) || probe == P(child_ready))
		kind(t, P(child_start));
	if (probe == P(exec_result))
		kind(t, P(exec));
	kind(t, probe);
	batch(t);
	record(TR2_REC_THREAD_GONE, PID, PID, 0, 0, 0);
	record(TR2_REC_PROC_GONE, PID, PID, 0, 0, 0);
}

/* A whole process: the main thread and two more, regions, data, timers and
 * counters (process-wide and per thread), one thread ending with
 * thread_exit and one without, copies at ticks between batches. */
static void whole_process(void)
{
	struct rb_thread *m = main_thread(PID, 1, "");
	struct rb_thread *t2 = &th[1], *t3 = &th[2];

	kind(m, P(version));
	kind(m, P(start));
	kind(m, P(cmd_ancestry));
	kind(m, P(cmd_name));
	kind(m, P(def_param));
	kind(m, P(def_repo));
	kind(m, P(region_enter));
	batch(m);
	CALL(m, data, .repo_id = 1, .s = { "index", "read/cache_nr" }, .value = 1234, .literals = 2 | 4 | 8);
	CALL(m, region_enter, .repo_id = 1, .s = { "preload", "preload", "threads 2" }, .literals = 2 | 4);
	copy(m);

	rb_thread_init(t2, PID, TID2);
	info(t2, 1, 1, "preload", "");
	CALL(t2, thread_start, .id = 1, .s = { "preload" });
	for (int i = 0; i < 3; i++) {
		CALL(t2, region_enter, .s = { "preload", "lstat" }, .literals = 2 | 4);
		CALL(t2, timer_start, .metric = TH_TIMER, .per_thread = 1, .s = { "test", "th_timer" },
		     .literals = 2 | 4);
		CALL(t2, timer_stop, .metric = TH_TIMER, .per_thread = 1, .s = { "test", "th_timer" },
		     .literals = 2 | 4);
		CALL(t2, counter_add, .metric = TH_COUNTER, .per_thread = 1, .s = { "test", "th_counter" },
		     .value = 5 + i, .literals = 2 | 4);
		CALL(t2, counter_add, .metric = COUNTER, .s = { "test", "counter" }, .value = 1,
		     .literals = 2 | 4);
		CALL(t2, region_leave, .s = { "preload", "lstat" }, .literals = 2 | 4);
		if (i == 1)
			copy(t2);
	}
	rb_thread_init(t3, PID, TID3);
	info(t3, 2, 1, "preload", "");
	CALL(t3, thread_start, .id = 2, .s = { "preload" });
	CALL(t3, timer_start, .metric = TIMER, .s = { "test", "timer" }, .literals = 2 | 4);
	CALL(t3, timer_stop, .metric = TIMER, .s = { "test", "timer" }, .literals = 2 | 4);
	CALL(t2, thread_exit);
	batch(t3);   /* thread 3's batch arrives before thread 2's earlier calls */
	batch(t2);
	record(TR2_REC_THREAD_GONE, PID, TID2, 0, 0, 0);
	CALL(t3, counter_add, .metric = COUNTER, .s = { "test", "counter" }, .value = 100, .literals = 2 | 4);
	copy(t3);
	record(TR2_REC_THREAD_GONE, PID, TID3, 0, 0, 0);   /* without thread_exit */
	now += 50000000;

	CALL(m, region_leave, .repo_id = 1, .s = { "preload", "preload", "threads 2" }, .literals = 2 | 4);
	kind(m, P(region_leave));
	kind(m, P(timer_start));
	kind(m, P(timer_stop));
	kind(m, P(counter_add));
	kind(m, P(data_json));
	kind(m, P(printf));
	kind(m, P(exit));
	kind(m, P(atexit));
	batch(m);
	flush_here();   /* the threads' calls, 50 ms older, are written */
	record(TR2_REC_THREAD_GONE, PID, PID, 0, 0, 0);
	record(TR2_REC_PROC_GONE, PID, PID, 0, 0, 0);
}

/* A process with children: one traced through a fork (follow mode), an
 * exec that stops the process for a new object, a new program after it,
 * a library loaded later. */
static void children_and_exec(void)
{
	struct rb_thread *m = main_thread(PID, 1, "");
	struct rb_thread *c = &th[1];

	kind(m, P(version));
	kind(m, P(start));
	kind(m, P(cmd_name));
	kind(m, P(child_start));
	batch(m);
	record(TR2_REC_FORK, CHILD, CHILD, PID, (int64_t)now - 2000, 0);
	rb_thread_init(c, CHILD, CHILD);
	info(c, 0, PID, "", "");
	CALL(c, version, .s = { "2.45.0" });
	CALL(c, start, .vec = child_argv);
	CALL(c, cmd_name, .s = { "rev-parse", "status/rev-parse" });   /* the hierarchy the program made */
	CALL(c, child_ready, .id = 0, .pid_arg = 0, .s = { "timeout" });
	CALL(c, exit, .code = 0);
	CALL(c, atexit, .code = 0);
	batch(c);
	record(TR2_REC_THREAD_GONE, CHILD, CHILD, 0, 0, 0);
	record(TR2_REC_PROC_GONE, CHILD, CHILD, 0, 0, 0);
	kind(m, P(child_exit));
	CALL(m, exec, .id = 1, .s = { "/usr/bin/git-foo" }, .vec = exec_argv);
	copy(m);   /* at exec */
	record(TR2_REC_EXECVE, PID, PID, 1, DEV, INO);
	record(TR2_REC_THREAD_GONE, PID, PID, 0, 0, 0);

	/* the new program: a new buffer, a new session, child of the old one */
	now += 300000;
	m = main_thread(PID, 1, "20240101T000000.000000Z-H0123abcd-P00001092");
	CALL(m, version, .s = { "2.45.0" });
	CALL(m, start, .vec = exec_argv);
	batch(m);
	record(TR2_REC_NEW_OBJECT, PID, PID, 1, DEV, INO + 1);
	CALL(m, cmd_name, .s = { "foo" });
	CALL(m, exit, .code = 0);
	CALL(m, atexit, .code = 0);
	batch(m);
	record(TR2_REC_THREAD_GONE, PID, PID, 0, 0, 0);
	record(TR2_REC_PROC_GONE, PID, PID, 0, 0, 0);
}

/* Follow mode, the parent gone first: the session keeps the parent (its
 * sid, its cmd_name hierarchy) while its child refers to it.  The child
 * was held at its exec, resumed 250 µs later (fuzz_decode), lost 3 calls
 * (proc_gone's num[0] in fuzz_decode). */
static void parent_gone_first(void)
{
	struct rb_thread *m = main_thread(PID, 1, "");
	struct rb_thread *c = &th[1];

	kind(m, P(version));
	kind(m, P(cmd_name));
	batch(m);
	record(TR2_REC_FORK, CHILD, CHILD, PID, (int64_t)now, 0);
	CALL(m, exit, .code = 0);
	CALL(m, atexit, .code = 0);
	batch(m);
	record(TR2_REC_THREAD_GONE, PID, PID, 0, 0, 0);
	record(TR2_REC_PROC_GONE, PID, PID, 0, 0, 0);
	record(TR2_REC_EXECVE, CHILD, CHILD, 1, DEV, INO);
	now += 251000;
	rb_thread_init(c, CHILD, CHILD);
	info(c, 0, PID, "", "");
	CALL(c, version, .s = { "2.39.5" });
	CALL(c, cmd_name, .s = { "gc" });
	CALL(c, counter_add, .metric = COUNTER, .s = { "gc", "objects" }, .value = 42, .literals = 2 | 4);
	CALL(c, atexit, .code = 0);
	batch(c);
	record(TR2_REC_THREAD_GONE, CHILD, CHILD, 0, 0, 0);
	record(TR2_REC_PROC_GONE, CHILD, CHILD, 3, 0, 0);
}

/* Literals: defined at their first use in an epoch, named by id in the
 * calls and copies after it, defined again in the next epoch. */
static void literals(void)
{
	struct rb_thread *m = main_thread(PID, 1, "");

	kind(m, P(version));
	for (int epoch = 0; epoch < 3; epoch++) {
		for (int i = 0; i < 3; i++) {
			CALL(m, region_enter, .s = { "scan", "directory", i ? "again" : NULL }, .literals = 2 | 4);
			CALL(m, data, .s = { "scan", "files", "many" }, .literals = 2 | 4 | 8);
			CALL(m, region_leave, .s = { "scan", "directory" }, .literals = 2 | 4);
			copy(m);   /* a tick: the epoch goes on */
		}
		kind(m, P(printf));
		batch(m);
	}
	kind(m, P(atexit));
	batch(m);
}

/* A copy of a thread lost (the ring buffer was full): the next one starts
 * past where the session expected; its calls that name literals of the
 * lost one are lost, until the next epoch.  Then a batch after calls the
 * runtime dropped (num[1]). */
static void lost_batch(void)
{
	struct rb_thread *m = main_thread(PID, 1, "");
	unsigned char lost[TR2_REC_MAX];

	kind(m, P(version));
	kind(m, P(start));
	copy(m);
	kind(m, P(region_enter));
	kind(m, P(data));
	rb_copy(m, lost, now, 0);   /* never arrives */
	kind(m, P(data));
	put(m, (struct tr2_call){ .probe = P(printf), .s = { "no literal" } });   /* no file */
	kind(m, P(region_leave));
	copy(m);
	kind(m, P(region_enter));
	batch(m);
	kind(m, P(region_leave));
	add(rb_copy(m, rec, stamp(), 3));   /* 3 calls dropped before these */
	kind(m, P(atexit));
	batch(m);
	record(TR2_REC_THREAD_GONE, PID, PID, 0, 0, 0);
	record(TR2_REC_PROC_GONE, PID, PID, 0, 0, 0);
}

/* Padding where a call would have wrapped around the buffer's end. */
static void pads(void)
{
	struct rb_thread *m = main_thread(PID, 1, "");

	kind(m, P(version));
	rb_pad(m, 64);
	kind(m, P(start));
	copy(m);
	rb_pad(m, 8);
	kind(m, P(cmd_name));
	rb_pad(m, 16);
	batch(m);
	rb_pad(m, 24);
	copy(m);
	kind(m, P(atexit));
	batch(m);
}

/* Strings cut: at 4095 bytes (a literal too, sent whole each time), to fit
 * the buffer, and a vector cut at TR2_ARGV_MAX. */
static void cut_strings(void)
{
	static char big[5000], arg[5][4001], args[TR2_ARGV_MAX + 6][8];
	static const char *argv[TR2_ARGV_MAX + 7], *argv5[6];
	struct rb_thread *m = main_thread(PID, 1, "");
	int i;

	memset(big, 'x', sizeof(big) - 1);
	for (i = 0; i < 5; i++) {
		memset(arg[i], 'a' + i, 4000);
		argv5[i] = arg[i];
	}
	for (i = 0; i < TR2_ARGV_MAX + 6; i++) {
		snprintf(args[i], sizeof(args[i]), "a%d", i % 100);
		argv[i] = args[i];
	}
	kind(m, P(version));
	CALL(m, printf, .s = { big });
	CALL(m, region_enter, .s = { "cat", big }, .literals = 2 | 4);
	CALL(m, region_leave, .s = { "cat", big }, .literals = 2 | 4);
	batch(m);
	CALL(m, start, .vec = argv);
	CALL(m, exec, .id = 1, .s = { "x" }, .vec = argv);
	batch(m);
	CALL(m, alias, .s = { "big" }, .vec = argv5);
	batch(m);
	kind(m, P(atexit));
	batch(m);
}

/* Two processes' threads whose batches arrive out of time order; calls
 * made before the trace began (fuzz_decode's SINCE_NS) are left out. */
static void ordering(void)
{
	struct rb_thread *a = &th[1], *b = &th[2];

	now = 500000000;   /* before the trace began */
	rb_thread_init(a, PID, PID);
	info(a, 0, 1, "", "");
	kind(a, P(version));
	kind(a, P(region_enter));
	now = T0;
	copy(a);
	kind(a, P(cmd_name));
	rb_thread_init(b, CHILD, CHILD);
	now -= 5 * STEP;
	kind(b, P(version));
	kind(b, P(start));
	kind(b, P(cmd_name));
	kind(b, P(region_enter));
	kind(b, P(region_leave));
	kind(b, P(exit));
	kind(a, P(region_leave));
	batch(a);
	info(b, 0, 1, "", "");
	batch(b);
	now += 100000000;   /* a tick later */
	kind(a, P(atexit));
	kind(b, P(atexit));
	batch(b);
	flush_here();   /* the batches of a tick ago are written, this one waits */
	batch(a);
	record(TR2_REC_PROC_GONE, CHILD, CHILD, 0, 0, 0);
	record(TR2_REC_PROC_GONE, PID, PID, 0, 0, 0);
}

/* --category: fuzz_decode turns it on ("index", "fsync") when bit 1 of
 * the first record's pad byte is set. */
static void categories(void)
{
	struct rb_thread *m = main_thread(PID, 1, "");

	out[offsetof(struct tr2_rec, flags)] = 2;
	kind(m, P(version));
	kind(m, P(region_enter));
	CALL(m, region_enter, .s = { "other", "x" }, .literals = 2 | 4);
	CALL(m, data, .s = { "fsync", "writes" }, .value = 3, .literals = 2 | 4);
	CALL(m, data, .s = { NULL, "no category" }, .value = 3, .literals = 2 | 4);
	CALL(m, data_json, .s = { "other", "j", "[]" }, .literals = 2 | 4 | 8);
	CALL(m, region_leave, .s = { "other", "x" }, .literals = 2 | 4);
	kind(m, P(region_leave));
	kind(m, P(atexit));
	batch(m);
}

/* Calls no runtime writes, by hand: a call of `probe`, the first of its
 * epoch, whose file defines literal `id` as `len` bytes of c. */
static void raw_def(struct rb_thread *t, int probe, uint8_t id, char c, uint16_t len)
{
	static unsigned char call[TR2_TBUF_DATA];
	struct tr2_wire w = { .probe = (uint8_t)probe, .flags = TR2_WIRE_EPOCH, .ts_ns = now += STEP };
	size_t n = sizeof(w);

	memcpy(call + n, &(uint16_t){ TR2_STR_DEF | len }, 2);
	call[n + 2] = id;
	memset(call + n + 3, c, len);
	n += 3 + len;
	w.size = (uint16_t)((n + 7) & ~(size_t)7);
	memset(call + n, 0, w.size - n);
	memcpy(call, &w, sizeof(w));
	rb_raw(t, call, w.size);
}

/* A call of `probe` naming literal `id` in each of its 1 + nstr + nvec
 * strings (the runtime names literals in the file, s[0], s[1], s[2] only). */
static void raw_refs(struct rb_thread *t, int probe, uint8_t nstr, uint8_t nvec, uint16_t id)
{
	unsigned char call[sizeof(struct tr2_wire) + 2 * (5 + TR2_ARGV_MAX) + 8] = { 0 };
	struct tr2_wire w = { .probe = (uint8_t)probe, .nstr = nstr, .nvec = nvec, .ts_ns = now += STEP };
	size_t n = sizeof(w);

	for (int i = 0; i < 1 + nstr + nvec; i++, n += 2)
		memcpy(call + n, &(uint16_t){ TR2_STR_REF | id }, 2);
	w.size = (uint16_t)((n + 7) & ~(size_t)7);
	memcpy(call, &w, sizeof(w));
	rb_raw(t, call, w.size);
}

/* What a hostile or broken program makes: strings that need escaping,
 * calls that do not pair, a thread info without NULs, a call that does not
 * parse in the middle of a batch (the rest is lost), records of no kind
 * and of the wrong size. */
static void hostile(void)
{
	static const char *const weird_argv[] = { "prog", "\"q\" \\ \x01\x1f\x7f \xff\xfe \xc3\x28 \xed\xa0\x80",
						  "", NULL };
	struct rb_thread *m = main_thread(PID, 1, "");
	struct tr2_rec_thread_info *ti = (struct tr2_rec_thread_info *)rec;
	struct tr2_wire bad = { .size = 32, .probe = P(printf), .nstr = 1, .ts_ns = now };
	unsigned char bad_call[32];

	kind(m, P(version));
	CALL(m, start, .vec = weird_argv);
	CALL(m, error, .s = { "\n\r\t\b\f", "%s %n %%" });
	CALL(m, region_leave, .s = { "never", "entered" }, .literals = 2 | 4);
	CALL(m, data_json, .s = { "c", "k", "{not json" });
	CALL(m, data, .s = { NULL, NULL, NULL }, .value = -5);
	CALL(m, timer_stop, .metric = 7, .per_thread = 1, .s = { "c", "never started" }, .literals = 2 | 4);
	CALL(m, child_exit, .id = 77, .pid_arg = -1, .code = 127);
	CALL(m, exec_result, .id = 99, .code = 1);
	CALL(m, thread_exit);
	put(m, (struct tr2_call){ .probe = P(printf), .file = "", .s = { "" } });
	batch(m);

	rb_thread_init(&th[1], PID, TID2);
	rb_thread_info(rec, PID, TID2, 99, now, 1, T0, T0, "", "", "");
	memset(ti->base_name, 'n', sizeof(ti->base_name));
	memset(ti->comm, 'c', sizeof(ti->comm));
	memset(ti->sid, 's', sizeof(ti->sid));
	add(sizeof(*ti));
	CALL(&th[1], thread_start, .id = 99, .s = { "a thread name far longer than git's limit \xc3\xa9" });
	CALL(&th[1], region_enter, .s = { "c", "l" }, .literals = 2 | 4);
	memcpy(bad_call, &bad, sizeof(bad));
	memcpy(bad_call + sizeof(bad), "\xff\xff\x32\x00xx\0\0", 8);   /* a string past the call */
	rb_raw(&th[1], bad_call, sizeof(bad_call));
	CALL(&th[1], region_leave, .s = { "c", "l" }, .literals = 2 | 4);
	batch(&th[1]);
	/* literals named where the runtime names none, and an id out of range */
	rb_thread_init(&th[2], PID, TID3);
	raw_def(&th[2], P(printf), 9, 'r', 300);
	raw_refs(&th[2], P(start), 0, 20, 9);
	raw_refs(&th[2], P(cmd_ancestry), 1, 2, 9);
	raw_refs(&th[2], P(printf), 1, 0, TR2_INTERNED);
	batch(&th[2]);
	record(TR2_REC__COUNT, PID, TID2, 0, 0, 0);
	kind(m, P(atexit));
	batch(m);
	record(TR2_REC_PROC_GONE, PID, PID, 0, 0, 0);
	out[outlen - sizeof(struct tr2_rec)] += 8;   /* says 8 bytes more than there are */
}

/* The tracer's own records, each alone (the batches are every_kind's). */
static void one_record(unsigned k)
{
	if (k == TR2_REC_THREAD_INFO)
		main_thread(PID, 1, "20240101T000000.000000Z-H0123abcd-P00001092");
	else if (k == TR2_REC_FORK)
		record(k, CHILD, CHILD, PID, T0, 0);
	else if (k == TR2_REC_EXECVE || k == TR2_REC_NEW_OBJECT)
		record(k, PID, PID, 1, DEV, INO);
	else
		record(k, PID, PID, k == TR2_REC_PROC_GONE ? 2 : 0, 0, 0);   /* proc_gone: 2 lost (fuzz_decode) */
}

static const char *const rec_names[TR2_REC__COUNT] = {
	"batch", "thread-info", "fork", "execve", "new-object", "thread-gone", "proc-gone",
};

/* Inputs worth keeping as regression tests (tests/fuzz/README.md). */
static void crashers(void)
{
	struct rb_thread *m;

	/* A literal of 16000 bytes (the runtime defines none of 4095 or more),
	 * then a call naming it by id in each of its 69 strings: 1.1 MB from a
	 * 16 KiB batch, past the decoder's arena. */
	m = main_thread(PID, 1, "");
	raw_def(m, P(region_enter), 5, 'L', 16000);
	raw_refs(m, P(start), 4, TR2_ARGV_MAX, 5);
	batch(m);
	save("decode-ref-arena");

	/* Times near the largest accepted (TR2_TS_MAX - 1): t_abs, t_rel and
	 * the sid's time from them must not overflow.  Then a call of a time
	 * far past it after a good one: tr2_batch_peek() handed that time to
	 * the session as the batch's next, and when tr2_batch_next() refused
	 * the call, tr2_model_lost() marked it there, where ts_ns +
	 * mono_to_real_ns overflows (found by fuzz_decode). */
	now = TR2_TS_MAX - 100 * STEP;
	m = main_thread(PID, 1, "");
	kind(m, P(version));
	kind(m, P(region_enter));
	kind(m, P(timer_start));
	now = TR2_TS_MAX - 1 - 2 * STEP;   /* the last call at TR2_TS_MAX - 1 */
	kind(m, P(timer_stop));
	kind(m, P(region_leave));
	batch(m);
	now = TR2_TS_MAX - 1 - STEP;
	kind(m, P(printf));
	now = 0x7373737373737373ull - STEP;
	kind(m, P(atexit));
	batch(m);
	save("session-ts-max");

	/* Counter sums of three threads that overflow int64_t when added into
	 * the process total (git's tr2_ctr.c sums in uint64_t). */
	m = main_thread(PID, 1, "");
	kind(m, P(version));
	batch(m);
	for (int i = 1; i <= 3; i++) {
		rb_thread_init(&th[i], PID, PID + i);
		info(&th[i], i, 1, "w", "");
		CALL(&th[i], thread_start, .id = i, .s = { "w" });
		CALL(&th[i], counter_add, .metric = COUNTER, .s = { "c", "n" }, .value = INT64_MAX,
		     .literals = 2 | 4);
		CALL(&th[i], counter_add, .metric = TH_COUNTER, .per_thread = 1, .s = { "c", "t" },
		     .value = INT64_MAX, .literals = 2 | 4);
		CALL(&th[i], thread_exit);
		batch(&th[i]);
	}
	kind(m, P(atexit));
	batch(m);
	save("session-counter-overflow");

	/* Regions nested 1 000 deep: the PERF target's prefix of dots. */
	m = main_thread(PID, 1, "");
	kind(m, P(version));
	for (int i = 0; i < 1000; i++) {
		if (m->len > TR2_TBUF_DATA - 64)
			copy(m);
		CALL(m, region_enter, .s = { "deep", "r" }, .literals = 2 | 4);
	}
	kind(m, P(atexit));
	batch(m);
	save("deep-regions");
}

int main(int argc, char **argv)
{
	char name[64];

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: make_decode_corpus DIR [CRASHES_DIR]\n");
		return 2;
	}
	now = T0;
	if (argc == 3) {
		dir = argv[2];
		crashers();
	}
	dir = argv[1];
	for (int p = 0; p < TRACE2__NPROBES; p++) {
		every_kind(p);
		snprintf(name, sizeof(name), "kind-%02d-%s", p, probe_names[p]);
		save(name);
	}
	for (unsigned k = TR2_REC_THREAD_INFO; k < TR2_REC__COUNT; k++) {
		one_record(k);
		snprintf(name, sizeof(name), "rec-%s", rec_names[k]);
		save(name);
	}
	whole_process();
	save("run-whole-process");
	children_and_exec();
	save("run-children-exec");
	parent_gone_first();
	save("run-parent-gone");
	literals();
	save("run-literals");
	lost_batch();
	save("run-lost-batch");
	pads();
	save("run-pads");
	cut_strings();
	save("run-cut-strings");
	ordering();
	save("run-ordering");
	categories();
	save("run-categories");
	hostile();
	save("run-hostile");
	return 0;
}
