/* tr2_tracer.c: see tr2_tracer.h.  One trace's run: the records dispatched
 * (tr2_tracer_record), the events lost marked in their streams, the
 * processes held for tr2-bpf let go (tr2_guard.c lets go those it does not
 * serve), the report at the end. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/membarrier.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_attach.h"
#include "tr2_cmd.h"
#include "tr2_dst.h"
#include "tr2_guard.h"
#include "tr2_kernel.h"
#include "tr2_mem.h"
#include "tr2_mode.h"
#include "tr2_recording.h"
#include "tr2_ring.h"
#include "tr2_session.h"
#include "tr2_sid.h"
#include "tr2_summary.h"
#include "tr2_tracer.h"

/* The signal handlers' state, the only state outside struct tracer: the
 * signal that ends the trace, -- CMD's process, to which a SIGTERM is
 * passed on, and whether tracing should be paused (SIGUSR1) or not
 * (SIGUSR2), which the loop's tick carries out. */
static volatile sig_atomic_t exiting, pause_wanted;
static pid_t signal_cmd;

static void on_pause_signal(int sig)
{
	pause_wanted = sig == SIGUSR1;
}

static void on_signal(int sig)
{
	int saved_errno = errno;

	exiting = sig;
	/* Ctrl-C reaches CMD from the terminal; a SIGTERM sent to tr2-bpf alone
	 * would leave CMD running untraced, so it goes on to CMD, as timeout(1)
	 * does. */
	if (sig == SIGTERM && signal_cmd > 0)
		kill(signal_cmd, SIGTERM);
	errno = saved_errno;
}

