/* tr2_tracer.h: tr2-bpf's options and the state of one trace, shared by
 * its main loop (tr2_bpf.c) and the modes that choose which processes are
 * traced (tr2_mode.c). */
#ifndef TR2_TRACER_H
#define TR2_TRACER_H

#include <stdint.h>
#include <sys/types.h>

#include "tr2_decode.h"

struct bpf_link;
struct tr2_attach;
struct tr2_bpf;
struct tr2_cmd;
struct tr2_dst;
struct tr2_mode;
struct tr2_ring;
struct tr2_session;

/* --summary, --hist, --summary-json, --summary-keys, --summary-by, --category. */
struct summary_opts {
	int on, hist, json_set, keys_set;
	int by_set, by_program;   /* --summary-by: given; =program (tr2_summary_set_per_program) */
	double interval_s;        /* 0: a table only at the end */
	const char *json_dest;
	struct tr2_dst *json;
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
	double duration_s;        /* --duration, 0: none */
	struct format_opt formats[8];
	int nformats;
	int brief, event_nesting, max_files;
	unsigned ring_bytes;
	int probe_nop;            /* -1 auto, 0 the 1-byte nop, 1 the 5-byte nop */
	int verbose;
	struct summary_opts sum;
};

/* The state of one trace. */
struct tracer {
	const struct tr2_opts *opts;
	const struct tr2_mode *mode;
	struct tr2_bpf *skel;
	struct tr2_attach *attach;
	struct tr2_session *session;
	uint64_t decode_errors;      /* records that did not parse */
	struct bpf_link *ticks[1024];/* the timer ticks' perf events, one per CPU */
	int nticks;
	pid_t *procs;                /* live traced processes (-- CMD: the whole tree) */
	int nprocs, cap;
	struct {
		uint32_t pid;
		uint64_t reported;   /* lost events already marked in its stream */
	} *losses;
	int nlosses, cap_losses;
	uint64_t lost_marked;        /* the BPF-side lost total at the last mark_losses() */
	/* Processes held stopped to attach (-v): how often, how long they
	 * waited for tr2-bpf to read the stop record, how long attaching took. */
	uint64_t stops, stop_wait_ns, stop_attach_ns;
	/* -- CMD */
	struct tr2_cmd *cmd;         /* forked first, held until the mode starts it */
	int cmd_reaped;              /* CMD has ended ... */
	int cmd_status;              /* ... with this status (128 + signal) */
	void *mode_state;            /* what the mode keeps (tr2_mode.c) */
	struct tr2_ring *ring;       /* the BPF ring buffer's reader */
};

/* Reads what has arrived in the ring buffer and serves it (a mode that
 * takes long to start calls it between processes, so that no process
 * waits for tr2-bpf meanwhile). */
void tr2_tracer_serve(struct tracer *tr);

/* Adds pid to tr->procs (once). */
void tr2_tracer_add_proc(struct tracer *tr, pid_t pid);

/* Whether the process has exited (a zombie counts). */
int tr2_gone(pid_t pid);

/* Writes "tr2-bpf: <message>" on stderr and exits with status 2. */
void tr2_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* CLOCK_MONOTONIC, ns. */
uint64_t tr2_mono_ns(void);

#endif
