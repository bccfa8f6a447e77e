/* tr2_session.h: the tracer's view of the traced processes.  Turns decoded
 * records into Trace2 events with the values git's own Trace2 would have
 * computed in-process: sid and depth, thread names, region nesting, t_abs,
 * t_rel, cmd_name hierarchy, timer and counter totals; then hands each event
 * to every target.
 *
 * Region nesting and region start times come with each record from the
 * eBPF side (bpf/tr2_record.h), which sees every probe hit, so a record
 * dropped on a full ring buffer does not skew the records after it.
 *
 * What a tracer attached mid-run cannot know, and how it is written:
 *  - regions entered before the attach: events inside them get the nesting
 *    of the regions seen so far; the region_leave that closes such a region
 *    is written at the outermost level with no t_rel (PERF leaves the column
 *    blank, EVENT omits "t_rel"), and so are data events directly inside it;
 *  - a child started before the attach: child_exit/child_ready without t_rel;
 *  - timer intervals started before the attach are not counted.
 */
#ifndef TR2_SESSION_H
#define TR2_SESSION_H

#include <stdint.h>
#include "tr2_decode.h"

struct tr2_target;
struct tr2_session;

/*
 * Creates the state.  targets: the formats to write (not owned).
 * mono_to_real_ns: CLOCK_REALTIME minus CLOCK_MONOTONIC, ns, to turn the
 * kernel's timestamps into wall-clock time.  host_hash: "H" followed by the
 * first 8 hex digits of SHA-1 of the hostname (git's tr2_sid.c).
 */
struct tr2_session *tr2_session_new(struct tr2_target **targets, int ntargets,
				    int64_t mono_to_real_ns, const char *host_hash);

/* Processes one decoded record (tracer records included).  A process that
 * is gone (TR2_REC_PROC_GONE) or whose image exec replaced (TR2_REC_EXECVE)
 * without its atexit or signal event has its stream ended in every target
 * then (tr2_target_end_process: its file or connection closes). */
void tr2_session_record(struct tr2_session *s, const struct tr2_decoded *d);

/*
 * Process pid was held stopped by the tracer from from_ns to to_ns
 * (CLOCK_MONOTONIC) while it attached to new objects.  Before the process's
 * first event, t_abs starts after the stop, so that it measures the
 * program and not the tracer (git's t_abs starts in main()).
 */
void tr2_session_resumed(struct tr2_session *s, uint32_t pid, uint64_t from_ns, uint64_t to_ns);

/*
 * Process pid lost `count` more events (ring buffer full): writes the marker
 * event into its stream, on its main thread, at time now_ns
 * (CLOCK_MONOTONIC).  The marker is a Trace2 "data" event that any Trace2
 * tool parses: no file, category "tr2", key "lost_events", value the number
 * of events lost since the previous marker, e.g. in PERF
 *   ... | data | | 0.021000 | 0.021000 | tr2 | lost_events:1234
 */
void tr2_session_lost(struct tr2_session *s, uint32_t pid, uint64_t count, uint64_t now_ns);

/* Writes out the targets' buffered lines (tr2_dst_set_buffered); a target
 * whose destination fails gets no more lines. */
void tr2_session_flush(struct tr2_session *s);

/* 1 while at least one target's destination takes lines; 0 once all have
 * failed (a closed pipe, a full disk): nothing more can be written. */
int tr2_session_writing(const struct tr2_session *s);

/* What the session keeps now: processes (gone ones whose sid a kept child
 * still needs included) and threads.  Bounded by the processes and threads
 * alive, never by those that have come and gone. */
void tr2_session_kept(const struct tr2_session *s, unsigned long *procs, unsigned long *threads);

struct tr2_summary;

/* --summary: every event also goes to summary (tr2_summary_event), with the
 * comm of each process's main thread (tr2_summary_comm) and the end of each
 * process (tr2_summary_proc_gone); NULL: none (the default).  With no
 * targets, the events go there alone. */
void tr2_session_set_summary(struct tr2_session *s, struct tr2_summary *summary);

/* Events written to the targets so far. */
uint64_t tr2_session_events(const struct tr2_session *s);

void tr2_session_free(struct tr2_session *s);

#endif
