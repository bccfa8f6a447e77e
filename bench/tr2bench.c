/*
 * tr2bench: the program behind every row of BENCHMARKS.md (bench/run.sh).
 *
 *   tr2bench [-S] [-W] [-c CPU] [-t THREADS] [-s SPIN] [-o FILE] KIND COUNT
 *   tr2bench [-S] [-W] [-c CPU] [-t THREADS] [-s SPIN] [-o FILE] KIND SECONDSs  e.g. 5s
 *
 * Runs KIND's loop COUNT times (or for SECONDS) in each of THREADS threads,
 * pinned to CPU if given, and prints one line on stdout:
 *   KIND iterations=I events=E ns=T spin_ns=S traced=R
 * T is the time of the loops alone (startup and exit excluded): with COUNT and
 * one thread, the CPU time of the thread (user and kernel, where the probes'
 * BPF programs run), so that other processes sharing the CPU do not count;
 * otherwise wall time. E is how
 * many events (trace2 calls, LTTng events, written lines; system calls or
 * clock reads for getppid and clock) the loops make: I times the calls per
 * iteration. With no tracer attached the probes fire nothing; E is then what
 * a tracer would have received. R is 1 when tr2-bpf (or
 * anything attached to tr2:enable) had this process's trace2__state.on
 * raised at the end of the loops, else 0: a run meant to be untraced that
 * says 1 was traced by someone else's tr2-bpf -a.
 *
 * -s SPIN (with COUNT): after each iteration, SPIN iterations of the empty
 * loop: events spaced out as in a real program, so that a tracer keeps up
 * and sleeps between them.  The run alternates blocks of PACED_BLOCK such
 * iterations with blocks of as many SPINs alone; T is the CPU time of the
 * thread in the first kind of block (spinning included), S in the second:
 * what the events cost is T - S (S is 0 without -s).  The spinning is most
 * of a paced run, and the CPU of a shared VM runs the same loop at speeds
 * 1.6x apart from one second to the next (282 to 469 ms for one paced run
 * here): it is timed beside the calls, not in another run.  No clock is
 * read per iteration: a read costs tens of ns here and orders the
 * instructions around it, which would change what is measured.
 *
 * -S: stop (SIGSTOP) before the loops, for a loader that attaches to the
 * stopped process and then continues it (bpf-attach).
 *
 * -W: after printing the line, wait for a line (or the end) on standard
 * input before exiting, so that a tracer's statistics can be read while it
 * is still attached (bench/run.sh's bpf_stats).
 *
 * The program never calls trace2_initialize() or trace2_thread_start(), so a
 * tracer sees exactly E events from it and nothing else.
 */
#include <trace2.h>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* 200-byte category and label, for the payload rows. */
static char long_cat[201], long_label[201];
/* CAT and LABEL copied at start: strings built at run time, which the
 * tracer reads at every hit, where it reads literals once per site. */
static char runtime_cat[sizeof(CAT)], runtime_label[sizeof(LABEL)];

static int out_fd = -1;       /* -o FILE: the "write" kind's output */
static uint64_t spin;         /* -s SPIN */
#define PACED_BLOCK 100       /* -s: iterations per block (about 0.3 ms at SPIN 10000) */
static uint64_t start_ns;     /* for the write kind's t_abs column */

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static __attribute__((noinline)) void loop_empty(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		BARRIER();
}

static __attribute__((noinline)) void loop_region(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace2_region_enter(CAT, LABEL, 0);
		trace2_region_leave(CAT, LABEL, 0);
		BARRIER();
	}
}

static __attribute__((noinline)) void loop_region_long(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace2_region_enter(long_cat, long_label, 0);
		trace2_region_leave(long_cat, long_label, 0);
		BARRIER();
	}
}

static __attribute__((noinline)) void loop_region_runtime(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace2_region_enter(runtime_cat, runtime_label, 0);
		trace2_region_leave(runtime_cat, runtime_label, 0);
		BARRIER();
	}
}

/* One system call, the cheapest there is: what entering the kernel costs. */
static __attribute__((noinline)) void loop_getppid(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		getppid();
		BARRIER();
	}
}

