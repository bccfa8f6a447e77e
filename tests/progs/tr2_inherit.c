/*
 * tr2_inherit: prints what a process inherited from the one that started it,
 * one attribute a line, for tests/e2e/cmd.sh, which compares the report of a
 * run under tr2-bpf -- CMD with that of a direct run, whole.
 *
 *   tr2_inherit [--block SIG]... [--ignore SIG]... [--default SIG]...
 *               [--rlimit NAME=SOFT:HARD]... [--nice N] [--exec CMD [ARG...]]
 *
 * The options set this process's state first (SIG: a signal number; NAME:
 * one of the names the report uses, e.g. MEMLOCK; SOFT, HARD: numbers or
 * "inf"); with --exec it then runs CMD (PATH searched) in its place, so that
 * a test can start tr2-bpf, or the program directly, from a known state that
 * no shell can set (a blocked signal).  Without --exec it prints the report
 * on standard output:
 *
 *   errno 0                      errno at main()
 *   ids uid=R/E/S gid=R/E/S      real, effective, saved
 *   groups G...                  supplementary groups, sorted
 *   env NAME=VALUE               one line per variable, sorted
 *   umask 0022
 *   cwd /path
 *   blocked 10 12                the signal mask (signal numbers)
 *   ignored 13                   signals whose disposition is SIG_IGN
 *   pending                      signals pending
 *   rlimit NAME SOFT HARD        every resource limit, "inf" for RLIM_INFINITY
 *   fd N TARGET flags=OCTAL      every open fd: its /proc/self/fd link and the
 *                                flags of its fdinfo
 *   pgrp, session, tty_pgrp      process group, session, the foreground
 *                                process group of fd 0's terminal ("none")
 *   nice, sched, affinity, ioprio, oom_score_adj, timerslack
 *   status KEY VALUE             CapInh, CapPrm, CapEff, CapBnd, CapAmb,
 *                                NoNewPrivs, Seccomp of /proc/self/status
 *   prctl pdeathsig=N dumpable=N securebits=N personality=HEX
 *   cgroup LINE                  /proc/self/cgroup
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

static const struct {
	int res;
	const char *name;
} limits[] = {
	{ RLIMIT_AS, "AS" }, { RLIMIT_CORE, "CORE" }, { RLIMIT_CPU, "CPU" },
	{ RLIMIT_DATA, "DATA" }, { RLIMIT_FSIZE, "FSIZE" }, { RLIMIT_LOCKS, "LOCKS" },
	{ RLIMIT_MEMLOCK, "MEMLOCK" }, { RLIMIT_MSGQUEUE, "MSGQUEUE" }, { RLIMIT_NICE, "NICE" },
	{ RLIMIT_NOFILE, "NOFILE" }, { RLIMIT_NPROC, "NPROC" }, { RLIMIT_RSS, "RSS" },
	{ RLIMIT_RTPRIO, "RTPRIO" }, { RLIMIT_RTTIME, "RTTIME" }, { RLIMIT_SIGPENDING, "SIGPENDING" },
	{ RLIMIT_STACK, "STACK" },
};

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "tr2_inherit: %s '%s'%s%s\n", what, arg, errno ? ": " : "", errno ? strerror(errno) : "");
	exit(2);
}

static int signum(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (end == s || *end || n < 1 || n >= NSIG)
		die("bad signal number", s);
	return n;
}

static rlim_t limit_value(const char *s, char **end)
{
	if (!strncmp(s, "inf", 3)) {
		*end = (char *)s + 3;
		return RLIM_INFINITY;
	}
	return strtoull(s, end, 10);
}

static void set_limit(const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct rlimit rl;
	char *end;
	size_t i;

	for (i = 0; eq && i < sizeof(limits) / sizeof(limits[0]); i++)
		if (strlen(limits[i].name) == (size_t)(eq - arg) && !strncmp(arg, limits[i].name, eq - arg))
			break;
	if (!eq || i == sizeof(limits) / sizeof(limits[0]))
		die("bad --rlimit", arg);
	rl.rlim_cur = limit_value(eq + 1, &end);
	if (*end != ':')
		die("bad --rlimit", arg);
	rl.rlim_max = limit_value(end + 1, &end);
	if (*end)
		die("bad --rlimit", arg);
	if (setrlimit(limits[i].res, &rl))
		die("cannot set", arg);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_gid(const void *a, const void *b)
{
	gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;

	return x < y ? -1 : x > y;
}

static void print_limit(rlim_t v)
{
	if (v == RLIM_INFINITY)
		printf(" inf");
	else
		printf(" %llu", (unsigned long long)v);
}

/* The lines of /proc/self/FILE that start with one of keys (NULL: all). */
static void print_proc(const char *file, const char *prefix, const char *const *keys)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	f = fopen(path, "re");
	if (!f) {
		printf("%s unreadable\n", prefix);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		int want = !keys;

		for (int i = 0; keys && keys[i]; i++)
			if (!strncmp(line, keys[i], strlen(keys[i])) && line[strlen(keys[i])] == ':')
				want = 1;
		if (!want)
			continue;
		for (char *p = line; *p; p++)
			if (*p == '\t' || *p == ':')
				*p = ' ';
		printf("%s %s", prefix, line);
	}
	fclose(f);
}

/* fd's flags, from its fdinfo ("flags:\t0100002"). */
static void print_fd_flags(int fd)
{
	char path[64], line[256];
	const char *flags = "?\n";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags:", 6)) {
			flags = line + 6 + strspn(line + 6, " \t");
			break;
		}
	printf(" flags=%s", flags);
	if (f)
		fclose(f);
}

