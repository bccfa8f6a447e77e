/* tr2_tracer.h: the state of one trace and its run (tr2_tracer.c): what
 * main (tr2_bpf.c) calls between loading the BPF programs and exiting, and
 * what the modes that choose which processes are traced (tr2_mode.c) call
 * back into.  The records are dispatched, losses marked and held processes
 * let go here. */
#ifndef TR2_TRACER_H
#define TR2_TRACER_H

#include <stdint.h>
#include <sys/types.h>

#include "tr2_decode.h"
#include "tr2_guard.h"
#include "tr2_opts.h"
#include "tr2_tgt.h"

struct bpf_link;
struct tr2_attach;
struct tr2_bpf;
struct tr2_cmd;
struct tr2_dst;
struct tr2_mode;
struct tr2_recording;
struct tr2_ring;
struct tr2_session;
struct tr2_summary;

/* The state of one trace. */
struct tr2_kernel;

struct tracer {
	const struct tr2_opts *opts;
	const struct tr2_mode *mode;
	struct tr2_bpf *skel;
	struct tr2_kernel *kernel;   /* what the kernel offers (tr2_kernel.h) */
	struct tr2_attach *attach;
	struct tr2_session *session; /* NULL with --record alone: nothing formatted now */
	struct tr2_recording *rec;   /* --record, or NULL */
	uint64_t recorded;           /* --record: events in the batches recorded */
	uint64_t unrecorded;         /* --record: events in batches it stopped before */
	uint64_t end_ns;             /* when the trace ended (tr2_tracer_stop) */
	/* Pauses (SIGUSR1 .. SIGUSR2): since when (0: not paused), how often, how long. */
	uint64_t paused_ns, pauses, paused_total_ns;
	struct tr2_ring *ring;       /* the BPF ring buffer's reader */
	struct tr2_target targets[8];   /* opts->formats, in order */
	struct tr2_target *target_ptrs[8];   /* &targets[i], the session's list (kept, not copied) */
	struct tr2_summary *summary; /* --summary, or NULL */
	struct tr2_dst *summary_json;   /* --summary-json's destination, or NULL */
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
	struct other_holds other_holds;   /* see tr2_held_elsewhere */
	/* For tests only (tests/e2e/harm.sh): TR2_BPF_TEST_HOLD_DELAY_MS makes
	 * tr2-bpf wait that long before it attaches for a held process, so that
	 * a test can stop or kill it while a process waits. */
	unsigned hold_delay_ms;
	uint64_t started_ns;         /* when tracing started (--duration) */
	int probed;                  /* runtimes were found (-- CMD's "no trace2 probes") */
	uint64_t passed;             /* processes the filters let through (exec, new-object records) */
	/* Processes tr2-bpf was asked to trace and could not (tr2_tracer_untraced):
	 * how many, and the last ones, so that each counts once. */
	uint64_t untraced;
	pid_t untraced_pids[64];
	int next_untraced;
	/* -- CMD */
	struct tr2_cmd *cmd;         /* forked first, held until the mode starts it */
	int cmd_reaped;              /* CMD has ended ... */
	int cmd_status;              /* ... with this status (128 + signal) */
	void *mode_state;            /* what the mode keeps (tr2_mode.c) */
};

/* Before the BPF programs are loaded: catches SIGUSR1 and SIGUSR2 (pause,
 * resume: tr2_tracer_tick), opens each format's destination and target
 * (tr->targets).  A bad DEST fails (tr2_fail). */
void tr2_tracer_open_targets(struct tracer *tr);

/* After the load: fills the filter maps (--comm, --cgroup, --category),
 * starts the guard (tr2_guard.h), makes the session, the summary, the attach
 * bookkeeping (for tr->kernel, as tr2_attach_prepare() was given) and the ring
 * buffer's reader; installs the
 * handlers of SIGINT and SIGTERM (which tr2_tracer_exiting() reports) and
 * ignores SIGPIPE.  Fails with tr2_fail. */
void tr2_tracer_init(struct tracer *tr);

/* The ring buffer's callback: one record, decoded and dispatched. */
int tr2_tracer_record(void *ctx, void *data, size_t size);

/* After each poll of the ring buffer: marks losses, writes out the lines,
 * the --summary table when due.  Returns 1 to poll again, 0 when the trace
 * is over (a signal, every destination failed, --duration, nothing left to
 * trace). */
int tr2_tracer_tick(struct tracer *tr);

/* 1 while tracing is paused (SIGUSR1): the modes raise no tr2:enable then;
 * the mode's resume raises them again. */
int tr2_tracer_paused(const struct tracer *tr);

/* Ends the trace: detaches, drains the ring buffer, writes the views'
 * ends, waits for CMD. */
void tr2_tracer_stop(struct tracer *tr);

/* Exit statuses besides CMD's (man/tr2-bpf.1, EXIT STATUS). */
#define TR2_EXIT_INCOMPLETE 1        /* -p, -a: the trace is not whole */
#define TR2_EXIT_CMD_INCOMPLETE 125  /* -- CMD: CMD's status was 0, the trace is not whole */

/* Writes what comes after the trace on stderr (and the final --summary
 * table), the summary line last:
 *   tr2-bpf: N events, M lost[, L lines dropped][, K processes not traced]
 * N events handled, M lost before (ring buffer full, record not decodable):
 * N + M is what the traced processes produced; L lines that destinations
 * could not write; K processes tr2-bpf could not trace.  Returns the exit
 * status: CMD's with -- CMD, else 0; when the trace is not whole (L or K,
 * or poll_failed: the ring buffer could not be read) and that would be 0,
 * TR2_EXIT_INCOMPLETE, TR2_EXIT_CMD_INCOMPLETE with -- CMD. */
int tr2_tracer_report(struct tracer *tr, int poll_failed);

/* Process pid was to be traced and cannot be (an attach failed): says why
 * in one line ("tr2-bpf: <why>"), once per process, and counts it in the
 * summary line. */
void tr2_tracer_untraced(struct tracer *tr, pid_t pid, const char *why);

/* Frees everything (the mode's state, CMD's, BPF's, the destinations). */
void tr2_tracer_free(struct tracer *tr);

/* Reads what has arrived in the ring buffer and serves it (a mode that
 * takes long to start calls it between processes, so that no process
 * waits for tr2-bpf meanwhile). */
void tr2_tracer_serve(struct tracer *tr);

/* Adds pid to tr->procs (once). */
void tr2_tracer_add_proc(struct tracer *tr, pid_t pid);

/* The state letter of thread tid of process pid (proc(5), its stat's
 * third field: 'R' running or runnable, 'S', 'D', 'T' stopped, 't'
 * stopped by a debugger...; the main thread's, tid pid, is the
 * process's), or 0 when it cannot be read. */
char tr2_state_letter(pid_t pid, pid_t tid);

/* Whether the process has exited (a zombie counts). */
int tr2_gone(pid_t pid);

/* Writes "tr2-bpf: <message>" on stderr and exits with status 2. */
void tr2_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* CLOCK_MONOTONIC, ns. */
uint64_t tr2_mono_ns(void);

#endif
