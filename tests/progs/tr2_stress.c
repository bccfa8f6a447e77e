/*
 * tr2_stress: the programs tests/e2e/reliability.sh traces: floods, long
 * runs, exec, fork, many threads.  Every mode calls trace2_initialize(),
 * trace2_cmd_start() and trace2_cmd_name(<mode>) first.
 *
 *   tr2_stress flood THREADS ITERS
 *       THREADS threads ("flood"), each ITERS times region_enter,
 *       data_intmax, region_leave as fast as it can; then prints
 *       "emitted N": the number of trace2 events this run emits in all
 *       (version, start, cmd_name, thread_start/exit, the loops, exit and
 *       atexit), each one probe hit.  Exits 0.
 *   tr2_stress nest THREADS REPS
 *       THREADS threads started one after the other, so that the Nth is
 *       "thNN:nest"; once all have started they run at once, each REPS
 *       times: regions level1 > level2 > level3 with data at every level
 *       (value "thread" = its number).  Exits 0.
 *   tr2_stress loop [US]
 *       a thread loops on region_enter/leave ("loop"/"iter") with a US
 *       (100) microseconds pause; the main thread answers lines on stdin:
 *         q     prints "enabled=E iters=N" (E = trace2_is_enabled())
 *         mark  emits data "loop"/"mark" = "before-signal", prints "marked"
 *       and ends at EOF (exit 0).  Prints "waiting" when ready.
 *   tr2_stress spin [MS]
 *       prints "running", then emits a region and a data every millisecond
 *       until killed, or for MS milliseconds and exits 0.
 *   tr2_stress exec PATH [ARG...]
 *       enters region "exec"/"around_exec" (as git runs a dashed command
 *       inside a region), then trace2_exec(PATH, ARGS) and execv(PATH, ARGS):
 *       the new program starts with no region open.  Prints nothing.  If
 *       execv fails: exec_result -1, region_leave, exit 127.
 *   tr2_stress fork
 *       three children, one after the other, each reported by child_start
 *       and child_exit: "probes" (fork, exec of tr2_stress child), "noprobes"
 *       (fork, exec of /bin/true) and "forked" (fork only: a region in the
 *       child, then _exit(0)).  Exits 0.
 *   tr2_stress child
 *       the three first events, then exit 0.
 *   tr2_stress family ROUNDS
 *       ROUNDS times: a grandchild behind a shell (sh -c "tr2_stress child;
 *       /bin/true") and a sibling "tr2_stress busy 20" at once, both waited
 *       for, then data "family"/"round" = I.  Exits 0.
 *   tr2_stress busy MS
 *       spins MS milliseconds, then data "busy"/"done" = 1.  Exits 0.
 *   tr2_stress sites N
 *       N times, from the same five call sites: region_enter "sites" /
 *       "item-I" (a label formatted into a buffer), data_string "sites" /
 *       "value" = "v-I", data_intmax "sites" / "i" = I, data_intmax with a
 *       category chosen at run time ("even" or "odd") / "parity" = I, and
 *       region_leave; then data_intmax "merged-odd" or "merged-even" / "k"
 *       = I from two call sites that gcc -Os merges into one call of the runtime.
 *       Literal and run-time strings side by side at one site, and two
 *       literals at one site, for the tracer's interning of literals.
 *       Exits 0.
 *
 *   tr2_stress --wait-stdin MODE ...
 *       after cmd_name, prints "waiting" and blocks until a line (or EOF)
 *       arrives on stdin, so that a test can attach with -p first.
 */
#define TRACE2_EXE_VERSION "stress-1.0"
#include <trace2.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* Sleeps us microseconds; spins under 100 (a sleep takes 50 more). */
static void pause_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000L };
	long long until = now_us() + us;

	if (us >= 100)
		nanosleep(&t, NULL);
	else
		while (now_us() < until)
			;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* ------------------------------------------------------------ flood */

static long flood_iters;

static void *flood_thread(void *arg)
{
	trace2_thread_start("flood");
	for (long i = 0; i < flood_iters; i++) {
		trace2_region_enter("stress", "iter", 0);
		trace2_data_intmax("stress", 0, "i", i);
		trace2_region_leave("stress", "iter", 0);
	}
	trace2_thread_exit();
	return arg;
}

static int run_flood(int nthreads, long iters)
{
	pthread_t *th = calloc(nthreads, sizeof(*th));

	if (!th)
		die("calloc");
	flood_iters = iters;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, flood_thread, NULL))
			die("pthread_create");
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	/* version start cmd_name + per thread (start, 3 per iteration, exit)
	 * + exit atexit */
	printf("emitted %ld\n", 3 + nthreads * (2 + 3 * iters) + 2);
	fflush(stdout);
	free(th);
	return trace2_cmd_exit(0);
}

/* ------------------------------------------------------------- nest */

