/* tr2_fmt_main.c: tr2-fmt, the converter from Trace2 EVENT lines to any of
 * git's three Trace2 formats (docs: ../shared/trace2-api.md §4, --help). */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr2_dst.h"
#include "tr2_read_event.h"
#include "tr2_tgt.h"

/* Exit statuses. */
#define EXIT_MALFORMED 1   /* some lines were reported and skipped */
#define EXIT_TROUBLE 2     /* usage error, unreadable FILE, or output failure */

static const char usage_text[] =
"Usage: tr2-fmt [--normal[=DEST]|--perf[=DEST]|--event[=DEST]|--chrome[=DEST]|\n"
"                --folded[=DEST]] [--brief] [--event-nesting=N] [--max-files=N]\n"
"               [FILE...]\n"
"\n"
"Converts Trace2 EVENT-format lines, as git writes them to GIT_TRACE2_EVENT or\n"
"tr2-bpf writes them with --event, into one of git's three Trace2 formats, laid\n"
"out byte for byte as git itself writes that format, or into one of two views\n"
"for trace viewers.\n"
"\n"
"Reads each FILE in turn as one stream (a process's lines may continue in the\n"
"next FILE); with no FILE, or where FILE is -, reads standard input.  The lines\n"
"of several processes (a git command and the git children it runs) may be\n"
"interleaved: state is kept per process (\"sid\") and per thread.\n"
"\n"
"Options:\n"
"  --normal[=DEST]    git's NORMAL format, as GIT_TRACE2 writes it\n"
"  --perf[=DEST]      git's PERF format, as GIT_TRACE2_PERF writes it; the default\n"
"  --event[=DEST]     git's EVENT format, as GIT_TRACE2_EVENT writes it; git's\n"
"                     own lines come out unchanged\n"
"  --chrome[=DEST]    Chrome Trace Event Format (JSON array), the format Perfetto\n"
"                     UI, chrome://tracing and speedscope open: regions as\n"
"                     slices, the other events as instants and counters\n"
"  --folded[=DEST]    region self time as collapsed stacks, one line per stack\n"
"                     (process;thread;category:label;... microseconds), for\n"
"                     flamegraph.pl, inferno and speedscope; written at the end\n"
"  --brief            the BRIEF variant (GIT_TRACE2_BRIEF, GIT_TRACE2_PERF_BRIEF,\n"
"                     GIT_TRACE2_EVENT_BRIEF): NORMAL and PERF lose the time and\n"
"                     file:line columns, EVENT keeps \"time\" only on version and\n"
"                     atexit and drops \"file\" and \"line\"\n"
"  --event-nesting=N  with --event, leave out region and data events nested\n"
"                     deeper than N, as GIT_TRACE2_EVENT_NESTING=N does (N >= 1);\n"
"                     by default nothing is left out, since the writer of the\n"
"                     input already applied its own limit\n"
"  -h, --help         show this text and exit\n"
"\n"
"Output:\n"
"  One whole line per event, to standard output, or to DEST, a Trace2 target\n"
"  value as for tr2-bpf: a file descriptor 2-9; an absolute path (appended to);\n"
"  an existing directory (one file per process, named after the last part of\n"
"  its sid); af_unix:[stream:|dgram:]/absolute/path (one connection per\n"
"  process, from its first line to its atexit, as git opens one: what a\n"
"  Trace2 collector such as trace2receiver expects).  The one format chosen is\n"
"  written; run tr2-fmt once per format wanted.\n"
"  --max-files=N      a directory DEST holds at most N files, then git's\n"
"                     git-trace2-discard sentinel (as trace2.maxFiles; default 0,\n"
"                     no limit)\n"
"\n"
"Values an EVENT line does not carry:\n"
"  t_abs    PERF prints it on child, exec, thread and region lines, EVENT\n"
"           does not.  It is derived from the line's \"time\" and the process's\n"
"           start instant, estimated from its lines that carry both time and\n"
"           t_abs (start, data, exit); a line that ends something (region_leave,\n"
"           child_exit, thread_exit) takes its start's t_abs plus its t_rel\n"
"           instead when that is smaller.  git stamps each target's time\n"
"           separately, so the result differs from git's own PERF output by\n"
"           some microseconds, milliseconds when git was preempted while\n"
"           writing.  Where neither is known (BRIEF input has no time) the\n"
"           column is blank.\n"
"  nesting  PERF indents every line by the thread's open regions; EVENT gives\n"
"           the depth only on region and data lines, so it is tracked per thread.\n"
"           It is exact when the input was written with a nesting limit at least\n"
"           as deep as the regions (GIT_TRACE2_EVENT_NESTING, default 2).\n"
"  time     A line without \"time\" is formatted as if written at the epoch.\n"
"\n"
"Errors:\n"
"  A line that is not one JSON object, names an unknown event, lacks a key git\n"
"  always writes for that event, has a value of the wrong type or range, or\n"
"  holds a raw control character, is reported on standard error as\n"
"      tr2-fmt: FILE:LINE: REASON\n"
"  and skipped; the other lines are still converted.  Standard input is named\n"
"  <stdin>.  Keys tr2-fmt does not know are ignored.  Invalid UTF-8 inside\n"
"  strings is accepted, since git writes it for non-UTF-8 arguments and paths.\n"
"\n"
"Exit status:\n"
"  0  every line was converted\n"
"  1  some lines were malformed and skipped\n"
"  2  usage error, a FILE could not be read, or the output could not be written\n"
"\n"
"Examples:\n"
"  GIT_TRACE2_EVENT=/tmp/ev.json git fetch && tr2-fmt /tmp/ev.json\n"
"      the PERF view of a fetch and the git processes it ran\n"
"  tr2-fmt --normal --brief < /tmp/ev.json\n"
"      the NORMAL view without times or source locations\n"
"  tr2-bpf --event -- ./app | tr2-fmt --perf\n"
"      trace a program live, keep only the PERF view\n"
"  tr2-fmt --event --event-nesting=2 deep.json > shallow.json\n"
"      drop the regions git would not have written by default\n"
"  tr2-fmt --chrome /tmp/ev.json > /tmp/trace.json\n"
"      a timeline to open in ui.perfetto.dev, chrome://tracing or speedscope\n";