static void print_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fds[4096], n = 0;

	if (!d) {
		printf("fd unreadable\n");
		return;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) && n < 4096)
			fds[n++] = atoi(e->d_name);
	closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (fds[j] < fds[i]) {
				int t = fds[i];

				fds[i] = fds[j];
				fds[j] = t;
			}
	for (int i = 0; i < n; i++) {
		char path[64], target[4096];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		len = readlink(path, target, sizeof(target) - 1);
		target[len < 0 ? 0 : len] = 0;
		printf("fd %d %s", fds[i], target);
		print_fd_flags(fds[i]);
	}
}

static void report(int errno_at_main)
{
	static const char *const status_keys[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
						   "NoNewPrivs", "Seccomp", NULL };
	uid_t ru, eu, su;
	gid_t rg, eg, sg, groups[65536];
	int ngroups, nenv = 0;
	mode_t mask;
	char cwd[4096], **env;
	sigset_t set;
	cpu_set_t cpus;
	struct sched_param sp;

	printf("errno %d\n", errno_at_main);
	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	printf("ids uid=%u/%u/%u gid=%u/%u/%u\n", ru, eu, su, rg, eg, sg);
	ngroups = getgroups(65536, groups);
	qsort(groups, ngroups < 0 ? 0 : ngroups, sizeof(*groups), cmp_gid);
	printf("groups");
	for (int i = 0; i < ngroups; i++)
		printf(" %u", groups[i]);
	printf("\n");

	while (environ[nenv])
		nenv++;
	env = calloc(nenv + 1, sizeof(*env));
	memcpy(env, environ, nenv * sizeof(*env));
	qsort(env, nenv, sizeof(*env), cmp_str);
	for (int i = 0; i < nenv; i++)
		printf("env %s\n", env[i]);
	free(env);

	mask = umask(0);
	umask(mask);
	printf("umask %04o\n", mask);
	printf("cwd %s\n", getcwd(cwd, sizeof(cwd)) ? cwd : strerror(errno));

	sigprocmask(SIG_BLOCK, NULL, &set);
	printf("blocked");
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&set, s) == 1)
			printf(" %d", s);
	printf("\nignored");
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa;

		if (!sigaction(s, NULL, &sa) && sa.sa_handler == SIG_IGN)
			printf(" %d", s);
	}
	sigpending(&set);
	printf("\npending");
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&set, s) == 1)
			printf(" %d", s);
	printf("\n");

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct rlimit rl;

		getrlimit(limits[i].res, &rl);
		printf("rlimit %s", limits[i].name);
		print_limit(rl.rlim_cur);
		print_limit(rl.rlim_max);
		printf("\n");
	}

	print_fds();

	printf("pgrp %d\nsession %d\n", (int)getpgrp(), (int)getsid(0));
	{
		pid_t fg = tcgetpgrp(0);

		if (fg < 0)
			printf("tty_pgrp none\n");
		else
			printf("tty_pgrp %d\n", (int)fg);
	}
	errno = 0;
	{
		int prio = getpriority(PRIO_PROCESS, 0);

		printf("nice %d\n", errno ? -100 : prio);
	}
	sched_getparam(0, &sp);
	printf("sched policy=%d priority=%d\n", sched_getscheduler(0), sp.sched_priority);
	CPU_ZERO(&cpus);
	sched_getaffinity(0, sizeof(cpus), &cpus);
	printf("affinity");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &cpus))
			printf(" %d", c);
	printf("\n");
	printf("ioprio %ld\n", syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0));
	print_proc("oom_score_adj", "oom_score_adj", NULL);
	printf("timerslack %d\n", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	print_proc("status", "status", status_keys);
	{
		int pdeath = 0;

		prctl(PR_GET_PDEATHSIG, &pdeath, 0, 0, 0);
		printf("prctl pdeathsig=%d dumpable=%d securebits=%d personality=%x\n", pdeath,
		       prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), prctl(PR_GET_SECUREBITS, 0, 0, 0, 0),
		       personality(0xffffffff));
	}
	print_proc("cgroup", "cgroup", NULL);
}

int main(int argc, char **argv)
{
	int errno_at_main = errno;
	sigset_t block;

	sigemptyset(&block);
	for (argc--, argv++; argc > 0; argc--, argv++) {
		if (!strcmp(argv[0], "--exec") && argc > 1) {
			sigprocmask(SIG_BLOCK, &block, NULL);
			execvp(argv[1], argv + 1);
			die("cannot run", argv[1]);
		} else if (argc < 2) {
			break;
		} else if (!strcmp(argv[0], "--block")) {
			sigaddset(&block, signum(argv[1]));
		} else if (!strcmp(argv[0], "--ignore")) {
			signal(signum(argv[1]), SIG_IGN);
		} else if (!strcmp(argv[0], "--default")) {
			signal(signum(argv[1]), SIG_DFL);
		} else if (!strcmp(argv[0], "--rlimit")) {
			set_limit(argv[1]);
		} else if (!strcmp(argv[0], "--nice")) {
			errno = 0;
			if (nice(atoi(argv[1])) == -1 && errno)
				die("cannot nice", argv[1]);
		} else {
			break;
		}
		argc--, argv++;
	}
	if (argc) {
		fprintf(stderr, "usage: tr2_inherit [--block SIG]... [--ignore SIG]... [--default SIG]... "
			"[--rlimit NAME=SOFT:HARD]... [--nice N] [--exec CMD [ARG...]]\n");
		return 2;
	}
	report(errno_at_main);
	return 0;
}