static pthread_mutex_t nest_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nest_cond = PTHREAD_COND_INITIALIZER;
static int nest_started;
static pthread_barrier_t nest_barrier;
static int nest_reps;

static void *nest_thread(void *arg)
{
	int me;

	/* Numbered in start order: the next thread is created only after
	 * this one has its number. */
	trace2_thread_start("nest");
	pthread_mutex_lock(&nest_lock);
	me = ++nest_started;
	pthread_cond_signal(&nest_cond);
	pthread_mutex_unlock(&nest_lock);
	pthread_barrier_wait(&nest_barrier);

	for (int i = 0; i < nest_reps; i++) {
		trace2_region_enter("nest", "level1", 0);
		trace2_data_intmax("nest", 0, "thread", me);
		trace2_region_enter("nest", "level2", 0);
		trace2_data_string("nest", 0, "where", "level2");
		trace2_region_enter("nest", "level3", 0);
		trace2_data_intmax("nest", 0, "i", i);
		trace2_region_leave("nest", "level3", 0);
		trace2_region_leave("nest", "level2", 0);
		trace2_region_leave("nest", "level1", 0);
		if (i % 4 == 0)
			sched_yield();  /* more interleaving */
	}
	trace2_thread_exit();
	return arg;
}

static int run_nest(int nthreads, int reps)
{
	pthread_t *th = calloc(nthreads, sizeof(*th));

	if (!th)
		die("calloc");
	nest_reps = reps;
	pthread_barrier_init(&nest_barrier, NULL, nthreads);
	for (int i = 0; i < nthreads; i++) {
		if (pthread_create(&th[i], NULL, nest_thread, NULL))
			die("pthread_create");
		pthread_mutex_lock(&nest_lock);
		while (nest_started < i + 1)
			pthread_cond_wait(&nest_cond, &nest_lock);
		pthread_mutex_unlock(&nest_lock);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	free(th);
	return trace2_cmd_exit(0);
}

/* ------------------------------------------------------------- loop */

static atomic_ulong loop_iters;
static atomic_int loop_stop;
static long loop_pause_us = 100;

static void *loop_thread(void *arg)
{
	while (!atomic_load(&loop_stop)) {
		trace2_region_enter("loop", "iter", 0);
		trace2_region_leave("loop", "iter", 0);
		atomic_fetch_add(&loop_iters, 1);
		pause_us(loop_pause_us);
	}
	return arg;
}

static int run_loop(void)
{
	char line[64];
	pthread_t th;

	if (pthread_create(&th, NULL, loop_thread, NULL))
		die("pthread_create");
	printf("waiting\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "q\n")) {
			printf("enabled=%d iters=%lu\n", trace2_is_enabled(), atomic_load(&loop_iters));
		} else if (!strcmp(line, "mark\n")) {
			trace2_data_string("loop", 0, "mark", "before-signal");
			printf("marked\n");
		} else {
			printf("unknown command\n");
		}
		fflush(stdout);
	}
	atomic_store(&loop_stop, 1);
	pthread_join(th, NULL);
	return trace2_cmd_exit(0);
}

/* ------------------------------------------------------------- spin */