void tr2_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("tr2-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void tr2_tracer_serve(struct tracer *tr)
{
	tr2_ring_consume(tr->ring);
}

void tr2_tracer_add_proc(struct tracer *tr, pid_t pid)
{
	for (int i = 0; i < tr->nprocs; i++)
		if (tr->procs[i] == pid)
			return;
	tr->procs = tr2_grow(tr->procs, tr->nprocs, &tr->cap, sizeof(*tr->procs));
	tr->procs[tr->nprocs++] = pid;
}

uint64_t tr2_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

char tr2_state_letter(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');   /* after the command name, which may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Whether the process has exited (a zombie counts): its pidfd is readable. */
int tr2_gone(pid_t pid)
{
	int fd = syscall(SYS_pidfd_open, pid, 0), r;
	struct pollfd p;

	if (fd < 0)
		return errno == ESRCH;
	p.fd = fd;
	p.events = POLLIN;
	r = poll(&p, 1, 0);
	close(fd);
	return r > 0;
}

void tr2_tracer_open_targets(struct tracer *tr)
{
	const struct tr2_opts *o = tr->opts;
	char err[512];

	/* First, so that a SIGUSR1 sent while the BPF programs load pauses
	 * (at the first tick) rather than kills; CMD, forked before, keeps
	 * the caller's dispositions. */
	signal(SIGUSR1, on_pause_signal);
	signal(SIGUSR2, on_pause_signal);

	for (int i = 0; i < o->nformats; i++) {
		struct tr2_tgt_opts topts = { .brief = o->brief, .event_nesting = o->event_nesting };
		struct tr2_dst *dst = tr2_dst_open(o->formats[i].dest, o->file_mode, err, sizeof(err));

		if (!dst)
			tr2_fail("%s", err);
		/* a destination that fails drops and counts every line from then on */
		tr2_dst_set_counting(dst, true);
		/* a view is one document: a file of an earlier run is overwritten */
		if ((o->formats[i].fmt == TR2_FMT_CHROME || o->formats[i].fmt == TR2_FMT_FOLDED) &&
		    tr2_dst_truncate(dst))
			tr2_fail("cannot empty '%s': %s", o->formats[i].dest, strerror(errno));
		tr2_target_init(&tr->targets[i], tr2_tgt_of(o->formats[i].fmt), &topts, dst);
		tr2_dst_set_max_files(dst, o->max_files);
		tr2_dst_set_buffered(dst, true);
	}
}

/* ---- what the session is fed, and the recording gets (tr2_recording.h) ---- */

/* The recording stopped (its limit, or a write error): the trace ends. */
static int recording_stopped(const struct tracer *tr)
{
	int full;

	return tr->rec && tr2_recording_stopped(tr->rec, &full);
}

static void feed_record(struct tracer *tr, const struct tr2_rec *h, const void *data, size_t size)
{
	uint64_t calls = h->kind == TR2_REC_BATCH ? (uint64_t)h->num[0] : 0;

	if (tr->rec) {
		if (tr2_recording_put(tr->rec, TR2_FILE_RING, data, size))
			tr->unrecorded += calls;
		else
			tr->recorded += calls;
	}
	if (tr->session)
		tr2_session_record(tr->session, h, data, size);
}

static void feed_lost(struct tracer *tr, uint32_t pid, uint64_t count, uint64_t ts_ns)
{
	struct tr2_file_lost r = { .pid = pid, .count = count, .ts_ns = ts_ns };

	if (tr->rec)
		tr2_recording_put(tr->rec, TR2_FILE_LOST, &r, sizeof(r));
	if (tr->session)
		tr2_session_lost(tr->session, pid, count, ts_ns);
}

static void feed_held(struct tracer *tr, uint32_t pid, uint64_t from_ns, uint64_t to_ns)
{
	struct tr2_file_held r = { .pid = pid, .from_ns = from_ns, .to_ns = to_ns };

	if (tr->rec)
		tr2_recording_put(tr->rec, TR2_FILE_HELD, &r, sizeof(r));
	if (tr->session)
		tr2_session_resumed(tr->session, pid, from_ns, to_ns);
}

/* Tracing paused (1) at ns, or resumed (0). */
static void feed_pause(struct tracer *tr, int pause, uint64_t ns)
{
	struct tr2_file_time r = { .now_ns = ns };

	if (tr->rec)
		tr2_recording_put(tr->rec, pause ? TR2_FILE_PAUSE : TR2_FILE_RESUME, &r, sizeof(r));
	if (tr->session && pause)
		tr2_session_pause(tr->session, ns);
	else if (tr->session)
		tr2_session_resume(tr->session, ns);
}

/* What arrived before now_ns less TR2_SESSION_DELAY_NS is written out; the
 * recording's buffer too. */
static void feed_tick(struct tracer *tr, uint64_t now_ns)
{
	struct tr2_file_time r = { .now_ns = now_ns };

	if (tr->rec) {
		tr2_recording_put(tr->rec, TR2_FILE_TICK, &r, sizeof(r));
		tr2_recording_flush(tr->rec);
	}
	if (tr->session)
		tr2_session_flush(tr->session, now_ns - TR2_SESSION_DELAY_NS);
	if (tr->summary)
		tr2_summary_poll(tr->summary, now_ns);
}

/* ---- holds: processes stopped until tr2-bpf has attached ---- */

/* Lets a process that stopped itself for tr2-bpf go on, unless another
 * tracer still holds it (tr2_held_elsewhere).  Its entry in `held` is
 * marked let go (0) until the SIGCONT is sent, not deleted before: should
 * tr2-bpf die in between, the guard finds it and sends the SIGCONT. */
static void let_go(struct tracer *tr, pid_t pid)
{
	int fd = bpf_map__fd(tr->skel->maps.held);
	__u64 let_go = 0, since;
	__u32 key = pid;

	if (bpf_map_update_elem(fd, &key, &let_go, BPF_EXIST))
		return;   /* the guard let it go */
	if (!tr2_held_elsewhere(fd, &tr->other_holds, key))
		kill(pid, SIGCONT);
	/* out, unless it was held again meanwhile (that hold's record is on
	 * its way) */
	if (!bpf_map_lookup_and_delete_elem(fd, &key, &since) && since)
		bpf_map_update_elem(fd, &key, &since, BPF_NOEXIST);
}

/* Process pid maps an object not known yet, (dev, ino) among them (exec, or
 * the loader mapped objects): attach to what it maps now and, when it
 * stopped itself for that at stopped_ns (held), let it go on. */
static void attach_and_continue(struct tracer *tr, pid_t pid, int held, uint64_t stopped_ns, uint64_t dev,
				uint64_t ino)
{
	char err[512];
	uint64_t start = tr2_mono_ns(), now;

	if (held && tr->hold_delay_ms)
		usleep(tr->hold_delay_ms * 1000);

	/* After detaching (tr->attach NULL) only the SIGCONT is left to do. */
	if (tr->attach) {
		if (tr->mode->attach(tr, pid, err, sizeof(err)) < 0 && kill(pid, 0) == 0)
			tr2_tracer_untraced(tr, pid, err);
		tr2_attach_known(tr->attach, dev, ino, pid);
		/* serving again: holds again, if the guard had given up on it */
		tr->skel->bss->tracer_absent = 0;
	}
	if (!held)
		return;
	/* taken before SIGCONT: the process may make its first call at once */
	now = tr2_mono_ns();
	let_go(tr, pid);
	feed_held(tr, pid, stopped_ns, now);
	tr->stops++;
	tr->stop_wait_ns += start > stopped_ns ? start - stopped_ns : 0;
	tr->stop_attach_ns += now - start;
}

/* ---- losses: the events the eBPF side could not send ---- */

/* The eBPF side's count `key` of map lost, summed over the CPUs. */
static uint64_t count_in_bpf(struct tr2_bpf *skel, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, sum = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		abort();
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.lost), &key, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

/* Events the eBPF side lost; of them, copies that found a buffer damaged. */
static uint64_t lost_in_bpf(struct tr2_bpf *skel)
{
	return count_in_bpf(skel, 0);
}

static uint64_t damaged_in_bpf(struct tr2_bpf *skel)
{
	return count_in_bpf(skel, 1);
}

/* Process pid has lost `total` events so far: marks those not marked yet,
 * at ts_ns.  Returns its index in tr->losses. */
static int mark_loss(struct tracer *tr, __u32 pid, __u64 total, uint64_t ts_ns)
{
	int i;

	for (i = 0; i < tr->nlosses && tr->losses[i].pid != pid; i++)
		;
	if (i == tr->nlosses) {
		tr->losses = tr2_grow(tr->losses, tr->nlosses, &tr->cap_losses, sizeof(*tr->losses));
		tr->losses[i].pid = pid;
		tr->losses[i].reported = 0;
		tr->nlosses++;
	}
	if (total > tr->losses[i].reported) {
		feed_lost(tr, pid, total - tr->losses[i].reported, ts_ns);
		tr->losses[i].reported = total;
	}
	return i;
}

static void mark_losses(struct tracer *tr)
{
	int fd = bpf_map__fd(tr->skel->maps.lost_by_pid);
	__u32 key, next, *prev = NULL;
	__u64 total, all = lost_in_bpf(tr->skel);
	uint64_t now;

	/* Walk the per-process counts only when the total grew: a walk costs a
	 * scan of the whole hash table, even an empty one. */
	if (all == tr->lost_marked)
		return;
	tr->lost_marked = all;

	/* The records sent before now first: a process that ended meanwhile
	 * has its losses marked before its end (forget_losses), not after it
	 * in a stream of its own. */
	now = tr2_mono_ns();
	tr2_ring_consume(tr->ring);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &total))
			mark_loss(tr, key, total, now);
	}
}