enum { OPT_NORMAL = 256, OPT_PERF, OPT_EVENT, OPT_CHROME, OPT_FOLDED, OPT_BRIEF, OPT_NESTING, OPT_MAX_FILES };

static const struct option long_options[] = {
	{ "normal", optional_argument, NULL, OPT_NORMAL },
	{ "perf", optional_argument, NULL, OPT_PERF },
	{ "event", optional_argument, NULL, OPT_EVENT },
	{ "chrome", optional_argument, NULL, OPT_CHROME },
	{ "folded", optional_argument, NULL, OPT_FOLDED },
	{ "max-files", required_argument, NULL, OPT_MAX_FILES },
	{ "brief", no_argument, NULL, OPT_BRIEF },
	{ "event-nesting", required_argument, NULL, OPT_NESTING },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tr2-fmt: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'tr2-fmt --help' for more information.\n");
	return EXIT_TROUBLE;
}

/* Malformed lines reported per input, at most; then one line counts the rest. */
#define MAX_REPORTED 100

/* convert()'s result bit for a failed output: nothing more can be written. */
#define OUTPUT_FAILED 4

static int output_failed(int status)
{
	return status & OUTPUT_FAILED;
}

/*
 * The input, read in blocks and cut into lines in place: stdio's getline()
 * costs more per line than the rest of tr2-fmt's reading.  The buffer grows
 * to hold the longest line and is kept from one file to the next.
 */
