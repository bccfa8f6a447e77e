/* tr2_fmt_main.c: tr2-fmt, the converter from Trace2 EVENT lines, or a
 * recording of tr2-bpf --record, to any of git's three Trace2 formats and
 * the views (docs: ../shared/trace2-api.md §4, --help).  A recording is fed
 * to tr2-bpf's own session (loader/tr2_replay.h), which writes what
 * tr2-bpf would have written live. */
#include <errno.h>
#include <fcntl.h>
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
#include "tr2_recording.h"
#include "tr2_replay.h"
#include "tr2_summary.h"
#include "tr2_tgt.h"

/* Exit statuses. */
#define EXIT_MALFORMED 1   /* some lines were reported and skipped */
#define EXIT_TROUBLE 2     /* usage error, unreadable FILE, or output failure */

/* A screen's worth: tr2-fmt(1) is the reference (tests/man/run.sh checks
 * that it documents every option here, and no other). */
static const char usage_text[] =
"Usage: tr2-fmt [--normal[=DEST]|--perf[=DEST]|--event[=DEST]|--chrome[=DEST]|\n"
"                --folded[=DEST]|--summary[=INTERVAL]] [--brief]\n"
"               [--event-nesting=N] [--max-files=N] [--category=LIST] [FILE...]\n"
"\n"
"Converts Trace2 EVENT lines (git's GIT_TRACE2_EVENT, tr2-bpf --event) or a\n"
"recording (tr2-bpf --record) into one of git's three Trace2 formats, byte\n"
"for byte as git writes it, or into a view.  A recording gives the lines\n"
"tr2-bpf would have written live.  Reads each FILE in turn (none, or -:\n"
"standard input).\n"
"\n"
"  --normal[=DEST]    git's NORMAL format (GIT_TRACE2)\n"
"  --perf[=DEST]      git's PERF format (GIT_TRACE2_PERF); the default\n"
"  --event[=DEST]     git's EVENT format (GIT_TRACE2_EVENT)\n"
"  --chrome[=DEST]    Chrome Trace Event Format, for Perfetto, speedscope\n"
"  --folded[=DEST]    region self time as collapsed stacks, for flame graphs\n"
"  --brief            the BRIEF variant of the format\n"
"  --event-nesting=N  with --event, leave out regions nested deeper than N\n"
"  --max-files=N      a directory DEST holds at most N files\n"
"A recording only:\n"
"  --summary[=INTERVAL]  tr2-bpf's --summary tables (INTERVAL: seconds)\n"
"  --hist, --summary-json[=DEST], --summary-by=process|program,\n"
"  --summary-keys=N   as tr2-bpf's, with --summary\n"
"  --category=LIST    only these categories (default: the recording's)\n"
"  -V, --version      show the version\n"
"  -h, --help         show this text\n"
"\n"
"DEST: omitted, standard output; a descriptor 2-9; an absolute path; an\n"
"existing directory (a file per process); af_unix:[stream:|dgram:]/path.\n"
"A malformed line is reported (FILE:LINE: REASON; at most 100 per FILE) and\n"
"skipped.  A recording ends with \"tr2-fmt: FILE: N events, M lost\" on\n"
"stderr, after where it stops if tr2-bpf did not end it.  Exit status: 0,\n"
"1 when lines were skipped or a recording stops short, 2 on other errors\n"
"(a damaged recording).\n"
"\n"
"Examples:\n"
"  tr2-fmt /tmp/ev.json                       the PERF view of a git run\n"
"  sudo tr2-bpf --event -- ./app | tr2-fmt    trace live, keep the PERF view\n"
"  tr2-fmt --chrome /tmp/ev.json > t.json     a timeline for ui.perfetto.dev\n"
"  tr2-fmt --folded /tmp/ev.json | flamegraph.pl > f.svg   a flame graph\n"
"  tr2-fmt --event /tmp/t.rec                  a tr2-bpf --record=/tmp/t.rec\n"
"\n"
"The whole reference: man tr2-fmt\n";

