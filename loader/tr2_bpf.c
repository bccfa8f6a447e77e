/* tr2-bpf: attaches eBPF programs to the trace2 USDT probes of the tr2
 * runtimes that processes map and writes their Trace2 events in git's
 * NORMAL, PERF and EVENT formats (and the views: chrome, folded, summary).
 * The contract (options, summary line, exit status) is
 * ../shared/trace2-api.md §3.  main reads the options into struct tr2_opts,
 * picks the mode (tr2_mode.h: -p, -- CMD), and runs one loop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_attach.h"
#include "tr2_cmd.h"
#include "tr2_decode.h"
#include "tr2_dst.h"
#include "tr2_mem.h"
#include "tr2_mode.h"
#include "tr2_ring.h"
#include "tr2_session.h"
#include "tr2_sid.h"
#include "tr2_summary.h"
#include "tr2_tgt.h"
#include "tr2_tracer.h"

#define DEFAULT_RING_BYTES (16u << 20)
/* The eBPF side wakes the consumer only when the ring buffer is a quarter
 * full (bpf/tr2.bpf.c, wakeup_bytes); otherwise records wait for this poll
 * timer: the latency of live output. */
#define POLL_MS 20

static const char usage[] =
"Usage: tr2-bpf [OPTIONS] -p PID [-p PID...]\n"
"       tr2-bpf [OPTIONS] -- CMD [ARG...]\n"
"       tr2-bpf [OPTIONS] -a\n"
"\n"
"Trace programs instrumented with tr2's <trace2.h>: attach eBPF programs to\n"
"the probes of their tr2 runtime (libtr2.so, or libtr2.a linked into the\n"
"program or a shared object) and write their Trace2 events the way git\n"
"writes them.  Processes tr2-bpf does not trace pay nothing.\n"
"\n"
"  -p, --pid=PID          attach to the running process PID (repeat for more);\n"
"                         stop when they have all exited\n"
"  -- CMD [ARG...]        run CMD traced from its first event, and every\n"
"                         descendant of it that carries probes (sid parent/child,\n"
"                         depth d1, d2, ...); exit with CMD's status\n"
"  -u, --user=USER        with -- CMD: run CMD as USER (a name or a uid), as\n"
"                         strace -u does: USER's uid, gid and groups, and its\n"
"                         HOME, USER, LOGNAME (SHELL if a login shell);\n"
"                         tr2-bpf itself stays root\n"
"  -a, --all              every process on the host that carries a tr2\n"
"                         runtime: those running, from now on, and every one\n"
"                         started later, from its first event, whoever starts\n"
"                         it (containers too); until Ctrl-C, SIGTERM or\n"
"                         --duration\n"
"      --comm=NAME[,NAME...]  only processes of these names (their comm, at\n"
"                         most 15 bytes: longer names are cut there), in any\n"
"                         mode\n"
"      --uid=USER         only processes whose real user is USER (a name or a\n"
"                         number), in any mode\n"
"      --cgroup=PATH      only processes in the cgroup v2 directory PATH or\n"
"                         below it (also cgroups made later), in any mode\n"
"      --duration=SECONDS stop after SECONDS (any mode)\n"
"\n"
"Formats (any combination; none given: --perf to standard output, or with\n"
"--summary no event stream):\n"
"      --normal[=DEST]    git's NORMAL format (GIT_TRACE2)\n"
"      --perf[=DEST]      git's PERF format (GIT_TRACE2_PERF)\n"
"      --event[=DEST]     git's EVENT format, JSON lines (GIT_TRACE2_EVENT)\n"
"      --chrome[=DEST]    Chrome Trace Event Format (JSON), the format Perfetto\n"
"                         UI, chrome://tracing and speedscope open; written as\n"
"                         events arrive, the closing ']' at the end\n"
"      --folded[=DEST]    region self time as collapsed stacks (process;thread;\n"
"                         category:label;... microseconds), for flame graphs;\n"
"                         written at the end\n"
"      --brief            the BRIEF variant of every chosen format\n"
"      --event-nesting=N  EVENT region nesting limit (default 2, as\n"
"                         GIT_TRACE2_EVENT_NESTING)\n"
"\n"
"Summary (aggregated by tr2-bpf from the events, with or without a format):\n"
"      --summary[=INTERVAL]  per process and (category, label): count, total,\n"
"                         mean, min, max, p50, p99 of region durations, and per\n"
"                         (category, key) count, sum, min, max, last of integer\n"
"                         data; a table on standard output every INTERVAL\n"
"                         seconds (default: only at the end) and at the end or\n"
"                         Ctrl-C.  Each table covers the trace so far; seconds\n"
"                         with 6 decimals, as PERF's columns; p50 and p99 are\n"
"                         approximate (log2 histograms, interpolated); `open`:\n"
"                         entered, not left yet; `before`: left, entered before\n"
"                         the attach (no duration).  E.g. (tr2-bpf --summary --\n"
"                         build/examples/dirscan -j 2 /usr/include):\n"
"\n"
"2026-11-23T18:22:40Z tr2-bpf summary after 2.850 s, final: durations in seconds, p50 and p99 approximate\n"
"\n"
"pid 11195 dirscan\n"
"    count      total       mean        min        max        p50        p99  open before  category label\n"
"        2   4.269672   2.134836   2.134690   2.134981   2.134690   2.134981     0      0  read     files\n"
"        1   2.611182   2.611182   2.611182   2.611182   2.611182   2.611182     0      0  scan     pass\n"
"        1   2.139026   2.139026   2.139026   2.139026   2.139026   2.139026     0      0  scan     read\n"
"      844   2.032193   0.002407   0.000129   0.354806   0.000454   0.025165     0      0  walk     read_dir\n"
"        1   0.355560   0.355560   0.355560   0.355560   0.355560   0.355560     0      0  scan     walk\n"
"        1   0.112645   0.112645   0.112645   0.112645   0.112645   0.112645     0      0  scan     check\n"
"    count        sum        min        max       last  category key\n"
"        2  118125638   57388924   60736714   57388924  read     bytes\n"
"        2       8125       3985       4140       3985  read     files\n"
"        1        844        844        844        844  walk     dirs\n"
"        1       8125       8125       8125       8125  walk     files\n"
"\n"
"      --hist             with --summary: each region's log2 histogram (ns), in\n"
"                         the layout of bcc's tools\n"
"      --summary-json[=DEST]  with --summary: the same numbers as JSON, one\n"
"                         document (one line) per table; DEST omitted: standard\n"
"                         output, instead of the text table\n"
"      --summary-by=process|program  with --summary: a table per process, or\n"
"                         per program: the processes of one name (cmd_name,\n"
"                         else argv[0], else comm) added up, headed \"program\n"
"                         NAME: N processes\"; default: program with -a, else\n"
"                         process\n"
"      --summary-keys=N   room for N (process, category, label) keys (default\n"
"                         8192); events of a key that finds no room are not\n"
"                         aggregated and counted (\"not aggregated\")\n"
"      --category=LIST    only these categories (comma-separated) are recorded\n"
"                         or aggregated, in every mode; filtered in BPF (region\n"
"                         and data events; timers and counters are not filtered)\n"
"\n"
"DEST, a Trace2 target value: omitted, standard output; a file descriptor 2-9;\n"
"an absolute path (appended to); an existing directory (one file per traced\n"
"process, named after the last part of its sid); af_unix:[stream:|dgram:]/path\n"
"(one connection per traced process, from its first event to its last, as\n"
"each git process opens its own: what trace2receiver expects).\n"
"      --max-files=N      a directory DEST holds at most N files; then git's\n"
"                         git-trace2-discard sentinel (as trace2.maxFiles;\n"
"                         default 0, no limit)\n"
"\n"
"  -b, --ring-buffer=SIZE ring buffer size in bytes, a power of 2 (K and M\n"
"                         suffixes allowed; default 4M)\n"
"      --probe-nop=auto|1|5\n"
"                         where the uprobe goes on the runtime's probe site,\n"
"                         a 1-byte nop then a 5-byte nop.  1 (auto): the\n"
"                         1-byte nop, emulated by the kernel, correct\n"
"                         everywhere.  5: the 5-byte nop, which Linux 6.18+\n"
"                         turns into a call, half the cost of an event; but\n"
"                         there a child forked after that crashes (its copy\n"
"                         of the call has no trampoline), so tr2-bpf refuses\n"
"                         5 where the kernel makes that call\n"
"  -v, --verbose          show libbpf's messages and why a record was dropped;\n"
"                         before the summary, tr2-bpf's own CPU time, how\n"
"                         many records named their call site's literal\n"
"                         strings by number instead of carrying them, how\n"
"                         often processes were held stopped to attach to a\n"
"                         new object, and what tr2-bpf keeps at the end\n"
"  -h, --help             show this text\n"
"\n"
"On stderr, after a trace, the last line is the summary\n"
"  tr2-bpf: N events, M lost\n"
"N events were written; M were dropped on the way (ring buffer full, record\n"
"not decodable), counted exactly.  Errors are one line on stderr and a non-zero\n"
"exit status.  Needs root (CAP_BPF and CAP_PERFMON).\n"
"\n"
"With -- CMD, CMD inherits what tr2-bpf was started with, as from the shell\n"
"(fds, environment, signal mask and dispositions, limits, umask, cwd, process\n"
"group); a SIGTERM to tr2-bpf is passed on to CMD; Ctrl-C reaches CMD from the\n"
"terminal.  If tr2-bpf ends first (killed, or its output failed), CMD runs on,\n"
"untraced.\n"
"\n"
"Examples:\n"
"  sudo tr2-bpf -p 4242                       PERF lines of process 4242, live\n"
"  sudo tr2-bpf --perf -- ./prog arg          trace ./prog from its start\n"
"  sudo tr2-bpf --event=/tmp/t.json --normal=2 -p 4242\n"
"  sudo tr2-bpf --event=/var/log/tr2/ -- make  one EVENT file per process\n"
"  sudo tr2-bpf -u \"$USER\" --perf -- make     make as yourself, traced\n"
"  sudo tr2-bpf --chrome=/tmp/t.json -- ./prog  open /tmp/t.json in ui.perfetto.dev\n";


