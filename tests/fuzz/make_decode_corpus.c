/* make_decode_corpus.c: writes the seed corpus of fuzz_decode, valid
 * ring-buffer records laid out as bpf/tr2_record.h says: one file per record
 * kind, then runs of records as a traced program produces them (a whole
 * process, threads with regions and metrics, children and exec, fork and
 * exec in follow mode, a parent gone before its child, cut and hostile
 * records).  `make fuzz-corpus` runs it.
 *
 *   make_decode_corpus DIR [CRASHES_DIR]    (CRASHES_DIR: the known-bug inputs too)
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_record.h"

#define PID 4242
#define TID2 4243
#define TID3 4244
#define CHILD 4300
#define T0 1000000000000ull   /* CLOCK_MONOTONIC, ns: a machine up for 1000 s */
#define TIMER 0x401000ull     /* the ids (definition addresses) of the metrics used */
#define COUNTER 0x402000ull
#define TH_TIMER 0x401100ull  /* per-thread ones (th_timer, th_counter) */
#define TH_COUNTER 0x402100ull
#define COUNTER_B 0x403000ull /* COUNTER's names defined in a second file */
#define DEV 0x800003ull       /* an object not known yet (struct tr2_object_key) */
#define INO 1234567ull
#define RESUMED 251000ull     /* after a stop: fuzz_decode resumes 250 µs after the record */

static unsigned char out[1 << 20];   /* the file being built */
static size_t outlen;
static unsigned char rec[TR2_REC_MAX];
static size_t reclen;
static struct tr2_rec hdr;
static const char *dir;