/* Process pid exited at ts_ns: marks its last losses just before, then
 * forgets its count, so that neither side keeps anything of the processes
 * that have gone. */
static void forget_losses(struct tracer *tr, __u32 pid, uint64_t ts_ns)
{
	int fd = bpf_map__fd(tr->skel->maps.lost_by_pid), i;
	__u64 total;

	if (bpf_map_lookup_elem(fd, &pid, &total))
		return;
	i = mark_loss(tr, pid, total, ts_ns - 1);
	tr->losses[i] = tr->losses[--tr->nlosses];
	bpf_map_delete_elem(fd, &pid);
}

/* ---- dispatch ---- */

/* A record (header h): to the session, which orders it and hands its
 * calls to the model, and the tracer's own kinds (a fork, an exec, a new
 * object, a process gone) to the mode and the holds. */
static void dispatch(struct tracer *tr, const struct tr2_rec *h, const void *data, size_t size)
{
	/* The last of its calls are in: mark its losses while its session is there. */
	if (h->kind == TR2_REC_PROC_GONE)
		forget_losses(tr, h->pid, h->ts_ns);
	feed_record(tr, h, data, size);
	switch (h->kind) {
	case TR2_REC_FORK:
		tr2_tracer_add_proc(tr, h->pid);
		if (tr->attach && tr->mode->forked)
			tr->mode->forked(tr, h->pid, h->ts_ns);
		break;
	case TR2_REC_PROC_GONE:
		if (tr->attach)
			tr2_attach_unanchor(tr->attach, h->pid);
		for (int i = 0; i < tr->nprocs; i++)
			if (tr->procs[i] == (pid_t)h->pid)
				tr->procs[i] = tr->procs[--tr->nprocs];
		break;
	case TR2_REC_EXECVE:
	case TR2_REC_NEW_OBJECT:
		tr->passed++;
		/* An object not known yet: the process waits (num[0]), or went on
		 * because tr2-bpf could not serve it then (attached late). */
		if (h->num[0] || h->num[1] || h->num[2])
			attach_and_continue(tr, h->pid, h->num[0], h->ts_ns, h->num[1], h->num[2]);
		break;
	}
}