static volatile sig_atomic_t exiting;
static struct tr2_summary *summary;   /* --summary */
static pid_t signal_cmd;              /* -- CMD: the child, to which SIGTERM is passed on */

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

static int verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
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

/* Lets a process that stopped itself for tr2-bpf go on; first out of the
 * eBPF side's `held`, so that it is not counted as let go unserved.  And
 * tr2-bpf serves holds again, if the eBPF side had given up on it. */
static void let_go(struct tracer *tr, pid_t pid)
{
	__u32 key = pid;

	bpf_map_delete_elem(bpf_map__fd(tr->skel->maps.held), &key);
	kill(pid, SIGCONT);
	tr->skel->bss->tracer_absent = 0;
}

/*
 * The watchdog: a thread that lets go every process held longer than
 * TR2_HOLD_MAX_NS, as the eBPF side does at the next fork, exec or exit on
 * the host (bpf/tr2.bpf.c, `held`), for a host where none comes: tr2-bpf
 * alive but not serving (busy attaching, starved).  When tr2-bpf is stopped
 * or killed, the eBPF side lets them go at once.
 */
static uint64_t watchdog_let_go;   /* holds it ended */
/* Written to stop the watchdog (a pipe), rather than pthread_cancel, whose
 * unwinding leaves ASan's poisoning of the thread's frames behind (a false
 * stack-buffer-overflow when the thread ends, under make test-asan). */
