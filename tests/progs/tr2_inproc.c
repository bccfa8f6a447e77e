/*
 * tr2_inproc: the in-process targets' cases that tr2_allapi does not make,
 * for tests/e2e/inproc.sh (which takes threads from tr2_stress flood).
 *
 *   tr2_inproc state          writes "begin\n" on stdout (one write(2)),
 *                             emits a region before trace2_initialize() (never
 *                             written) and a few events after it, writes
 *                             "end\n", then prints what the runtime changed:
 *                               inproc=<byte 2 of trace2__state.on, the
 *                               runtime's own (bytes 0-1 are the kernel's:
 *                               any tracer on the host may raise them)>
 *                               heap=<bytes
 *                               allocated meanwhile> fds=<descriptors opened
 *                               since main()> parent_sid=<GIT_TRACE2_PARENT_SID
 *                               or (unset)>
 *   tr2_inproc run CMD [ARG...]
 *                             runs CMD as a trace2 child (child_start, fork,
 *                             execvp, waitpid, child_exit); exits with its status
 *   tr2_inproc fork           a region around a fork(); the child adds a data
 *                             event and exits through exit(0) (its own atexit)
 *   tr2_inproc signal         a region, then raise(SIGTERM): dies of it
 *   tr2_inproc signals N      N SIGTERMs, which the program handles, sent to the
 *                             main thread while it writes regions; prints
 *                             "handled=N"
 */
#define TRACE2_EXE_VERSION "inproc-1.0"
#include <trace2.h>

#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *s)
{
	if (write(STDOUT_FILENO, s, strlen(s)) < 0)
		exit(1);
}

/* Writes into list (size bytes) the descriptors above 2 that are open and
 * not in the list `except`, as ",3,4," ("" for none). */
static void open_fds(char *list, size_t size, const char *except)
{
	struct dirent *e;
	char name[16];
	DIR *d = opendir("/proc/self/fd");

	list[0] = '\0';
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		snprintf(name, sizeof(name), ",%d,", fd);
		if (fd <= 2 || fd == dirfd(d) || (except && strstr(except, name)))
			continue;
		if (strlen(list) + strlen(name) < size)
			strcat(*list ? list : strcpy(list, ","), name + 1);
	}
	if (d)
		closedir(d);
}

static int state(char **argv)
{
	char inherited[512], fds[512];
	size_t before, after;

	open_fds(inherited, sizeof(inherited), NULL);
	say("begin\n");
	before = mallinfo2().uordblks;
	trace2_region_enter("test", "before_initialize", 0);
	trace2_region_leave("test", "before_initialize", 0);
	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	trace2_region_enter("test", "state", 0);
	trace2_data_string("test", 0, "key", "value");
	trace2_region_leave("test", "state", 0);
	trace2_cmd_exit(0);
	after = mallinfo2().uordblks;
	say("end\n");

	open_fds(fds, sizeof(fds), inherited);
	printf("inproc=%u heap=%zd fds=%.*s parent_sid=%s\n", (unsigned)(trace2__state.on >> 16 & 0xff),
	       (ssize_t)(after - before), *fds ? (int)strlen(fds) - 2 : 0, fds + !!*fds,
	       getenv("GIT_TRACE2_PARENT_SID") ? getenv("GIT_TRACE2_PARENT_SID") : "(unset)");
	return 0;
}

static int run(char **argv)
{
	struct trace2_child child = { .child_class = "test", .argv = (const char **)argv };
	int status = -1;

	trace2_initialize();
	trace2_cmd_start((const char **)argv - 2);
	trace2_cmd_name("inproc");
	trace2_child_start(&child);
	child.pid = fork();
	if (child.pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (child.pid > 0 && waitpid(child.pid, &status, 0) == child.pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	trace2_child_exit(&child, status);
	return trace2_cmd_exit(status);
}

static int forked(char **argv)
{
	pid_t pid;

	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	trace2_region_enter("test", "parent", 0);
	trace2_data_intmax("test", 0, "before_fork", 1);
	pid = fork();
	if (pid == 0) {
		trace2_data_string("test", 0, "who", "child");
		exit(trace2_cmd_exit(0));
	}
	waitpid(pid, NULL, 0);
	trace2_region_leave("test", "parent", 0);
	return trace2_cmd_exit(0);
}

static int pairs;

static volatile sig_atomic_t handled;
static volatile int sending = 1;

static void count_signal(int signo)
{
	handled++;
}

static void *send_signals(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	struct timespec pause = { 0, 20000 };

	for (int i = 0; i < pairs; i++) {
		pthread_kill(target, SIGTERM);
		nanosleep(&pause, NULL);
	}
	sending = 0;
	return NULL;
}

/* SIGTERM handled by the program (trace2_initialize() chains to it), sent
 * again and again while the main thread writes regions: the runtime's
 * handler lands anywhere, inside the runtime's own write too. */
static int signals(char **argv, int n)
{
	pthread_t self = pthread_self(), sender;
	long loops = 0;

	signal(SIGTERM, count_signal);
	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	pairs = n;
	if (pthread_create(&sender, NULL, send_signals, &self))
		return 1;
	while (sending) {
		trace2_region_enter("test", "busy", 0);
		trace2_region_leave("test", "busy", 0);
		loops++;
	}
	pthread_join(sender, NULL);
	printf("handled=%d\n", (int)handled);
	return trace2_cmd_exit(0);
}

static int signalled(char **argv)
{
	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	trace2_region_enter("test", "doomed", 0);
	raise(SIGTERM);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "state"))
		return state(argv);
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return run(argv + 2);
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return forked(argv);
	if (argc == 2 && !strcmp(argv[1], "signal"))
		return signalled(argv);
	if (argc == 3 && !strcmp(argv[1], "signals") && atoi(argv[2]) > 0)
		return signals(argv, atoi(argv[2]));
	fprintf(stderr, "usage: tr2_inproc state | run CMD [ARG...] | fork | signal | signals N\n");
	return 2;
}