static void fail(const char *what)
{
	fprintf(stderr, "make_decode_corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Starts a record; its strings follow with str(), then end(). */
static void begin(unsigned kind, unsigned pid, unsigned tid, int line, unsigned long long ts,
		  long long n0, long long n1, long long n2)
{
	memset(&hdr, 0, sizeof(hdr));
	hdr.kind = kind;
	hdr.pid = pid;
	hdr.tid = tid;
	hdr.line = line;
	hdr.ts_ns = ts;
	hdr.num[0] = n0;
	hdr.num[1] = n1;
	hdr.num[2] = n2;
	reclen = sizeof(hdr);
}

static void word(unsigned w)
{
	unsigned short v = (unsigned short)w;

	memcpy(rec + reclen, &v, 2);
	reclen += 2;
	hdr.nstr++;
}

/* A string as the eBPF side copies it: cut at TR2_STR_MAX - 1 bytes, flagged. */
static void str(const char *s)
{
	size_t n = strlen(s);
	unsigned w = (unsigned)n;

	if (n > TR2_STR_MAX - 1) {
		n = TR2_STR_MAX - 1;
		w = (unsigned)n | TR2_STR_TRUNC;
	}
	word(w);
	memcpy(rec + reclen, s, n);
	reclen += n;
}

static void null_str(void)
{
	word(TR2_STR_NULL);
}

static void fault_str(void)
{
	word(TR2_STR_FAULT);
}

/* TR2_REC_METRICS: the sums follow the header as struct tr2_metric,
 * unaligned, num[0] of them. */
static void put_metric(const struct tr2_metric *m)
{
	memcpy(rec + reclen, m, sizeof(*m));
	reclen += sizeof(*m);
	hdr.num[0]++;
}

static void timer(unsigned long long id, unsigned long long intervals, unsigned long long total_ns,
		  unsigned long long min_ns, unsigned long long max_ns)
{
	struct tr2_metric m = { .id = id, .defined = 1, .intervals = intervals, .total_ns = total_ns,
				.min_ns = min_ns, .max_ns = max_ns };

	put_metric(&m);
}

static void counter(unsigned long long id, long long count)
{
	struct tr2_metric m = { .id = id, .is_counter = 1, .defined = 1, .count = count };

	put_metric(&m);
}

/* The kind's vector: strings counted in nvec too. */
static void vec(const char *const *v)
{
	for (; *v; v++) {
		str(*v);
		hdr.nvec++;
	}
}

/* Per thread, the region stack as the eBPF side keeps it (tr2.bpf.c's
 * track_regions), to stamp depth and region_ns as it does. */
static struct {
	unsigned tid, depth;
	unsigned long long start[TR2_REGION_MAX];
} threads[8];

static void track_regions(void)
{
	unsigned i, d;

	for (i = 0; i < 7 && threads[i].tid && threads[i].tid != hdr.tid; i++)
		;
	threads[i].tid = hdr.tid;
	d = threads[i].depth;
	if (hdr.kind == TR2_REC_REGION_ENTER) {
		if (d < TR2_REGION_MAX)
			threads[i].start[d] = hdr.ts_ns;
		threads[i].depth = d + 1;
	} else if (hdr.kind == TR2_REC_REGION_LEAVE) {
		if (d == 0)
			return;
		threads[i].depth = --d;
		hdr.region_ns = d < TR2_REGION_MAX ? threads[i].start[d] : 0;
	} else if (d > 0 && d <= TR2_REGION_MAX) {
		hdr.region_ns = threads[i].start[d - 1];
	}
	hdr.depth = d;
}

static void end(void)
{
	if (hdr.kind < TR2_REC__PROBES)
		track_regions();
	hdr.size = (unsigned short)reclen;
	memcpy(rec, &hdr, sizeof(hdr));
	memcpy(out + outlen, rec, reclen);
	outlen += reclen;
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
	memset(threads, 0, sizeof(threads));
}

static const char file[] = "tests/progs/tr2_allapi.c";
static const char *const argv1[] = { "build/tests/progs/tr2_allapi", "--flag", "arg two", NULL };
static const char *const ancestry[] = { "bash", "sshd", "systemd", NULL };
static const char *const child_argv[] = { "git", "rev-parse", "HEAD", NULL };

/* Every record kind once, each in a file of its own (and the process's
 * start and thread info before it in a second file, so that each one also
 * meets a known thread). */
static void one(unsigned kind, unsigned tid, unsigned long long ts)
{
	switch (kind) {
	case TR2_REC_VERSION:
		begin(kind, PID, tid, 10, ts, 0, 0, 0); str(file); str("allapi-1.0"); end(); break;
	case TR2_REC_START:
		begin(kind, PID, tid, 11, ts, 0, 0, 0); str(file); vec(argv1); end(); break;
	case TR2_REC_EXIT:
		begin(kind, PID, tid, 12, ts, 3, 0, 0); str(file); end(); break;
	case TR2_REC_ATEXIT:
		begin(kind, PID, tid, 13, ts, 3, 0, 0); str(file); end(); break;
	case TR2_REC_SIGNAL:
		begin(kind, PID, tid, 14, ts, 15, 0, 0); str(file); end(); break;
	case TR2_REC_ERROR:
		begin(kind, PID, tid, 15, ts, 0, 0, 0); str(file); str("bad thing 42"); str("bad thing %d"); end(); break;
	case TR2_REC_CMD_PATH:
		begin(kind, PID, tid, 16, ts, 0, 0, 0); str(file); str("/usr/bin/tr2_allapi"); end(); break;
	case TR2_REC_CMD_ANCESTRY:
		begin(kind, PID, tid, 17, ts, 0, 0, 0); str(file); vec(ancestry); end(); break;
	case TR2_REC_CMD_NAME:
		begin(kind, PID, tid, 18, ts, 0, 0, 0); str(file); str("allapi"); end(); break;
	case TR2_REC_CMD_MODE:
		begin(kind, PID, tid, 19, ts, 0, 0, 0); str(file); str("mode-x"); end(); break;
	case TR2_REC_ALIAS:
		begin(kind, PID, tid, 20, ts, 0, 0, 0); str(file); str("co"); vec(child_argv); end(); break;
	case TR2_REC_DEF_PARAM:
		begin(kind, PID, tid, 21, ts, 0, 0, 0); str(file); str("core.editor"); str("vim"); str("global"); end(); break;
	case TR2_REC_DEF_REPO:
		begin(kind, PID, tid, 22, ts, 1, 0, 0); str(file); str("/tmp/repo"); end(); break;
	case TR2_REC_CHILD_START:
		begin(kind, PID, tid, 23, ts, 0, 1, 0); str(file); str("hook"); str("pre-commit"); str("/tmp");
		vec(child_argv); end(); break;
	case TR2_REC_CHILD_EXIT:
		begin(kind, PID, tid, 24, ts, 0, CHILD, 0); str(file); end(); break;
	case TR2_REC_CHILD_READY:
		begin(kind, PID, tid, 25, ts, 0, CHILD, 0); str(file); str("ready"); end(); break;
	case TR2_REC_EXEC:
		begin(kind, PID, tid, 26, ts, 0, 0, 0); str(file); str("/bin/true"); vec(child_argv); end(); break;
	case TR2_REC_EXEC_RESULT:
		begin(kind, PID, tid, 27, ts, 0, -1, 0); str(file); end(); break;
	case TR2_REC_THREAD_START:
		begin(kind, PID, tid, 28, ts, 0, 0, 0); hdr.thread_id = 1; str(file); str("worker"); end(); break;
	case TR2_REC_THREAD_EXIT:
		begin(kind, PID, tid, 29, ts, 0, 0, 0); str(file); end(); break;
	case TR2_REC_REGION_ENTER:
	case TR2_REC_REGION_LEAVE:
		begin(kind, PID, tid, 30, ts, 1, 0, 0); str(file); str("cat"); str("label"); str("msg 1"); end(); break;
	case TR2_REC_DATA:
		begin(kind, PID, tid, 32, ts, 1, 12345, 0); str(file); str("cat"); str("key"); null_str(); end(); break;
	case TR2_REC_DATA_JSON:
		begin(kind, PID, tid, 33, ts, 0, 0, 0); str(file); str("cat"); str("json");
		str("{\"a\":[1,2.5,\"x\",null,true],\"b\":{}}"); end(); break;
	case TR2_REC_PRINTF:
		begin(kind, PID, tid, 34, ts, 0, 0, 0); str(file); str("printf 7 of 9"); end(); break;
	case TR2_REC_TIMER_START:   /* a timer's first use: its definition */
	case TR2_REC_TIMER_STOP:    /* never sent; the decoder still takes it */
		begin(kind, PID, tid, 35, ts, TIMER, tid != PID, 0); str(file); str("test"); str("timer1"); end(); break;
	case TR2_REC_COUNTER_ADD:   /* a counter's first use: its definition */
		begin(kind, PID, tid, 37, ts, COUNTER, tid != PID, 0); str(file); str("test"); str("counter1"); end(); break;
	case TR2_REC_THREAD_INFO:
		begin(kind, PID, tid, 0, ts, 1, T0, ts); hdr.thread_id = tid == PID ? 0 : 1;
		str(tid == PID ? "tr2_allapi" : "worker"); str(tid == PID ? "tr2_allapi" : "th01:worker"); end(); break;
	case TR2_REC_FORK:
		begin(kind, CHILD, CHILD, 0, ts, PID, ts, 0); end(); break;
	case TR2_REC_EXECVE:        /* stopped: it maps an object not known yet */
	case TR2_REC_NEW_OBJECT:
		begin(kind, PID, PID, 0, ts, 1, DEV, INO); end(); break;
	case TR2_REC_THREAD_GONE:
		begin(kind, PID, tid, 0, ts, 0, 0, 0); end(); break;
	case TR2_REC_METRICS:       /* the thread's sums, before its thread_exit or atexit */
		begin(kind, PID, tid, 0, ts, 0, 0, 0);
		timer(TIMER, 2, 3000000, 1000000, 2000000); counter(COUNTER, 5); end(); break;
	case TR2_REC_PROC_GONE:
		begin(kind, PID, PID, 0, ts, 0, 0, 0); end(); break;
	}
}

static const char *const kind_names[TR2_REC__COUNT] = {
	"version", "start", "exit", "atexit", "signal", "error", "cmd_path", "cmd_ancestry",
	"cmd_name", "cmd_mode", "alias", "def_param", "def_repo", "child_start", "child_exit",
	"child_ready", "exec", "exec_result", "thread_start", "thread_exit", "region_enter",
	"region_leave", "data", "data_json", "printf", "timer_start", "timer_stop", "counter_add",
	"thread_info", "fork", "execve", "new_object", "thread_gone", "metrics", "proc_gone",
};

/* A whole process as tr2_allapi makes it, with a second thread and a third
 * that ends without thread_exit.  Each thread's timer and counter sums come
 * in a TR2_REC_METRICS record: before its thread_exit or atexit, which
 * report them, or (num[1] = 1) when it ended without thread_exit, just
 * before its thread_gone.  Besides the process-wide timer and counter,
 * per-thread ones (th_timer, th_counter), and the counter's names defined
 * again at another address, as when two files define the same metric.  The
 * process's proc_gone ends the run. */
static void whole_process(void)
{
	unsigned long long t = T0 + 1000;

	one(TR2_REC_THREAD_INFO, PID, T0);
	one(TR2_REC_VERSION, PID, t += 1000);
	one(TR2_REC_START, PID, t += 1000);
	one(TR2_REC_CMD_PATH, PID, t += 1000);
	one(TR2_REC_CMD_ANCESTRY, PID, t += 1000);
	one(TR2_REC_CMD_NAME, PID, t += 1000);
	one(TR2_REC_CMD_MODE, PID, t += 1000);
	one(TR2_REC_ALIAS, PID, t += 1000);
	one(TR2_REC_DEF_PARAM, PID, t += 1000);
	one(TR2_REC_DEF_REPO, PID, t += 1000);
	one(TR2_REC_REGION_ENTER, PID, t += 1000);
	one(TR2_REC_REGION_ENTER, PID, t += 1000);
	one(TR2_REC_DATA, PID, t += 1000);
	one(TR2_REC_DATA_JSON, PID, t += 1000);
	one(TR2_REC_PRINTF, PID, t += 1000);
	one(TR2_REC_TIMER_START, PID, t += 1000);
	one(TR2_REC_COUNTER_ADD, PID, t += 1000);
	one(TR2_REC_REGION_LEAVE, PID, t += 1000);
	one(TR2_REC_ERROR, PID, t += 1000);
	one(TR2_REC_THREAD_INFO, TID2, t += 1000);
	one(TR2_REC_THREAD_START, TID2, t += 1000);
	one(TR2_REC_REGION_ENTER, TID2, t += 1000);
	one(TR2_REC_TIMER_START, TID2, t += 1000);
	one(TR2_REC_COUNTER_ADD, TID2, t += 1000);
	begin(TR2_REC_TIMER_START, PID, TID2, 38, t += 1000, TH_TIMER, 1, 0);
	str(file); str("test"); str("th_timer1"); end();
	begin(TR2_REC_COUNTER_ADD, PID, TID2, 39, t += 1000, TH_COUNTER, 1, 0);
	str(file); str("test"); str("th_counter1"); end();
	begin(TR2_REC_METRICS, PID, TID2, 0, t += 1000, 0, 0, 0);
	timer(TIMER, 3, 3000000, 500000, 1500000); counter(COUNTER, 2);
	timer(TH_TIMER, 2, 800000, 300000, 500000); counter(TH_COUNTER, 11); end();
	one(TR2_REC_THREAD_EXIT, TID2, t += 1000);
	one(TR2_REC_THREAD_GONE, TID2, t += 1000);
	t += 1000;
	begin(TR2_REC_THREAD_INFO, PID, TID3, 0, t, 1, T0, t);
	hdr.thread_id = 2; str("worker"); str("th02:worker"); end();
	begin(TR2_REC_COUNTER_ADD, PID, TID3, 40, t += 1000, COUNTER_B, 1, 0);
	str("tests/progs/tr2_plugin.c"); str("test"); str("counter1"); end();
	begin(TR2_REC_METRICS, PID, TID3, 0, t += 1000, 0, 1, 0);   /* no thread_exit */
	counter(COUNTER_B, 7); timer(TIMER, 1, 250000, 250000, 250000); counter(TH_COUNTER, 1); end();
	one(TR2_REC_THREAD_GONE, TID3, t += 1000);
	one(TR2_REC_REGION_LEAVE, PID, t += 1000);
	one(TR2_REC_EXIT, PID, t += 1000);
	begin(TR2_REC_METRICS, PID, PID, 0, t += 1000, 0, 0, 0);
	timer(TIMER, 1, 4000000, 4000000, 4000000); counter(COUNTER, 5);
	timer(TH_TIMER, 1, 100000, 100000, 100000); end();
	one(TR2_REC_ATEXIT, PID, t += 1000);
	one(TR2_REC_THREAD_GONE, PID, t += 1000);
	one(TR2_REC_PROC_GONE, PID, t += 1000);
}

/* Children, exec, and a child process traced in follow mode that execs:
 * sids parent/child, cmd_name hierarchies, t_abs after a stop. */
static void children_and_exec(void)
{
	unsigned long long t = T0 + 1000;

	one(TR2_REC_THREAD_INFO, PID, T0);
	one(TR2_REC_VERSION, PID, t += 1000);
	one(TR2_REC_CMD_NAME, PID, t += 1000);
	one(TR2_REC_CHILD_START, PID, t += 1000);
	one(TR2_REC_FORK, CHILD, t += 1000);
	/* exec of a known program (not stopped), then its loader maps an
	 * object not known yet (stopped: tr2-bpf attaches and resumes it) */
	begin(TR2_REC_EXECVE, CHILD, CHILD, 0, t += 1000, 0, 0, 0); end();
	begin(TR2_REC_NEW_OBJECT, CHILD, CHILD, 0, t += 1000, 1, DEV, INO); end();
	t += RESUMED;
	begin(TR2_REC_THREAD_INFO, CHILD, CHILD, 0, t, PID, t - RESUMED - 2000, t - RESUMED - 2000);   /* forked */
	str("git"); str("git"); end();
	begin(TR2_REC_VERSION, CHILD, CHILD, 5, t += 1000, 0, 0, 0); str("git.c"); str("2.39.5"); end();
	begin(TR2_REC_CMD_NAME, CHILD, CHILD, 6, t += 1000, 0, 0, 0); str("git.c"); str("rev-parse"); end();
	begin(TR2_REC_EXIT, CHILD, CHILD, 7, t += 1000, 0, 0, 0); str("git.c"); end();
	begin(TR2_REC_ATEXIT, CHILD, CHILD, 8, t += 1000, 0, 0, 0); str("git.c"); end();
	begin(TR2_REC_THREAD_GONE, CHILD, CHILD, 0, t += 1000, 0, 0, 0); end();
	/* fuzz_decode: a PROC_GONE with num[0] has tr2-bpf's lost-events marker first */
	begin(TR2_REC_PROC_GONE, CHILD, CHILD, 0, t += 1000, 12, 0, 0); end();
	one(TR2_REC_CHILD_READY, PID, t += 1000);
	one(TR2_REC_CHILD_EXIT, PID, t += 1000);
	one(TR2_REC_EXEC, PID, t += 1000);
	one(TR2_REC_EXEC_RESULT, PID, t += 1000);
	one(TR2_REC_EXECVE, PID, t += 1000);
	t += RESUMED;
	one(TR2_REC_VERSION, PID, t += 1000);
	one(TR2_REC_START, PID, t += 1000);
	one(TR2_REC_SIGNAL, PID, t += 1000);
	one(TR2_REC_PROC_GONE, PID, t += 1000);
}

/* Follow mode, the parent gone first: the session keeps the parent (its
 * sid, its cmd_name hierarchy) while the child it forked still refers to
 * it, and frees both at the child's proc_gone. */
static void parent_gone_first(void)
{
	unsigned long long t = T0 + 1000;

	one(TR2_REC_THREAD_INFO, PID, T0);
	one(TR2_REC_VERSION, PID, t += 1000);
	one(TR2_REC_CMD_NAME, PID, t += 1000);
	one(TR2_REC_FORK, CHILD, t += 1000);
	one(TR2_REC_EXIT, PID, t += 1000);
	one(TR2_REC_ATEXIT, PID, t += 1000);
	one(TR2_REC_PROC_GONE, PID, t += 1000);
	begin(TR2_REC_EXECVE, CHILD, CHILD, 0, t += 1000, 1, DEV, INO); end();
	t += RESUMED;
	begin(TR2_REC_THREAD_INFO, CHILD, CHILD, 0, t, PID, t - RESUMED - 4000, t - RESUMED - 4000);   /* forked */
	str("git"); str("git"); end();
	begin(TR2_REC_VERSION, CHILD, CHILD, 5, t += 1000, 0, 0, 0); str("git.c"); str("2.39.5"); end();
	begin(TR2_REC_CMD_NAME, CHILD, CHILD, 6, t += 1000, 0, 0, 0); str("git.c"); str("gc"); end();
	begin(TR2_REC_COUNTER_ADD, CHILD, CHILD, 37, t += 1000, COUNTER, 0, 0);
	str("git.c"); str("gc"); str("objects"); end();
	begin(TR2_REC_METRICS, CHILD, CHILD, 0, t += 1000, 0, 0, 0); counter(COUNTER, 42); end();
	begin(TR2_REC_ATEXIT, CHILD, CHILD, 8, t += 1000, 0, 0, 0); str("git.c"); end();
	begin(TR2_REC_THREAD_GONE, CHILD, CHILD, 0, t += 1000, 0, 0, 0); end();
	begin(TR2_REC_PROC_GONE, CHILD, CHILD, 0, t += 1000, 0, 0, 0); end();
}

/* Records the eBPF side makes of hostile programs: cut records, NULL and
 * unreadable strings, truncated strings, bytes JSON must escape. */
static void hostile(void)
{
	static char big[TR2_STR_MAX + 100];
	unsigned long long t = T0 + 1000;

	memset(big, 'x', sizeof(big) - 1);
	one(TR2_REC_THREAD_INFO, PID, T0);
	begin(TR2_REC_VERSION, PID, PID, 1, t += 1000, 0, 0, 0); str(file); fault_str(); end();
	begin(TR2_REC_START, PID, PID, 2, t += 1000, 0, 0, 0); null_str();
	str("prog"); hdr.nvec++; str("\"q\" \\ \x01\x1f\x7f \xff\xfe \xc3\x28 \xed\xa0\x80"); hdr.nvec++;
	fault_str(); hdr.nvec++; null_str(); hdr.nvec++; end();
	begin(TR2_REC_ERROR, PID, PID, -1, t += 1000, 0, 0, 0); str(file); str(big); str("%s %n %%"); end();
	/* cut: the record ran out of room after its file */
	begin(TR2_REC_REGION_ENTER, PID, PID, 3, t += 1000, 0, 0, 0); hdr.flags = TR2_RECF_CUT; str(file); end();
	begin(TR2_REC_DATA, PID, PID, 4, t += 1000, -1, -5, 0); str(file); null_str(); null_str(); null_str(); end();
	begin(TR2_REC_DATA_JSON, PID, PID, 5, t += 1000, 0, 0, 0); str(file); str("c"); str("k"); str("{not json"); end();
	begin(TR2_REC_THREAD_START, PID, TID2, 6, t += 1000, 0, 0, 0); hdr.thread_id = 99;
	str(file); str("a thread name far longer than git's limit \xc3\xa9"); end();
	begin(TR2_REC_REGION_LEAVE, PID, TID2, 7, t += 1000, 0, 0, 0); str(file); null_str(); null_str(); null_str(); end();
	begin(TR2_REC_TIMER_STOP, PID, TID2, 8, t += 1000, 7, 1, 0); str(file); str("c"); str("never started"); end();
	begin(TR2_REC_CHILD_EXIT, PID, PID, 9, t += 1000, 77, -1, 127); str(file); end();
	begin(TR2_REC_PRINTF, PID, PID, 10, t += 1000, 0, 0, 0); str(""); str(""); end();
	begin(TR2_REC_ATEXIT, PID, PID, 11, t += 1000, 0, 0, 0); str(file); end();
}

/* Interned strings (bpf/tr2_record.h): a site's first record from a thread
 * carries its literals, later ones refer to them; a thread whose copies
 * ended refers to them once more, which is refused. */
static void interned(void)
{
	unsigned long long t = T0 + 1000;

	one(TR2_REC_THREAD_INFO, PID, T0);
	for (int i = 0; i < 3; i++) {
		begin(TR2_REC_REGION_ENTER, PID, PID, 30, t += 1000, 0, 0, 0);
		hdr.site = 5;
		hdr.interned = 0xf;
		if (i)
			hdr.flags = TR2_RECF_REF;
		else {
			str(file); str("cat"); str("label"); null_str();
		}
		end();
		begin(TR2_REC_DATA, PID, PID, 32, t += 1000, 0, i, 0);
		hdr.site = 6;
		hdr.interned = 0x3;
		if (i)
			hdr.flags = TR2_RECF_REF;
		else {
			str(file); str("cat");
		}
		str(i ? "key-again" : "key"); null_str(); end();
	}
	one(TR2_REC_THREAD_GONE, PID, t += 1000);
	begin(TR2_REC_REGION_LEAVE, PID, PID, 30, t += 1000, 0, 0, 0);
	hdr.site = 5; hdr.interned = 0xf; hdr.flags = TR2_RECF_REF; end();
}

/* Inputs that made fuzz_decode fail, rebuilt here so that they follow the
 * record layout when it changes (tests/fuzz/README.md says what each shows). */
static void crashes(void)
{
	/* A timestamp near 2^63: (int64_t)ts_ns + mono_to_real_ns overflows in
	 * tr2_session.c's make_sid() and ev_init(). */
	begin(TR2_REC_VERSION, PID, PID, 1, 0x7000000000000000ull, 0, 0, 0); str(file); str("1.0"); end();
	save("session-ts-overflow");

	/* A depth of INT_MAX: ev_init()'s 1 + (int)depth overflows. */
	begin(TR2_REC_PRINTF, PID, PID, 1, T0, 0, 0, 0); str(file); str("deep"); end();
	memcpy(out + offsetof(struct tr2_rec, depth), &(__u32){ 0x7fffffff }, 4);
	save("session-depth-overflow");

	/* A depth of 2^30: the PERF target writes 2 * (nesting - 1) dots, a
	 * 2 GiB line (tr2_tgt_perf.c perf_prefix), from a 100-byte record. */
	begin(TR2_REC_PRINTF, PID, PID, 1, T0, 0, 0, 0); str(file); str("deep"); end();
	memcpy(out + offsetof(struct tr2_rec, depth), &(__u32){ 0x40000000 }, 4);
	save("perf-depth-oom");

	/* Counter sums of three threads that overflow int64_t when added up
	 * into the process total (merge_thread_metrics: m->count += tm->count),
	 * where git's tr2_ctr.c sums in uint64_t.  Each thread's sum comes in a
	 * TR2_REC_METRICS record before its thread_exit. */
	one(TR2_REC_THREAD_INFO, PID, T0);
	begin(TR2_REC_COUNTER_ADD, PID, PID, 37, T0 + 1000, COUNTER, 0, 0); str(file); str("c"); str("n"); end();
	for (unsigned i = 1; i <= 3; i++) {
		begin(TR2_REC_THREAD_START, PID, PID + i, 28, T0 + 3000 * i, 0, 0, 0);
		hdr.thread_id = (int)i; str(file); str("w"); end();
		begin(TR2_REC_METRICS, PID, PID + i, 0, T0 + 3000 * i + 1000, 0, 0, 0);
		counter(COUNTER, (long long)(~0ull >> 1)); end();
		begin(TR2_REC_THREAD_EXIT, PID, PID + i, 29, T0 + 3000 * i + 2000, 0, 0, 0);
		str(file); end();
	}
	one(TR2_REC_ATEXIT, PID, T0 + 20000);
	save("session-counter-overflow");
}

int main(int argc, char **argv)
{
	char name[64];

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: make_decode_corpus DIR [CRASHES_DIR]\n");
		return 2;
	}
	if (argc == 3) {
		dir = argv[2];
		crashes();
	}
	dir = argv[1];
	for (unsigned k = 0; k < TR2_REC__COUNT; k++) {
		one(k, PID, T0 + 5000);
		snprintf(name, sizeof(name), "%02u-%s", k, kind_names[k]);
		save(name);
		if (k >= TR2_REC__PROBES)
			continue;
		one(TR2_REC_THREAD_INFO, PID, T0);
		one(TR2_REC_START, PID, T0 + 1000);
		one(k, PID, T0 + 5000);
		snprintf(name, sizeof(name), "%02u-%s-after-start", k, kind_names[k]);
		save(name);
	}
	whole_process();
	save("run-whole-process");
	children_and_exec();
	save("run-children-exec");
	hostile();
	save("run-hostile");
	interned();
	save("run-interned");
	parent_gone_first();
	save("run-parent-gone");
	return 0;
}