static int watchdog_stop[2] = { -1, -1 };

static void *watchdog(void *arg)
{
	struct tracer *tr = arg;
	int fd = bpf_map__fd(tr->skel->maps.held);

	for (;;) {
		struct pollfd stop = { .fd = watchdog_stop[0], .events = POLLIN };
		__u32 key, next, *prev = NULL;
		__u64 since, now;

		if (poll(&stop, 1, 100) > 0)
			break;
		now = tr2_mono_ns();
		while (!bpf_map_get_next_key(fd, prev, &next)) {
			key = next;
			prev = &key;
			if (bpf_map_lookup_elem(fd, &key, &since) || now - since < TR2_HOLD_MAX_NS ||
			    bpf_map_delete_elem(fd, &key))
				continue;
			tr->skel->bss->tracer_absent = 1;
			kill((pid_t)key, SIGCONT);
			__atomic_add_fetch(&watchdog_let_go, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* For tests only (tests/e2e/harm.sh): TR2_BPF_TEST_HOLD_DELAY_MS makes
 * tr2-bpf wait that long before it attaches for a held process, so that a
 * test can stop or kill it while a process waits. */
static unsigned hold_delay_ms;

/* Process pid maps an object not known yet, (dev, ino) among them (exec, or
 * the loader mapped objects): attach to what it maps now and, when it
 * stopped itself for that at stopped_ns (held), let it go on. */
static void attach_and_continue(struct tracer *tr, pid_t pid, int held, uint64_t stopped_ns, uint64_t dev,
				uint64_t ino)
{
	char err[512];
	uint64_t start = tr2_mono_ns(), now;

	if (held && hold_delay_ms)
		usleep(hold_delay_ms * 1000);

	/* After detaching (tr->attach NULL) only the SIGCONT is left to do. */
	if (tr->attach) {
		if (tr->mode->attach(tr, pid, err, sizeof(err)) < 0 && kill(pid, 0) == 0)
			fprintf(stderr, "tr2-bpf: %s\n", err);
		tr2_attach_known(tr->attach, dev, ino, pid);
	}
	if (!held)
		return;
	/* taken before SIGCONT: the process may make its first call at once */
	now = tr2_mono_ns();
	let_go(tr, pid);
	tr2_session_resumed(tr->session, pid, stopped_ns, now);
	tr->stops++;
	tr->stop_wait_ns += start > stopped_ns ? start - stopped_ns : 0;
	tr->stop_attach_ns += now - start;
}

static void forget_losses(struct tracer *tr, __u32 pid, uint64_t ts_ns);

static int on_record(void *ctx, void *data, size_t size)
{
	struct tracer *tr = ctx;
	struct tr2_rec h;
	const char *why;

	if (tr2_decode_rec(data, size, &h, &why)) {
		tr->decode_errors++;
		if (verbose)
			fprintf(stderr, "tr2-bpf: dropped a record: %s\n", why);
		/* A process that stopped itself for us must not stay stopped. */
		memcpy(&h, data, size < sizeof(h) ? size : sizeof(h));
		if (size >= sizeof(h) && (h.kind == TR2_REC_EXECVE || h.kind == TR2_REC_NEW_OBJECT))
			let_go(tr, (pid_t)h.pid);
		return 0;
	}
	/* The last of its calls are in: mark its losses while its session is there. */
	if (h.kind == TR2_REC_PROC_GONE)
		forget_losses(tr, h.pid, h.ts_ns);
	tr2_session_record(tr->session, &h, data, size);
	switch (h.kind) {
	case TR2_REC_FORK:
		tr2_tracer_add_proc(tr, h.pid);
		if (tr->attach && tr->mode->forked)
			tr->mode->forked(tr, h.pid, h.ts_ns);
		break;
	case TR2_REC_PROC_GONE:
		for (int i = 0; i < tr->nprocs; i++)
			if (tr->procs[i] == (pid_t)h.pid)
				tr->procs[i] = tr->procs[--tr->nprocs];
		break;
	case TR2_REC_EXECVE:
	case TR2_REC_NEW_OBJECT:
		/* An object not known yet: the process waits (num[0]), or went on
		 * because tr2-bpf could not serve it then (attached late). */
		if (h.num[0] || h.num[1] || h.num[2])
			attach_and_continue(tr, h.pid, h.num[0], h.ts_ns, h.num[1], h.num[2]);
		break;
	}
	return 0;
}

static uint64_t lost_in_bpf(struct tr2_bpf *skel)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, sum = 0;
	uint32_t zero = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		abort();
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.lost), &zero, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
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
		tr2_session_lost(tr->session, pid, total - tr->losses[i].reported, ts_ns);
		tr->losses[i].reported = total;
	}
	return i;
}

static void mark_losses(struct tracer *tr)
{
	int fd = bpf_map__fd(tr->skel->maps.lost_by_pid);
	__u32 key, next, *prev = NULL;
	__u64 total, all = lost_in_bpf(tr->skel);

	/* Walk the per-process counts only when the total grew: a walk costs a
	 * scan of the whole hash table, even an empty one. */
	if (all == tr->lost_marked)
		return;
	tr->lost_marked = all;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &total))
			mark_loss(tr, key, total, tr2_mono_ns());
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

