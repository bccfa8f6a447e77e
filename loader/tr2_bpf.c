/* tr2-bpf: attaches eBPF programs to the trace2 USDT probes of a process
 * and writes its Trace2 events in git's NORMAL, PERF and EVENT formats.
 * The contract (options, summary line, exit status) is ../shared/trace2-api.md §3. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_attach.h"
#include "tr2_cmd.h"
#include "tr2_decode.h"
#include "tr2_dst.h"
#include "tr2_mem.h"
#include "tr2_ring.h"
#include "tr2_session.h"
#include "tr2_summary.h"
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
"  -u, --user=USER        with -- CMD: run CMD as USER (a name or a uid), as\n"
"                         strace -u does: USER's uid, gid and groups, and its\n"
"                         HOME, USER, LOGNAME (SHELL if a login shell);\n"
"                         tr2-bpf itself stays root\n"
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
"Summary (aggregated in the eBPF programs; with no format given, region_enter,\n"
"region_leave and integer data send nothing to tr2-bpf):\n"
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
"      --summary-keys=N   room for N (process, category, label) keys (default\n"
"                         8192); events of a key that finds no room are not\n"
"                         aggregated and counted (\"not aggregated\")\n"
"      --category=LIST    only these categories (comma-separated) are recorded\n"
"                         or aggregated, in every mode; filtered in BPF (region\n"
"                         and data events; timers and counters are not filtered)\n"
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
"                         1-byte nop then a 5-byte nop.  On the 5-byte nop\n"
"                         the kernel (Linux 6.18+) turns the uprobe into a\n"
"                         call, half the cost of a hit, but only after a first\n"
"                         hit in each new mapping of the object that costs\n"
"                         far more (it syncs every CPU).  auto (default): the\n"
"                         5-byte nop for what stays mapped, the objects -p\n"
"                         PID's process maps when tr2-bpf attaches, or -- CMD's\n"
"                         program and the libraries it starts with; the 1-byte\n"
"                         nop for objects mapped later (other programs that\n"
"                         children exec, dlopened plugins), which come and go;\n"
"                         1 or 5: that nop always\n"
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
static int verbose;

static pid_t cmd_pid;   /* -- CMD: the child, to which SIGTERM is passed on */

static void on_signal(int sig)
{
	int saved_errno = errno;

	exiting = sig;
	/* Ctrl-C reaches CMD from the terminal; a SIGTERM sent to tr2-bpf alone
	 * would leave CMD running untraced, so it goes on to CMD, as timeout(1)
	 * does. */
	if (sig == SIGTERM && cmd_pid > 0)
		kill(cmd_pid, SIGTERM);
	errno = saved_errno;
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
	pid_t *procs;        /* live processes to wait for (follow mode: forks) */
	int nprocs, cap;
	struct {
		__u32 pid;
		__u64 reported;  /* lost events already marked in its stream */
	} *losses;
	int nlosses, cap_losses;
	uint64_t lost_marked;  /* the BPF-side lost total at the last mark_losses() */
	/* Processes held stopped to attach (-v): how often, how long they
	 * waited for tr2-bpf to read the stop record, how long attaching took. */
	uint64_t stops, stop_wait_ns, stop_attach_ns;
	/* --probe-nop=auto under -- CMD: the 5-byte nop until CMD has started
	 * (its program and the libraries it starts with), then the 1-byte. */
	int startup_nop5;
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

/* A process stopped itself at stopped_ns (exec, or the loader mapped
 * objects) because it maps an object not known yet, (dev, ino) among them:
 * attach to what it maps now, then let it go on. */
/* --probe-nop=auto under -- CMD: CMD has started; what maps from now on
 * gets the 1-byte nop. */
static void end_startup_nop5(struct tracer *tr)
{
	tr->startup_nop5 = 0;
	tr2_attach_set_nop5(tr->attach, 0);
}

static void attach_and_continue(struct tracer *tr, pid_t pid, int kind, uint64_t stopped_ns,
				uint64_t dev, uint64_t ino)
{
	char err[512];
	uint64_t start = mono_ns(), now;

	/* After detaching (tr->attach NULL) only the SIGCONT is left to do. */
	if (tr->attach) {
		/* CMD's own stops up to its loader's first: the 5-byte nop. */
		if (tr->startup_nop5 && pid != cmd_pid)
			end_startup_nop5(tr);
		if (tr2_attach_process(tr->attach, pid, err, sizeof(err)) < 0 && kill(pid, 0) == 0)
			fprintf(stderr, "tr2-bpf: %s\n", err);
		tr2_attach_known(tr->attach, dev, ino);
		if (tr->startup_nop5 && kind == TR2_REC_DL_UPDATE)
			end_startup_nop5(tr);
	}
	kill(pid, SIGCONT);
	now = mono_ns();
	tr2_session_resumed(tr->session, pid, stopped_ns, now);
	tr->stops++;
	tr->stop_wait_ns += start > stopped_ns ? start - stopped_ns : 0;
	tr->stop_attach_ns += now - start;
}

static void forget_losses(struct tracer *tr, __u32 pid);

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
	/* The last of its events are in: mark its losses while its session is there. */
	if (tr->dec.hdr.kind == TR2_REC_PROC_GONE)
		forget_losses(tr, tr->dec.hdr.pid);
	if (summary)
		tr2_summary_record(summary, &tr->dec);
	tr2_session_record(tr->session, &tr->dec);
	switch (tr->dec.hdr.kind) {
	case TR2_REC_FORK:
		add_proc(tr, tr->dec.hdr.pid);
		break;
	case TR2_REC_PROC_GONE:
		for (int i = 0; i < tr->nprocs; i++)
			if (tr->procs[i] == (pid_t)tr->dec.hdr.pid)
				tr->procs[i] = tr->procs[--tr->nprocs];
		break;
	case TR2_REC_EXECVE:
	case TR2_REC_DL_UPDATE:
		if (tr->dec.hdr.num[0])
			attach_and_continue(tr, tr->dec.hdr.pid, tr->dec.hdr.kind, tr->dec.hdr.ts_ns,
					    tr->dec.hdr.num[1], tr->dec.hdr.num[2]);
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

/* Process pid has lost `total` events so far: marks those not marked yet.
 * Returns its index in tr->losses. */
static int mark_loss(struct tracer *tr, __u32 pid, __u64 total)
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
		tr2_session_lost(tr->session, pid, total - tr->losses[i].reported, mono_ns());
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
			mark_loss(tr, key, total);
	}
}

