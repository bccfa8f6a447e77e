/*
 * tr2_batch: the shapes that test the batched event path (bpf/tr2_record.h)
 * for tests/e2e/batch.sh: calls that still wait in a thread's buffer when
 * the thread or the process ends, a thread that blocks or computes right
 * after a call, thread churn, and a process that scribbles over its buffer.
 *
 *   tr2_batch [--wait-stdin] end HOW
 *       version, start and cmd_name (the thread's first batch), then a
 *       region "end"/HOW with data "end"/"i" = 1, 2, 3 inside, left, all
 *       within microseconds, so that they wait in the buffer, then:
 *         thread  the same from a thread "pend" that returns without
 *                 trace2_thread_exit(); the main thread joins it and exits
 *         exec    execl("/bin/true") (not announced by trace2_exec)
 *         _exit   _exit(0)
 *         abort   abort()
 *         crash   a write through a null pointer (SIGSEGV)
 *         kill    SIGKILL to itself
 *   tr2_batch [--wait-stdin] sleep S
 *       region_enter "live"/"sleep", prints "entered", sleeps S seconds,
 *       region_leave.
 *   tr2_batch [--wait-stdin] spin S
 *       region_enter "live"/"spin", prints "entered", computes S seconds
 *       without a call or a system call, region_leave.
 *   tr2_batch threads N
 *       N threads one after the other, each a region pair "churn"/"t";
 *       prints "rss-1000 KIB" after the 1000th and "rss-end KIB" at the end
 *       (VmRSS of /proc/self/status).
 *   tr2_batch hostile
 *       a region pair, then overwrites its thread's buffer (found by its
 *       magic in its anonymous mappings) with bytes that make no calls and a
 *       write position far ahead, makes 10 region pairs, and exits 0.
 *
 * --wait-stdin: after cmd_name, prints "waiting" and reads a line first.
 */
#define TRACE2_EXE_VERSION "batch-1.0"
#include <trace2.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tr2_find_tbuf.h"

static void pending(const char *how)
{
	trace2_region_enter("end", how, 0);
	for (int i = 1; i <= 3; i++)
		trace2_data_intmax("end", 0, "i", i);
	trace2_region_leave("end", how, 0);
}

static void *pend_thread(void *arg)
{
	trace2_thread_start("pend");
	pending("thread");
	return arg;
}

static int run_end(const char *how)
{
	pthread_t t;

	if (!strcmp(how, "thread")) {
		if (pthread_create(&t, NULL, pend_thread, NULL) || pthread_join(t, NULL))
			return 1;
		return trace2_cmd_exit(0);
	}
	pending(how);
	if (!strcmp(how, "exec"))
		execl("/bin/true", "true", (char *)NULL);
	else if (!strcmp(how, "_exit"))
		_exit(0);
	else if (!strcmp(how, "abort"))
		abort();
	else if (!strcmp(how, "crash"))
		*(volatile int *)(uintptr_t)0 = 1;
	else if (!strcmp(how, "kill"))
		kill(getpid(), SIGKILL);
	return 1;
}

static int run_live(const char *what, long seconds)
{
	struct timespec end;

	trace2_region_enter("live", what, 0);
	printf("entered\n");
	fflush(stdout);
	if (!strcmp(what, "sleep")) {
		sleep((unsigned)seconds);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += seconds;
		for (struct timespec now = { 0, 0 }; now.tv_sec < end.tv_sec ||
		     (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec);)
			clock_gettime(CLOCK_MONOTONIC, &now);   /* vDSO: no system call */
	}
	trace2_region_leave("live", what, 0);
	return trace2_cmd_exit(0);
}

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

static void *churn_thread(void *arg)
{
	trace2_region_enter("churn", "t", 0);
	trace2_region_leave("churn", "t", 0);
	return arg;
}

static int run_threads(long n)
{
	for (long i = 1; i <= n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, churn_thread, NULL) || pthread_join(t, NULL))
			return 1;
		if (i == 1000)
			printf("rss-1000 %ld\n", rss_kib());
	}
	printf("rss-end %ld\n", rss_kib());
	return trace2_cmd_exit(0);
}

static int run_hostile(void)
{
	struct tr2_tbuf *b;

	trace2_region_enter("hostile", "before", 0);
	trace2_region_leave("hostile", "before", 0);
	b = find_buffer();
	if (!b) {
		printf("no buffer\n");
		return 1;
	}
	memset(b->data, 0x5a, sizeof(b->data));
	b->pos += 1ull << 30;
	b->wpos = b->pos;
	printf("scribbled\n");
	fflush(stdout);
	for (int i = 0; i < 10; i++) {
		trace2_region_enter("hostile", "after", 0);
		trace2_region_leave("hostile", "after", 0);
	}
	return trace2_cmd_exit(0);
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
	if (!strcmp(mode, "end") && argc == 3)
		return run_end(argv[2]);
	if ((!strcmp(mode, "sleep") || !strcmp(mode, "spin")) && argc == 3)
		return run_live(mode, atol(argv[2]));
	if (!strcmp(mode, "threads") && argc == 3)
		return run_threads(atol(argv[2]));
	if (!strcmp(mode, "hostile") && argc == 2)
		return run_hostile();
	fprintf(stderr, "usage: tr2_batch [--wait-stdin] end thread|exec|_exit|abort|crash|kill | "
			"sleep S | spin S | threads N | hostile\n");
	return 2;
}