/* An option's decimal value in [min, max]; else fails with msg (a format
 * with one %s for the value). */
static long parse_number(const char *s, long min, long max, const char *msg)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < min || v > max)
		tr2_fail(msg, s);
	return v;
}

static unsigned parse_size(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v < 4096 || v > (1ul << 30) || (v & (v - 1)))
		tr2_fail("bad --ring-buffer size '%s': want a power of 2 from 4K to 1024M", s);
	return v;
}

static void parse_summary_opt(struct summary_opts *o, int opt, const char *arg)
{
	char *end, *list, *name, *save;

	switch (opt) {
	case 'S':
		o->on = 1;
		if (arg) {
			o->interval_s = strtod(arg, &end);
			if (end == arg || *end || !(o->interval_s >= 0.01 && o->interval_s <= 86400))
				tr2_fail("bad --summary interval '%s': want seconds, from 0.01 to 86400", arg);
		}
		break;
	case 'H':
		o->hist = 1;
		break;
	case 'J':
		o->json_set = 1;
		o->json_dest = arg;
		break;
	case 'Y':
		o->by_set = 1;
		if (!strcmp(arg, "process") || !strcmp(arg, "program"))
			o->by_program = arg[3] == 'g';
		else
			tr2_fail("bad --summary-by '%s': want process or program", arg);
		break;
	case 'K':
		o->keys_set = 1;
		o->keys = parse_number(arg, 1, 1 << 20, "bad --summary-keys '%s': want a number from 1 to 1048576");
		break;
	case 'c':
		free(o->cat_list);
		o->ncats = 0;   /* the last --category counts */
		list = o->cat_list = strdup(arg);
		if (!list)
			abort();
		for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
			if (strlen(name) > 62)
				tr2_fail("bad --category '%s': names are at most %d bytes", name, 62);
			if (o->ncats == 64)
				tr2_fail("bad --category: at most 64 categories");
			o->cats[o->ncats++] = name;
		}
		if (!o->ncats)
			tr2_fail("bad --category '%s': want names separated by commas", arg);
		break;
	}
}

/* The summary's state (NULL without --summary). */
static struct tr2_summary *setup_summary(struct summary_opts *o, const struct timespec *real,
					 const struct timespec *mono)
{
	char err[512];
	struct tr2_summary *s;

	if (!o->on)
		return NULL;
	if (o->json_set) {
		o->json = tr2_dst_open(o->json_dest, err, sizeof(err));
		if (!o->json)
			tr2_fail("%s", err);
	}
	s = tr2_summary_new(o->hist, !o->json_set || o->json_dest, o->json,
			    (int64_t)(real->tv_sec - mono->tv_sec) * 1000000000 + (real->tv_nsec - mono->tv_nsec),
			    tr2_mono_ns());
	tr2_summary_set_per_program(s, o->by_program);
	tr2_summary_set_keys(s, o->keys);
	tr2_summary_set_interval(s, (uint64_t)(o->interval_s * 1e9));
	return s;
}

/* Says how often a process went on without waiting for tr2-bpf (bpf/tr2.bpf.c,
 * `unserved`): tr2-bpf was stopped, killed or too slow, and what that process
 * ran of an object tr2-bpf had not attached to yet is not in the trace. */
