/* tr2-bpf: attaches eBPF programs to the trace2 USDT probes of a process
 * and writes its Trace2 events in git's NORMAL, PERF and EVENT formats.
 * The contract (options, summary line, exit status) is ../shared/trace2-api.md §3. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_attach.h"
#include "tr2_decode.h"
#include "tr2_dst.h"
#include "tr2_mem.h"
#include "tr2_ring.h"
#include "tr2_session.h"
#include "tr2_tgt.h"

#define DEFAULT_RING_BYTES (4u << 20)
/* The eBPF side wakes the consumer only when the ring buffer is a quarter
 * full (bpf/tr2.bpf.c, wakeup_bytes); otherwise records wait for this poll
 * timer: the latency of live output. */
#define POLL_MS 20

static const char usage[] =
"Usage: tr2-bpf [OPTIONS] -p PID\n"
"       tr2-bpf [OPTIONS] -- CMD [ARG...]\n"
"\n"
"Trace a program instrumented with tr2's <trace2.h>: attach eBPF programs to\n"
"its trace2 USDT probes (in its executable and every shared object it maps)\n"
"and write its Trace2 events the way git writes them.\n"
"\n"
"  -p, --pid=PID          attach to the running process PID; stop when it exits\n"
"  -- CMD [ARG...]        run CMD traced from its first event, and every\n"
"                         descendant of it that carries probes (sid parent/child,\n"
"                         depth d1, d2, ...); exit with CMD's status\n"
"\n"
"Formats (any combination; none given: --perf to standard output):\n"
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
"DEST, a Trace2 target value: omitted, standard output; a file descriptor 2-9;\n"
"an absolute path (appended to); an existing directory (one file per traced\n"
"process, named after the last part of its sid); af_unix:[stream:|dgram:]/path.\n"
"      --max-files=N      a directory DEST holds at most N files; then git's\n"
"                         git-trace2-discard sentinel (as trace2.maxFiles;\n"
"                         default 0, no limit)\n"
"\n"
"  -b, --ring-buffer=SIZE ring buffer size in bytes, a power of 2 (K and M\n"
"                         suffixes allowed; default 4M)\n"
"      --probe-nop=auto|1|5\n"
"                         where the uprobe goes on a probe site, which is a\n"
"                         1-byte nop then a 5-byte nop: auto (default) takes the\n"
"                         5-byte nop where the kernel turns a uprobe on it into\n"
"                         a call (Linux 6.18+), else the 1-byte nop\n"
"  -v, --verbose          show libbpf's messages and why a record was dropped;\n"
"                         before the summary, tr2-bpf's own CPU time and how\n"
"                         many records named their call site's literal\n"
"                         strings by number instead of carrying them\n"
"  -h, --help             show this text\n"
"\n"
"On stderr, after a trace, the last line is the summary\n"
"  tr2-bpf: N events, M lost\n"
"N events were written; M were dropped on the way (ring buffer full, record\n"
"not decodable), counted exactly.  Errors are one line on stderr and a non-zero\n"
"exit status.  Needs root (CAP_BPF and CAP_PERFMON).\n"
"\n"
"With -- CMD, a SIGTERM to tr2-bpf is passed on to CMD; Ctrl-C reaches CMD\n"
"from the terminal.\n"
"\n"
"Examples:\n"
"  sudo tr2-bpf -p 4242                       PERF lines of process 4242, live\n"
"  sudo tr2-bpf --perf -- ./prog arg          trace ./prog from its start\n"
"  sudo tr2-bpf --event=/tmp/t.json --normal=2 -p 4242\n"
"  sudo tr2-bpf --event=/var/log/tr2/ -- make  one EVENT file per process\n"
"  sudo tr2-bpf --chrome=/tmp/t.json -- ./prog  open /tmp/t.json in ui.perfetto.dev\n";

static volatile sig_atomic_t exiting;
static int verbose;

static pid_t cmd_pid;   /* -- CMD: the child, to which SIGTERM is passed on */