static int run_spin(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("running\n");
	fflush(stdout);
	for (long n = 0;; n++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (ms >= 0 && (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			return trace2_cmd_exit(0);
		trace2_region_enter("spin", "tick", 0);
		trace2_data_intmax("spin", 0, "n", n);
		trace2_region_leave("spin", "tick", 0);
		pause_us(1000);
	}
}

/* ------------------------------------------------------- exec, fork */

static int run_exec(char **argv)
{
	int id;

	trace2_region_enter("exec", "around_exec", 0);
	id = trace2_exec(argv[0], (const char **)argv);
	execv(argv[0], argv);
	trace2_exec_result(id, -1);
	trace2_region_leave("exec", "around_exec", 0);
	return trace2_cmd_exit(127);
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_fork(const char *self)
{
	static const char *probes_argv[] = { "tr2_stress", "child", NULL };
	static const char *noprobes_argv[] = { "true", NULL };
	static const char *forked_argv[] = { "(fork)", NULL };
	struct trace2_child probes = { .child_class = "probes", .argv = probes_argv };
	struct trace2_child noprobes = { .child_class = "noprobes", .argv = noprobes_argv };
	struct trace2_child forked = { .child_class = "forked", .argv = forked_argv };

	trace2_child_start(&probes);
	probes.pid = fork();
	if (probes.pid == 0) {
		execv(self, (char **)probes_argv);
		_exit(127);
	}
	trace2_child_exit(&probes, wait_child(probes.pid));

	trace2_child_start(&noprobes);
	noprobes.pid = fork();
	if (noprobes.pid == 0) {
		execv("/bin/true", (char **)noprobes_argv);
		_exit(127);
	}
	trace2_child_exit(&noprobes, wait_child(noprobes.pid));

	trace2_child_start(&forked);
	forked.pid = fork();
	if (forked.pid == 0) {
		trace2_region_enter("fork", "in_child", 0);
		trace2_data_intmax("fork", 0, "value", 7);
		trace2_region_leave("fork", "in_child", 0);
		_exit(0);
	}
	trace2_child_exit(&forked, wait_child(forked.pid));
	return trace2_cmd_exit(0);
}

/* ----------------------------------------------------------- family */

/* Spins for ms milliseconds (on the CPU: the kernel switches between it
 * and its relatives), then emits data "busy"/"done" = 1. */
static int run_busy(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	trace2_data_intmax("busy", 0, "done", 1);
	return trace2_cmd_exit(0);
}

/* The shapes in which the kernel took a traced process's enable away
 * (loader/tr2_attach.h, tr2_attach_enable): each round forks
 * "sh -c 'SELF child; /bin/true'" (a grandchild behind a shell, both
 * ending) and "SELF busy 20" (a sibling working on through their ends),
 * waits for both, and emits data "family"/"round" = I. */
static int run_family(int rounds)
{
	char self[PATH_MAX], script[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		die("readlink /proc/self/exe");
	self[n] = '\0';
	snprintf(script, sizeof(script), "'%s' child; /bin/true", self);
	for (int i = 0; i < rounds; i++) {
		pid_t sh = fork(), busy;

		if (sh == 0) {
			execl("/bin/sh", "sh", "-c", script, (char *)NULL);
			_exit(127);
		}
		busy = fork();
		if (busy == 0) {
			execl(self, "tr2_stress", "busy", "20", (char *)NULL);
			_exit(127);
		}
		if (sh < 0 || busy < 0 || wait_child(sh) || wait_child(busy))
			die("family: a child failed");
		trace2_data_intmax("family", 0, "round", i);
	}
	return trace2_cmd_exit(0);
}

/* ------------------------------------------------------------ sites */

static __attribute__((noinline)) void sink(int i)
{
	__asm__ __volatile__("" : : "r"(i));
}

/* Two call sites, the same code but for the literal category each loads:
 * gcc -Os cross-jumps them into one call of the runtime that passes both. */
static __attribute__((noinline, optimize("Os"))) void merged_sites(int i)
{
	if (i % 2) { trace2_data_intmax("merged-odd", 0, "k", i); sink(i); } else { trace2_data_intmax("merged-even", 0, "k", i); sink(i); }
}

static int run_sites(int n)
{
	static const char *const parity[] = { "even", "odd" };
	char label[32], value[32];

	for (int i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "item-%d", i);
		snprintf(value, sizeof(value), "v-%d", i);
		trace2_region_enter("sites", label, 0);
		trace2_data_string("sites", 0, "value", value);
		trace2_data_intmax("sites", 0, "i", i);
		trace2_data_intmax(parity[i % 2], 0, "parity", i);
		trace2_region_leave("sites", label, 0);
	}
	for (int i = 0; i < n; i++)
		merged_sites(i);
	return trace2_cmd_exit(0);
}

/* ------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr, "usage: tr2_stress flood THREADS ITERS | nest THREADS REPS | loop [US] | spin [MS] |"
		" exec PATH [ARG...] | fork | child | family ROUNDS | busy MS | sites N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int wait_stdin = argc > 1 && !strcmp(argv[1], "--wait-stdin");
	const char *mode;
	char line[64];

	if (wait_stdin)
		argc--, argv++;
	mode = argc > 1 ? argv[1] : "";
	trace2_initialize();
	trace2_cmd_start((const char **)argv - wait_stdin);
	trace2_cmd_name(mode);
	if (wait_stdin) {
		printf("waiting\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
	}
	if (!strcmp(mode, "flood") && argc == 4)
		return run_flood(atoi(argv[2]), atol(argv[3]));
	if (!strcmp(mode, "nest") && argc == 4)
		return run_nest(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(mode, "loop") && (argc == 2 || argc == 3)) {
		if (argc == 3)
			loop_pause_us = atol(argv[2]);
		return run_loop();
	}
	if (!strcmp(mode, "spin") && (argc == 2 || argc == 3))
		return run_spin(argc == 3 ? atol(argv[2]) : -1);
	if (!strcmp(mode, "exec") && argc >= 3)
		return run_exec(argv + 2);
	if (!strcmp(mode, "fork") && argc == 2)
		return run_fork("/proc/self/exe");
	if (!strcmp(mode, "child") && argc == 2)
		return trace2_cmd_exit(0);
	if (!strcmp(mode, "family") && argc == 3)
		return run_family(atoi(argv[2]));
	if (!strcmp(mode, "busy") && argc == 3)
		return run_busy(atol(argv[2]));
	if (!strcmp(mode, "sites") && argc == 3)
		return run_sites(atoi(argv[2]));
	usage();
}