/* Process pid exited: marks its last losses, then forgets its count, so
 * that neither side keeps anything of the processes that have gone. */
static void forget_losses(struct tracer *tr, __u32 pid)
{
	int fd = bpf_map__fd(tr->skel->maps.lost_by_pid), i;
	__u64 total;

	if (bpf_map_lookup_elem(fd, &pid, &total))
		return;
	i = mark_loss(tr, pid, total);
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

/* --summary, --hist, --summary-json, --summary-keys, --category. */
struct summary_opts {
	int on, hist, json_set, keys_set;
	double interval_s;        /* 0: a table only at the end */
	const char *json_dest;
	struct tr2_dst *json;
	unsigned keys;
	char *cat_list;           /* --category's copy, which cats[] point into */
	char *cats[64];
	int ncats;
};

static void parse_summary_opt(struct summary_opts *o, int opt, const char *arg)
{
	char *end, *list, *name, *save;

	switch (opt) {
	case 'S':
		o->on = 1;
		if (arg) {
			o->interval_s = strtod(arg, &end);
			if (end == arg || *end || !(o->interval_s >= 0.01 && o->interval_s <= 86400))
				fail("bad --summary interval '%s': want seconds, from 0.01 to 86400", arg);
		}
		break;
	case 'H':
		o->hist = 1;
		break;
	case 'J':
		o->json_set = 1;
		o->json_dest = arg;
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
			if (strlen(name) > TR2_CAT_FILTER_MAX - 2)
				fail("bad --category '%s': names are at most %d bytes", name, TR2_CAT_FILTER_MAX - 2);
			if (o->ncats == 64)
				fail("bad --category: at most 64 categories");
			o->cats[o->ncats++] = name;
		}
		if (!o->ncats)
			fail("bad --category '%s': want names separated by commas", arg);
		break;
	}
}

/* After the load: the category filter's names into its map; the summary's
 * state (NULL without --summary). */