static void on_signal(int sig)
{
	exiting = sig;
	/* Ctrl-C reaches CMD from the terminal; a SIGTERM sent to tr2-bpf alone
	 * would leave CMD running untraced, so it goes on to CMD, as timeout(1)
	 * does. */
	if (sig == SIGTERM && cmd_pid > 0)
		kill(cmd_pid, SIGTERM);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("tr2-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose && level != LIBBPF_WARN)
		return 0;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* What the ring-buffer callback works with. */
struct tracer {
	struct tr2_bpf *skel;
	struct tr2_attach *attach;
	struct tr2_session *session;
	struct tr2_sites *sites;   /* interned strings of the records so far */
	struct tr2_decoded dec;
	uint64_t decode_errors;
	int follow;
	pid_t *procs;        /* processes to wait for (follow mode: forks) */
	int nprocs, cap;
	struct {
		__u32 pid;
		__u64 reported;  /* lost events already marked in its stream */
	} *losses;
	int nlosses, cap_losses;
	uint64_t lost_marked;  /* the BPF-side lost total at the last mark_losses() */
};

static void add_proc(struct tracer *tr, pid_t pid)
{
	for (int i = 0; i < tr->nprocs; i++)
		if (tr->procs[i] == pid)
			return;
	tr->procs = tr2_grow(tr->procs, tr->nprocs, &tr->cap, sizeof(*tr->procs));
	tr->procs[tr->nprocs++] = pid;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A process stopped itself at stopped_ns (exec or the loader mapped
 * objects): attach to what it maps now, then let it go on. */
static void attach_and_continue(struct tracer *tr, pid_t pid, uint64_t stopped_ns)
{
	char err[512];

	/* After detaching (tr->attach NULL) only the SIGCONT is left to do. */
	if (tr->attach && tr2_attach_process(tr->attach, pid, err, sizeof(err)) < 0 &&
	    kill(pid, 0) == 0)
		fprintf(stderr, "tr2-bpf: %s\n", err);
	kill(pid, SIGCONT);
	tr2_session_resumed(tr->session, pid, stopped_ns, mono_ns());
}

/* Hands the session the timer and counter sums of thread tid (summed on the
 * eBPF side) and deletes them: the thread is at its thread_exit or atexit. */
static void collect_metrics(struct tracer *tr, __u32 pid, __u32 tid)
{
	int fd = bpf_map__fd(tr->skel->maps.metrics), n = 0, cap = 0;
	struct tr2_metric_key key, next, *prev = NULL, *done = NULL;
	struct tr2_metric_val v;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.pid != pid || key.tid != tid || bpf_map_lookup_elem(fd, &key, &v))
			continue;
		tr2_session_add_metric(tr->session, pid, tid, key.id, &v);
		done = tr2_grow(done, n, &cap, sizeof(*done));
		done[n++] = key;
	}
	for (int i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &done[i]);
	free(done);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct tracer *tr = ctx;
	const char *why;

	if (tr2_decode(data, size, tr->sites, &tr->dec, &why)) {
		const struct tr2_rec *h = data;

		tr->decode_errors++;
		if (verbose)
			fprintf(stderr, "tr2-bpf: dropped a record: %s\n", why);
		/* A process that stopped itself for us must not stay stopped. */
		if (size >= sizeof(*h) && (h->kind == TR2_REC_EXECVE || h->kind == TR2_REC_DL_UPDATE))
			kill((pid_t)h->pid, SIGCONT);
		return 0;
	}
	if (tr->dec.hdr.kind == TR2_REC_THREAD_EXIT || tr->dec.hdr.kind == TR2_REC_ATEXIT)
		collect_metrics(tr, tr->dec.hdr.pid, tr->dec.hdr.tid);
	tr2_session_record(tr->session, &tr->dec);
	switch (tr->dec.hdr.kind) {
	case TR2_REC_FORK:
		add_proc(tr, tr->dec.hdr.pid);
		break;
	case TR2_REC_EXECVE:
	case TR2_REC_DL_UPDATE:
		attach_and_continue(tr, tr->dec.hdr.pid, tr->dec.hdr.ts_ns);
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

/* Writes a marker into the stream of each process that lost events since the
 * last call (bpf map lost_by_pid; tracer-side: reported[]). */
static uint64_t lost_in_bpf(struct tr2_bpf *skel);

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
		if (bpf_map_lookup_elem(fd, &key, &total))
			continue;
		int i;
		for (i = 0; i < tr->nlosses && tr->losses[i].pid != key; i++)
			;
		if (i == tr->nlosses) {
			tr->losses = tr2_grow(tr->losses, tr->nlosses, &tr->cap_losses, sizeof(*tr->losses));
			tr->losses[i].pid = key;
			tr->losses[i].reported = 0;
			tr->nlosses++;
		}
		if (total > tr->losses[i].reported) {
			tr2_session_lost(tr->session, key, total - tr->losses[i].reported, mono_ns());
			tr->losses[i].reported = total;
		}
	}
}

/* Whether the process has exited (a zombie counts): its pidfd is readable. */
static int gone(pid_t pid)
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

/* An option's decimal value in [min, max]; else fails with msg (a format
 * with one %s for the value). */
static long parse_number(const char *s, long min, long max, const char *msg)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < min || v > max)
		fail(msg, s);
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
		fail("bad --ring-buffer size '%s': want a power of 2 from 4K to 1024M", s);
	return v;
}

