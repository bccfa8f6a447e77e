/* tr2_cmd.c: see tr2_cmd.h.  Two pipes join tr2-bpf and CMD's process while
 * it is held: "go", whose one byte lets it exec (EOF: tr2-bpf gave up, it
 * ends), and "report", on which it writes why CMD could not be run; both of
 * its ends are close-on-exec, so CMD starts with neither. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tr2_cmd.h"

struct tr2_cmd {
	pid_t pid;
	int go;         /* write end: one byte releases CMD */
	int report;     /* read end: a struct failure when CMD could not be run */
	int pidfd;      /* to wait with a timeout; -1: polled instead */
	int reaped, status;
	const char *name;   /* argv[0], for messages */
};

/* Written on the report pipe by a process that could not run CMD. */
struct failure {
	int step;          /* enum step */
	int err;           /* errno */
};

enum step { STEP_EXEC };
static const char *const step_names[] = { "exec" };

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

/* In the held process: tells tr2-bpf why CMD could not be run. */
static void report(int fd, const char *name, enum step step, int e)
{
	struct failure f = { step, e };

	if (write(fd, &f, sizeof(f)) != sizeof(f)) {
		/* tr2-bpf would not hear of it: say it here */
		char line[512];
		int n = snprintf(line, sizeof(line), "tr2-bpf: cannot run '%s': %s: %s\n", name,
				 step_names[step], strerror(e));

		if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
			_exit(126);
	}
}

/* The held process: waits for the go byte, execs CMD. */
static void __attribute__((noreturn)) run(char *const argv[], int go, int report_fd)
{
	ssize_t n;
	char c;

	do
		n = read(go, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);   /* tr2-bpf ended before tracing started: CMD does not run */
	execvp(argv[0], argv);
	n = errno;
	report(report_fd, argv[0], STEP_EXEC, n);
	_exit(n == ENOENT ? 127 : 126);   /* as timeout(1), env(1) */
}

struct tr2_cmd *tr2_cmd_start(char *const argv[], char *err, size_t errlen)
{
	int go[2], rep[2];
	struct tr2_cmd *c;
	struct sigaction sa;

	if (pipe2(go, O_CLOEXEC) || pipe2(rep, O_CLOEXEC | O_NONBLOCK)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return NULL;
	}
	c = xmalloc(sizeof(*c));
	*c = (struct tr2_cmd){ .go = go[1], .report = rep[0], .pidfd = -1, .name = argv[0] };
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(go[0]);
		close(rep[1]);
		tr2_cmd_free(c);
		c = NULL;
	} else if (c->pid == 0) {
		close(go[1]);
		close(rep[0]);
		run(argv, go[0], rep[1]);
	} else {
		close(go[0]);
		close(rep[1]);
		c->pidfd = syscall(SYS_pidfd_open, c->pid, 0);
		/* An ignored SIGCHLD (the caller's) would reap CMD unseen; CMD
		 * has inherited it as it was. */
		if (!sigaction(SIGCHLD, NULL, &sa) && sa.sa_handler == SIG_IGN)
			signal(SIGCHLD, SIG_DFL);
	}
	return c;
}

pid_t tr2_cmd_pid(const struct tr2_cmd *c)
{
	return c->pid;
}

int tr2_cmd_release(struct tr2_cmd *c)
{
	ssize_t n;

	if (c->go < 0) {
		errno = EPIPE;
		return -1;
	}
	do
		n = write(c->go, "g", 1);
	while (n < 0 && errno == EINTR);
	close(c->go);
	c->go = -1;
	return n == 1 ? 0 : -1;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tr2_cmd_reap(struct tr2_cmd *c, int timeout_ms, int *status)
{
	uint64_t deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	while (!c->reaped) {
		int ws, left;
		pid_t r = waitpid(c->pid, &ws, WNOHANG);

		if (r == c->pid) {
			c->reaped = 1;
			c->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
			break;
		}
		if (r < 0 && errno != EINTR)
			return -1;
		if (timeout_ms == 0 || (timeout_ms > 0 && mono_ms() >= deadline))
			return 0;
		left = timeout_ms < 0 ? -1 : (int)(deadline - mono_ms());
		if (c->pidfd >= 0) {
			struct pollfd pfd = { .fd = c->pidfd, .events = POLLIN };

			poll(&pfd, 1, left);   /* EINTR: look again */
		} else {
			usleep(left < 0 || left > 10 ? 10000 : left * 1000);
		}
	}
	*status = c->status;
	return 1;
}

int tr2_cmd_failed(struct tr2_cmd *c, char *err, size_t errlen)
{
	struct failure f;

	if (c->report < 0 || read(c->report, &f, sizeof(f)) != sizeof(f))
		return 0;
	close(c->report);
	c->report = -1;
	snprintf(err, errlen, "cannot run '%s': %s", c->name, strerror(f.err));
	return 1;
}

void tr2_cmd_free(struct tr2_cmd *c)
{
	if (!c)
		return;
	if (c->go >= 0)
		close(c->go);
	if (c->report >= 0)
		close(c->report);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c);
}