static void report_unserved(struct tracer *tr)
{
	int fd = bpf_map__fd(tr->skel->maps.unserved);
	__u64 let_go = __atomic_load_n(&watchdog_let_go, __ATOMIC_RELAXED), n = 0, not_held = 0;
	__u32 k;

	k = 0;
	bpf_map_lookup_elem(fd, &k, &n);
	let_go += n;
	k = 1;
	bpf_map_lookup_elem(fd, &k, &not_held);
	if (let_go + not_held)
		fprintf(stderr, "tr2-bpf: %llu processes went on without waiting for tr2-bpf to attach to an "
			"object they mapped (tr2-bpf was stopped or did not answer within 1 s): their first "
			"events from it may be missing\n", (unsigned long long)(let_go + not_held));
}

/* Whether the kernel turns a uprobe on a 5-byte nop into a call
 * (arch_uprobe_optimize, Linux 6.18+).  Where it does, a child forked after
 * that gets the call and not its trampoline (mapped VM_DONTCOPY on 6.18.44)
 * and dies of SIGSEGV when it runs the site (measured); later kernels copy
 * the trampoline, but no version or symbol tells them apart, so tr2-bpf
 * refuses the 5-byte nop wherever the kernel makes the call. */
static int kernel_optimizes_nop5(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[256];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " arch_uprobe_optimize\n") != NULL;
	fclose(f);
	return found;
}

/* --comm=NAME[,NAME...]: each cut to 15 bytes, as the kernel keeps a comm. */
static void parse_comms(struct tr2_opts *o, const char *arg)
{
	char *list = strdup(arg), *name, *save;

	if (!list)
		abort();
	o->ncomms = 0;   /* the last --comm counts */
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (o->ncomms == 64)
			tr2_fail("bad --comm: at most 64 names");
		snprintf(o->comms[o->ncomms++], sizeof(o->comms[0]), "%s", name);
	}
	free(list);
	if (!o->ncomms)
		tr2_fail("bad --comm '%s': want names separated by commas", arg);
}

/* --uid=USER: a user name, or a number. */
static void parse_uid(struct tr2_opts *o, const char *arg)
{
	struct passwd *pw = getpwnam(arg);
	char *end;
	unsigned long v;

	o->narrow_uid = 1;
	if (pw) {
		o->uid = pw->pw_uid;
		return;
	}
	v = strtoul(arg, &end, 10);
	if (end == arg || *end || v > 0xfffffffeul)
		tr2_fail("bad --uid '%s': no such user", arg);
	o->uid = v;
}

/* After the load: --comm's names and --cgroup's directory into their maps. */
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
	if (!o->cgroup)
		return;
	fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		tr2_fail("bad --cgroup '%s': %s", o->cgroup, strerror(errno));
	if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
		tr2_fail("bad --cgroup '%s': not a cgroup v2 directory", o->cgroup);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.cgroups), &zero, &fd, BPF_ANY))
		tr2_fail("failed to set the --cgroup filter: %s", strerror(errno));
	close(fd);
}

