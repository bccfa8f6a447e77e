/* tr2_summary.h: tr2-bpf --summary.  Reads the aggregates that the eBPF
 * side keeps (bpf/tr2_record.h, maps "aggs" and "agg_lost") and prints them:
 * a table per traced process, or per program (the processes of one name
 * added up: tr2_summary_set_per_program), rows sorted by total time,
 * optional log2 histograms in the layout of bcc's libbpf-tools
 * (trace_helpers.c, print_log2_hist), and the same numbers as JSON.
 *
 * Every table covers the whole trace so far (the eBPF sums are never
 * cleared).  Durations are printed as Trace2's PERF columns print them:
 * seconds with 6 decimals, from nanoseconds truncated to microseconds.
 * p50 and p99 are approximate: see tr2_hist_percentile().
 */
#ifndef TR2_SUMMARY_H
#define TR2_SUMMARY_H

#include <stdint.h>
#include <stdio.h>
#include "tr2_decode.h"

/*
 * Summary mode (tr2-bpf --summary): region durations and integer data
 * values are aggregated on the eBPF side, per process and per (category,
 * label or key), in the hash map "aggs"; with no event stream asked for,
 * region_enter, region_leave and integer `data` send no record at all.
 *
 * A key names its strings cheaply: a string that is a literal at the call
 * site (docs/probes.md, `literals`) by its address, which cannot change in
 * that program (exec_id tells programs in one pid apart); a string built at
 * run time by a 64-bit hash of its first TR2_AGG_CAT_MAX - 1 or
 * TR2_AGG_LABEL_MAX - 1 bytes (read at every hit).  The same strings at
 * different addresses make different keys: tr2-bpf merges those rows by the
 * names kept in the value.  The key space is bounded by the map's size
 * (tr2-bpf sets it): an event whose key cannot be added to a full map is not
 * aggregated and is counted in "agg_lost" (TR2_AGG_LOST_FULL), as is a region
 * nested deeper than TR2_REGION_MAX (TR2_AGG_LOST_DEEP).
 */
#define TR2_REGION_MAX 32
#define TR2_AGG_CAT_MAX   64    /* bytes of a category kept, NUL included */
#define TR2_AGG_LABEL_MAX 128   /* bytes of a label or key kept, NUL included */
#define TR2_AGG_SLOTS     64    /* log2 histogram slots: slot i counts [2^i, 2^(i+1)) ns, slot 0 [0, 2) */

#define TR2_AGGK_REGION    0x1  /* key flags: a region, or */
#define TR2_AGGK_DATA      0x2  /* an integer data value */
#define TR2_AGGK_CAT_LIT   0x10 /* cat is the address of a literal, else a hash of its bytes */
#define TR2_AGGK_LABEL_LIT 0x20 /* label likewise */

struct tr2_agg_key {
	__u32 pid;        /* tgid */
	__u32 flags;      /* TR2_AGGK_* */
	__u64 exec_id;    /* the task's self_exec_id: changes at exec */
	__u64 cat;        /* category: address (with its object's key) or hash (flags) */
	__u64 label;      /* label (regions) or key (data): address (idem) or hash */
};

struct tr2_agg_val {
	__u64 count;      /* regions: closed (enter and leave seen); data: values */
	__s64 sum;        /* regions: total duration, ns; data: sum of the values (wraps) */
	__s64 min, max;   /* regions: ns; data: values; valid when count > 0 */
	__s64 last;       /* data: the latest value */
	__u64 open;       /* regions entered here and not left yet */
	__u64 before;     /* leaves of regions entered before the attach (no duration) */
	__u64 hist[TR2_AGG_SLOTS];   /* regions: durations per log2 slot */
	char cat[TR2_AGG_CAT_MAX];     /* NUL-terminated, cut at TR2_AGG_CAT_MAX - 1 bytes */
	char label[TR2_AGG_LABEL_MAX]; /* likewise */
};

/* Indexes of the per-CPU array "agg_lost": events not aggregated. */
enum { TR2_AGG_LOST_FULL, TR2_AGG_LOST_DEEP, TR2_AGG_LOST__COUNT };

#include "tr2_tgt.h"

struct tr2_dst;
struct tr2_summary;

/*
 * The value at percentile pct (0 < pct <= 100) of `count` durations (ns)
 * that fell into the log2 slots hist[TR2_AGG_SLOTS] (slot 0: [0, 2), slot
 * i: [2^i, 2^(i+1))), whose exact min and max are known.  The rank is the
 * nearest rank, ceil(pct / 100 * count) (at least 1); within the slot that
 * holds it the value is interpolated linearly, as if the slot's durations
 * were spread evenly over it, then kept within [min, max].  So the result
 * is within a factor of 2 of the true percentile, and exact when the slot
 * holds one distinct value at min or max.  0 when count is 0.
 */
