/* tr2_cmd.c: see tr2_cmd.h.  Two pipes join tr2-bpf and CMD's process while
 * it is held: "go", whose one byte lets it exec (EOF: tr2-bpf gave up, it
 * ends), and "report", on which it writes why CMD could not be run; both of
 * its ends are close-on-exec, so CMD starts with neither.  Everything -u
 * needs (passwd and group lookups, the new environment) is computed before
 * the fork, so that the held process only makes system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
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
#include "tr2_mem.h"

extern char **environ;

struct tr2_cmd {
	pid_t pid;
	int go;         /* write end: one byte releases CMD */
	int report;     /* read end: a struct failure when CMD could not be run */
	int pidfd;      /* to wait with a timeout; -1: polled instead */
	int reaped, status;
	const char *name;   /* argv[0], for messages */
	const char *user;   /* -u's USER, NULL without */
};

/* What the held process does once released. */
struct plan {
	char *const *argv;
	char **envp;       /* NULL: tr2-bpf's own environment */
	int as_user;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
	int stdout_to_stderr;
};

/* Written on the report pipe by a process that could not run CMD. */
struct failure {
	int step;          /* enum step */
	int err;           /* errno */
};

enum step { STEP_EXEC, STEP_SETGROUPS, STEP_SETGID, STEP_SETUID };
static const char *const step_names[] = { "exec", "setgroups", "setgid", "setuid" };

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

static char *xasprintf(const char *name, const char *value)
{
	char *s;

	if (asprintf(&s, "%s=%s", name, value) < 0)
		abort();
	return s;
}

/* A decimal uid, else -1. */
static long long parse_uid(const char *s)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v >= (uid_t)-1)
		return -1;
	return v;
}

/* Whether /etc/shells lists shell. */
static int is_login_shell(const char *shell)
{
	const char *s;
	int found = 0;

	setusershell();
	while (!found && (s = getusershell()))
		found = !strcmp(s, shell);
	endusershell();
	return found;
}

/* tr2-bpf's environment with the n variables vars ("NAME=VALUE") set. */
static char **environment_with(char **vars, int n)
{
	int len = 0, k = 0;
	char **env;

	while (environ[len])
		len++;
	env = xmalloc((len + n + 1) * sizeof(*env));
	for (int i = 0; i < len; i++)
		env[k++] = environ[i];
	for (int v = 0; v < n; v++) {
		size_t name_len = strcspn(vars[v], "=") + 1;
		int set = 0;

		for (int i = 0; i < len; i++)
			if (!strncmp(env[i], vars[v], name_len)) {
				env[i] = vars[v];
				set = 1;
			}
		if (!set)
			env[k++] = vars[v];
	}
	env[k] = NULL;
	return env;
}

/* -u USER: fills plan's ids, groups and environment (vars: room for 4
 * strings it allocates).  Returns 0, or -1 with the reason in err. */
