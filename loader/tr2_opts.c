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

/* The longest --category name, bytes (the filter's, as it always was). */
#define CATEGORY_MAX 62
#include "tr2_dst.h"
#include "tr2_tgt.h"
#include "tr2_tracer.h"

#define DEFAULT_RING_BYTES (16u << 20)
/* --record's: a recording is for losing nothing, and its consumer, fast as
 * it is, may wait for a CPU on a busy host.  One thread at full speed for
 * 10 s, three runs, with this VM's load at 15: 1.1 M and 2.1 M events lost
 * of 33 M with 64 MiB, none of 37 to 56 M with 256 MiB (2.4 s of it). */
#define RECORD_RING_BYTES (256u << 20)

/* A screen's worth: tr2-bpf(1) is the reference (tests/man/run.sh checks
 * that it documents every option here, and no other). */
static const char usage[] =
"Usage: tr2-bpf [OPTIONS] -p PID [-p PID...]\n"
"       tr2-bpf [OPTIONS] -- CMD [ARG...]\n"
"       tr2-bpf [OPTIONS] -a\n"
"\n"
"Trace programs instrumented with tr2's <trace2.h> (libtr2.so, or libtr2.a\n"
"linked in) and write their Trace2 events as git writes them.  Needs root.\n"
"\n"
"What to trace:\n"
"  -p, --pid=PID          the running process PID (repeat for more)\n"
"  -- CMD [ARG...]        trace CMD and its descendants; exit with CMD's status\n"
"  -u, --user=USER        with -- CMD: run CMD as USER (as strace -u)\n"
"  -a, --all              every process with a tr2 runtime, until Ctrl-C\n"
"      --comm=NAME[,NAME...]  only processes of these names (any mode)\n"
"      --uid=USER         only processes of this real user (any mode)\n"
"      --cgroup=PATH      only processes in this cgroup v2 directory or below\n"
"      --duration=SECONDS stop after SECONDS\n"
"\n"
"Formats, any combination (none given: --perf to standard output):\n"
"      --normal[=DEST]    git's NORMAL format (GIT_TRACE2)\n"
"      --perf[=DEST]      git's PERF format (GIT_TRACE2_PERF)\n"
"      --event[=DEST]     git's EVENT format, JSON lines (GIT_TRACE2_EVENT)\n"
"      --chrome[=DEST]    Chrome Trace Event Format, for Perfetto, speedscope\n"
"      --folded[=DEST]    region self time as collapsed stacks, for flame graphs\n"
"      --brief            the BRIEF variant of every format\n"
"      --event-nesting=N  EVENT's region nesting limit (default 2)\n"
"      --max-files=N      a directory DEST holds at most N files\n"
"      --file-mode=MODE   files tr2-bpf creates get MODE (octal; default 0600)\n"
"      --record=FILE      unformatted, for tr2-fmt FILE (alone: no format now)\n"
"      --record-size=SIZE stop tracing before FILE passes SIZE bytes (K, M, G)\n"
"\n"
"Summary, aggregated by tr2-bpf (no format given: no event stream written):\n"
"      --summary[=INTERVAL]  region durations and integer data per process, a\n"
"                         table every INTERVAL seconds and at the end\n"
"      --hist             with --summary: log2 histograms of durations\n"
"      --summary-json[=DEST]  with --summary: the same numbers as JSON\n"
"      --summary-by=process|program  with --summary: a table per process/program\n"
"      --summary-keys=N   with --summary: room for N keys (default 8192)\n"
"      --category=LIST    only these categories, in every mode\n"
"      --no-split         regions' time not split: on CPU, runnable, D, S\n"
"\n"
"  -b, --ring-buffer=SIZE ring buffer size, a power of 2 (16M; --record 256M)\n"
"      --probe-nop=auto|1|5  where the uprobe goes on each probe site\n"
"  -v, --verbose          libbpf's messages; what tr2-bpf did and keeps\n"
"  -V, --version          show the version\n"
"  -h, --help             show this text\n"
"\n"
"DEST: omitted, standard output; a descriptor 2-9; an absolute path; an\n"
"existing directory (a file per process); af_unix:[stream:|dgram:]/path.\n"
"The last line on standard error is \"tr2-bpf: N events, M lost\", with what\n"
"was dropped or not traced after it; then the exit status is not 0.\n"
"SIGUSR1 pauses tracing (calls cost what they cost untraced), SIGUSR2 resumes.\n"
"\n"
"Examples:\n"
"  sudo tr2-bpf -p 4242                        PERF lines of process 4242\n"
"  sudo tr2-bpf --event=/var/log/tr2/ -- make  one EVENT file per process\n"
"  sudo tr2-bpf --event -- ./prog | tr2-fmt    the same lines, converted\n"
"  sudo tr2-bpf -a --summary=60                a table a minute, whole host\n"
"  sudo tr2-bpf --record=/tmp/t.rec -- ./prog  record; tr2-fmt /tmp/t.rec later\n"
"\n"
"The whole reference: man tr2-bpf\n";