int64_t tr2_hist_percentile(const __u64 *hist, uint64_t count, int64_t min, int64_t max, double pct);

/*
 * Appends hist[0..nslots) in bcc's print_log2_hist layout to b: a header
 * "<spaces><unit> : count    distribution", then a line per slot up to the
 * last non-empty one, "<low> -> <high> : <count> |<stars>|", 40 stars for
 * the largest count (20 when more than 33 slots are shown).  Nothing when
 * every slot is empty.
 */
void tr2_hist_print(struct tr2_buf *b, const __u64 *hist, int nslots, const char *unit);

/* Adds the eBPF-side value `from` of one key to `into` (another key whose
 * strings are the same): counts and sums add, min and max combine, `last`
 * is taken from `from` when it has values. */
void tr2_agg_merge(struct tr2_agg_val *into, const struct tr2_agg_val *from);

/*
 * An empty summary.  aggs_fd, lost_fd: the maps "aggs" and "agg_lost"
 * (-1: none, as in the unit tests, which add entries with
 * tr2_summary_put).  hist: print histograms.  json: where JSON documents go
 * (NULL: none).  table: whether the text table goes to standard output.
 * mono_to_real_ns: CLOCK_REALTIME minus CLOCK_MONOTONIC, to stamp tables;
 * start_ns: CLOCK_MONOTONIC start of the trace.
 */
struct tr2_summary *tr2_summary_new(int aggs_fd, int lost_fd, int hist, int table, struct tr2_dst *json,
				    int64_t mono_to_real_ns, uint64_t start_ns);

/* Sets the interval between tables, in ns (0: only at the end). */
void tr2_summary_set_interval(struct tr2_summary *s, uint64_t interval_ns);

/*
 * Per program instead of per process (on: 1; the default is 0): a table per
 * program name -- the name a process's table shows (cmd_name, else argv[0]
 * of start, else comm; "?" while unnamed) -- that adds up the values of
 * every process of that name (counts, sums and histograms add, min and max
 * combine; a data row's `last` is that of the process that ended last, or
 * of the live one with the highest pid), headed
 *   program <name>: <N> process[es]
 * where N counts the processes with values, (pid, exec_id) apart; in JSON
 * {"name":..,"processes":N,"regions":..,"data":..} objects in "programs"
 * instead of "processes".  A process that has ended (TR2_REC_PROC_GONE, seen
 * by tr2_summary_record) is added into its program, under the name it had
 * then, at the next table, and its entries and name are forgotten, so that
 * what is kept is bounded by the processes alive and the programs seen.
 * A process that exec'd counts once per program image, all under its last
 * name (names are known per pid).  Set it before the first record.
 */
void tr2_summary_set_per_program(struct tr2_summary *s, int on);

/* Learns process names from decoded records: cmd_name, else argv[0] of
 * start, else the comm of the thread info; per program, TR2_REC_PROC_GONE
 * also (see tr2_summary_set_per_program). */
void tr2_summary_record(struct tr2_summary *s, const void *d);

/* Names process pid (as tr2_summary_record does from a cmd_name record). */
void tr2_summary_set_name(struct tr2_summary *s, uint32_t pid, const char *name);

/* Stores the eBPF value v of key k (replacing the one read before). */
void tr2_summary_put(struct tr2_summary *s, const struct tr2_agg_key *k, const struct tr2_agg_val *v);

/* Called every poll-loop iteration with CLOCK_MONOTONIC now: prints a table
 * when an interval has passed.  A JSON destination that fails (reported once
 * on stderr) gets no more documents. */
void tr2_summary_poll(struct tr2_summary *s, uint64_t now_ns);

/*
 * Reads the maps, then writes one table (text to stdout, JSON to its
 * destination) stamped now_ns; final: the last one.  Entries of processes
 * that have exited are deleted from the map once read, so that the key
 * space is not used up by the dead; their numbers stay here.
 */
void tr2_summary_print(struct tr2_summary *s, uint64_t now_ns, int final);

/* The same table into b (text) and js (JSON, one line with its newline),
 * from what was put or read; either may be NULL.  elapsed_s: how long the
 * trace has run; stamp: the time of day to show ("18:05:42") and in JSON.
 * Per program, first adds the processes that have ended into their
 * programs (see tr2_summary_set_per_program). */
void tr2_summary_format(struct tr2_summary *s, struct tr2_buf *b, struct tr2_buf *js,
			const char *stamp, double elapsed_s, int final);

/* Events taken into the aggregates: region_enter and region_leave (two per
 * closed region, one per open one), integer data values. */
uint64_t tr2_summary_events(const struct tr2_summary *s);

/* Events the eBPF side could not aggregate: key space full, or nested
 * deeper than TR2_REGION_MAX (map "agg_lost"). */
uint64_t tr2_summary_lost(const struct tr2_summary *s);

void tr2_summary_free(struct tr2_summary *s);

#endif