struct input {
	int fd;
	char *buf;
	size_t cap;
	size_t start, end;   /* buf[start, end): bytes read, not yet handed out */
	size_t scanned;      /* buf[start, scanned) holds no '\n' */
	int eof, err;        /* err: errno of a failed read */
};

#define INPUT_BLOCK (1 << 20)

/*
 * Returns the next line, without its '\n', and its length in *n; NULL at the
 * end of the input or when reading failed (in->err).  A last line without
 * '\n' counts.  The line stays valid until the next call.
 */
static const char *next_line(struct input *in, size_t *n)
{
	for (;;) {
		char *p = in->buf + in->start;
		char *nl = memchr(in->buf + in->scanned, '\n', in->end - in->scanned);
		ssize_t got;

		if (nl) {
			*n = (size_t)(nl - p);
			in->start = in->scanned = (size_t)(nl - in->buf) + 1;
			return p;
		}
		in->scanned = in->end;
		if (in->eof || in->err) {
			*n = in->end - in->start;
			in->start = in->end;
			return *n ? p : NULL;
		}
		/* keep the partial line, at the front; grow when it fills the buffer */
		memmove(in->buf, p, in->end - in->start);
		in->end -= in->start;
		in->scanned = in->end;
		in->start = 0;
		if (in->end == in->cap) {
			in->cap *= 2;
			in->buf = realloc(in->buf, in->cap);
			if (!in->buf)
				abort();
		}
		got = read(in->fd, in->buf + in->end, in->cap - in->end);
		if (got < 0 && errno != EINTR)
			in->err = errno;
		else if (got == 0)
			in->eof = 1;
		else if (got > 0)
			in->end += (size_t)got;
	}
}

/*
 * Converts one open stream.  Returns a set of bits: EXIT_MALFORMED when a line
 * was reported, EXIT_TROUBLE when reading failed, EXIT_TROUBLE|OUTPUT_FAILED
 * when the output failed (its destination has reported why).
 */
static int convert(FILE *f, const char *name, struct tr2_reader *rd, struct tr2_target *t,
		   struct input *in)
{
	unsigned long lineno = 0, malformed = 0;
	int status = 0;
	const char *line;
	size_t n;
	struct tr2_ev ev;
	struct stat st;

	in->fd = fileno(f);
	in->start = in->end = in->scanned = 0;
	in->eof = in->err = 0;
	/* A file is converted in batches of lines; a pipe (tr2-bpf --event |
	 * tr2-fmt) line by line, so that output keeps up with input (read()
	 * returns what the pipe holds). */
	tr2_dst_set_buffered(t->dst, fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode));
	while ((line = next_line(in, &n))) {
		int rc;

		lineno++;
		if (n && line[n - 1] == '\r')   /* a CR LF line end */
			n--;
		rc = tr2_reader_parse(rd, line, n, &ev);
		if (rc < 0) {
			if (++malformed <= MAX_REPORTED)
				fprintf(stderr, "tr2-fmt: %s:%lu: %s\n", name, lineno, tr2_reader_error(rd));
			status = EXIT_MALFORMED;
		} else if (tr2_target_emit(t, &ev) && !tr2_dst_per_process(t->dst)) {
			/* a directory or socket DEST drops and counts the
			 * lines of the one process that failed: below */
			return status | EXIT_TROUBLE | OUTPUT_FAILED;
		}
	}
	if (malformed > MAX_REPORTED)
		fprintf(stderr, "tr2-fmt: %s: %lu more malformed lines, not shown: %lu of its %lu lines were malformed\n",
			name, malformed - MAX_REPORTED, malformed, lineno);
	if (tr2_dst_flush(t->dst))
		return status | EXIT_TROUBLE | OUTPUT_FAILED;
	if (in->err) {
		fprintf(stderr, "tr2-fmt: failed to read '%s': %s\n", name, strerror(in->err));
		return status | EXIT_TROUBLE;
	}
	return status;
}

