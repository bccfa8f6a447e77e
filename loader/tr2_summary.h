/* tr2_summary.h: tr2-bpf --summary.  Aggregates the Trace2 events of the
 * traced processes (struct tr2_ev, as the session or the Trace2 model emits
 * them) as they come: per process and (category, label), region durations;
 * per process and (category, key), integer data values.  Prints them as a
 * table per traced process, or per program (the processes of one name added
 * up: tr2_summary_set_per_program), rows sorted by total time, optional log2
 * histograms in the layout of bcc's libbpf-tools (trace_helpers.c,
 * print_log2_hist), and the same numbers as JSON.
 *
 * Every table covers the whole trace so far.  Durations are printed as
 * Trace2's PERF columns print them: seconds with 6 decimals, from
 * nanoseconds truncated to microseconds.  p50 and p99 are approximate: see
 * tr2_hist_percentile().
 */
#ifndef TR2_SUMMARY_H
#define TR2_SUMMARY_H

#include <stdint.h>
#include <stddef.h>
#include "tr2_event.h"
#include "tr2_tgt.h"

struct tr2_dst;
struct tr2_summary;

#define TR2_HIST_SLOTS 64   /* log2 histogram slots: slot i counts [2^i, 2^(i+1)) ns, slot 0 [0, 2) */

/* Regions nested deeper than this (an enter whose nesting, before the push,
 * is above it, and the leave that closes it) are not aggregated, and
 * counted: the depth the eBPF side aggregated to before, which the tables'
 * "not aggregated" line names. */
#define TR2_SUMMARY_NESTING_MAX 32

/* Keys kept by default (tr2_summary_set_keys). */
#define TR2_SUMMARY_KEYS 8192

/* Regions' time split by scheduler state (tr2_event.h, has_split): how
 * many, their time (ns) and its parts per enum tr2_state (ns). */
struct tr2_split {
	uint64_t count;
	int64_t wall;
	int64_t ns[TR2_STATE__COUNT];
};

/* The aggregate of one (process, kind, category, label or key). */
struct tr2_agg {
	uint64_t count;      /* regions: closed (enter and leave seen); data: values */
	int64_t sum;         /* regions: total duration, ns; data: sum of the values (wraps) */
	int64_t min, max;    /* regions: ns; data: values; valid when count > 0 */
	int64_t last;        /* data: the latest value */
	uint64_t open;       /* regions entered and not left yet */
	uint64_t before;     /* regions left that were entered before the attach (no duration) */
	uint64_t hist[TR2_HIST_SLOTS];   /* regions: durations per log2 slot */
	struct tr2_split split;          /* regions left with a split, since their enter */
	struct tr2_split split_before;   /* `before` regions with a split, since the counting began */
};

/*
 * The value at percentile pct (0 < pct <= 100) of `count` durations (ns)
 * that fell into the log2 slots hist[TR2_HIST_SLOTS] (slot 0: [0, 2), slot
 * i: [2^i, 2^(i+1))), whose exact min and max are known.  The rank is the
 * nearest rank, ceil(pct / 100 * count) (at least 1); within the slot that
 * holds it the value is interpolated linearly, as if the slot's durations
 * were spread evenly over it, then kept within [min, max].  So the result
 * is within a factor of 2 of the true percentile, and exact when the slot
 * holds one distinct value at min or max.  0 when count is 0.
 */
int64_t tr2_hist_percentile(const uint64_t *hist, uint64_t count, int64_t min, int64_t max, double pct);

/*
 * Appends hist[0..nslots) in bcc's print_log2_hist layout to b: a header
 * "<spaces><unit> : count    distribution", then a line per slot up to the
 * last non-empty one, "<low> -> <high> : <count> |<stars>|", 40 stars for
 * the largest count (20 when more than 33 slots are shown).  Nothing when
 * every slot is empty.
 */
void tr2_hist_print(struct tr2_buf *b, const uint64_t *hist, int nslots, const char *unit);

/* Adds the aggregate `from` into `into` (the same strings in another
 * process): counts, sums, open, before, histograms and splits add, min
 * and max combine, `last` is taken from `from` when it has values. */
void tr2_agg_merge(struct tr2_agg *into, const struct tr2_agg *from);

/*
 * An empty summary.  hist: print histograms.  json: where JSON documents
 * go (NULL: none).  table: whether the text table goes to standard output.
 * mono_to_real_ns: CLOCK_REALTIME minus CLOCK_MONOTONIC, to stamp tables;
 * start_ns: CLOCK_MONOTONIC start of the trace.  Aborts only if memory
 * runs out.
 */