static struct tr2_summary *setup_summary(struct tr2_bpf *skel, struct summary_opts *o,
					 const struct timespec *real, const struct timespec *mono)
{
	char err[512];
	struct tr2_summary *s;
	uint8_t one = 1;

	for (int i = 0; i < o->ncats; i++) {
		char key[TR2_CAT_FILTER_MAX] = { 0 };

		strcpy(key, o->cats[i]);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.cat_filter), key, &one, BPF_ANY))
			fail("failed to set the category filter: %s", strerror(errno));
	}
	if (!o->on)
		return NULL;
	if (o->json_set) {
		o->json = tr2_dst_open(o->json_dest, err, sizeof(err));
		if (!o->json)
			fail("%s", err);
	}
	s = tr2_summary_new(bpf_map__fd(skel->maps.aggs), bpf_map__fd(skel->maps.agg_lost), o->hist,
			    !o->json_set || o->json_dest, o->json,
			    (int64_t)(real->tv_sec - mono->tv_sec) * 1000000000 + (real->tv_nsec - mono->tv_nsec),
			    mono_ns());
	tr2_summary_set_interval(s, (uint64_t)(o->interval_s * 1e9));
	return s;
}

struct format_opt {
	enum tr2_format fmt;
	const char *dest;
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "user", required_argument, NULL, 'u' },
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
		{ "category", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct format_opt formats[8];
	int nformats = 0, brief = 0, event_nesting = 2, opt, status = 0, multi, probe_nop = -1, max_files = 0;
	unsigned ring_bytes = DEFAULT_RING_BYTES;
	pid_t pid = 0, child = 0;
	const char *user = NULL;      /* -u */
	struct tr2_cmd *cmd = NULL;   /* -- CMD */
	struct tr2_target targets[8], *target_ptrs[8];
	struct tracer tr = { 0 };
	struct tr2_ring *rb = NULL;
	char err[512], host[16];
	struct timespec real, mono;
	int probed = 0;                /* objects with probes were attached: set before detaching */
	char *ld_so = NULL;
	struct summary_opts sum = { .keys = 8192 };

	opterr = 0;   /* one line of our own instead of getopt's two */
	while ((opt = getopt_long(argc, argv, "+:p:b:u:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			pid = parse_number(optarg, 1, 0x3fffffff, "bad PID '%s'");
			break;
		case 'u':
			user = optarg;
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
		case 'S':
		case 'H':
		case 'J':
		case 'K':
		case 'c':
			parse_summary_opt(&sum, opt, optarg);
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
	if (user && optind == argc)
		fail("-u needs -- CMD: it runs CMD as USER");
	if ((pid != 0) == (optind < argc))
		fail(pid ? "give -p PID or -- CMD, not both" : "nothing to trace: give -p PID or -- CMD (see --help)");
	if (pid && kill(pid, 0) && errno == ESRCH)
		fail("no such process: %d", (int)pid);
	if (pid && gone(pid))     /* a zombie: exited, not yet reaped */
		fail("process %d has exited", (int)pid);
	if ((sum.hist || sum.json_set || sum.keys_set) && !sum.on)
		fail("--hist, --summary-json and --summary-keys need --summary");
	/* CMD first, before anything it must not inherit is opened or set
	 * (tr2_cmd.h); held until tracing is ready. */
	if (optind < argc) {
		cmd = tr2_cmd_start(argv + optind, user, err, sizeof(err));
		if (!cmd)
			fail("%s", err);
		cmd_pid = child = tr2_cmd_pid(cmd);
	}
	if (!nformats && !sum.on) {
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
	tr.skel->rodata->summary = sum.on;
	tr.skel->rodata->stream = nformats > 0;
	tr.skel->rodata->cat_filtered = sum.ncats > 0;
	bpf_map__set_max_entries(tr.skel->maps.aggs, sum.keys);
	if (!tr.follow)
		bpf_program__set_autoload(tr.skel->progs.on_fork, false);
	ld_so = tr2_find_ld_so();
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
	summary = setup_summary(tr.skel, &sum, &real, &mono);
	tr.attach = tr2_attach_new(tr.skel->obj, tr.follow ? -1 : pid, multi);
	/* auto: the 5-byte nop (where the kernel optimizes it) only for what is
	 * mapped for the whole trace; see --help. */
	if (probe_nop >= 0)
		tr2_attach_set_nop5(tr.attach, probe_nop);
	tr.startup_nop5 = !pid && probe_nop < 0 && tr2_attach_uses_nop5(tr.attach);
	if (verbose)
		fprintf(stderr, "tr2-bpf: uprobes on the %s nop of each probe site%s, %s\n",
			tr2_attach_uses_nop5(tr.attach) ? "5-byte" : "1-byte",
			tr2_attach_uses_nop5(tr.attach) && probe_nop < 0 ? (pid ?
				" (1-byte for objects mapped after the attach)" :
				" of CMD's program and first libraries (1-byte for the others)") : "",
			multi ? "one uprobe-multi link per object and probe" : "one perf uprobe per site");
	rb = tr2_ring_new(bpf_map__fd(tr.skel->maps.events), on_record, &tr);
	if (!rb)
		fail("failed to create the ring buffer: %s", strerror(errno));

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
		if (probe_nop < 0)
			tr2_attach_set_nop5(tr.attach, 0);
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
		if (bpf_map_update_elem(bpf_map__fd(tr.skel->maps.traced), &child, &one, BPF_ANY))
			fail("failed to add process %d to the traced set: %s", (int)child, strerror(errno));
		if (tr2_cmd_release(cmd))
			fail("failed to start '%s': %s", argv[optind], strerror(errno));
	}

	if (verbose && ld_so && tr2_attach_dl_sites(tr.attach))
		fprintf(stderr, "tr2-bpf: loader hook: the %d calls of _dl_debug_state in %s\n",
			tr2_attach_dl_sites(tr.attach), ld_so);
	else if (verbose && ld_so)
		fprintf(stderr, "tr2-bpf: loader hook: the entry of _dl_debug_state in %s\n", ld_so);
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
		if (summary)
			tr2_summary_poll(summary, mono_ns());
		if (exiting || (nformats && !tr2_session_writing(tr.session)))
			break;
		if (pid) {
			if (gone(pid))
				break;
		} else {
			int done = 1;

			if (child) {
				if (tr2_cmd_reap(cmd, 0, &status) == 1)
					child = 0;
				else
					done = 0;
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
	probed = tr2_attach_objects(tr.attach) > 0;
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
		 * signalled CMD too (SIGTERM was passed on); give it 0.2 s to end,
		 * else report the signal and leave it running, untraced. */
		if (tr2_cmd_reap(cmd, exiting ? 200 : -1, &status) != 1)
			status = 128 + exiting;
	}

	if (verbose) {
		unsigned long kept_procs, kept_threads;
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "tr2-bpf: %llu records named their call site's literal strings by number\n",
			tr2_sites_refs(tr.sites));
		fprintf(stderr, "tr2-bpf: held processes stopped %llu times to attach to new objects: "
			"%.3f ms waiting for tr2-bpf, %.3f ms attaching\n", (unsigned long long)tr.stops,
			tr.stop_wait_ns / 1e6, tr.stop_attach_ns / 1e6);
		tr2_session_kept(tr.session, &kept_procs, &kept_threads);
		fprintf(stderr, "tr2-bpf: kept at the end: %lu processes, %lu threads; BPF maps: "
			"%u traced processes, %u processes with losses, %u known objects\n",
			kept_procs, kept_threads, map_entries(tr.skel->maps.traced),
			map_entries(tr.skel->maps.lost_by_pid), map_entries(tr.skel->maps.known));
		fprintf(stderr, "tr2-bpf: its own CPU time: %ld.%02ld s user, %ld.%02ld s system\n",
			(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 10000,
			(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 10000);
	}
	if (summary)
		tr2_summary_print(summary, mono_ns(), 1);
	if (cmd) {
		/* -- CMD: say why there was nothing to trace, the summary still last */
		if (tr2_cmd_failed(cmd, err, sizeof(err)))
			fprintf(stderr, "tr2-bpf: %s\n", err);
		else if (!probed && !tr2_session_events(tr.session))
			fprintf(stderr, "tr2-bpf: no trace2 probes in '%s' or any process it started\n",
				argv[optind]);
	}
	/* Without a stream, the aggregated events are the ones handled. */
	fprintf(stderr, "tr2-bpf: %llu events, %llu lost\n",
		(unsigned long long)(tr2_session_events(tr.session) +
				     (summary && !nformats ? tr2_summary_events(summary) : 0)),
		(unsigned long long)(lost_in_bpf(tr.skel) + tr.decode_errors +
				     (summary && !nformats ? tr2_summary_lost(summary) : 0)));

	tr2_cmd_free(cmd);
	tr2_ring_free(rb);
	tr2_bpf__destroy(tr.skel);
	tr2_session_free(tr.session);
	tr2_sites_free(tr.sites);
	tr2_summary_free(summary);
	if (sum.json)
		tr2_dst_close(sum.json);
	free(sum.cat_list);
	for (int i = 0; i < nformats; i++)
		tr2_dst_close(targets[i].dst);
	free(tr.procs);
	free(tr.losses);
	free(ld_so);
	return status;
}
