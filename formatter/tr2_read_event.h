/* tr2_read_event.h: reads Trace2 EVENT-format lines back into struct tr2_ev.
 *
 * The input is what git writes to GIT_TRACE2_EVENT (seeds/000 "Event Format";
 * git 2.39's trace2/tr2_tgt_event.c is the reference for which keys each event
 * carries) or what tr2-bpf --event writes.  One reader handles one stream of
 * lines, in which the lines of several processes (a git command and the git
 * children it runs) may be interleaved: it keeps per-process and per-thread
 * state, keyed by "sid" and "thread", to fill in the values that the NORMAL
 * and PERF formats print but an EVENT line does not carry:
 *
 *   t_abs    EVENT writes t_abs only on start, exit, atexit, signal, data and
 *            data_json.  For child_start, child_exit, child_ready, exec,
 *            exec_result, thread_start, thread_exit, region_enter,
 *            region_leave and printf, which PERF prints with a t_abs, the
 *            reader derives it as  time - origin,  where origin, the
 *            process's start instant on the wall clock, is estimated from the
 *            process's earlier lines that carry both time and t_abs, as the
 *            smallest  time - t_abs  among those of the last one to two
 *            seconds (the start line gives the first estimate).  git computes
 *            t_abs once per event for all targets and the EVENT target stamps
 *            its time after the NORMAL and PERF targets have written, so each
 *            line's time is late by a small delay; the derived value exceeds
 *            the t_abs git's own PERF target prints by this line's delay minus
 *            the smallest delay seen: typically 0-30 µs (measured on git
 *            2.39), milliseconds when git was preempted while writing that
 *            line, or while writing every earlier line with a t_abs.
 *            A line that ends something carries t_rel measured by git from
 *            that very start: region_leave from its region_enter (or, exactly,
 *            from t_abs - t_rel of a data line inside that region),
 *            thread_exit from thread_start, child_exit and child_ready from
 *            child_start.  For those, start + t_rel is taken instead when it
 *            is smaller (or when the line has no time, as in BRIEF input).
 *            A derived value below 0 is clamped to 0.  When neither way is
 *            open (no time, or no earlier line of the process with time and
 *            t_abs, and no known start), has_t_abs stays false and targets
 *            leave the column blank.
 *   nesting  EVENT writes nesting (git's nr_open_regions) only on
 *            region_enter, region_leave, data and data_json; PERF indents
 *            every line by it.  The reader tracks it per (sid, thread):
 *            region_enter at n opens level n+1, region_leave at n and data at
 *            n set it to n; a new thread starts at 1; thread_exit, atexit,
 *            timer, th_timer, counter and th_counter see 1, because git
 *            unwinds the thread's open regions before emitting them.  This is
 *            exact as long as the writer's nesting limit
 *            (GIT_TRACE2_EVENT_NESTING, default 2) did not drop region lines
 *            that were open when the event happened.
 *
 * Everything else (thread name, repo, sid and so depth, t_rel, code, ...) is
 * taken from the line as is ("repo":0 sets has_repo).  A process's state is
 * dropped after its atexit or signal line (git writes nothing after either),
 * a thread's after its thread_exit line.
 */
#ifndef TR2_READ_EVENT_H
#define TR2_READ_EVENT_H

#include <stddef.h>
#include "tr2_event.h"

struct tr2_reader;

/* Creates a reader with no per-process state.  Aborts on allocation failure. */
struct tr2_reader *tr2_reader_new(void);

/* Frees the reader, its state and the storage of the last event; NULL is allowed. */
void tr2_reader_free(struct tr2_reader *r);

/*
 * Parses one EVENT line into *ev and updates the per-process state.
 *
 * line holds len bytes, without the terminating '\n', and need not be
 * NUL-terminated.  It must be one JSON object, RFC 8259 throughout (parsed
 * by simdjson, tr2_read_json.h; spaces around it are allowed), with the keys
 * git writes for its "event"; keys the reader does not know are ignored, and
 * of a repeated key the last counts.  Required are "event", "sid", "thread"
 * and every key that git 2.39 always writes for that event, except "time",
 * "file" and "line", which the BRIEF variant leaves out (then time_us is 0
 * and file NULL).  Strings may hold any bytes except NUL, including invalid
 * UTF-8, which git itself writes for non-UTF-8 arguments and paths (such a
 * line is parsed through a reversible mapping of its bytes, see
 * tr2_jline_parse()); raw control bytes (0x00-0x1f) anywhere in the line are
 * an error, since git escapes them, and so are \u escapes of lone
 * surrogates, which no UTF-8 can hold (simdjson refuses them).  A data_json
 * "value" is handed on as the JSON text the line holds (git's json-writer
 * output, so git's own bytes), a string value as JSON text again.
 *
 * Returns 0, or -1 when the line is malformed, with *ev unspecified and a
 * one-line reason (no newline, no line number) in tr2_reader_error().  A
 * malformed line leaves the state as it was.
 * *ev and every string it points to stay valid until the next call on r.
 */
int tr2_reader_parse(struct tr2_reader *r, const char *line, size_t len, struct tr2_ev *ev);

/* The reason the last tr2_reader_parse() returned -1, e.g. "child_exit: missing \"t_rel\"". */
const char *tr2_reader_error(const struct tr2_reader *r);

#endif