enum {
	OPT_NORMAL = 256, OPT_PERF, OPT_EVENT, OPT_CHROME, OPT_FOLDED, OPT_BRIEF, OPT_NESTING, OPT_MAX_FILES,
	OPT_SUMMARY, OPT_HIST, OPT_SUMMARY_JSON, OPT_SUMMARY_BY, OPT_SUMMARY_KEYS, OPT_CATEGORY,
};

static const struct option long_options[] = {
	{ "normal", optional_argument, NULL, OPT_NORMAL },
	{ "perf", optional_argument, NULL, OPT_PERF },
	{ "event", optional_argument, NULL, OPT_EVENT },
	{ "chrome", optional_argument, NULL, OPT_CHROME },
	{ "folded", optional_argument, NULL, OPT_FOLDED },
	{ "max-files", required_argument, NULL, OPT_MAX_FILES },
	{ "brief", no_argument, NULL, OPT_BRIEF },
	{ "event-nesting", required_argument, NULL, OPT_NESTING },
	{ "summary", optional_argument, NULL, OPT_SUMMARY },
	{ "hist", no_argument, NULL, OPT_HIST },
	{ "summary-json", optional_argument, NULL, OPT_SUMMARY_JSON },
	{ "summary-by", required_argument, NULL, OPT_SUMMARY_BY },
	{ "summary-keys", required_argument, NULL, OPT_SUMMARY_KEYS },
	{ "category", required_argument, NULL, OPT_CATEGORY },
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

/* One read(2) into the free end of the buffer. */
static void read_more(struct input *in)
{
	ssize_t got = read(in->fd, in->buf + in->end, in->cap - in->end);

	if (got < 0 && errno != EINTR)
		in->err = errno;
	else if (got == 0)
		in->eof = 1;
	else if (got > 0)
		in->end += (size_t)got;
}

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
		read_more(in);
	}
}

/*
 * Converts one open stream.  Returns a set of bits: EXIT_MALFORMED when a line
 * was reported, EXIT_TROUBLE when reading failed, EXIT_TROUBLE|OUTPUT_FAILED
 * when the output failed (its destination has reported why).
 */