int tr2_tracer_record(void *ctx, void *data, size_t size)
{
	struct tracer *tr = ctx;
	struct tr2_rec h;
	const char *why;

	if (tr2_decode_rec(data, size, &h, &why)) {
		tr->decode_errors++;
		if (tr->opts->verbose)
			fprintf(stderr, "tr2-bpf: dropped a record: %s\n", why);
		/* A process that stopped itself for us must not stay stopped. */
		memcpy(&h, data, size < sizeof(h) ? size : sizeof(h));
		if (size >= sizeof(h) && (h.kind == TR2_REC_EXECVE || h.kind == TR2_REC_NEW_OBJECT))
			let_go(tr, (pid_t)h.pid);
		return 0;
	}
	dispatch(tr, &h, data, size);
	return 0;
}

/* ---- the run ---- */

/* --comm's names and --cgroup's directory into their maps. */
static void set_filters(struct tr2_bpf *skel, const struct tr2_opts *o)
{
	uint8_t one = 1;
	uint32_t zero = 0;
	struct statfs fs;
	int fd;

	for (int i = 0; i < o->ncomms; i++) {
		char key[16] = { 0 };

		memcpy(key, o->comms[i], strlen(o->comms[i]));
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.comms), key, &one, BPF_ANY))
			tr2_fail("failed to set the --comm filter: %s", strerror(errno));
	}
	if (o->cgroup) {
		fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			tr2_fail("bad --cgroup '%s': %s", o->cgroup, strerror(errno));
		if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
			tr2_fail("bad --cgroup '%s': not a cgroup v2 directory", o->cgroup);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.cgroups), &zero, &fd, BPF_ANY))
			tr2_fail("failed to set the --cgroup filter: %s", strerror(errno));
		close(fd);
	}
}

/* The summary's state (NULL without --summary). */
static struct tr2_summary *setup_summary(struct tracer *tr, int64_t mono_to_real_ns, uint64_t start_ns)
{
	const struct summary_opts *o = &tr->opts->sum;
	char err[512];
	struct tr2_summary *s;

	if (!o->on)
		return NULL;
	if (o->json_set) {
		tr->summary_json = tr2_dst_open(o->json_dest, tr->opts->file_mode, err, sizeof(err));
		if (!tr->summary_json)
			tr2_fail("%s", err);
	}
	s = tr2_summary_new(o->hist, !o->json_set || o->json_dest, tr->summary_json, mono_to_real_ns, start_ns);
	tr2_summary_set_per_program(s, o->by_program);
	tr2_summary_set_keys(s, o->keys);
	tr2_summary_set_interval(s, (uint64_t)(o->interval_s * 1e9));
	return s;
}

