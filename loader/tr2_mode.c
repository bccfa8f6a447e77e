/* tr2_mode.c: see tr2_mode.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_attach.h"
#include "tr2_cmd.h"
#include "tr2_mem.h"
#include "tr2_mode.h"
#include "tr2_tracer.h"

/* What a scan's callback needs. */
struct scan {
	struct tracer *tr;
	char err[512];
	int runtimes;     /* runtimes met */
	int old;          /* objects with probes but no runtime of this version met */
};

static void add_traced(struct tracer *tr, pid_t pid)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(bpf_map__fd(tr->skel->maps.traced), &pid, &one, BPF_ANY))
		tr2_fail("failed to add process %d to the traced set: %s", (int)pid, strerror(errno));
	tr2_tracer_add_proc(tr, pid);
}

/* A mode's attach: fn for each object with a runtime that pid maps
 * (tr2_attach_scan); the reason of a failure, fn's own first, in err. */
static int scan_objects(struct tracer *tr, pid_t pid, int (*fn)(void *ctx, struct tr2_object *o, pid_t pid),
			char *err, size_t errlen)
{
	struct scan sc = { .tr = tr };

	if (tr2_attach_scan(tr->attach, pid, fn, &sc, err, errlen)) {
		if (sc.err[0])
			snprintf(err, errlen, "%s", sc.err);
		return -1;
	}
	return 0;
}

/* The first line of /proc/PID/<file> whose start is key (the whole file's
 * first line when key is ""), without key and its '\n', into buf; 0, or -1. */
static int proc_line(pid_t pid, const char *file, const char *key, char *buf, size_t size)
{
	char path[64], line[4096];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, size, "%s", line + strlen(key));
			found = 1;
		}
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

/* Whether the cgroup v2 directory dir holds process pid, or one of its
 * descendants does: the path of pid's cgroup (/proc/PID/cgroup) under each
 * cgroup2 mount (/proc/self/mountinfo) against dir's. */
static int in_cgroup(pid_t pid, const char *dir)
{
	char cg[4096], line[4096], want[PATH_MAX], have[PATH_MAX], path[PATH_MAX + 4096];
	int in = 0;
	FILE *f;

	if (proc_line(pid, "cgroup", "0::", cg, sizeof(cg)) || !realpath(dir, want))
		return 0;
	f = fopen("/proc/self/mountinfo", "re");
	while (f && !in && fgets(line, sizeof(line), f)) {
		char root[1024], mnt[1024];
		const char *sep = strstr(line, " - ");
		size_t n = strlen(want);

		if (!sep || strncmp(sep, " - cgroup2 ", 11) || sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2 ||
		    strcmp(root, "/"))
			continue;
		snprintf(path, sizeof(path), "%s%s", strcmp(mnt, "/") ? mnt : "", cg);
		in = realpath(path, have) && !strncmp(have, want, n) && (!have[n] || have[n] == '/' || n == 1);
	}
	if (f)
		fclose(f);
	return in;
}

/* Whether process pid passes --comm, --uid and --cgroup now, as the eBPF
 * side decides (bpf/tr2.bpf.c, wanted()): its comm, its real uid, its
 * cgroup.  Else 0, with what it has that the filters leave out in why. */
static int wanted(const struct tracer *tr, pid_t pid, char *why, size_t len)
{
	const struct tr2_opts *o = tr->opts;
	char comm[64] = "", uid[64];
	int ok = 1;

	if (!o->filters[0])
		return 1;
	proc_line(pid, "comm", "", comm, sizeof(comm));
	if (o->ncomms) {
		ok = 0;
		for (int i = 0; i < o->ncomms && !ok; i++)
			ok = !strcmp(comm, o->comms[i]);
	}
	if (ok && o->narrow_uid)
		ok = !proc_line(pid, "status", "Uid:\t", uid, sizeof(uid)) && strtoul(uid, NULL, 10) == o->uid;
	if (ok && o->cgroup)
		ok = in_cgroup(pid, o->cgroup);
	if (!ok)
		snprintf(why, len, "%s leaves out process %d ('%s')", o->filters, (int)pid, comm);
	return ok;
}

/* Says once per object that it carries probes but no runtime this tr2-bpf reads. */
static void warn_old(struct tr2_object *o)
{
	if (o->warned)
		return;
	o->warned = 1;
	fprintf(stderr, "tr2-bpf: %s carries trace2 probes but no tr2 runtime of this version (it was "
		"built with another tr2): not traced; rebuild it with this version\n", o->name);
}

/* ---- -p PID: each process's own payload uprobes and enable ---- */

