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

/* A screen's worth: tr2-fmt(1) is the reference (tests/man/run.sh checks
 * that it documents every option here, and no other). */
static const char usage_text[] =
"Usage: tr2-fmt [--normal[=DEST]|--perf[=DEST]|--event[=DEST]|--chrome[=DEST]|\n"
"                --folded[=DEST]] [--brief] [--event-nesting=N] [--max-files=N]\n"
"               [FILE...]\n"
"\n"
"Converts Trace2 EVENT lines (git's GIT_TRACE2_EVENT, tr2-bpf --event) into\n"
"one of git's three Trace2 formats, byte for byte as git writes it, or into a\n"
"view for trace viewers.  Reads each FILE in turn (none, or -: standard input).\n"
"\n"
"  --normal[=DEST]    git's NORMAL format (GIT_TRACE2)\n"
"  --perf[=DEST]      git's PERF format (GIT_TRACE2_PERF); the default\n"
"  --event[=DEST]     git's EVENT format (GIT_TRACE2_EVENT)\n"
"  --chrome[=DEST]    Chrome Trace Event Format, for Perfetto, speedscope\n"
"  --folded[=DEST]    region self time as collapsed stacks, for flame graphs\n"
"  --brief            the BRIEF variant of the format\n"
"  --event-nesting=N  with --event, leave out regions nested deeper than N\n"
"  --max-files=N      a directory DEST holds at most N files\n"
"  -V, --version      show the version\n"
"  -h, --help         show this text\n"
"\n"
"DEST: omitted, standard output; a descriptor 2-9; an absolute path; an\n"
"existing directory (a file per process); af_unix:[stream:|dgram:]/path.\n"
"A malformed line is reported (FILE:LINE: REASON; at most 100 per FILE) and\n"
"skipped.  Exit status: 0, 1 when lines were skipped, 2 on other errors.\n"
"\n"
"Examples:\n"
"  tr2-fmt /tmp/ev.json                       the PERF view of a git run\n"
"  sudo tr2-bpf --event -- ./app | tr2-fmt    trace live, keep the PERF view\n"
"  tr2-fmt --chrome /tmp/ev.json > t.json     a timeline for ui.perfetto.dev\n"
"  tr2-fmt --folded /tmp/ev.json | flamegraph.pl > f.svg   a flame graph\n"
"\n"
"The whole reference: man tr2-fmt\n";

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
	{ "version", no_argument, NULL, 'V' },
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
	fprintf(stderr, " (see --help)\n");
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
	while ((c = getopt_long(argc, argv, ":hV", long_options, NULL)) != -1) {
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
		case 'V':
			puts("tr2-fmt " TR2_VERSION);
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
	dst = tr2_dst_open(dest, TR2_DST_MODE_GIT, err, sizeof(err));
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