int main(int argc, char **argv)
{
	const struct tr2_tgt *tgt = NULL;
	struct tr2_tgt_opts opts = { .event_nesting = INT_MAX };
	struct tr2_target t = { 0 };
	struct tr2_dst *dst;
	struct tr2_reader *rd;
	char err[256];
	struct input in = { .cap = INPUT_BLOCK };
	const char *dest = NULL;        /* NULL: standard output */
	int c, status = 0, max_files = 0;

	opterr = 0;   /* messages below name the program "tr2-fmt", not argv[0] */
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		const struct tr2_tgt *want = NULL;
		char *end;
		long n;

		switch (c) {
		case OPT_NORMAL: want = &tr2_tgt_normal; dest = optarg; break;
		case OPT_PERF: want = &tr2_tgt_perf; dest = optarg; break;
		case OPT_EVENT: want = &tr2_tgt_event; dest = optarg; break;
		case OPT_CHROME: want = &tr2_tgt_chrome; dest = optarg; break;
		case OPT_FOLDED: want = &tr2_tgt_folded; dest = optarg; break;
		case OPT_MAX_FILES:
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 0 || n > 1000000)
				return usage_error("--max-files wants a number of files, not '%s'", optarg);
			max_files = (int)n;
			break;
		case OPT_BRIEF: opts.brief = 1; break;
		case OPT_NESTING:
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > INT_MAX)
				return usage_error("--event-nesting wants an integer >= 1, not '%s'", optarg);
			opts.event_nesting = (int)n;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fflush(stdout) ? EXIT_TROUBLE : 0;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (want && tgt && want != tgt)
			return usage_error("choose one of --normal, --perf, --event, --chrome and --folded");
		if (want)
			tgt = want;
	}
	dst = tr2_dst_open(dest, err, sizeof(err));
	if (!dst) {
		fprintf(stderr, "tr2-fmt: %s\n", err);
		return EXIT_TROUBLE;
	}
	/* a view is one document: a file of an earlier run is overwritten */
	if ((tgt == &tr2_tgt_chrome || tgt == &tr2_tgt_folded) && tr2_dst_truncate(dst)) {
		fprintf(stderr, "tr2-fmt: cannot empty '%s': %s\n", dest, strerror(errno));
		return EXIT_TROUBLE;
	}
	tr2_target_init(&t, tgt ? tgt : &tr2_tgt_perf, &opts, dst);
	tr2_dst_set_max_files(t.dst, max_files);
	rd = tr2_reader_new();
	in.buf = malloc(in.cap);
	if (!in.buf)
		abort();

	if (optind == argc)
		status = convert(stdin, "<stdin>", rd, &t, &in);
	for (int i = optind; i < argc && !output_failed(status); i++) {
		const char *path = argv[i];
		FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
		int rc;

		if (!f) {
			/* like cat(1): report it, go on with the other files */
			fprintf(stderr, "tr2-fmt: failed to open '%s': %s\n", path, strerror(errno));
			status |= EXIT_TROUBLE;
			continue;
		}
		rc = convert(f, f == stdin ? "<stdin>" : path, rd, &t, &in);
		status |= rc;
		if (f != stdin)
			fclose(f);
	}

	/* what a stateful format writes at the end (chrome's ']', folded's
	 * stacks); a destination that failed already drops it */
	if (tr2_target_finish(&t) || tr2_dst_flush(t.dst))
		status |= EXIT_TROUBLE;
	/* a directory or socket DEST's processes whose file or connection
	 * failed (reported, then counted by tr2_target_finish): the output is
	 * not whole */
	if (tr2_dst_dropped(t.dst, NULL, NULL))
		status |= EXIT_TROUBLE;
	free(in.buf);
	tr2_reader_free(rd);
	tr2_dst_close(t.dst);
	/* exit status 2 outranks 1 */
	return status & EXIT_TROUBLE ? EXIT_TROUBLE : status & EXIT_MALFORMED;
}