void tr2_tracer_init(struct tracer *tr)
{
	const struct tr2_opts *o = tr->opts;
	struct timespec real, mono;
	struct tr2_file_start start = { 0 };
	char host[16], err[512];

	if (getenv("TR2_BPF_TEST_HOLD_DELAY_MS"))
		tr->hold_delay_ms = strtoul(getenv("TR2_BPF_TEST_HOLD_DELAY_MS"), NULL, 10);
	set_filters(tr->skel, o);
	/* before anything is attached, while tr2-bpf has one thread */
	if (tr2_guard_start(tr->skel))
		tr2_fail("failed to start the guard process: %s", strerror(errno));
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	start.mono_to_real_ns = (int64_t)(real.tv_sec - mono.tv_sec) * 1000000000 + (real.tv_nsec - mono.tv_nsec);
	/* calls made before now are an earlier trace's (a buffer met late) */
	start.since_ns = (uint64_t)mono.tv_sec * 1000000000 + (uint64_t)mono.tv_nsec;
	tr2_sid_host(host, sizeof(host));
	snprintf(start.host, sizeof(start.host), "%s", host);
	start.flags = tr->mode->all ? TR2_FILE_ALL : 0;
	start.ncats = (uint32_t)o->sum.ncats;
	if (o->record) {
		tr->rec = tr2_recording_open(o->record, o->file_mode, o->record_bytes, &start, o->sum.cats, err, sizeof(err));
		if (!tr->rec)
			tr2_fail("%s", err);
	}
	for (int i = 0; i < o->nformats; i++)
		tr->target_ptrs[i] = &tr->targets[i];
	/* --record alone formats nothing now */
	if (o->nformats || o->sum.on) {
		tr->session = tr2_session_new(tr->target_ptrs, o->nformats, start.mono_to_real_ns, host,
					      start.since_ns);
		if (o->sum.ncats)
			tr2_session_set_categories(tr->session, o->sum.cats, o->sum.ncats);
		tr->summary = setup_summary(tr, start.mono_to_real_ns, start.since_ns);
		tr2_session_set_summary(tr->session, tr->summary);
	}
	tr->attach = tr2_attach_new(tr->skel->obj, tr->kernel);
	tr2_attach_set_nop5(tr->attach, o->probe_nop);
	tr2_attach_set_known_per_process(tr->attach, tr->mode->known_per_process);
	if (o->verbose)
		fprintf(stderr, "tr2-bpf: uprobes on the %s nop of each probe site, %s\n",
			o->probe_nop ? "5-byte" : "1-byte",
			tr2_attach_multi(tr->attach) ? "one uprobe-multi link per object and probe" :
							"one perf uprobe per site");
	tr->ring = tr2_ring_new(bpf_map__fd(tr->skel->maps.events), tr2_tracer_record, tr);
	if (!tr->ring)
		tr2_fail("failed to create the ring buffer: %s", strerror(errno));

	signal_cmd = tr->cmd ? tr2_cmd_pid(tr->cmd) : 0;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	signal(SIGPIPE, SIG_IGN);
}

void tr2_tracer_untraced(struct tracer *tr, pid_t pid, const char *why)
{
	int n = sizeof(tr->untraced_pids) / sizeof(tr->untraced_pids[0]);

	for (int i = 0; i < n; i++)
		if (tr->untraced_pids[i] == pid)
			return;
	fprintf(stderr, "tr2-bpf: %s\n", why);
	tr->untraced_pids[tr->next_untraced++ % n] = pid;
	tr->untraced++;
}

/* Whether every destination has failed: nothing more can be written. */
static int all_failed(const struct tracer *tr)
{
	for (int i = 0; i < tr->opts->nformats; i++)
		if (!tr2_dst_failed(tr->targets[i].dst))
			return 0;
	return tr->opts->nformats > 0;
}

int tr2_tracer_paused(const struct tracer *tr)
{
	return tr->paused_ns != 0;
}

/* SIGUSR1: every tr2:enable event closed, so that the kernel lowers the
 * semaphores it raised: the traced processes' calls stop at their inline
 * test, as untraced.  The payload and the holds stay: a process that maps
 * a new object is still looked at (the mode raises no enable meanwhile). */