static int convert(const char *name, struct tr2_reader *rd, struct tr2_target *t, struct input *in)
{
	unsigned long lineno = 0, malformed = 0;
	int status = 0;
	const char *line;
	size_t n;
	struct tr2_ev ev;
	struct stat st;

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

/* Reads until the input holds n bytes or ends (in->err: a read failed). */
static void fill(struct input *in, size_t n)
{
	while (in->end - in->start < n && !in->eof && !in->err)
		read_more(in);
}

/* What tr2-fmt's --summary and --category do with a recording: what
 * tr2-bpf's options of the same names do live. */
struct rec_opts {
	int summary, hist, json_set, by_set, by_program;
	unsigned keys;                 /* 0: the default */
	double interval_s;
	const char *json_dest;
	struct tr2_dst *json;          /* --summary-json's destination, or NULL */
	char *cat_list, *cats[64];
	int ncats;
	int nesting_set;               /* --event-nesting given; else tr2-bpf's default, 2 */
	struct tr2_summary *made;      /* the summary of the recording being read */
};

/* The replay's summary, made at the recording's START. */
static struct tr2_summary *make_summary(void *ctx, int64_t mono_to_real_ns, uint64_t start_ns, int all)
{
	struct rec_opts *o = ctx;
	struct tr2_summary *s = tr2_summary_new(o->hist, !o->json_set || o->json_dest, o->json, mono_to_real_ns,
						start_ns);

	tr2_summary_set_per_program(s, o->by_set ? o->by_program : all);
	if (o->keys)
		tr2_summary_set_keys(s, o->keys);
	tr2_summary_set_interval(s, (uint64_t)(o->interval_s * 1e9));
	o->made = s;
	return s;
}

/*
 * Converts one recording, whose first bytes are in `in`, into target t
 * (NULL: --summary's tables alone).  Returns convert()'s bits:
 * EXIT_MALFORMED when it stops short (tr2-bpf killed), EXIT_TROUBLE when it
 * is damaged or reading failed, with OUTPUT_FAILED when the output failed.
 */
static int replay(const char *name, struct tr2_target *t, struct rec_opts *o, struct input *in)
{
	struct tr2_target *targets[1] = { t };
	struct tr2_replay_cfg cfg = {
		.targets = targets, .ntargets = t ? 1 : 0, .cats = o->ncats ? o->cats : NULL, .ncats = o->ncats,
		.summary = o->summary ? make_summary : NULL, .ctx = o,
	};
	struct tr2_replay *r = tr2_replay_new(&cfg);
	int status = 0, rc, nesting = t ? t->opts.event_nesting : 0;

	if (t) {
		tr2_dst_set_buffered(t->dst, true);
		if (!o->nesting_set)
			t->opts.event_nesting = 2;
	}
	rc = tr2_replay_feed(r, in->buf + in->start, in->end - in->start);
	while (!rc && !in->eof && !in->err) {
		in->start = in->end = 0;
		read_more(in);
		rc = tr2_replay_feed(r, in->buf, in->end);
	}
	rc = tr2_replay_finish(r);
	if (in->err) {
		fprintf(stderr, "tr2-fmt: failed to read '%s': %s\n", name, strerror(in->err));
		status = EXIT_TROUBLE;
	} else if (rc < 0) {
		fprintf(stderr, "tr2-fmt: %s: damaged recording, not read past %s\n", name, tr2_replay_error(r));
		status = EXIT_TROUBLE;
	} else {
		if (rc > 0) {
			fprintf(stderr, "tr2-fmt: %s: %s\n", name, tr2_replay_error(r));
			status = EXIT_MALFORMED;
		}
		fprintf(stderr, "tr2-fmt: %s: %llu events, %llu lost\n", name,
			(unsigned long long)tr2_replay_events(r), (unsigned long long)tr2_replay_lost(r));
	}
	if (t && (tr2_dst_flush(t->dst) || (tr2_dst_failed(t->dst) && !tr2_dst_per_process(t->dst))))
		status |= EXIT_TROUBLE | OUTPUT_FAILED;
	if (t)
		t->opts.event_nesting = nesting;
	tr2_replay_free(r);
	tr2_summary_free(o->made);
	o->made = NULL;
	return status;
}

/* Converts the input named name: a recording or EVENT lines. */
static int convert_any(int fd, const char *name, struct tr2_reader *rd, struct tr2_target *t, struct rec_opts *o,
		       struct input *in)
{
	in->fd = fd;
	in->start = in->end = in->scanned = 0;
	in->eof = in->err = 0;
	fill(in, TR2_REC_FILE_MAGIC_LEN);
	if (tr2_replay_is_recording(in->buf + in->start, in->end - in->start))
		return replay(name, t, o, in);
	if (o->summary || o->ncats) {
		fprintf(stderr, "tr2-fmt: %s: --summary and --category read recordings (tr2-bpf --record) only\n",
			name);
		return EXIT_TROUBLE;
	}
	return convert(name, rd, t, in);
}

/* --summary's and --category's values into o; a bad one is a usage error
 * (returned, else 0). */
static int parse_rec_opt(struct rec_opts *o, int c, const char *arg)
{
	char *end, *name, *save;
	long n;

	switch (c) {
	case OPT_SUMMARY:
		o->summary = 1;
		if (arg) {
			o->interval_s = strtod(arg, &end);
			if (end == arg || *end || !(o->interval_s >= 0.01 && o->interval_s <= 86400))
				return usage_error("bad --summary interval '%s': want seconds, from 0.01 to 86400", arg);
		}
		return 0;
	case OPT_HIST:
		o->hist = 1;
		return 0;
	case OPT_SUMMARY_JSON:
		o->json_set = 1;
		o->json_dest = arg;
		return 0;
	case OPT_SUMMARY_BY:
		if (strcmp(arg, "process") && strcmp(arg, "program"))
			return usage_error("bad --summary-by '%s': want process or program", arg);
		o->by_set = 1;
		o->by_program = !strcmp(arg, "program");
		return 0;
	case OPT_SUMMARY_KEYS:
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || end == arg || *end || n < 1 || n > 1 << 20)
			return usage_error("bad --summary-keys '%s': want a number from 1 to 1048576", arg);
		o->keys = (unsigned)n;
		return 0;
	case OPT_CATEGORY:
		free(o->cat_list);
		o->ncats = 0;   /* the last --category counts */
		o->cat_list = strdup(arg);
		if (!o->cat_list)
			abort();
		for (name = strtok_r(o->cat_list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
			if (strlen(name) > 62 || o->ncats == 64)
				return usage_error("bad --category '%s': at most 64 names of at most 62 bytes", arg);
			o->cats[o->ncats++] = name;
		}
		if (!o->ncats)
			return usage_error("bad --category '%s': want names separated by commas", arg);
		return 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct tr2_tgt *tgt = NULL;
	struct tr2_tgt_opts opts = { .event_nesting = INT_MAX };
	struct tr2_target t = { 0 }, *target = NULL;   /* NULL: --summary */
	struct tr2_dst *dst;
	struct tr2_reader *rd;
	char err[256];
	struct input in = { .cap = INPUT_BLOCK };
	const char *dest = NULL;        /* NULL: standard output */
	struct rec_opts ro = { 0 };
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
			ro.nesting_set = 1;
			break;
		case OPT_SUMMARY:
		case OPT_HIST:
		case OPT_SUMMARY_JSON:
		case OPT_SUMMARY_BY:
		case OPT_SUMMARY_KEYS:
		case OPT_CATEGORY:
			if (parse_rec_opt(&ro, c, optarg))
				return EXIT_TROUBLE;
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
		if ((want && tgt && want != tgt) || ((want || tgt) && ro.summary))
			return usage_error("choose one of --normal, --perf, --event, --chrome, --folded and --summary");
		if (want)
			tgt = want;
	}
	if ((ro.hist || ro.json_set || ro.by_set || ro.keys) && !ro.summary)
		return usage_error("--hist, --summary-json, --summary-by and --summary-keys need --summary");
	if (ro.json_set) {
		ro.json = tr2_dst_open(ro.json_dest, TR2_DST_MODE_GIT, err, sizeof(err));
		if (!ro.json) {
			fprintf(stderr, "tr2-fmt: %s\n", err);
			return EXIT_TROUBLE;
		}
	}
	if (!ro.summary) {
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
		target = &t;
	}
	rd = tr2_reader_new();
	in.buf = malloc(in.cap);
	if (!in.buf)
		abort();

	if (optind == argc)
		status = convert_any(STDIN_FILENO, "<stdin>", rd, target, &ro, &in);
	for (int i = optind; i < argc && !output_failed(status); i++) {
		const char *path = argv[i];
		int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;

		if (fd < 0) {
			/* like cat(1): report it, go on with the other files */
			fprintf(stderr, "tr2-fmt: failed to open '%s': %s\n", path, strerror(errno));
			status |= EXIT_TROUBLE;
			continue;
		}
		status |= convert_any(fd, fd == STDIN_FILENO ? "<stdin>" : path, rd, target, &ro, &in);
		if (fd != STDIN_FILENO)
			close(fd);
	}

	/* what a stateful format writes at the end (chrome's ']', folded's
	 * stacks); a destination that failed already drops it; then a
	 * directory or socket DEST's processes whose file or connection failed
	 * (reported, then counted by tr2_target_finish): the output is not
	 * whole */
	if (target && (tr2_target_finish(target) || tr2_dst_flush(target->dst) ||
		       tr2_dst_dropped(target->dst, NULL, NULL)))
		status |= EXIT_TROUBLE;
	free(in.buf);
	free(ro.cat_list);
	tr2_reader_free(rd);
	if (target)
		tr2_dst_close(target->dst);
	if (ro.json)
		tr2_dst_close(ro.json);
	/* exit status 2 outranks 1 */
	return status & EXIT_TROUBLE ? EXIT_TROUBLE : status & EXIT_MALFORMED;
}