/* One clock read (vDSO, no kernel entry), as the runtime takes per call. */
static __attribute__((noinline)) void loop_clock(uint64_t n)
{
	struct timespec ts;

	for (uint64_t i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		BARRIER();
	}
}

/* A stopwatch timer: summed by the tracer, no event of its own. */
TRACE2_DEFINE_TIMER(bench_timer, "bench", "timer", 0);

static __attribute__((noinline)) void loop_timer(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace2_timer_start(bench_timer);
		trace2_timer_stop(bench_timer);
		BARRIER();
	}
}

static __attribute__((noinline)) void loop_intmax(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace2_data_intmax(CAT, 0, "read/cache_nr", (intmax_t)i);
		BARRIER();
	}
}

/* A process that is mostly idle: one region pair, then 10 ms asleep (the
 * traced sibling of bench/run.sh's bystander row). */
static __attribute__((noinline)) void loop_idle(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace2_region_enter(CAT, LABEL, 0);
		trace2_region_leave(CAT, LABEL, 0);
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
}

/* A git-like mix for the tr2-fmt input: a region holding data and a nested
 * region (nesting 2, which git's EVENT target still writes). */
static __attribute__((noinline)) void loop_mix(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace2_region_enter(CAT, LABEL, 1);
		trace2_data_intmax(CAT, 1, "read/cache_nr", (intmax_t)i);
		trace2_region_enter("progress", "Refresh index", 1);
		trace2_data_string("status", 1, "count/untracked", "no");
		trace2_region_leave("progress", "Refresh index", 1);
		trace2_region_leave(CAT, LABEL, 1);
		BARRIER();
	}
}

/* What git's own Trace2 does per event (tr2_tgt_perf.c): read the clock,
 * format a PERF line and write(2) it to an O_APPEND file. */
static void perf_line(const char *event, const char *category, const char *label, int line)
{
	struct timespec ts;
	struct tm tm;
	char buf[512];
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, sizeof(buf),
		     "%02d:%02d:%02d.%06ld %-28.28s:%4d | d0 | %-24s | %-12s | r0  | %9.6f |           | %-12.12s | %s\n",
		     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000, __FILE__, line, "main", event,
		     (double)(now_ns() - start_ns) / 1e9, category, label);
	if (write(out_fd, buf, n) != n)
		abort();
}

static __attribute__((noinline)) void loop_write(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		perf_line("region_enter", CAT, LABEL, __LINE__);
		perf_line("region_leave", CAT, LABEL, __LINE__);
		BARRIER();
	}
}

static const struct kind {
	const char *name;
	loop_fn *fn;
	int calls;          /* events per iteration */
} kinds[] = {
	{ "empty", loop_empty, 0 },
	{ "getppid", loop_getppid, 1 },           /* one system call */
	{ "clock", loop_clock, 1 },               /* one clock_gettime (vDSO) */
	{ "region", loop_region, 2 },             /* trace2.h: inline test, runtime call */
	{ "region_nop1", loop_region_nop1, 2 },   /* stock <sys/sdt.h>: 1-byte nop inline */
	{ "region_long", loop_region_long, 2 },   /* 200-byte category and label */
	{ "region_runtime", loop_region_runtime, 2 }, /* CAT, LABEL built at run time */
	{ "intmax", loop_intmax, 1 },
	{ "timer", loop_timer, 2 },               /* timer_start + timer_stop */
	{ "lttng", loop_lttng, 2 },
	{ "write", loop_write, 2 },
	{ "mix", loop_mix, 6 },
	{ "idle", loop_idle, 2 },                 /* a pair every 10 ms */
};

struct job {
	const struct kind *k;
	uint64_t count;     /* iterations, or 0 for timed */
	uint64_t end_ns;    /* timed: stop at this time */
	uint64_t done;      /* iterations made */
	uint64_t ns;        /* -s: CPU time of the blocks with calls */
	uint64_t spin_ns;   /* -s: CPU time of the blocks of spinning alone */
};