static int plan_user(struct plan *p, const char *user, char **vars, int *nvars, char *err, size_t errlen)
{
	long long uid = parse_uid(user);
	struct passwd *pw;
	int n = 0;

	if (geteuid() != 0) {
		snprintf(err, errlen, "-u needs root: only root can run CMD as another user");
		return -1;
	}
	errno = 0;
	pw = getpwnam(user);
	if (!pw && uid >= 0) {
		errno = 0;
		pw = getpwuid((uid_t)uid);
	}
	if (!pw && errno && errno != ENOENT && errno != ESRCH && errno != EBADF && errno != EPERM) {
		snprintf(err, errlen, "cannot look up user '%s': %s", user, strerror(errno));
		return -1;
	}
	if (!pw && uid < 0) {
		snprintf(err, errlen, "unknown user '%s'", user);
		return -1;
	}
	p->as_user = 1;
	if (!pw) {
		/* A uid without a passwd entry: no name to look groups up by. */
		p->uid = p->gid = (uid_t)uid;
		p->groups = NULL;
		p->ngroups = 0;
		vars[(*nvars)++] = xasprintf("HOME", "/");
		vars[(*nvars)++] = xasprintf("USER", user);
		vars[(*nvars)++] = xasprintf("LOGNAME", user);
		return 0;
	}
	p->uid = pw->pw_uid;
	p->gid = pw->pw_gid;
	/* initgroups(3)'s list, computed here: the held process only calls
	 * setgroups(2). */
	n = 16;
	for (;;) {
		int got = n;

		p->groups = xmalloc(n * sizeof(*p->groups));
		if (getgrouplist(pw->pw_name, pw->pw_gid, p->groups, &got) >= 0) {
			p->ngroups = got;
			break;
		}
		free(p->groups);
		n = got > n ? got : 2 * n;
	}
	vars[(*nvars)++] = xasprintf("HOME", pw->pw_dir);
	vars[(*nvars)++] = xasprintf("USER", pw->pw_name);
	vars[(*nvars)++] = xasprintf("LOGNAME", pw->pw_name);
	if (pw->pw_shell && is_login_shell(pw->pw_shell))
		vars[(*nvars)++] = xasprintf("SHELL", pw->pw_shell);
	return 0;
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

/* The held process: waits for the go byte, takes USER's ids, execs CMD. */
static void __attribute__((noreturn)) run(const struct plan *p, int go, int report_fd)
{
	ssize_t n;
	char c;

	do
		n = read(go, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);   /* tr2-bpf ended before tracing started: CMD does not run */
	if (p->as_user) {
		enum step failed = STEP_SETGROUPS;

		if (!setgroups(p->ngroups, p->groups) && (failed = STEP_SETGID, !setresgid(p->gid, p->gid, p->gid)) &&
		    (failed = STEP_SETUID, !setresuid(p->uid, p->uid, p->uid)))
			failed = STEP_EXEC;
		if (failed != STEP_EXEC) {
			report(report_fd, p->argv[0], failed, errno);
			_exit(126);
		}
	}
	if (p->stdout_to_stderr)
		dup2(STDERR_FILENO, STDOUT_FILENO);
	execvpe(p->argv[0], p->argv, p->envp ? p->envp : environ);
	n = errno;
	report(report_fd, p->argv[0], STEP_EXEC, n);
	_exit(n == ENOENT ? 127 : 126);   /* as timeout(1), env(1) */
}

struct tr2_cmd *tr2_cmd_start(char *const argv[], const char *user, int stdout_to_stderr, char *err,
			      size_t errlen)
{
	struct plan p = { .argv = argv, .stdout_to_stderr = stdout_to_stderr };
	char *vars[4];
	int nvars = 0, go[2], rep[2];
	struct tr2_cmd *c;
	struct sigaction sa;

	if (user && plan_user(&p, user, vars, &nvars, err, errlen))
		return NULL;
	if (nvars)
		p.envp = environment_with(vars, nvars);
	if (pipe2(go, O_CLOEXEC) || pipe2(rep, O_CLOEXEC | O_NONBLOCK)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return NULL;
	}
	c = xmalloc(sizeof(*c));
	*c = (struct tr2_cmd){ .go = go[1], .report = rep[0], .pidfd = -1, .name = argv[0], .user = user };
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
		run(&p, go[0], rep[1]);
	} else {
		close(go[0]);
		close(rep[1]);
		c->pidfd = syscall(SYS_pidfd_open, c->pid, 0);
		/* An ignored SIGCHLD (the caller's) would reap CMD unseen; CMD
		 * has inherited it as it was. */
		if (!sigaction(SIGCHLD, NULL, &sa) && sa.sa_handler == SIG_IGN)
			signal(SIGCHLD, SIG_DFL);
	}
	for (int i = 0; i < nvars; i++)
		free(vars[i]);
	free(p.envp);
	free(p.groups);
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
	if (f.step == STEP_EXEC || !c->user)
		snprintf(err, errlen, "cannot run '%s': %s", c->name, strerror(f.err));
	else
		snprintf(err, errlen, "cannot run '%s' as %s: %s: %s", c->name, c->user,
			 step_names[f.step < 0 || f.step > STEP_SETUID ? 0 : f.step], strerror(f.err));
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
