/* tr2_opts.h: tr2-bpf's command line, read into one struct tr2_opts by
 * tr2_opts_parse() (tr2_opts.c, which holds the usage text too).  The
 * contract is ../shared/trace2-api.md §3 and man/tr2-bpf.1. */
#ifndef TR2_OPTS_H
#define TR2_OPTS_H

#include <stdint.h>
#include <sys/types.h>

/* --summary, --hist, --summary-json, --summary-keys, --summary-by, --category. */
struct summary_opts {
	int on, hist, json_set, keys_set;
	int by_set, by_program;   /* --summary-by: given; =program (tr2_summary_set_per_program) */
	double interval_s;        /* 0: a table only at the end */
	const char *json_dest;    /* --summary-json's DEST; NULL: standard output */
	unsigned keys;
	char *cat_list;           /* --category's copy, which cats[] point into */
	char *cats[64];
	int ncats;
};

struct format_opt {
	int fmt;                  /* enum tr2_format */
	const char *dest;         /* NULL: standard output */
};

/* Everything the command line says. */
struct tr2_opts {
	pid_t *pids;              /* -p PID, in order given */
	int npids;
	char **cmd;               /* -- CMD [ARG...]: NULL-terminated, or NULL */
	const char *user;         /* -u: CMD's user, or NULL */
	int all;                  /* -a */
	char comms[64][16];       /* --comm: names, at most 15 bytes each */
	int ncomms;
	int narrow_uid;           /* --uid given */
	uint32_t uid;
	const char *cgroup;       /* --cgroup's directory, or NULL */
	char filters[256];        /* --comm, --uid and --cgroup as given, for messages; "" */
	double duration_s;        /* --duration, 0: none */
	struct format_opt formats[8];
	int nformats;             /* none given: --perf to standard output, unless --summary or --record */
	int brief, event_nesting, max_files;
	int file_mode;            /* --file-mode, else TR2_DST_MODE_PRIVATE (tr2_dst_open) */
	int no_split;             /* --no-split: regions' time is not split by scheduler state */
	unsigned ring_bytes;      /* -b, a power of 2 */
	const char *record;       /* --record's FILE, or NULL */
	uint64_t record_bytes;    /* --record-size, bytes; 0: no limit */
	int probe_nop;            /* 0 the 1-byte nop, 1 the 5-byte nop */
	int verbose;
	struct summary_opts sum;
};

/* Reads argv into *o (zeroed by the caller).  Prints the usage and exits 0
 * for --help; a bad command line is one line on stderr and exit status 2
 * (tr2_fail). */
void tr2_opts_parse(struct tr2_opts *o, int argc, char **argv);

/* Frees what tr2_opts_parse() allocated. */
void tr2_opts_free(struct tr2_opts *o);

#endif