/* The (object, process) pairs attached. */
struct pid_state {
	struct {
		struct tr2_object *o;
		pid_t pid;
	} *done;
	int ndone, cap;
};

static int pid_object(void *ctx, struct tr2_object *o, pid_t pid)
{
	struct scan *sc = ctx;
	struct pid_state *st = sc->tr->mode_state;

	if (o->old) {
		sc->old++;
		return 0;
	}
	sc->runtimes++;
	for (int i = 0; i < st->ndone; i++)
		if (st->done[i].o == o && st->done[i].pid == pid)
			return 0;
	if (tr2_attach_payload(sc->tr->attach, o, pid, sc->err, sizeof(sc->err)) ||
	    (!tr2_tracer_paused(sc->tr) && tr2_attach_enable(sc->tr->attach, o, pid, 0, sc->err, sizeof(sc->err))))
		return -1;
	st->done = tr2_grow(st->done, st->ndone, &st->cap, sizeof(*st->done));
	st->done[st->ndone].o = o;
	st->done[st->ndone++].pid = pid;
	return 0;
}

/* -p with the split: counts the time of each thread of pid by state from
 * now on (bpf/tr2_sched.bpf.h, `early`), so that a region entered before
 * the attach is split from here; /proc gives each one's state now (R:
 * running or runnable, told apart at its next switch).  A thread started
 * later is counted from its first call, after its regions' enters. */
static void count_from_now(struct tracer *tr, pid_t pid)
{
	struct tr2_sched_acct a = { 0 };
	char path[64], state;
	struct dirent *d;
	DIR *dir;

	if (!tr->skel->rodata->sched_early)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return;
	a.sched.origin_ns = a.sched.in_ns = a.since = tr2_mono_ns();
	while ((d = readdir(dir))) {
		uint32_t tid = (uint32_t)strtoul(d->d_name, NULL, 10);

		if (!tid || !(state = tr2_state_letter(pid, (pid_t)tid)))
			continue;
		a.state = state == 'R' ? TR2_SCHED_R_UNKNOWN : state == 'D' ? TR2_SCHED_BLOCKED : TR2_SCHED_ASLEEP;
		a.off_state = a.state;
		a.off_ns = a.woken_ns = a.since;
		bpf_map_update_elem(bpf_map__fd(tr->skel->maps.early), &tid, &a, BPF_ANY);
	}
	closedir(dir);
}

static int pid_attach(struct tracer *tr, pid_t pid, char *err, size_t errlen)
{
	return scan_objects(tr, pid, pid_object, err, errlen);
}

static void pid_start(struct tracer *tr)
{
	char err[512], why[512];
	int left_out = 0;

	tr->mode_state = calloc(1, sizeof(struct pid_state));
	if (!tr->mode_state)
		abort();
	for (int i = 0; i < tr->opts->npids; i++) {
		pid_t pid = tr->opts->pids[i];
		struct scan sc = { .tr = tr };

		if (kill(pid, 0) && errno == ESRCH)
			tr2_fail("no such process: %d", (int)pid);
		if (tr2_gone(pid))     /* a zombie: exited, not yet reaped */
			tr2_fail("process %d has exited", (int)pid);
		/* exec of the process: a new session, attached before it runs */
		add_traced(tr, pid);
		count_from_now(tr, pid);
		if (tr2_attach_scan(tr->attach, pid, pid_object, &sc, err, sizeof(err)))
			tr2_fail("%s", sc.err[0] ? sc.err : err);
		if (!sc.runtimes && sc.old)
			tr2_fail("process %d carries trace2 probes but no tr2 runtime of this version (it was "
				 "built with another tr2): rebuild it with this version", (int)pid);
		if (!sc.runtimes)
			tr2_fail("no trace2 probes in process %d (its executable and shared objects)", (int)pid);
		if (!wanted(tr, pid, why, sizeof(why))) {
			if (++left_out == tr->opts->npids)
				tr2_fail("%s: nothing to trace", why);
			fprintf(stderr, "tr2-bpf: %s: not traced\n", why);
		}
	}
	if (tr->opts->npids == 1)
		fprintf(stderr, "tr2-bpf: tracing process %d: %d probe sites in %d objects; Ctrl-C to stop\n",
			(int)tr->opts->pids[0], tr2_attach_sites(tr->attach), tr2_attach_objects(tr->attach));
	else
		fprintf(stderr, "tr2-bpf: tracing %d processes: %d probe sites in %d objects; Ctrl-C to stop\n",
			tr->opts->npids, tr2_attach_sites(tr->attach), tr2_attach_objects(tr->attach));
}

/* Every (object, process) pair attached, for the processes still traced
 * (the eBPF side drops an ended one from "traced": its pid may be another
 * process's now). */