struct tr2_summary *tr2_summary_new(int hist, int table, struct tr2_dst *json,
				    int64_t mono_to_real_ns, uint64_t start_ns);

/* Sets the interval between tables, in ns (0: only at the end). */
void tr2_summary_set_interval(struct tr2_summary *s, uint64_t interval_ns);

/*
 * Room for n keys (default TR2_SUMMARY_KEYS): (process, kind, category,
 * label or key) of the processes alive.  An event whose key is new when n
 * are kept is not aggregated and counted (tr2_summary_lost, "key space
 * full").  The keys of a process that has ended (tr2_summary_proc_gone, or
 * its exec: an event of a new sid) no longer count: per process its rows
 * are kept for the tables, per program they are added into the program's.
 */
void tr2_summary_set_keys(struct tr2_summary *s, size_t n);

/*
 * Per program instead of per process (on: 1; the default is 0): a table per
 * program name -- the name a process's table shows (cmd_name, else argv[0]
 * of start, else comm; "?" while unnamed) -- that adds up the values of
 * every process of that name (counts, sums and histograms add, min and max
 * combine; a data row's `last` is that of the process that ended last, or
 * of the live one with the highest pid, the latest image of a pid last),
 * headed
 *   program <name>: <N> process[es]
 * where N counts the processes with values (an exec'd one once per image);
 * in JSON {"name":..,"processes":N,"regions":..,"data":..} objects in
 * "programs" instead of "processes".  A process that ends
 * (tr2_summary_proc_gone, or its exec) is added into its program then,
 * under the name it has then, and forgotten, so that what is kept is
 * bounded by the processes alive and the programs seen.  Set it before the
 * first event.
 */
void tr2_summary_set_per_program(struct tr2_summary *s, int on);

/*
 * One event of process pid, as the targets get it; ev->sid names the
 * process: an event of another sid than the pid's last one starts a new
 * process (exec), ending the last one.  Takes:
 *  - region_enter: one more open region of (category, label);
 *  - region_leave with has_t_rel: a closed region of its (category, label),
 *    t_rel_ns long (one less open, when one is); without: a region entered
 *    before the attach (`before`, no duration); with has_split, its split
 *    too (split_since_trace: into split_before);
 *  - data with has_intval: intval, a value of (category, key);
 *  - cmd_name: the process's name (ev->name); start: argv[0], a name when
 *    there is no cmd_name.
 * Regions whose nesting is above TR2_SUMMARY_NESTING_MAX and events whose
 * key finds no room are not aggregated (counted, tr2_summary_lost).  NULL
 * strings are "".  Every other event is ignored.  Aborts only if memory
 * runs out.
 */
void tr2_summary_event(struct tr2_summary *s, uint32_t pid, const struct tr2_ev *ev);

/* Process pid's comm, as the kernel names it (at most 15 bytes are kept):
 * its name while it has neither cmd_name nor argv[0], and that of the
 * next process of pid (after an exec) until it has one. */
void tr2_summary_comm(struct tr2_summary *s, uint32_t pid, const char *comm);

/* Process pid has ended (its last thread exited): see tr2_summary_set_keys
 * and tr2_summary_set_per_program.  Nothing when pid is unknown. */
void tr2_summary_proc_gone(struct tr2_summary *s, uint32_t pid);

/* Called every poll-loop iteration with CLOCK_MONOTONIC now: prints a table
 * when an interval has passed.  A JSON destination that fails (reported once
 * on stderr) gets no more documents. */
void tr2_summary_poll(struct tr2_summary *s, uint64_t now_ns);

/* Writes one table (text to stdout, JSON to its destination) stamped
 * now_ns; final: the last one. */
void tr2_summary_print(struct tr2_summary *s, uint64_t now_ns, int final);

/* The same table into b (text) and js (JSON, one line with its newline);
 * either may be NULL.  elapsed_s: how long the trace has run; stamp: the
 * time of day to show ("18:05:42") and in JSON. */
void tr2_summary_format(struct tr2_summary *s, struct tr2_buf *b, struct tr2_buf *js,
			const char *stamp, double elapsed_s, int final);

/* Events not aggregated: key space full, or nested deeper than
 * TR2_SUMMARY_NESTING_MAX. */
uint64_t tr2_summary_lost(const struct tr2_summary *s);

/* What the summary keeps now: processes (alive, and per process the ended
 * ones with values), and keys (theirs and, per program, the programs'). */
void tr2_summary_kept(const struct tr2_summary *s, unsigned long *procs, unsigned long *keys);

void tr2_summary_free(struct tr2_summary *s);

#endif