struct format_opt {
	enum tr2_format fmt;
	const char *dest;
};

int main(int argc, char **argv)
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct format_opt formats[8];
	int nformats = 0, brief = 0, event_nesting = 2, opt, status = 0, multi, probe_nop = -1, max_files = 0;
	unsigned ring_bytes = DEFAULT_RING_BYTES;
	pid_t pid = 0, child = 0;
	struct tr2_target targets[8], *target_ptrs[8];
	struct tracer tr = { 0 };
	struct tr2_ring *rb = NULL;
	char err[512], host[16];
	struct timespec real, mono;
	int go[2] = { -1, -1 };
	char *ld_so = NULL;

	opterr = 0;   /* one line of our own instead of getopt's two */
	while ((opt = getopt_long(argc, argv, "+:p:b:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			pid = parse_number(optarg, 1, 0x3fffffff, "bad PID '%s'");
			break;
		case 'N':
		case 'P':
		case 'E':
		case 'C':
		case 'F':
			if (nformats == 8)
				fail("too many formats");
			formats[nformats].fmt = opt == 'N' ? TR2_FMT_NORMAL : opt == 'P' ? TR2_FMT_PERF :
						opt == 'E' ? TR2_FMT_EVENT : opt == 'C' ? TR2_FMT_CHROME : TR2_FMT_FOLDED;
			formats[nformats++].dest = optarg;
			break;
		case 'B':
			brief = 1;
			break;
		case 'n':
			event_nesting = parse_number(optarg, 0, 1000000,
						     "bad --event-nesting '%s': want a number of levels");
			break;
		case 'b':
			ring_bytes = parse_size(optarg);
			break;
		case 'm':
			max_files = parse_number(optarg, 0, 1000000, "bad --max-files '%s': want a number of files");
			break;
		case 'o':
			if (!strcmp(optarg, "auto"))
				probe_nop = -1;
			else if (!strcmp(optarg, "1") || !strcmp(optarg, "5"))
				probe_nop = optarg[0] == '5';
			else
				fail("bad --probe-nop '%s': want auto, 1 or 5", optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			fail("option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			fail("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if ((pid != 0) == (optind < argc))
		fail(pid ? "give -p PID or -- CMD, not both" : "nothing to trace: give -p PID or -- CMD (see --help)");
	if (pid && kill(pid, 0) && errno == ESRCH)
		fail("no such process: %d", (int)pid);
	if (pid && gone(pid))     /* a zombie: exited, not yet reaped */
		fail("process %d has exited", (int)pid);
	if (!nformats) {
		formats[0].fmt = TR2_FMT_PERF;
		formats[0].dest = NULL;
		nformats = 1;
	}
	for (int i = 0; i < nformats; i++) {
		struct tr2_tgt_opts topts = { .brief = brief, .event_nesting = event_nesting };
		struct tr2_dst *dst = tr2_dst_open(formats[i].dest, err, sizeof(err));

		if (!dst)
			fail("%s", err);
		tr2_target_init(&targets[i], tr2_tgt_of(formats[i].fmt), &topts, dst);
		tr2_dst_set_max_files(dst, max_files);
		tr2_dst_set_buffered(dst, true);
		target_ptrs[i] = &targets[i];
	}

	libbpf_set_print(libbpf_print);
	tr.follow = !pid;
	tr.skel = tr2_bpf__open();
	if (!tr.skel)
		fail("failed to open the BPF object: %s", strerror(errno));
	tr.skel->rodata->follow = tr.follow;
	tr.skel->rodata->wakeup_bytes = ring_bytes / 4;
	/* The fill level is checked every N records per CPU; N small (64-byte)
	 * records are 1/64 of the ring at most, so the consumer is still woken
	 * in time: N = 64 for the default 4 MiB, 1 for a 4 KiB ring (sizes are
	 * powers of 2, checked by parse_size). */
	tr.skel->rodata->wakeup_check_every = ring_bytes / 4096 < 64 ? ring_bytes / 4096 : 64;
	bpf_map__set_max_entries(tr.skel->maps.events, ring_bytes);
	if (!tr.follow)
		bpf_program__set_autoload(tr.skel->progs.on_fork, false);
	multi = tr2_attach_prepare(tr.skel->obj);
	if (tr2_bpf__load(tr.skel)) {
		int e = errno;

		fail("failed to load the BPF programs: %s%s", strerror(e),
		     e == EPERM ? " (run as root: needs CAP_BPF and CAP_PERFMON)" :
		     e == EACCES ? " (the kernel's verifier refused one; -v shows its log)" : "");
	}

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	tr2_host_hash(host, sizeof(host));
	tr.session = tr2_session_new(target_ptrs, nformats,
				     (int64_t)(real.tv_sec - mono.tv_sec) * 1000000000 + (real.tv_nsec - mono.tv_nsec),
				     host);
	tr.sites = tr2_sites_new();
	tr.attach = tr2_attach_new(tr.skel->obj, tr.follow ? -1 : pid, multi);
	if (probe_nop >= 0)
		tr2_attach_set_nop5(tr.attach, probe_nop);
	if (verbose)
		fprintf(stderr, "tr2-bpf: uprobes on the %s nop of each probe site, %s\n",
			tr2_attach_uses_nop5(tr.attach) ? "5-byte" : "1-byte",
			multi ? "one uprobe-multi link per object and probe" : "one perf uprobe per site");
	rb = tr2_ring_new(bpf_map__fd(tr.skel->maps.events), on_record, &tr);
	if (!rb)
		fail("failed to create the ring buffer: %s", strerror(errno));
	ld_so = tr2_find_ld_so();

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (pid) {
		uint8_t one = 1;
		int n;

		/* exec of the target: a new session, attached before it runs */
		if (bpf_map_update_elem(bpf_map__fd(tr.skel->maps.traced), &pid, &one, BPF_ANY) ||
		    tr2_bpf__attach(tr.skel))
			fail("failed to attach the exec tracepoint: %s", strerror(errno));
		n = tr2_attach_process(tr.attach, pid, err, sizeof(err));

		if (n < 0)
			fail("%s", err);
		if (n == 0)
			fail("no trace2 probes in process %d (its executable and shared objects)", (int)pid);
		/* A target that has just exited is not worth a warning: the
		 * summary follows at once. */
		if (ld_so && tr2_attach_dl_hook(tr.attach, tr.skel->progs.dl_update, ld_so, err, sizeof(err)) &&
		    !gone(pid))
			fprintf(stderr, "tr2-bpf: %s; objects loaded later are not traced\n", err);
		fprintf(stderr, "tr2-bpf: tracing process %d: %d probe sites in %d objects; Ctrl-C to stop\n",
			(int)pid, tr2_attach_sites(tr.attach), tr2_attach_objects(tr.attach));
	} else {
		uint8_t one = 1;

		if (tr2_bpf__attach(tr.skel))
			fail("failed to attach the fork and exec tracepoints: %s", strerror(errno));
		if (!ld_so)
			fail("cannot find the dynamic loader");
		if (tr2_attach_dl_hook(tr.attach, tr.skel->progs.dl_update, ld_so, err, sizeof(err)))
			fail("%s", err);
		if (pipe2(go, O_CLOEXEC))
			fail("pipe: %s", strerror(errno));
		child = fork();
		if (child < 0)
			fail("fork: %s", strerror(errno));
		if (child == 0) {
			char c;

			close(go[1]);
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGPIPE, SIG_DFL);
			if (read(go[0], &c, 1) != 1)
				_exit(127);
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "tr2-bpf: cannot run '%s': %s\n", argv[optind], strerror(errno));
			_exit(127);
		}
		close(go[0]);
		cmd_pid = child;
		if (bpf_map_update_elem(bpf_map__fd(tr.skel->maps.traced), &child, &one, BPF_ANY))
			fail("failed to add process %d to the traced set: %s", (int)child, strerror(errno));
		if (write(go[1], "g", 1) != 1)
			fail("failed to start '%s': %s", argv[optind], strerror(errno));
		close(go[1]);
	}

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
		tr2_session_flush(tr.session);
		if (exiting || !tr2_session_writing(tr.session))
			break;
		if (pid) {
			if (gone(pid))
				break;
		} else {
			int done = 1;

			if (child) {
				int ws;

				if (waitpid(child, &ws, WNOHANG) == child) {
					status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
					child = 0;
				} else {
					done = 0;
				}
			}
			if (done) {
				/* Forks recorded before CMD's exit are in the ring now. */
				tr2_ring_consume(rb);
				for (int i = 0; i < tr.nprocs && done; i++)
					if (!gone(tr.procs[i]))
						done = 0;
			}
			if (done)
				break;
		}
	}
	/* Detach first, so that no process can stop itself any more, then
	 * drain: the last records may ask for a SIGCONT. */
	tr2_attach_free(tr.attach);
	tr.attach = NULL;
	tr2_bpf__detach(tr.skel);
	tr2_ring_consume(rb);
	mark_losses(&tr);
	tr2_session_flush(tr.session);
	/* the views' ends (chrome's ']', folded's stacks), before the summary
	 * line, which stays the last on stderr even for a DEST of 2 */
	for (int i = 0; i < nformats; i++) {
		tr2_target_finish(&targets[i]);
		tr2_dst_flush(targets[i].dst);
	}
	if (child) {
		/* Tracing stopped before CMD ended.  The output closed: CMD runs on
		 * untraced and its status is still ours.  Ctrl-C: the terminal
		 * signalled CMD too; give it a moment to end, else report the signal. */
		int ws, r = 0;

		if (!exiting)
			r = waitpid(child, &ws, 0);
		for (int i = 0; exiting && i < 20 && (r = waitpid(child, &ws, WNOHANG)) == 0; i++)
			usleep(10000);
		if (r == child)
			status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		else
			status = 128 + exiting;
	}

	if (verbose) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "tr2-bpf: %llu records named their call site's literal strings by number\n",
			tr2_sites_refs(tr.sites));
		fprintf(stderr, "tr2-bpf: its own CPU time: %ld.%02ld s user, %ld.%02ld s system\n",
			(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 10000,
			(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 10000);
	}
	fprintf(stderr, "tr2-bpf: %llu events, %llu lost\n",
		(unsigned long long)tr2_session_events(tr.session),
		(unsigned long long)(lost_in_bpf(tr.skel) + tr.decode_errors));

	tr2_ring_free(rb);
	tr2_bpf__destroy(tr.skel);
	tr2_session_free(tr.session);
	tr2_sites_free(tr.sites);
	for (int i = 0; i < nformats; i++)
		tr2_dst_close(targets[i].dst);
	free(tr.procs);
	free(tr.losses);
	free(ld_so);
	return status;
}