static void *run(void *arg)
{
	struct job *j = arg;

	if (j->count && spin) {
		for (uint64_t left = j->count, n; left; left -= n) {
			uint64_t t0, t1, t2;

			n = left < PACED_BLOCK ? left : PACED_BLOCK;
			t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			for (uint64_t i = 0; i < n; i++) {
				j->k->fn(1);
				loop_empty(spin);
			}
			t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			for (uint64_t i = 0; i < n; i++)
				loop_empty(spin);
			t2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			j->ns += t1 - t0;
			j->spin_ns += t2 - t1;
		}
		j->done = j->count;
		return NULL;
	}
	if (j->count) {
		j->k->fn(j->count);
		j->done = j->count;
		return NULL;
	}
	/* Timed: chunks long enough that the clock read costs nothing; idle's
	 * one at a time, each a 10 ms sleep. */
	uint64_t chunk = j->k->fn == loop_idle ? 1 : 4096;

	while (now_ns() < j->end_ns) {
		j->k->fn(chunk);
		j->done += chunk;
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: tr2bench [-S] [-W] [-c CPU] [-t THREADS] [-s SPIN] [-o FILE] KIND COUNT|SECONDSs\nKIND:");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		fprintf(stderr, " %s", kinds[i].name);
	fputc('\n', stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const struct kind *k = NULL;
	int cpu = -1, nthreads = 1, stop = 0, wait_stdin = 0, opt;
	const char *out = "/dev/null";
	struct job jobs[64];
	pthread_t th[64];
	uint64_t t0, t1, iters = 0, count = 0, end_ns = 0, ns, spin_ns = 0;
	char *end;

	while ((opt = getopt(argc, argv, "SWc:t:s:o:")) != -1) {
		switch (opt) {
		case 'S': stop = 1; break;
		case 'W': wait_stdin = 1; break;
		case 's': spin = strtoull(optarg, NULL, 10); break;
		case 'c': cpu = atoi(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 'o': out = optarg; break;
		default: usage();
		}
	}
	if (argc - optind != 2 || nthreads < 1 || nthreads > 64)
		usage();
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(argv[optind], kinds[i].name))
			k = &kinds[i];
	if (!k)
		usage();
	double v = strtod(argv[optind + 1], &end);
	if (*end == 's')
		end_ns = (uint64_t)(v * 1e9);
	else
		count = (uint64_t)v;   /* accepts 1e8 */

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("tr2bench: sched_setaffinity");
	}
	memset(long_cat, 'c', 200);
	memset(long_label, 'l', 200);
	memcpy(runtime_cat, CAT, sizeof(CAT));
	memcpy(runtime_label, LABEL, sizeof(LABEL));
	out_fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (out_fd < 0) {
		perror(out);
		return 1;
	}

	if (stop)
		raise(SIGSTOP);
	clockid_t clock = count && nthreads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;

	start_ns = now_ns();
	t0 = clock_ns(clock);
	for (int i = 0; i < nthreads; i++)
		jobs[i] = (struct job){ k, count, end_ns ? start_ns + end_ns : 0, 0, 0, 0 };
	if (nthreads == 1) {
		run(&jobs[0]);   /* on the main thread, as a plain program would */
	} else {
		for (int i = 0; i < nthreads; i++)
			pthread_create(&th[i], NULL, run, &jobs[i]);
		for (int i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
	}
	t1 = clock_ns(clock);
	ns = t1 - t0;
	if (count && spin) {
		ns = 0;
		for (int i = 0; i < nthreads; i++)
			ns += jobs[i].ns, spin_ns += jobs[i].spin_ns;
	}
	for (int i = 0; i < nthreads; i++)
		iters += jobs[i].done;
	printf("%s iterations=%llu events=%llu ns=%llu spin_ns=%llu traced=%d\n", k->name,
	       (unsigned long long)iters, (unsigned long long)(iters * k->calls), (unsigned long long)ns,
	       (unsigned long long)spin_ns, (trace2__state.on & 0xffff) != 0);
	if (wait_stdin) {
		char line[16];

		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
	}
	return 0;
}