static void pause_tracing(struct tracer *tr)
{
	tr2_attach_lower_enables(tr->attach);
	tr->paused_ns = tr2_mono_ns();   /* calls made before now were traced */
	feed_pause(tr, 1, tr->paused_ns);
	fprintf(stderr, "tr2-bpf: paused (SIGUSR1); SIGUSR2 resumes\n");
}

/* SIGUSR2: the mode raises the enables again, for the processes it traces
 * now (those started or forked meanwhile included); the streams get the
 * gap's marker. */
static void resume_tracing(struct tracer *tr)
{
	uint64_t from = tr->paused_ns, to = tr2_mono_ns();

	tr->paused_ns = 0;
	feed_pause(tr, 0, to);
	tr->pauses++;
	tr->paused_total_ns += to - from;
	tr->mode->resume(tr);
	fprintf(stderr, "tr2-bpf: resumed (SIGUSR2) after %.3f s paused\n", (to - from) / 1e9);
}

int tr2_tracer_tick(struct tracer *tr)
{
	const struct tr2_opts *o = tr->opts;

	if (pause_wanted && !tr->paused_ns)
		pause_tracing(tr);
	else if (!pause_wanted && tr->paused_ns)
		resume_tracing(tr);
	mark_losses(tr);
	tr2_kernel_check(tr->kernel, tr->skel);
	feed_tick(tr, tr2_mono_ns());
	if (exiting || all_failed(tr) || recording_stopped(tr))
		return 0;
	if (o->duration_s && tr2_mono_ns() - tr->started_ns >= (uint64_t)(o->duration_s * 1e9))
		return 0;
	/* Forks recorded before the last traced process ended are in the
	 * ring: read them before believing it. */
	if (tr->mode->done(tr) && (tr2_ring_consume(tr->ring), tr->mode->done(tr)))
		return 0;
	return 1;
}

void tr2_tracer_stop(struct tracer *tr)
{
	/* The hold tracepoints first, so that no process can stop itself any
	 * more, then drain: the last records may ask for a SIGCONT (tr->attach
	 * NULL: nothing more is attached).  Then the uprobes, whose closing
	 * waits for RCU grace periods (a second here under load): a process
	 * held meanwhile would wait for no one, and go on unserved.  Once they
	 * are closed no thread appends any more; the ones still running hand
	 * over what their buffers hold at their next switch or tick: wait for
	 * that, then the rest of the programs. */
	struct tr2_attach *attach = tr->attach;
	uint64_t now = tr2_mono_ns();
	struct bpf_link **holds[] = { &tr->skel->links.on_exec, &tr->skel->links.on_fault,
				      &tr->skel->links.on_map_pages, &tr->skel->links.on_filemap_fault,
				      &tr->skel->links.on_filemap_map_pages_fn,
				      &tr->skel->links.on_filemap_fault_fn };

	/* paused until the end: the streams say so */
	if (tr->paused_ns) {
		feed_pause(tr, 0, now);
		tr->pauses++;
		tr->paused_total_ns += now - tr->paused_ns;
		tr->paused_ns = 0;
	}
	tr->probed = tr2_attach_objects(attach) > 0;
	for (size_t i = 0; i < sizeof(holds) / sizeof(holds[0]); i++) {
		bpf_link__destroy(*holds[i]);
		*holds[i] = NULL;
	}
	/* A run that began before may still hold a process: membarrier's
	 * GLOBAL command is synchronize_rcu(), which outlasts it; then every
	 * hold's record is in the ring buffer. */
	syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	tr->attach = NULL;
	tr2_ring_consume(tr->ring);
	tr2_attach_free(attach);
	if (!tr->mode->done(tr))
		for (uint64_t until = tr2_mono_ns() + TR2_TICK_NS + 10000000; tr2_mono_ns() < until;)
			tr2_ring_poll(tr->ring, 5);
	for (int i = 0; i < tr->nticks; i++)
		bpf_link__destroy(tr->ticks[i]);
	tr->nticks = 0;
	tr2_bpf__detach(tr->skel);
	tr2_ring_consume(tr->ring);
	mark_losses(tr);
	tr2_guard_stop();   /* every hold served: the programs are detached */
	tr->end_ns = tr2_mono_ns();
	if (tr->session)
		tr2_session_flush(tr->session, UINT64_MAX);
	/* the views' ends (chrome's ']', folded's stacks), before the summary
	 * line, which stays the last on stderr even for a DEST of 2 */
	for (int i = 0; i < tr->opts->nformats; i++) {
		tr2_target_finish(&tr->targets[i]);
		tr2_dst_flush(tr->targets[i].dst);
	}
	/* Tracing stopped before CMD ended.  The output closed: CMD runs on
	 * untraced and its status is still ours.  Ctrl-C: the terminal
	 * signalled CMD too; give it a moment to end, else report the signal. */
	if (tr->cmd && !tr->cmd_reaped && tr2_cmd_reap(tr->cmd, exiting ? 200 : -1, &tr->cmd_status) != 1)
		tr->cmd_status = 128 + exiting;
}