/* The options without a short form: codes past any character. */
enum {
	OPT_NORMAL = 256, OPT_PERF, OPT_EVENT, OPT_CHROME, OPT_FOLDED, OPT_BRIEF, OPT_EVENT_NESTING,
	OPT_PROBE_NOP, OPT_MAX_FILES, OPT_SUMMARY, OPT_HIST, OPT_SUMMARY_JSON, OPT_SUMMARY_KEYS,
	OPT_SUMMARY_BY, OPT_CATEGORY, OPT_COMM, OPT_UID, OPT_CGROUP, OPT_DURATION, OPT_FILE_MODE, OPT_RECORD,
	OPT_RECORD_SIZE, OPT_NO_SPLIT,
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

/* --record-size: bytes, with K, M or G; at least 1M (a recording's buffer). */
static uint64_t parse_record_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;

	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (end == s || *end || s[0] == '-' || v > (1ull << 50) || (v << shift) < (1u << 20))
		tr2_fail("bad --record-size '%s': want bytes (K, M, G), from 1M", s);
	return (uint64_t)v << shift;
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
			if (strlen(name) > CATEGORY_MAX)
				tr2_fail("bad --category '%s': names are at most %d bytes", name, CATEGORY_MAX);
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
		{ "file-mode", required_argument, NULL, OPT_FILE_MODE },
		{ "summary", optional_argument, NULL, OPT_SUMMARY },
		{ "hist", no_argument, NULL, OPT_HIST },
		{ "summary-json", optional_argument, NULL, OPT_SUMMARY_JSON },
		{ "summary-keys", required_argument, NULL, OPT_SUMMARY_KEYS },
		{ "summary-by", required_argument, NULL, OPT_SUMMARY_BY },
		{ "category", required_argument, NULL, OPT_CATEGORY },
		{ "no-split", no_argument, NULL, OPT_NO_SPLIT },
		{ "user", required_argument, NULL, 'u' },
		{ "all", no_argument, NULL, 'a' },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "uid", required_argument, NULL, OPT_UID },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "record-size", required_argument, NULL, OPT_RECORD_SIZE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *comm = NULL, *uid = NULL;
	int opt, npids_cap = 0;

	o->event_nesting = 2;
	o->ring_bytes = 0;   /* not given: the default, below */
	o->probe_nop = -1;
	o->sum.keys = 8192;
	o->file_mode = TR2_DST_MODE_PRIVATE;
	opterr = 0;   /* one line of our own instead of getopt's two */
	while ((opt = getopt_long(argc, argv, "+:p:u:ab:vVh", longopts, NULL)) != -1) {
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
		case 'p': {
			pid_t pid = parse_number(optarg, 1, 0x3fffffff, "bad PID '%s'");
			int i;

			for (i = 0; i < o->npids && o->pids[i] != pid; i++)
				;
			if (i < o->npids)   /* given twice: one process */
				break;
			o->pids = tr2_grow(o->pids, o->npids, &npids_cap, sizeof(*o->pids));
			o->pids[o->npids++] = pid;
			break;
		}
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
		case OPT_NO_SPLIT:
			o->no_split = 1;
			break;
		case OPT_EVENT_NESTING:
			o->event_nesting = parse_number(optarg, 1, 1000000,
							"bad --event-nesting '%s': want a number of levels, 1 or more");
			break;
		case 'b':
			o->ring_bytes = parse_size(optarg);
			break;
		case OPT_RECORD:
			o->record = optarg;
			break;
		case OPT_RECORD_SIZE:
			o->record_bytes = parse_record_size(optarg);
			break;
		case OPT_MAX_FILES:
			o->max_files = parse_number(optarg, 0, 1000000, "bad --max-files '%s': want a number of files");
			break;
		case OPT_FILE_MODE: {
			char *end;

			o->file_mode = (int)strtol(optarg, &end, 8);
			if (end == optarg || *end || o->file_mode < 0 || o->file_mode > 0777)
				tr2_fail("bad --file-mode '%s': want an octal mode from 0 to 0777", optarg);
			break;
		}
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
		case 'V':
			puts("tr2-bpf " TR2_VERSION);
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
	if (!o->ring_bytes)
		o->ring_bytes = o->record ? RECORD_RING_BYTES : DEFAULT_RING_BYTES;
	if (o->record_bytes && !o->record)
		tr2_fail("--record-size needs --record=FILE");
	if (o->probe_nop == 1 && kernel_optimizes_nop5())
		tr2_fail("--probe-nop=5: this kernel turns a uprobe on a 5-byte nop into a call whose "
			 "trampoline a forked child does not inherit (it would crash): use --probe-nop=1");
	if (o->probe_nop < 0)
		o->probe_nop = 0;
	/* a host's processes come and go by the thousand: one table per program */
	if (!o->sum.by_set)
		o->sum.by_program = o->all;
	if (!o->nformats && !o->sum.on && !o->record) {
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
