/* tr2_tgt.h: the Trace2 targets, one per output format, behind one interface.
 *
 * Modelled on git's struct tr2_tgt (trace2/tr2_tgt.h): each format is one
 * file (tr2_tgt_normal.c, tr2_tgt_perf.c, tr2_tgt_event.c, tr2_tgt_chrome.c)
 * that fills one table with a function per event kind; a NULL slot means the
 * format ignores that kind.  A target formats each event into one line and
 * hands it to its destination (tr2_dst.h), which writes the whole line at once.
 *
 * A view that needs more than the event at hand (chrome: which threads it has
 * named and which slices are open; folded: every region before it can write
 * one line) keeps state behind its table, as uftrace's dump ops do: state_new
 * makes it, the event functions reach it as opts->state, and finish writes
 * what remains at the end of the trace (tr2_target_finish).
 */
#ifndef TR2_TGT_H
#define TR2_TGT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tr2_event.h"

struct tr2_dst;

enum tr2_format { TR2_FMT_NORMAL, TR2_FMT_PERF, TR2_FMT_EVENT, TR2_FMT_CHROME, TR2_FMT_FOLDED };

struct tr2_tgt_opts {
	int brief;          /* the BRIEF variant (GIT_TRACE2_BRIEF / GIT_TRACE2_PERF_BRIEF / GIT_TRACE2_EVENT_BRIEF) */
	int event_nesting;  /* EVENT only: region nesting limit, git's GIT_TRACE2_EVENT_NESTING (default 2) */
	bool per_process;   /* set by tr2_target_init: the destination is a directory or a socket,
			       one file or connection per process (sid); chrome then writes one
			       JSON array per process */
	void *state;        /* set by tr2_target_init: the state of a target with state_new, else NULL */
};

/* A growable line buffer; targets append one line (with its '\n') per event. */
struct tr2_buf {
	char *p;
	size_t len, cap;
};

/* Formats one event into buf (appending); leaves buf unchanged when the format skips the event. */
typedef void (*tr2_tgt_fn)(struct tr2_buf *buf, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts);

struct tr2_target;

/* One format: its name ("normal", "perf", "event", "chrome", "folded") and
 * one function per event kind; the last three members are NULL for the
 * formats that keep no state (NORMAL, PERF, EVENT). */
struct tr2_tgt {
	const char *name;
	tr2_tgt_fn fn[TR2_EV__COUNT];
	void *(*state_new)(void);           /* the state the functions find in opts->state */
	/* At the end of the trace: writes what is still due to t->dst with
	 * tr2_dst_write, naming each line's process (sid, stream) so that a directory
	 * destination puts it into that process's file.  Returns 0, or -1 when
	 * the destination failed. */
	int (*finish)(struct tr2_target *t);
	void (*state_free)(void *state);
	/* The process of session id sid has ended without its atexit or signal
	 * event (tr2_target_end_process): writes what is still due for it to
	 * t->dst, as finish would at the end of the trace, so that it goes
	 * into that process's file or connection before it is closed; and not
	 * again at finish.  Returns 0, or -1 when the destination failed.
	 * NULL: nothing is due (the formats without state, folded). */
	int (*end_process)(struct tr2_target *t, const char *sid, uint64_t stream);
};

extern const struct tr2_tgt tr2_tgt_normal;
extern const struct tr2_tgt tr2_tgt_perf;
extern const struct tr2_tgt tr2_tgt_event;
extern const struct tr2_tgt tr2_tgt_chrome;  /* Chrome Trace Event Format, see tr2_tgt_chrome.c */
extern const struct tr2_tgt tr2_tgt_folded;  /* collapsed stacks of region self time, see tr2_tgt_folded.c */

/* The target of a format (enum tr2_format); NULL when out of range. */
const struct tr2_tgt *tr2_tgt_of(enum tr2_format fmt);

/* A format bound to a destination. */
struct tr2_target {
	const struct tr2_tgt *tgt;
	struct tr2_tgt_opts opts;
	struct tr2_dst *dst;   /* owned */
	struct tr2_buf buf;
};

/*
 * Formats ev with target t and writes the resulting line to t's destination.
 * Returns 0, or -1 when the destination failed (it reports that once itself).
 * Kinds the format skips (NULL slot, EVENT's nesting limit) write nothing and
 * return 0; t->buf is reused, so steady-state emits do not allocate.  A
 * buffered destination (tr2_dst_set_buffered) gets the line formatted
 * straight into its batch, and t->buf is not used.
 * Directory destinations (tr2_dst.h): after the first line that lands in
 * git's git-trace2-discard sentinel, an EVENT target also writes git's
 * "too_many_files" event; an atexit or signal event ends the process's file.
 */
int tr2_target_emit(struct tr2_target *t, const struct tr2_ev *ev);

/*
 * Binds format tgt, with opts (copied; per_process and state are filled in
 * here), to destination dst, which the caller opened and closes after
 * tr2_target_finish.  Makes the format's state (state_new); aborts only if
 * memory runs out.
 */
void tr2_target_init(struct tr2_target *t, const struct tr2_tgt *tgt,
		     const struct tr2_tgt_opts *opts, struct tr2_dst *dst);

/*
 * The process of session id sid and stream (tr2_ev) has ended without an atexit or signal
 * event, which tr2_target_emit takes as its end: it was killed (SIGKILL
 * leaves no signal event), or exec replaced its image (a new sid follows).
 * A stateful format writes what is still due for it (tgt->end_process), then
 * the destination ends the process's stream (tr2_dst_end_process: a
 * directory's file, a socket's connection, as the kernel closes a dead git's
 * socket).  A process that has ended already, or was never seen, changes
 * nothing.  Returns 0, or -1 when the destination failed.
 */
int tr2_target_end_process(struct tr2_target *t, const char *sid, uint64_t stream);

/*
 * Ends the trace for t: a stateful format writes what is still due (chrome:
 * the ends of slices left open and the closing ']'; folded: every stack),
 * then the state and t->buf are freed; t->dst stays open (the caller
 * flushes and closes it).  A socket destination that dropped lines says
 * how many on stderr (tr2_dst_report_dropped).  Returns 0, or -1 when the
 * destination failed.
 */
int tr2_target_finish(struct tr2_target *t);

/* Appends to a buffer; they abort() on allocation failure. */
void tr2_buf_add(struct tr2_buf *b, const void *data, size_t len);
void tr2_buf_adds(struct tr2_buf *b, const char *s);
void tr2_buf_addf(struct tr2_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tr2_buf_addch(struct tr2_buf *b, char c);
void tr2_buf_free(struct tr2_buf *b);

#endif
