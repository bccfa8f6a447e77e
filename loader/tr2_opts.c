/* tr2_opts.c: see tr2_opts.h.  The usage text, the option table and the
 * checks of each value; nothing here touches BPF (the values go into maps
 * and the program's read-only data in tr2_bpf.c and tr2_tracer.c). */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr2_mem.h"
#include "tr2_opts.h"
#include "tr2_tgt.h"
#include "tr2_tracer.h"

#define DEFAULT_RING_BYTES (4u << 20)

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

/* The options without a short form: codes past any character. */
enum {
	OPT_NORMAL = 256, OPT_PERF, OPT_EVENT, OPT_CHROME, OPT_FOLDED, OPT_BRIEF, OPT_EVENT_NESTING,
	OPT_PROBE_NOP, OPT_MAX_FILES, OPT_SUMMARY, OPT_HIST, OPT_SUMMARY_JSON, OPT_SUMMARY_KEYS,
	OPT_SUMMARY_BY, OPT_CATEGORY, OPT_COMM, OPT_UID, OPT_CGROUP, OPT_DURATION,
};

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
	case OPT_SUMMARY:
		o->on = 1;
		if (arg) {
			o->interval_s = strtod(arg, &end);
			if (end == arg || *end || !(o->interval_s >= 0.01 && o->interval_s <= 86400))
				tr2_fail("bad --summary interval '%s': want seconds, from 0.01 to 86400", arg);
		}
		break;
	case OPT_HIST:
		o->hist = 1;
		break;
	case OPT_SUMMARY_JSON:
		o->json_set = 1;
		o->json_dest = arg;
		break;
	case OPT_SUMMARY_BY:
		o->by_set = 1;
		if (!strcmp(arg, "process") || !strcmp(arg, "program"))
			o->by_program = arg[3] == 'g';
		else
			tr2_fail("bad --summary-by '%s': want process or program", arg);
		break;
	case OPT_SUMMARY_KEYS:
		o->keys_set = 1;
		o->keys = parse_number(arg, 1, 1 << 20, "bad --summary-keys '%s': want a number from 1 to 1048576");
		break;
	case OPT_CATEGORY:
		free(o->cat_list);
		o->ncats = 0;   /* the last --category counts */
		list = o->cat_list = strdup(arg);
		if (!list)
			abort();
		for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
			if (strlen(name) > TR2_CAT_FILTER_MAX - 2)
				tr2_fail("bad --category '%s': names are at most %d bytes", name, TR2_CAT_FILTER_MAX - 2);
			if (o->ncats == 64)
				tr2_fail("bad --category: at most 64 categories");
			o->cats[o->ncats++] = name;
		}
		if (!o->ncats)
			tr2_fail("bad --category '%s': want names separated by commas", arg);
		break;
	}
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

/* o->filters: the --comm, --uid and --cgroup that count (the last of each),
 * as given, separated by ", ". */
static void describe_filters(struct tr2_opts *o, const char *comm, const char *uid)
{
	const char *names[] = { "--comm=", "--uid=", "--cgroup=" }, *values[] = { comm, uid, o->cgroup };
	size_t len = 0;

	for (int k = 0; k < 3; k++)
		if (values[k] && len < sizeof(o->filters))
			len += snprintf(o->filters + len, sizeof(o->filters) - len, "%s%s%s", len ? ", " : "",
					names[k], values[k]);
}

void tr2_opts_parse(struct tr2_opts *o, int argc, char **argv)
{
	static const int formats[] = { TR2_FMT_NORMAL, TR2_FMT_PERF, TR2_FMT_EVENT, TR2_FMT_CHROME,
					TR2_FMT_FOLDED };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "normal", optional_argument, NULL, OPT_NORMAL },
		{ "perf", optional_argument, NULL, OPT_PERF },
		{ "event", optional_argument, NULL, OPT_EVENT },
		{ "chrome", optional_argument, NULL, OPT_CHROME },
		{ "folded", optional_argument, NULL, OPT_FOLDED },
		{ "brief", no_argument, NULL, OPT_BRIEF },
		{ "event-nesting", required_argument, NULL, OPT_EVENT_NESTING },
		{ "ring-buffer", required_argument, NULL, 'b' },
		{ "probe-nop", required_argument, NULL, OPT_PROBE_NOP },
		{ "max-files", required_argument, NULL, OPT_MAX_FILES },
		{ "summary", optional_argument, NULL, OPT_SUMMARY },
		{ "hist", no_argument, NULL, OPT_HIST },
		{ "summary-json", optional_argument, NULL, OPT_SUMMARY_JSON },
		{ "summary-keys", required_argument, NULL, OPT_SUMMARY_KEYS },
		{ "summary-by", required_argument, NULL, OPT_SUMMARY_BY },
		{ "category", required_argument, NULL, OPT_CATEGORY },
		{ "user", required_argument, NULL, 'u' },
		{ "all", no_argument, NULL, 'a' },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "uid", required_argument, NULL, OPT_UID },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *comm = NULL, *uid = NULL;
	int opt, npids_cap = 0;

	o->event_nesting = 2;
	o->ring_bytes = DEFAULT_RING_BYTES;
	o->probe_nop = -1;
	o->sum.keys = 8192;
	opterr = 0;   /* one line of our own instead of getopt's two */
	while ((opt = getopt_long(argc, argv, "+:p:u:ab:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'u':
			o->user = optarg;
			break;
		case 'a':
			o->all = 1;
			break;
		case OPT_COMM:
			parse_comms(o, optarg);
			comm = optarg;
			break;
		case OPT_UID:
			parse_uid(o, optarg);
			uid = optarg;
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case OPT_DURATION: {
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
		case OPT_NORMAL:
		case OPT_PERF:
		case OPT_EVENT:
		case OPT_CHROME:
		case OPT_FOLDED:
			if (o->nformats == 8)
				tr2_fail("too many formats");
			o->formats[o->nformats].fmt = formats[opt - OPT_NORMAL];
			o->formats[o->nformats++].dest = optarg;
			break;
		case OPT_BRIEF:
			o->brief = 1;
			break;
		case OPT_EVENT_NESTING:
			o->event_nesting = parse_number(optarg, 0, 1000000,
							"bad --event-nesting '%s': want a number of levels");
			break;
		case 'b':
			o->ring_bytes = parse_size(optarg);
			break;
		case OPT_MAX_FILES:
			o->max_files = parse_number(optarg, 0, 1000000, "bad --max-files '%s': want a number of files");
			break;
		case OPT_PROBE_NOP:
			if (!strcmp(optarg, "auto"))
				o->probe_nop = -1;
			else if (!strcmp(optarg, "1") || !strcmp(optarg, "5"))
				o->probe_nop = optarg[0] == '5';
			else
				tr2_fail("bad --probe-nop '%s': want auto, 1 or 5", optarg);
			break;
		case OPT_SUMMARY:
		case OPT_HIST:
		case OPT_SUMMARY_JSON:
		case OPT_SUMMARY_KEYS:
		case OPT_SUMMARY_BY:
		case OPT_CATEGORY:
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
	describe_filters(o, comm, uid);
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


void tr2_opts_free(struct tr2_opts *o)
{
	free(o->sum.cat_list);
	free(o->pids);
}