static void pid_resume(struct tracer *tr)
{
	struct pid_state *st = tr->mode_state;
	char err[512];
	uint8_t in;

	for (int i = 0; i < st->ndone; i++)
		if (!bpf_map_lookup_elem(bpf_map__fd(tr->skel->maps.traced), &st->done[i].pid, &in) &&
		    tr2_attach_enable(tr->attach, st->done[i].o, st->done[i].pid, 0, err, sizeof(err)))
			tr2_tracer_untraced(tr, st->done[i].pid, err);
}

static int pid_done(struct tracer *tr)
{
	for (int i = 0; i < tr->opts->npids; i++)
		if (!tr2_gone(tr->opts->pids[i]))
			return 0;
	return 1;
}

static void pid_finish(struct tracer *tr)
{
	struct pid_state *st = tr->mode_state;

	if (st)
		free(st->done);
	free(st);
}

const struct tr2_mode tr2_mode_pid = {
	.name = "pid",
	.known_per_process = 1,
	.start = pid_start,
	.attach = pid_attach,
	.resume = pid_resume,
	.done = pid_done,
	.finish = pid_finish,
};

/* ---- -- CMD: payload uprobes for every process, the enable inherited ----
 *
 * The payload is attached once per object for every process that maps it:
 * a process outside the tree pays the kernel's installation of those
 * uprobes when it maps the object, and nothing else (its tr2:enable
 * semaphore stays 0, so its trace2 calls never reach them).  The enable is
 * a perf event that the kernel copies into every child of a process that
 * has it, at fork, and follows through exec: CMD's descendants are traced
 * from their first instruction without tr2-bpf doing anything (and never
 * loses it to a relative's end: tr2_attach_enable). */

struct cmd_state {
	struct {
		struct tr2_object *o;
		uint64_t enabled_ns;   /* when its enable was made for the live tree; 0: an old one */
	} *objs;
	int nobjs, cap;
};

/* Whether pid is one of tr->procs. */
static int is_proc(const struct tracer *tr, pid_t pid)
{
	for (int i = 0; i < tr->nprocs; i++)
		if (tr->procs[i] == pid)
			return 1;
	return 0;
}

/* Raises o's enable (inherited) in every live descendant of tr->procs that
 * is not one of them: a process forked before the enable was made for its
 * parent, whose fork record tr2-bpf has not read yet.  Called after the
 * procs have the event, so that a fork from now on inherits it and a fork
 * before now is in /proc: none is missed.  Parents come from /proc/PID/stat
 * (field 4); a process that is gone meanwhile is skipped.  cmd_forked() may
 * raise it once more when the fork record arrives: a second event, harmless.
 * Returns 0, or -1 with a reason in err. */
static int enable_unseen_descendants(struct tracer *tr, struct tr2_object *o, char *err, size_t errlen)
{
	struct { pid_t pid, ppid; int in; } *ps = NULL;
	int n = 0, cap = 0, grew = 1, r = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d) {
		snprintf(err, errlen, "failed to read /proc: %s", strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		char path[64], buf[512], *paren;
		pid_t pid = atoi(de->d_name), ppid;
		ssize_t len;
		int fd;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		/* comm, in parentheses, may hold anything: the fields after
		 * its last ')' */
		if (len <= 0 || (buf[len] = '\0', !(paren = strrchr(buf, ')'))) ||
		    sscanf(paren + 1, " %*c %d", &ppid) != 1)
			continue;
		ps = tr2_grow(ps, n, &cap, sizeof(*ps));
		ps[n].pid = pid;
		ps[n].ppid = ppid;
		ps[n++].in = is_proc(tr, pid);
	}
	closedir(d);
	while (grew) {
		grew = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; !ps[i].in && j < n; j++)
				if (ps[j].in && ps[j].pid == ps[i].ppid && (ps[i].in = 2, grew = 1))
					break;
	}
	for (int i = 0; i < n && !r; i++)
		if (ps[i].in == 2 && tr2_attach_enable(tr->attach, o, ps[i].pid, 1, err, errlen) && !tr2_gone(ps[i].pid))
			r = -1;
	free(ps);
	return r;
}

/* Raises st->objs[i]'s enable in the whole tree.  Every process of it
 * tr2-bpf knows of: its children to come inherit the event.  Then those it
 * does not know of yet (their fork records are still in the ring buffer):
 * they run now, maybe already past the object's mapping, and would inherit
 * nothing.  Returns 0, or -1 with a reason in err. */