/* Reads the command line into *o; exits with a one-line error when it is bad. */
static void parse_options(struct tr2_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "normal", optional_argument, NULL, 'N' },
		{ "perf", optional_argument, NULL, 'P' },
		{ "event", optional_argument, NULL, 'E' },
		{ "chrome", optional_argument, NULL, 'C' },
		{ "folded", optional_argument, NULL, 'F' },
		{ "brief", no_argument, NULL, 'B' },
		{ "event-nesting", required_argument, NULL, 'n' },
		{ "ring-buffer", required_argument, NULL, 'b' },
		{ "probe-nop", required_argument, NULL, 'o' },
		{ "max-files", required_argument, NULL, 'm' },
		{ "summary", optional_argument, NULL, 'S' },
		{ "hist", no_argument, NULL, 'H' },
		{ "summary-json", optional_argument, NULL, 'J' },
		{ "summary-keys", required_argument, NULL, 'K' },
		{ "summary-by", required_argument, NULL, 'Y' },
		{ "category", required_argument, NULL, 'c' },
		{ "user", required_argument, NULL, 'u' },
		{ "all", no_argument, NULL, 'a' },
		{ "comm", required_argument, NULL, 'M' },
		{ "uid", required_argument, NULL, 'U' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "duration", required_argument, NULL, 'D' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, npids_cap = 0;

	o->event_nesting = 2;
	o->ring_bytes = DEFAULT_RING_BYTES;
	o->probe_nop = -1;
	o->sum.keys = TR2_SUMMARY_KEYS;
	opterr = 0;   /* one line of our own instead of getopt's two */
	while ((opt = getopt_long(argc, argv, "+:p:u:ab:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'u':
			o->user = optarg;
			break;
		case 'a':
			o->all = 1;
			break;
		case 'M':
			parse_comms(o, optarg);
			break;
		case 'U':
			parse_uid(o, optarg);
			break;
		case 'G':
			o->cgroup = optarg;
			break;
		case 'D': {
			char *end;

			o->duration_s = strtod(optarg, &end);
			if (end == optarg || *end || !(o->duration_s > 0 && o->duration_s <= 31536000))
				tr2_fail("bad --duration '%s': want seconds, more than 0", optarg);
			break;
		}
		case 'p':
			o->pids = tr2_grow(o->pids, o->npids, &npids_cap, sizeof(*o->pids));
			o->pids[o->npids++] = parse_number(optarg, 1, 0x3fffffff, "bad PID '%s'");
			break;
		case 'N':
		case 'P':
		case 'E':
		case 'C':
		case 'F':
			if (o->nformats == 8)
				tr2_fail("too many formats");
			o->formats[o->nformats].fmt = opt == 'N' ? TR2_FMT_NORMAL : opt == 'P' ? TR2_FMT_PERF :
						      opt == 'E' ? TR2_FMT_EVENT : opt == 'C' ? TR2_FMT_CHROME :
						      TR2_FMT_FOLDED;
			o->formats[o->nformats++].dest = optarg;
			break;
		case 'B':
			o->brief = 1;
			break;
		case 'n':
			o->event_nesting = parse_number(optarg, 0, 1000000,
							"bad --event-nesting '%s': want a number of levels");
			break;
		case 'b':
			o->ring_bytes = parse_size(optarg);
			break;
		case 'm':
			o->max_files = parse_number(optarg, 0, 1000000, "bad --max-files '%s': want a number of files");
			break;
		case 'o':
			if (!strcmp(optarg, "auto"))
				o->probe_nop = -1;
			else if (!strcmp(optarg, "1") || !strcmp(optarg, "5"))
				o->probe_nop = optarg[0] == '5';
			else
				tr2_fail("bad --probe-nop '%s': want auto, 1 or 5", optarg);
			break;
		case 'S':
		case 'H':
		case 'J':
		case 'K':
		case 'Y':
		case 'c':
			parse_summary_opt(&o->sum, opt, optarg);
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case ':':
			tr2_fail("option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			tr2_fail("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (o->user && !o->cmd)
		tr2_fail("-u needs -- CMD: it runs CMD as USER");
	if ((o->npids != 0) + (o->cmd != NULL) + o->all > 1)
		tr2_fail("give one of -p PID, -- CMD and -a");
	if ((o->npids != 0) + (o->cmd != NULL) + o->all == 0)
		tr2_fail("nothing to trace: give -p PID, -- CMD or -a (see --help)");
	if ((o->sum.hist || o->sum.json_set || o->sum.keys_set || o->sum.by_set) && !o->sum.on)
		tr2_fail("--hist, --summary-json, --summary-keys and --summary-by need --summary");
	if (o->probe_nop == 1 && kernel_optimizes_nop5())
		tr2_fail("--probe-nop=5: this kernel turns a uprobe on a 5-byte nop into a call whose "
			 "trampoline a forked child does not inherit (it would crash): use --probe-nop=1");
	if (o->probe_nop < 0)
		o->probe_nop = 0;
	/* a host's processes come and go by the thousand: one table per program */
	if (!o->sum.by_set)
		o->sum.by_program = o->all;
	if (!o->nformats && !o->sum.on) {
		o->formats[0].fmt = TR2_FMT_PERF;
		o->formats[0].dest = NULL;
		o->nformats = 1;
	}
}

/* Whether the running kernel's BTF has name of BTF kind (a kfunc, a
 * tracepoint's btf_trace_* typedef). */
static int kernel_has(const char *name, int kind)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int found = vmlinux && btf__find_by_name_kind(vmlinux, name, kind) >= 0;

	btf__free(vmlinux);
	return found;
}

int main(int argc, char **argv)
{
	static struct tr2_opts opts;
	struct tr2_target targets[8], *target_ptrs[8];
	struct tracer tr = { .opts = &opts };
	struct tr2_ring *rb = NULL;
	char err[512], host[16];
	struct timespec real, mono;
	int status = 0, multi, probed;
	pthread_t watchdog_thread;
	uint64_t started_ns;

	parse_options(&opts, argc, argv);
	verbose = opts.verbose;
	/* CMD first, before anything it must not inherit is opened or set
	 * (tr2_cmd.h); held until the mode starts it. */
	if (opts.cmd) {
		tr.cmd = tr2_cmd_start(opts.cmd, opts.user, err, sizeof(err));
		if (!tr.cmd)
			tr2_fail("%s", err);
		signal_cmd = tr2_cmd_pid(tr.cmd);
	}
	if (getenv("TR2_BPF_TEST_HOLD_DELAY_MS"))
		hold_delay_ms = strtoul(getenv("TR2_BPF_TEST_HOLD_DELAY_MS"), NULL, 10);
	tr.mode = opts.cmd ? &tr2_mode_cmd : opts.all ? &tr2_mode_all : &tr2_mode_pid;
	for (int i = 0; i < opts.nformats; i++) {
		struct tr2_tgt_opts topts = { .brief = opts.brief, .event_nesting = opts.event_nesting };
		struct tr2_dst *dst = tr2_dst_open(opts.formats[i].dest, err, sizeof(err));

		if (!dst)
			tr2_fail("%s", err);
		tr2_target_init(&targets[i], tr2_tgt_of(opts.formats[i].fmt), &topts, dst);
		tr2_dst_set_max_files(dst, opts.max_files);
		tr2_dst_set_buffered(dst, true);
		target_ptrs[i] = &targets[i];
	}

	libbpf_set_print(libbpf_print);
	tr.skel = tr2_bpf__open();
	if (!tr.skel)
		tr2_fail("failed to open the BPF object: %s", strerror(errno));
	tr.skel->rodata->follow = tr.mode->follow;
	tr.skel->rodata->trace_all = tr.mode->all;
	tr.skel->rodata->narrow_comm = opts.ncomms > 0;
	tr.skel->rodata->narrow_uid = opts.narrow_uid;
	tr.skel->rodata->uid = opts.uid;
	tr.skel->rodata->narrow_cgroup = opts.cgroup != NULL;
	tr.skel->rodata->known_per_process = tr.mode->known_per_process;
	tr.skel->rodata->tracer_tgid = getpid();
	tr.skel->rodata->wakeup_bytes = opts.ring_bytes / 4;
	bpf_map__set_max_entries(tr.skel->maps.events, opts.ring_bytes);
	/* Before Linux 6.16, batches go through a scratch per CPU (bpf/tr2_batch.bpf.h);
	 * TR2_BPF_TEST_NO_DIRECT=1 takes that path anywhere, for tests. */
	tr.skel->rodata->copy_direct = kernel_has("bpf_probe_read_user_dynptr", BTF_KIND_FUNC) &&
				       !getenv("TR2_BPF_TEST_NO_DIRECT");
	if (!tr.skel->rodata->copy_direct)
		bpf_map__set_max_entries(tr.skel->maps.scratch, libbpf_num_possible_cpus());
	/* Before Linux 6.10 exec has no tracepoint before the old image goes:
	 * calls waiting in a thread's buffer at an unannounced exec are lost. */
	if (!kernel_has("btf_trace_sched_prepare_exec", BTF_KIND_TYPEDEF))
		bpf_program__set_autoload(tr.skel->progs.on_prepare_exec, false);
	if (!tr.mode->follow)
		bpf_program__set_autoload(tr.skel->progs.on_fork, false);
	multi = tr2_attach_prepare(tr.skel->obj);
	if (tr2_bpf__load(tr.skel)) {
		int e = errno;

		tr2_fail("failed to load the BPF programs: %s%s", strerror(e),
			 e == EPERM ? " (run as root: needs CAP_BPF and CAP_PERFMON)" :
			 e == EACCES ? " (the kernel's verifier refused one; -v shows its log)" : "");
	}

	set_filters(tr.skel, &opts);

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	tr2_sid_host(host, sizeof(host));
	tr.session = tr2_session_new(target_ptrs, opts.nformats,
				     (int64_t)(real.tv_sec - mono.tv_sec) * 1000000000 + (real.tv_nsec - mono.tv_nsec),
				     host, (uint64_t)mono.tv_sec * 1000000000 + (uint64_t)mono.tv_nsec);
	if (opts.sum.ncats)
		tr2_session_set_categories(tr.session, opts.sum.cats, opts.sum.ncats);
	summary = setup_summary(&opts.sum, &real, &mono);
	tr2_session_set_summary(tr.session, summary);
	tr.attach = tr2_attach_new(tr.skel->obj, multi);
	tr2_attach_set_nop5(tr.attach, opts.probe_nop);
	tr2_attach_set_known_per_process(tr.attach, tr.mode->known_per_process);
	if (verbose)
		fprintf(stderr, "tr2-bpf: uprobes on the %s nop of each probe site, %s\n",
			opts.probe_nop ? "5-byte" : "1-byte",
			multi ? "one uprobe-multi link per object and probe" : "one perf uprobe per site");
	rb = tr.ring = tr2_ring_new(bpf_map__fd(tr.skel->maps.events), on_record, &tr);
	if (!rb)
		tr2_fail("failed to create the ring buffer: %s", strerror(errno));

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* Until -p or -a has looked at what runs now, a process that runs code
	 * of an object not seen yet is not stopped for it: nothing would serve
	 * the stop before the loop below.  -- CMD traces only CMD, which starts
	 * at the end of its start and is held at its exec as ever. */
	tr.skel->bss->starting = !tr.mode->follow;
	if (tr2_bpf__attach(tr.skel))
		tr2_fail("failed to attach the fork, exec, exit, switch and page fault tracepoints: %s",
			 strerror(errno));
	tr.nticks = tr2_attach_ticks(tr.skel->progs.on_tick, TR2_TICK_NS, tr.ticks,
				     (int)(sizeof(tr.ticks) / sizeof(tr.ticks[0])), err, sizeof(err));
	if (tr.nticks < 0)
		tr2_fail("%s", err);
	tr.mode->start(&tr);
	tr.skel->bss->starting = 0;
	started_ns = tr2_mono_ns();
	if (pipe2(watchdog_stop, O_CLOEXEC) || pthread_create(&watchdog_thread, NULL, watchdog, &tr))
		tr2_fail("failed to start the watchdog thread: %s", strerror(errno));

	for (;;) {
		/* Returns early only when the eBPF side forced a wakeup; then or
		 * after POLL_MS it reads whatever arrived. */
		int r = tr2_ring_poll(rb, POLL_MS);

		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "tr2-bpf: failed to poll the ring buffer: %s\n", strerror(-r));
			status = 1;
			break;
		}
		mark_losses(&tr);
		tr2_session_flush(tr.session, tr2_mono_ns() - TR2_SESSION_DELAY_NS);
		if (summary)
			tr2_summary_poll(summary, tr2_mono_ns());
		if (exiting || (opts.nformats && !tr2_session_writing(tr.session)))
			break;
		if (opts.duration_s && tr2_mono_ns() - started_ns >= (uint64_t)(opts.duration_s * 1e9))
			break;
		/* Forks recorded before the last traced process ended are in
		 * the ring: read them before believing it. */
		if (tr.mode->done(&tr) && (tr2_ring_consume(rb), tr.mode->done(&tr)))
			break;
	}
	if (write(watchdog_stop[1], "", 1) != 1)
		pthread_cancel(watchdog_thread);
	pthread_join(watchdog_thread, NULL);
	close(watchdog_stop[0]);
	close(watchdog_stop[1]);
	/* Detach first, so that no process can stop itself or send a batch
	 * any more; the threads still running hand over what their buffers
	 * hold at their next switch or tick: wait for that, then drain: the
	 * last records may ask for a SIGCONT. */
	probed = tr2_attach_objects(tr.attach) > 0;
	tr2_attach_free(tr.attach);
	tr.attach = NULL;
	if (!tr.mode->done(&tr))
		for (uint64_t until = tr2_mono_ns() + TR2_TICK_NS + 10000000; tr2_mono_ns() < until;)
			tr2_ring_poll(rb, 5);
	for (int i = 0; i < tr.nticks; i++)
		bpf_link__destroy(tr.ticks[i]);
	tr2_bpf__detach(tr.skel);
	tr2_ring_consume(rb);
	mark_losses(&tr);
	tr2_session_flush(tr.session, UINT64_MAX);
	/* the views' ends (chrome's ']', folded's stacks), before the summary
	 * line, which stays the last on stderr even for a DEST of 2 */
	for (int i = 0; i < opts.nformats; i++) {
		tr2_target_finish(&targets[i]);
		tr2_dst_flush(targets[i].dst);
	}
	/* Tracing stopped before CMD ended.  The output closed: CMD runs on
	 * untraced and its status is still ours.  Ctrl-C: the terminal
	 * signalled CMD too; give it a moment to end, else report the signal. */
	if (tr.cmd && !tr.cmd_reaped && tr2_cmd_reap(tr.cmd, exiting ? 200 : -1, &tr.cmd_status) != 1)
		tr.cmd_status = 128 + exiting;
	if (opts.cmd)
		status = tr.cmd_status;

	if (verbose) {
		unsigned long kept_procs, kept_threads, waiting;
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "tr2-bpf: held processes stopped %llu times to attach to new objects: "
			"%.3f ms waiting for tr2-bpf, %.3f ms attaching\n", (unsigned long long)tr.stops,
			tr.stop_wait_ns / 1e6, tr.stop_attach_ns / 1e6);
		tr2_session_kept(tr.session, &kept_procs, &kept_threads, &waiting);
		fprintf(stderr, "tr2-bpf: kept at the end: %lu processes, %lu threads; BPF maps: "
			"%u traced processes, %u processes with losses, %u known objects\n",
			kept_procs, kept_threads, map_entries(tr.skel->maps.traced),
			map_entries(tr.skel->maps.lost_by_pid), map_entries(tr.skel->maps.known));
		fprintf(stderr, "tr2-bpf: its own CPU time: %ld.%02ld s user, %ld.%02ld s system\n",
			(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 10000,
			(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 10000);
	}
	report_unserved(&tr);
	if (summary)
		tr2_summary_print(summary, tr2_mono_ns(), 1);
	if (tr.cmd) {
		/* -- CMD: say why there was nothing to trace, the summary still last */
		if (tr2_cmd_failed(tr.cmd, err, sizeof(err)))
			fprintf(stderr, "tr2-bpf: %s\n", err);
		else if (!probed && !tr2_session_events(tr.session))
			fprintf(stderr, "tr2-bpf: no trace2 probes in '%s' or any process it started\n",
				opts.cmd[0]);
	}
	/* Without a stream, events not aggregated count as lost, not as written. */
	fprintf(stderr, "tr2-bpf: %llu events, %llu lost\n",
		(unsigned long long)(tr2_session_events(tr.session) -
				     (summary && !opts.nformats ? tr2_summary_lost(summary) : 0)),
		(unsigned long long)(lost_in_bpf(tr.skel) + tr.decode_errors + tr2_session_lost_calls(tr.session) +
				     (summary && !opts.nformats ? tr2_summary_lost(summary) : 0)));

	tr.mode->finish(&tr);
	tr2_cmd_free(tr.cmd);
	tr2_ring_free(rb);
	tr2_bpf__destroy(tr.skel);
	tr2_session_free(tr.session);
	tr2_summary_free(summary);
	if (opts.sum.json)
		tr2_dst_close(opts.sum.json);
	free(opts.sum.cat_list);
	for (int i = 0; i < opts.nformats; i++)
		tr2_dst_close(targets[i].dst);
	free(opts.pids);
	free(tr.procs);
	free(tr.losses);
	return status;
}
