/* tr2_session.h: tr2-bpf's side of the Trace2 model (formatter/tr2_model.h).
 * Takes the ring buffer's records (bpf/tr2_record.h) as they arrive, puts
 * their calls and the tracer's own records in time order, and hands them to
 * the model, which writes every target.
 *
 * Time order: a thread's calls arrive in batches, copied when the thread
 * sends one, is switched out, at a timer tick (every TR2_TICK_NS) and at
 * its end, so a call reaches tr2-bpf at most about TR2_TICK_NS after it was
 * made, and another thread's earlier calls may arrive later.  The session
 * keeps what arrived for TR2_SESSION_DELAY_NS, then writes it in the order
 * of the calls' times, so that a process's lines show its threads
 * interleaved as their calls happened.
 */
#ifndef TR2_SESSION_H
#define TR2_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include "tr2_decode.h"

struct tr2_target;
struct tr2_session;
struct tr2_summary;

/* How long a record is kept before its calls are written, ns: more than the
 * longest a call waits in its thread's buffer (TR2_TICK_NS). */
#define TR2_SESSION_DELAY_NS (TR2_TICK_NS + 15000000ull)

/*
 * A session writing to targets (not owned; 16 at most).  mono_to_real_ns:
 * CLOCK_REALTIME minus CLOCK_MONOTONIC, ns.  host_hash: "H" and 8 hex
 * digits (tr2_sid_host).  since_ns: when the trace began (CLOCK_MONOTONIC):
 * calls made before it, which a thread's first batch may still carry (a
 * tracer before this one took them), are left out.
 */
struct tr2_session *tr2_session_new(struct tr2_target **targets, int ntargets, int64_t mono_to_real_ns,
				    const char *host_hash, uint64_t since_ns);

/* --summary: every event goes to summary too (tr2_summary_event), and the
 * processes' comm and end (not owned; NULL: none). */
void tr2_session_set_summary(struct tr2_session *s, struct tr2_summary *summary);

/* --category: only region, data and data_json calls of these categories
 * (n names, copied) reach the model; the others are as if never made. */
void tr2_session_set_categories(struct tr2_session *s, char *const *names, int n);

/* Takes one record, checked by tr2_decode_rec() (hdr: its header), whose
 * `size` bytes at data are copied: its calls are written by a later
 * tr2_session_flush(). */
void tr2_session_record(struct tr2_session *s, const struct tr2_rec *hdr, const void *data, size_t size);

/* Process pid was held stopped by tr2-bpf from from_ns to to_ns
 * (CLOCK_MONOTONIC), from the stop record on (tr2_model_resumed). */
void tr2_session_resumed(struct tr2_session *s, uint32_t pid, uint64_t from_ns, uint64_t to_ns);

/* Process pid lost `count` more calls (ring buffer full, a buffer that made
 * no sense): the marker goes into its stream at ts_ns (tr2_model_lost). */
void tr2_session_lost(struct tr2_session *s, uint32_t pid, uint64_t count, uint64_t ts_ns);

/* Tracing is paused from from_ns (CLOCK_MONOTONIC), until
 * tr2_session_resume(): calls made meanwhile are left out (a process that
 * another tracer keeps enabled may make some).  A pause while paused is
 * ignored. */
void tr2_session_pause(struct tr2_session *s, uint64_t from_ns);

/* Tracing resumes at to_ns: the marker goes into every process's stream
 * there (tr2_model_paused).  Ignored when not paused. */
void tr2_session_resume(struct tr2_session *s, uint64_t to_ns);

/* Writes the calls and records that arrived up to upto_ns (CLOCK_MONOTONIC;
 * UINT64_MAX: all), in time order, then the targets' buffered lines; a
 * target whose destination fails gets no more lines. */
void tr2_session_flush(struct tr2_session *s, uint64_t upto_ns);

/* 1 while at least one target's destination takes lines; 0 once all have
 * failed (a closed pipe, a full disk): nothing more can be written. */
int tr2_session_writing(const struct tr2_session *s);

/* Events written to the targets so far. */
uint64_t tr2_session_events(const struct tr2_session *s);

/* Calls lost on tr2-bpf's side: batches whose bytes did not parse (their
 * calls from the first bad one on), timer and counter uses the model left
 * out (tr2_model_dropped). */
uint64_t tr2_session_lost_calls(const struct tr2_session *s);

/* What the session keeps now: processes and threads of the model, and
 * records waiting to be written.  Bounded by the processes and threads
 * alive and by TR2_SESSION_DELAY_NS of records, never by what has come and
 * gone. */
void tr2_session_kept(const struct tr2_session *s, unsigned long *procs, unsigned long *threads,
		      unsigned long *waiting);

void tr2_session_free(struct tr2_session *s);

#endif