static int enable_tree(struct tracer *tr, int i, char *err, size_t errlen)
{
	struct cmd_state *st = tr->mode_state;
	struct tr2_object *o = st->objs[i].o;

	st->objs[i].enabled_ns = tr2_mono_ns();
	for (int j = 0; j < tr->nprocs; j++)
		if (tr2_attach_enable(tr->attach, o, tr->procs[j], 1, err, errlen))
			return -1;
	return enable_unseen_descendants(tr, o, err, errlen);
}

static int cmd_object(void *ctx, struct tr2_object *o, pid_t pid)
{
	struct scan *sc = ctx;
	struct tracer *tr = sc->tr;
	struct cmd_state *st = tr->mode_state;
	int i;

	for (i = 0; i < st->nobjs && st->objs[i].o != o; i++)
		;
	if (i < st->nobjs)
		return 0;
	st->objs = tr2_grow(st->objs, st->nobjs, &st->cap, sizeof(*st->objs));
	st->objs[st->nobjs].o = o;
	st->objs[st->nobjs++].enabled_ns = 0;
	if (o->old) {
		warn_old(o);
		return 0;
	}
	if (tr2_attach_payload(tr->attach, o, 0, sc->err, sizeof(sc->err)))
		return -1;
	return tr2_tracer_paused(tr) ? 0 : enable_tree(tr, i, sc->err, sizeof(sc->err));
}

static int cmd_attach(struct tracer *tr, pid_t pid, char *err, size_t errlen)
{
	return scan_objects(tr, pid, cmd_object, err, errlen);
}

/* A child forked before an object's enable was made for the tree did not
 * inherit it (its fork record arrives after the attach that made it): it
 * gets an inherited enable of its own.  One that inherited it gets an
 * anchor on a kernel that needs them (tr2_attach_anchor).  The pid is the
 * child's while the pidfd taken first shows it alive and the eBPF side has
 * it traced (it drops a process from "traced" when it ends); one that ended
 * meanwhile, whose pid may be another process's now, gets nothing, or loses
 * its anchor. */
static void cmd_forked(struct tracer *tr, pid_t child, uint64_t fork_ns)
{
	struct cmd_state *st = tr->mode_state;
	int anchored = tr2_attach_anchored(tr->attach);
	struct pollfd gone = { .fd = anchored ? syscall(SYS_pidfd_open, child, 0) : -1, .events = POLLIN };
	uint8_t in;
	char err[512];

	/* paused: cmd_resume raises the enables in the whole tree */
	if (tr2_tracer_paused(tr) || (anchored && gone.fd < 0)) {
		if (gone.fd >= 0)
			close(gone.fd);
		return;
	}
	if (!bpf_map_lookup_elem(bpf_map__fd(tr->skel->maps.traced), &child, &in))
		for (int i = 0; i < st->nobjs; i++) {
			if (st->objs[i].enabled_ns > fork_ns &&
			    tr2_attach_enable(tr->attach, st->objs[i].o, child, 1, err, sizeof(err)))
				tr2_tracer_untraced(tr, child, err);
			if (anchored && st->objs[i].enabled_ns && st->objs[i].enabled_ns <= fork_ns)
				tr2_attach_anchor(tr->attach, st->objs[i].o, child);
		}
	if (anchored && poll(&gone, 1, 0) > 0)
		tr2_attach_unanchor(tr->attach, child);
	if (gone.fd >= 0)
		close(gone.fd);
}

/* The processes forked while paused are in tr->procs (their fork records)
 * or in /proc (enable_unseen_descendants); a fork record that comes later
 * is older than the new enable (cmd_forked). */
static void cmd_resume(struct tracer *tr)
{
	struct cmd_state *st = tr->mode_state;
	char err[512];

	for (int i = 0; i < st->nobjs; i++)
		if (!st->objs[i].o->old && enable_tree(tr, i, err, sizeof(err)))
			tr2_tracer_untraced(tr, tr2_cmd_pid(tr->cmd), err);
}

static void cmd_start(struct tracer *tr)
{
	struct cmd_state *st = calloc(1, sizeof(*st));
	char err[512];

	if (!st)
		abort();
	tr->mode_state = st;
	/* CMD was forked first (tr2_cmd.h), held until now.  Until its exec it
	 * runs tr2-bpf's own code: looked at now, those objects (ld.so, libc
	 * among them) stop neither it nor the programs after it. */
	add_traced(tr, tr2_cmd_pid(tr->cmd));
	if (cmd_attach(tr, tr2_cmd_pid(tr->cmd), err, sizeof(err)))
		tr2_fail("%s", err);
	if (tr2_cmd_release(tr->cmd))
		tr2_fail("failed to start '%s': %s", tr->opts->cmd[0], strerror(errno));
}