/* Entries in a hash map (a walk: for -v at the end only). */
static unsigned map_entries(const struct bpf_map *map)
{
	char key[64], next[64];
	void *prev = NULL;
	unsigned n = 0;

	if (bpf_map__key_size(map) > sizeof(key))
		return 0;
	while (!bpf_map_get_next_key(bpf_map__fd(map), prev, next)) {
		memcpy(key, next, bpf_map__key_size(map));
		prev = key;
		n++;
	}
	return n;
}

/* -v: what tr2-bpf did and keeps. */
static void report_verbose(struct tracer *tr)
{
	unsigned long kept_procs = 0, kept_threads = 0, waiting = 0;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "tr2-bpf: held processes stopped %llu times to attach to new objects: "
		"%.3f ms waiting for tr2-bpf, %.3f ms attaching\n", (unsigned long long)tr->stops,
		tr->stop_wait_ns / 1e6, tr->stop_attach_ns / 1e6);
	if (tr->session)
		tr2_session_kept(tr->session, &kept_procs, &kept_threads, &waiting);
	fprintf(stderr, "tr2-bpf: kept at the end: %lu processes, %lu threads; BPF maps: "
		"%u traced processes, %u processes with losses, %u known objects\n",
		kept_procs, kept_threads, map_entries(tr->skel->maps.traced),
		map_entries(tr->skel->maps.lost_by_pid), map_entries(tr->skel->maps.known));
	fprintf(stderr, "tr2-bpf: its own CPU time: %ld.%02ld s user, %ld.%02ld s system\n",
		(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 10000,
		(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 10000);
}

/* Says how often a process went on without waiting for tr2-bpf (bpf/tr2.bpf.c,
 * `unserved`): tr2-bpf was stopped, killed or too slow, and what that process
 * ran of an object tr2-bpf had not attached to yet is not in the trace. */
static void report_unserved(struct tracer *tr)
{
	int fd = bpf_map__fd(tr->skel->maps.unserved);
	__u64 let_go = 0, not_held = 0;
	__u32 k;

	k = 0;
	bpf_map_lookup_elem(fd, &k, &let_go);
	k = 1;
	bpf_map_lookup_elem(fd, &k, &not_held);
	if (let_go + not_held)
		fprintf(stderr, "tr2-bpf: %llu processes went on without waiting for tr2-bpf to attach to an "
			"object they mapped (tr2-bpf was stopped or did not answer within 1 s): their first "
			"events from it may be missing\n", (unsigned long long)(let_go + not_held));
}

/* ", N things" for n > 0, else "". */
static const char *count_of(char *buf, size_t len, uint64_t n, const char *one, const char *many)
{
	if (!n)
		return "";
	snprintf(buf, len, ", %llu %s", (unsigned long long)n, n == 1 ? one : many);
	return buf;
}

/* --record: the END record, the file closed; a recording that stopped
 * early says why.  Returns 1 when the file could not be written whole (a
 * write error; the limit is the user's). */
static int close_recording(struct tracer *tr, uint64_t lost)
{
	struct tr2_file_end end = { .now_ns = tr->end_ns, .lost = lost };
	char err[512], count[64] = "";
	int full = 0;

	if (!tr->rec)
		return 0;
	tr2_recording_stopped(tr->rec, &full);
	if (!tr2_recording_close(tr->rec, &end, err, sizeof(err))) {
		tr->rec = NULL;
		return 0;
	}
	tr->rec = NULL;
	if (tr->unrecorded)
		snprintf(count, sizeof(count), ": %llu events not recorded", (unsigned long long)tr->unrecorded);
	fprintf(stderr, "tr2-bpf: %s%s\n", err, count);
	return !full;
}

int tr2_tracer_report(struct tracer *tr, int poll_failed)
{
	const struct tr2_opts *o = tr->opts;
	int aggregated = tr->summary && !o->nformats;   /* the aggregated events are the ones handled */
	char err[512], lines[64], procs[64], damaged[64];
	uint64_t dropped = 0, events, lost_before = lost_in_bpf(tr->skel) + tr->decode_errors + tr->unrecorded;
	int incomplete, rec_failed;

	if (o->verbose)
		report_verbose(tr);
	report_unserved(tr);
	if (tr->summary)
		tr2_summary_print(tr->summary, tr->end_ns, 1);
	/* --record alone: the events recorded are the ones handled */
	events = tr->session ? tr2_session_events(tr->session) : tr->recorded;
	if (tr->cmd) {
		/* -- CMD: say why there was nothing to trace, the summary still last */
		if (tr2_cmd_failed(tr->cmd, err, sizeof(err)))
			fprintf(stderr, "tr2-bpf: %s\n", err);
		else if (!tr->probed && !events && o->filters[0] && !tr->passed)
			fprintf(stderr, "tr2-bpf: %s left out '%s' and every process it started\n", o->filters,
				o->cmd[0]);
		else if (!tr->probed && !events && !tr->untraced)
			fprintf(stderr, "tr2-bpf: no trace2 probes in '%s' or any process it started\n", o->cmd[0]);
	}
	rec_failed = close_recording(tr, lost_before);
	if (tr->pauses)
		fprintf(stderr, "tr2-bpf: paused %llu time%s, %.3f s in all\n", (unsigned long long)tr->pauses,
			tr->pauses == 1 ? "" : "s", tr->paused_total_ns / 1e9);
	for (int i = 0; i < o->nformats; i++)
		dropped += tr2_dst_dropped(tr->targets[i].dst, NULL, NULL);
	fprintf(stderr, "tr2-bpf: %llu events, %llu lost%s%s%s\n",
		(unsigned long long)(events - (aggregated ? tr2_summary_lost(tr->summary) : 0)),
		(unsigned long long)(lost_before + (tr->session ? tr2_session_lost_calls(tr->session) : 0) +
				     (aggregated ? tr2_summary_lost(tr->summary) : 0)),
		count_of(damaged, sizeof(damaged), damaged_in_bpf(tr->skel), "damaged buffer", "damaged buffers"),
		count_of(lines, sizeof(lines), dropped, "line dropped", "lines dropped"),
		count_of(procs, sizeof(procs), tr->untraced, "process not traced", "processes not traced"));
	incomplete = poll_failed || dropped || tr->untraced || rec_failed;
	if (o->cmd)
		return tr->cmd_status ? tr->cmd_status : incomplete ? TR2_EXIT_CMD_INCOMPLETE : 0;
	return incomplete ? TR2_EXIT_INCOMPLETE : 0;
}

void tr2_tracer_free(struct tracer *tr)
{
	tr->mode->finish(tr);
	tr2_cmd_free(tr->cmd);
	tr2_ring_free(tr->ring);
	tr2_bpf__destroy(tr->skel);
	tr2_session_free(tr->session);
	tr2_recording_close(tr->rec, NULL, NULL, 0);
	tr2_summary_free(tr->summary);
	if (tr->summary_json)
		tr2_dst_close(tr->summary_json);
	for (int i = 0; i < tr->opts->nformats; i++)
		tr2_dst_close(tr->targets[i].dst);
	free(tr->procs);
	free(tr->losses);
	free(tr->other_holds.ids);
}
