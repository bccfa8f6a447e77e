/*
 * tr2_summary: the program tests/e2e/summary.sh traces with
 * tr2-bpf --summary.  Known counts, so that a test can check them:
 *
 *   tr2_summary [--wait-stdin] [--children C] [--pause-us U] [--deep] ITERS
 *
 * Events, in order: initialize, start, cmd_name "summary" ("child" in a
 * child); region "demo"/"open_at_attach" entered; with --wait-stdin prints
 * "waiting" and blocks until a line (or EOF) on stdin; region
 * "demo"/"open_at_attach" left; then ITERS times (i = 0..ITERS-1), with U
 * microseconds of sleep after each:
 *     region "demo"/"outer" around
 *       10 x region "demo"/"inner"                      literal strings
 *       region "demo"/"item-<i % 3>"                    label built at run time
 *       region "other"/"skipped"                        another category
 *       data "demo"/"iteration" = i                     integer data
 *       data "<even|odd>"/"parity" = i                  category built at run time
 *       data "demo"/"text" = "s"                        string data (not aggregated)
 *   with --deep, once: 40 nested regions "deep"/"level" (deeper than the
 *   tracer's 32-level stack); C children (fork, exec of this program with
 *   "--child ITERS"; each child runs the loop too), waited for; last, region
 *   "demo"/"never_left" entered and never left; exit 0.
 */
#define TRACE2_EXE_VERSION "summary-1.0"
#include <trace2.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int wait_stdin = 0, child = 0, children = 0, deep = 0;
	long iters, pause_us = 0;
	const char **args = (const char **)argv;
	char line[64], label[32];

	for (argc--, argv++; argc > 1; argc--, argv++) {
		if (!strcmp(argv[0], "--wait-stdin"))
			wait_stdin = 1;
		else if (!strcmp(argv[0], "--child"))
			child = 1;
		else if (!strcmp(argv[0], "--deep"))
			deep = 1;
		else if (!strcmp(argv[0], "--children") && argc > 2)
			children = atoi(*++argv), argc--;
		else if (!strcmp(argv[0], "--pause-us") && argc > 2)
			pause_us = atol(*++argv), argc--;
		else
			break;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: tr2_summary [--wait-stdin] [--children C] [--pause-us U] [--deep] ITERS\n");
		return 2;
	}
	iters = atol(argv[0]);
	trace2_initialize();
	trace2_cmd_start(args);
	trace2_cmd_name(child ? "child" : "summary");
	trace2_region_enter("demo", "open_at_attach", 0);
	if (wait_stdin) {
		printf("waiting\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
	}
	trace2_region_leave("demo", "open_at_attach", 0);
	for (long i = 0; i < iters; i++) {
		trace2_region_enter("demo", "outer", 0);
		for (int j = 0; j < 10; j++) {
			trace2_region_enter("demo", "inner", 0);
			trace2_region_leave("demo", "inner", 0);
		}
		snprintf(label, sizeof(label), "item-%ld", i % 3);
		trace2_region_enter("demo", label, 0);
		trace2_region_leave("demo", label, 0);
		trace2_region_enter("other", "skipped", 0);
		trace2_region_leave("other", "skipped", 0);
		trace2_data_intmax("demo", 0, "iteration", i);
		trace2_data_intmax(i % 2 ? "odd" : "even", 0, "parity", i);
		trace2_data_string("demo", 0, "text", "s");
		trace2_region_leave("demo", "outer", 0);
		if (pause_us)
			usleep(pause_us);
	}
	if (deep) {
		for (int j = 0; j < 40; j++)
			trace2_region_enter("deep", "level", 0);
		for (int j = 0; j < 40; j++)
			trace2_region_leave("deep", "level", 0);
	}
	for (int c = 0; c < children; c++) {
		char n[24];
		pid_t pid;

		snprintf(n, sizeof(n), "%ld", iters);
		pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", args[0], "--child", n, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	trace2_region_enter("demo", "never_left", 0);
	return trace2_cmd_exit(0);
}