static int cmd_done(struct tracer *tr)
{
	if (!tr->cmd_reaped) {
		if (tr2_cmd_reap(tr->cmd, 0, &tr->cmd_status) != 1)
			return 0;
		tr->cmd_reaped = 1;
	}
	for (int i = 0; i < tr->nprocs; i++)
		if (!tr2_gone(tr->procs[i]))
			return 0;
	return 1;
}

static void cmd_finish(struct tracer *tr)
{
	struct cmd_state *st = tr->mode_state;

	if (st)
		free(st->objs);
	free(st);
}

const struct tr2_mode tr2_mode_cmd = {
	.name = "cmd",
	.follow = 1,
	.start = cmd_start,
	.attach = cmd_attach,
	.forked = cmd_forked,
	.resume = cmd_resume,
	.done = cmd_done,
	.finish = cmd_finish,
};

/* ---- -a: every process with a runtime ----
 *
 * The payload and the enable for every process that maps a runtime: the
 * semaphore is raised in all of them, and the eBPF side drops the events
 * of those the filters (--comm, --uid, --cgroup) leave out.  Every object
 * the processes running at the start map is looked at then, so that only
 * a program not run since (a new build, another file) holds its first
 * process for tr2-bpf to look at it. */

/* The objects with a runtime, for all_resume. */
struct all_state {
	struct tr2_object **objs;
	int nobjs, cap;
};

static int all_object(void *ctx, struct tr2_object *o, pid_t pid)
{
	struct scan *sc = ctx;
	struct tracer *tr = sc->tr;
	struct all_state *st = tr->mode_state;

	if (o->old) {
		warn_old(o);
		return 0;
	}
	sc->runtimes++;
	if (!o->payload_all) {
		if (tr2_attach_payload(tr->attach, o, 0, sc->err, sizeof(sc->err)))
			return -1;
		st->objs = tr2_grow(st->objs, st->nobjs, &st->cap, sizeof(*st->objs));
		st->objs[st->nobjs++] = o;
	}
	if (!o->enable_all && !tr2_tracer_paused(tr) &&
	    tr2_attach_enable_all(tr->attach, o, sc->err, sizeof(sc->err)))
		return -1;
	return 0;
}

static void all_resume(struct tracer *tr)
{
	struct all_state *st = tr->mode_state;
	char err[512];

	for (int i = 0; i < st->nobjs; i++)
		if (!st->objs[i]->enable_all && tr2_attach_enable_all(tr->attach, st->objs[i], err, sizeof(err)))
			tr2_tracer_untraced(tr, 0, err);
}

static int all_attach(struct tracer *tr, pid_t pid, char *err, size_t errlen)
{
	return scan_objects(tr, pid, all_object, err, errlen);
}

static void all_start(struct tracer *tr)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	char err[512], why[512], passing[600] = "";
	int procs = 0, with = 0, pass = 0;

	if (!proc)
		tr2_fail("failed to read /proc: %s", strerror(errno));
	tr->mode_state = calloc(1, sizeof(struct all_state));
	if (!tr->mode_state)
		abort();
	while ((d = readdir(proc))) {
		struct scan sc = { .tr = tr };
		pid_t pid;

		if (!isdigit((unsigned char)d->d_name[0]) || (pid = atoi(d->d_name)) == getpid())
			continue;
		/* kernel threads map nothing; a process gone meanwhile is no error */
		if (tr2_attach_scan(tr->attach, pid, all_object, &sc, err, sizeof(err)) && sc.err[0] &&
		    wanted(tr, pid, why, sizeof(why)))
			tr2_tracer_untraced(tr, pid, sc.err);
		procs++;
		with += sc.runtimes > 0;
		pass += sc.runtimes > 0 && wanted(tr, pid, why, sizeof(why));
		tr2_tracer_serve(tr);
	}
	closedir(proc);
	if (tr->opts->filters[0])
		snprintf(passing, sizeof(passing), ", %d of them let through by %s", pass, tr->opts->filters);
	fprintf(stderr, "tr2-bpf: tracing every process with a tr2 runtime (%d of %d running now%s, %d "
		"runtimes); Ctrl-C to stop\n", with, procs, passing, tr2_attach_objects(tr->attach));
}

static int all_done(struct tracer *tr)
{
	return 0;
}

static void all_finish(struct tracer *tr)
{
	struct all_state *st = tr->mode_state;

	if (st)
		free(st->objs);
	free(st);
}

const struct tr2_mode tr2_mode_all = {
	.name = "all",
	.all = 1,
	.start = all_start,
	.attach = all_attach,
	.resume = all_resume,
	.done = all_done,
	.finish = all_finish,
};
