/*
 * tr2_shapes: the workload shapes that real programs have, for the tests of
 * tests/e2e/shapes.sh and the "workload shapes" section of `make bench`.
 * Every mode calls trace2_initialize(), trace2_cmd_start() and
 * trace2_cmd_name(<mode>), does its work inside region "shapes"/<mode>,
 * prints "elapsed_ns N" (CLOCK_MONOTONIC, the work alone: what a tracer
 * must not slow) and exits 0.
 *
 *   tr2_shapes spawn N PROG [ARG...]
 *       N times, one after another: fork, exec PROG ARGS, wait.
 *   tr2_shapes child
 *       an instrumented child: region "child"/"work" and data "child"/"n" = 1.
 *   tr2_shapes dlopen N PLUGIN
 *       N times: dlopen PLUGIN, call its tr2_plugin_run(i) (region
 *       "plugin"/"run" with data "plugin"/"i" = i inside), dlclose.
 *   tr2_shapes threads N [noexit]
 *       N threads one after another (each joined before the next starts),
 *       each: thread_start "churn", timer "churn"/"timer" (per thread)
 *       started and stopped, counter "churn"/"counter" (per thread) += 1,
 *       region "churn"/"work", and trace2_thread_exit() unless noexit.
 *   tr2_shapes pingpong N
 *       two threads, both on CPU 0, hand a byte back and forth N times
 *       through two pipes: two context switches a round trip, no event.
 *   tr2_shapes timers K
 *       the main thread starts and stops K distinct timers "many"/"tNN"
 *       (K <= 40) once each, then counter "many"/"c" += 1.
 *
 *   tr2_shapes --wait-stdin MODE ...
 *       after cmd_name, prints "waiting" and blocks until a line (or EOF)
 *       arrives on stdin, so that a test can attach with -p first; and
 *       after "elapsed_ns", prints "done" and blocks again before it exits,
 *       so that the test can look at the tracer while the work is over and
 *       the process still alive.
 */
#define TRACE2_EXE_VERSION "shapes-1.0"
#include <trace2.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void wait_stdin_line(const char *say)
{
	char line[64];

	printf("%s\n", say);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
}

static long count_arg(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (end == s || *end || n < 0) {
		fprintf(stderr, "tr2_shapes: bad count '%s'\n", s);
		exit(2);
	}
	return n;
}

static void spawn(long n, char **argv)
{
	for (long i = 0; i < n; i++) {
		int ws;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			execv(argv[0], argv);
			_exit(127);
		}
		if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws))
			die("child");
	}
}

static void run_dlopen(long n, const char *plugin)
{
	for (long i = 0; i < n; i++) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		void (*run)(long);

		if (!h) {
			fprintf(stderr, "tr2_shapes: %s\n", dlerror());
			exit(1);
		}
		*(void **)&run = dlsym(h, "tr2_plugin_run");
		if (!run)
			die("dlsym");
		run(i);
		dlclose(h);
	}
}

static void child_work(void)
{
	trace2_region_enter("child", "work", 0);
	trace2_data_intmax("child", 0, "n", 1);
	trace2_region_leave("child", "work", 0);
}

TRACE2_DEFINE_TIMER(churn_timer, "churn", "timer", 1);
TRACE2_DEFINE_COUNTER(churn_counter, "churn", "counter", 1);

static void *churn_thread(void *noexit)
{
	trace2_thread_start("churn");
	trace2_timer_start(churn_timer);
	trace2_counter_add(churn_counter, 1);
	trace2_region_enter("churn", "work", 0);
	trace2_region_leave("churn", "work", 0);
	trace2_timer_stop(churn_timer);
	if (!noexit)
		trace2_thread_exit();
	return NULL;
}

static int ping[2], pong[2];

static void on_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void *pong_thread(void *arg)
{
	long n = (long)arg;
	char c;

	on_cpu0();
	for (long i = 0; i < n; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			die("pong");
	return NULL;
}

static void run_pingpong(long n)
{
	pthread_t th;
	char c = 0;

	if (pipe(ping) || pipe(pong))
		die("pipe");
	on_cpu0();
	if (pthread_create(&th, NULL, pong_thread, (void *)n))
		die("pthread_create");
	for (long i = 0; i < n; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			die("ping");
	pthread_join(th, NULL);
}

static void run_threads(long n, int noexit)
{
	for (long i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, churn_thread, noexit ? "" : NULL))
			die("pthread_create");
		pthread_join(th, NULL);
	}
}

/* Forty timers, each its own definition: more than a thread keeps sums of. */
#define T(i) TRACE2_DEFINE_TIMER(many_##i, "many", "t" #i, 0);
T(00) T(01) T(02) T(03) T(04) T(05) T(06) T(07) T(08) T(09)
T(10) T(11) T(12) T(13) T(14) T(15) T(16) T(17) T(18) T(19)
T(20) T(21) T(22) T(23) T(24) T(25) T(26) T(27) T(28) T(29)
T(30) T(31) T(32) T(33) T(34) T(35) T(36) T(37) T(38) T(39)
#undef T
TRACE2_DEFINE_COUNTER(many_counter, "many", "c", 0);

static void run_timers(long k)
{
#define T(i) if (k > 1##i - 100) { trace2_timer_start(many_##i); trace2_timer_stop(many_##i); }
	T(00) T(01) T(02) T(03) T(04) T(05) T(06) T(07) T(08) T(09)
	T(10) T(11) T(12) T(13) T(14) T(15) T(16) T(17) T(18) T(19)
	T(20) T(21) T(22) T(23) T(24) T(25) T(26) T(27) T(28) T(29)
	T(30) T(31) T(32) T(33) T(34) T(35) T(36) T(37) T(38) T(39)
#undef T
	trace2_counter_add(many_counter, 1);
}

int main(int argc, char **argv)
{
	const char *mode;
	uint64_t t0;
	int wait_stdin = argc > 1 && !strcmp(argv[1], "--wait-stdin");

	if (wait_stdin) {
		argv++;
		argc--;
	}
	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	mode = argc > 1 ? argv[1] : "";
	trace2_cmd_name(mode);
	if (wait_stdin)
		wait_stdin_line("waiting");
	t0 = now_ns();
	trace2_region_enter("shapes", mode, 0);
	if (!strcmp(mode, "spawn") && argc > 3)
		spawn(count_arg(argv[2]), argv + 3);
	else if (!strcmp(mode, "child"))
		child_work();
	else if (!strcmp(mode, "dlopen") && argc == 4)
		run_dlopen(count_arg(argv[2]), argv[3]);
	else if (!strcmp(mode, "threads") && (argc == 3 || (argc == 4 && !strcmp(argv[3], "noexit"))))
		run_threads(count_arg(argv[2]), argc == 4);
	else if (!strcmp(mode, "pingpong") && argc == 3)
		run_pingpong(count_arg(argv[2]));
	else if (!strcmp(mode, "timers") && argc == 3 && count_arg(argv[2]) <= 40)
		run_timers(count_arg(argv[2]));
	else {
		fprintf(stderr, "usage: tr2_shapes [--wait-stdin] spawn N PROG [ARG...] | child | "
				"dlopen N PLUGIN | threads N [noexit] | pingpong N | timers K\n");
		return trace2_cmd_exit(2);
	}
	trace2_region_leave("shapes", mode, 0);
	if (strcmp(mode, "child"))
		printf("elapsed_ns %llu\n", (unsigned long long)(now_ns() - t0));
	if (wait_stdin)
		wait_stdin_line("done");
	return trace2_cmd_exit(0);
}
