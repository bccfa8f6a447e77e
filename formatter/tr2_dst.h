/* tr2_dst.h: where a target's lines go, separate from what they look like
 * (git's trace2/tr2_dst.c).  Values are those of seeds/000 "Enabling a Target":
 *   NULL          standard output
 *   "2".."9"      an open file descriptor
 *   "/abs/path"   a file, opened O_APPEND; each line is one write(2), so
 *                 concurrent writers never interleave inside a line
 *   "/abs/dir/"   an existing directory: one file per traced process, named
 *                 after the last component of its sid (".1", ".2" on collision;
 *                 a name made from it where it cannot name a file),
 *                 at most max_files files, else git's "git-trace2-discard" sentinel
 *   "af_unix:[stream:|dgram:]/abs/path"  a Unix-domain socket: one connection
 *                 per traced process, as each git process opens its own, at
 *                 most TR2_DST_MAX_CONNECTIONS at once
 */
#ifndef TR2_DST_H
#define TR2_DST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tr2_dst;

/*
 * Socket destinations: connections open at once, at most (one per process
 * whose last event has not come).  Half the usual soft RLIMIT_NOFILE (1024),
 * so that tr2-bpf keeps descriptors for its BPF objects and files.  A
 * process that finds this many open is refused whole: its lines are dropped
 * and counted (tr2_dst_dropped), since a connection of the lines after some
 * other process's end would carry no "version" or "start" and a collector
 * (trace2receiver) drops such a connection.
 */
#define TR2_DST_MAX_CONNECTIONS 512

/* The modes of the files a destination creates (tr2_dst_open's file_mode):
 * git's, 0666 less the umask (tr2-fmt, the in-process targets); or
 * private (tr2-bpf, which reads every user's processes): readable by their
 * owner only, 0600, or 0640 and the group of the directory they are made
 * in when that directory's group is not the creator's (someone set one). */
#define TR2_DST_MODE_GIT     0666
#define TR2_DST_MODE_PRIVATE (-1)

/*
 * Opens a destination.  On error returns NULL and writes a one-line reason
 * ("cannot open '/x/y': Permission denied") into err.  file_mode: the mode
 * of the files it creates (a path, a directory's files), less the umask:
 * TR2_DST_MODE_GIT, TR2_DST_MODE_PRIVATE or a mode (0 to 0777); an
 * existing file keeps its own.
 *
 * Accepted values, and what each does (git's trace2/tr2_dst.c unless said):
 *   NULL            standard output (fd 1).
 *   "2".."9"        that file descriptor, which must be open; never closed.
 *   "/path"         a file, created if needed (file_mode) and opened
 *                   O_APPEND; it is opened here, so a bad path is reported
 *                   now rather than at the first event.
 *   "/dir" or "/dir/"  an existing directory (it must be writable and
 *                   searchable): the first line of each process (each
 *                   distinct sid and stream, tr2_dst_write) creates
 *                   "<dir>/<last sid component>" with O_EXCL, or ".1" .. ".9"
 *                   after it when that name is taken (git's 10 attempts).
 *                   A last component that cannot name a file (empty, longer
 *                   than 200 bytes, starting with '.', holding a byte that
 *                   is not printable ASCII, or git's sentinel name) is
 *                   replaced by "sid-" and 16 hex digits of a hash of the
 *                   whole sid.  See tr2_dst_set_max_files.
 *   "af_unix:/abs/path", "af_unix:stream:/abs/path", "af_unix:dgram:/abs/path"
 *                   a Unix-domain socket.  A connection is made here, so that
 *                   a bad path, no listener or the wrong type is an error
 *                   now; without a type a stream connection is tried first
 *                   and, when the socket is of the other type (EPROTOTYPE), a
 *                   datagram one.  Then, as each git process opens its own,
 *                   every process (each distinct sid) gets its own connection
 *                   at its first line, closed at its end
 *                   (tr2_dst_end_process) or at tr2_dst_close: a Trace2
 *                   collector such as trace2receiver takes a connection as
 *                   one process.  A stream destination hands the connection
 *                   made here to the first process (unless the peer has hung
 *                   up since), so the listener sees no empty connection.  On
 *                   a dgram socket each line is one datagram, from a socket
 *                   per process, as git sends them.  See tr2_dst_write for
 *                   failures, TR2_DST_MAX_CONNECTIONS for the bound.
 * Anything else -- "", "0", "1", "true", "false" (git's disabled/stderr
 * values, which mean nothing here), other digits, relative paths -- is an
 * error.  Opened descriptors are close-on-exec.
 */
struct tr2_dst *tr2_dst_open(const char *value, int file_mode, char *err, size_t errlen);

/*
 * Opens the file at path (absolute or relative) for writing as a path DEST
 * is opened, created with file_mode as tr2_dst_open's (and the directory's
 * group where TR2_DST_MODE_PRIVATE gives it one; an existing file keeps its
 * mode and group), with extra open flags (O_TRUNC).  For a file tr2-bpf
 * writes otherwise than through a destination (--record's).  A descriptor
 * (close-on-exec, O_APPEND), or -1 with errno set.
 */
int tr2_dst_create_file(const char *path, int file_mode, int flags);

/*
 * Writes one whole line (ending in '\n') for the process with session id sid
 * and stream number `stream` (tr2_ev's: per-process destinations keep a file
 * or connection for each distinct pair, so that processes that claim one
 * sid get one each; 0 where the sid alone tells them apart).
 * Returns 0, or -1 on failure; the first failure is reported on stderr once
 * ("<program>: cannot write to '<value>': <strerror>", the program being
 * tr2-bpf or tr2-fmt), later ones silently count.
 * A file or fd destination fails as a whole: once a write has failed, that
 * line (or batch, when buffered) and every later one are dropped, counted
 * (tr2_dst_dropped), and -1 is returned, or 0 with tr2_dst_set_counting.
 *
 * A file, directory or fd destination gets one write(2) per line (continued
 * only after a short write); sockets use send(MSG_NOSIGNAL), so a closed peer
 * is a failure, not a SIGPIPE.  Writing to a pipe whose reader has gone does
 * raise SIGPIPE, as for any Unix filter: callers that mind ignore SIGPIPE.
 * A line of a process that a directory destination discards (see
 * tr2_dst_set_max_files) is dropped and counts as written (returns 0).
 * A directory destination fails per process: when a process's file cannot
 * be opened or written, its lines are dropped and counted (tr2_dst_dropped)
 * and -1 is returned for them; other processes' files go on.
 * A socket destination fails per process: when a process's connection cannot
 * be made (no listener, TR2_DST_MAX_CONNECTIONS open) or fails (the peer went
 * away), that process's lines are dropped and counted (tr2_dst_dropped) and
 * 0 is returned; the first failure is reported as above; other processes'
 * connections go on, and a process that comes later connects afresh.
 * sid may be NULL (directory destinations then use the name "no-sid").
 * Not thread-safe: one thread writes to a destination at a time.
 */
int tr2_dst_write(struct tr2_dst *d, const char *sid, uint64_t stream, const char *line, size_t len);

/*
 * Quiet: failures are not reported on stderr, only returned (-1).  For
 * libtr2's in-process targets, which write nothing of their own on the
 * program's stderr, as git's targets do (but with GIT_TRACE2_DST_DEBUG).
 */
void tr2_dst_set_quiet(struct tr2_dst *d, bool quiet);

/*
 * Directory destinations: caps the number of directory entries, git's
 * trace2.maxFiles / GIT_TRACE2_MAX_FILES semantics; 0 (the default) means no
 * cap, and other destinations ignore it.  When a new process arrives:
 * if "<dir>/git-trace2-discard" exists, the process's lines are dropped;
 * otherwise the directory's entries are counted with readdir -- "." and ".."
 * included, as git counts them -- and if there are max_files or more, the
 * sentinel is created (O_EXCL) and this process's lines go into it (the
 * EVENT target then adds a "too_many_files" event, see
 * tr2_dst_take_too_many_files); if that create fails the lines are dropped.
 * Whoever collects the trace files removes the sentinel to resume tracing.
 */
void tr2_dst_set_max_files(struct tr2_dst *d, int max_files);

/*
 * True exactly once after a tr2_dst_write whose line was the first one
 * written into a newly created git-trace2-discard sentinel; the caller
 * (tr2_target_emit) then writes the EVENT target's "too_many_files" event for
 * that same process, as git writes it right after "version".
 */
bool tr2_dst_take_too_many_files(struct tr2_dst *d);

/*
 * Tells the destination that the process with session id sid and stream
 * `stream` (tr2_dst_write) has ended (its
 * atexit or signal event was written, or it is gone: see
 * tr2_target_end_process): a directory destination closes that process's
 * file, a socket destination its connection, and forgets it; other
 * destinations do nothing.  A later line with the same sid would start a
 * new file (a ".1" name) or connection.  Directory destinations also keep
 * at most 128 files open, closing the least recently written one and
 * reopening it (O_APPEND) when its process writes again; a connection
 * cannot be reopened as the same process, so socket destinations keep every
 * connection until the process ends (see TR2_DST_MAX_CONNECTIONS).
 */
void tr2_dst_end_process(struct tr2_dst *d, const char *sid, uint64_t stream);

/*
 * Buffering, for file descriptor and path destinations (others ignore it):
 * lines then wait, whole, until tr2_dst_flush() or 64 KiB, and go out in one
 * write(2) per batch.  A batch holds whole lines only, so concurrent writers
 * to one O_APPEND file still never interleave inside a line.  Off by default;
 * whoever turns it on flushes when output should appear (tr2-bpf: after
 * each read of the ring buffer).
 */
void tr2_dst_set_buffered(struct tr2_dst *d, bool on);

/*
 * The batch of a buffered destination that has not failed, for a caller
 * that formats lines straight into it rather than handing each to
 * tr2_dst_write (tr2_target_emit: one copy of every line less); NULL when
 * the destination is not buffered or has failed.  Append whole lines only
 * (the same rule as tr2_dst_write), then call tr2_dst_commit.
 */
struct tr2_buf *tr2_dst_buffer(struct tr2_dst *d);

/* After lines were appended to tr2_dst_buffer(d): writes the batch once it
 * holds 64 KiB, as tr2_dst_write does.  Returns 0, or -1 on failure. */
int tr2_dst_commit(struct tr2_dst *d);

/* Writes the buffered lines.  Returns 0, or -1 when this or an earlier write
 * failed (reported once). */
int tr2_dst_flush(struct tr2_dst *d);

/* True when d writes one file or connection per process (a directory or a
 * socket destination). */
bool tr2_dst_per_process(const struct tr2_dst *d);

/*
 * The lines dropped so far (see tr2_dst_write): newlines, so that a batch
 * or a multi-line message counts every line it held.  Socket and directory
 * destinations: into *procs (unless NULL) the number of processes that
 * lost lines, into *refused (unless NULL) how many of them were refused a
 * connection because TR2_DST_MAX_CONNECTIONS were open; 0 for the others.
 */
uint64_t tr2_dst_dropped(const struct tr2_dst *d, uint64_t *procs, uint64_t *refused);

/*
 * When tr2_dst_dropped is not 0, says so in one line on stderr, e.g.
 *   tr2-bpf: 'af_unix:/run/t.sock': 40 lines of 3 processes dropped (1 refused: 512 connections open)
 *   tr2-bpf: '/dev/full': 32 lines dropped
 * tr2_target_finish calls it at the end of a trace.
 */
void tr2_dst_report_dropped(const struct tr2_dst *d);

/*
 * A file or fd destination that fails (a full disk, a closed pipe) then
 * returns 0 rather than -1, as a socket or directory destination does for
 * one process: its lines are dropped and counted, and the caller, which
 * goes on handing it lines, learns of the failure from tr2_dst_failed().
 * For tr2-bpf, whose other destinations go on: every line is counted.
 */
void tr2_dst_set_counting(struct tr2_dst *d, bool on);

/* True once a file or fd destination has failed as a whole. */
bool tr2_dst_failed(const struct tr2_dst *d);

/*
 * Empties a file destination that is a regular file (a path opened to be
 * appended to), for a view that must be one document (--chrome, --folded),
 * as perf record -o overwrites its file; other destinations are left as
 * they are.  Returns 0, or -1 with errno set.
 */
int tr2_dst_truncate(struct tr2_dst *d);

/* The destination's name for messages: its value, or "standard output". */
const char *tr2_dst_name(const struct tr2_dst *d);

/* Flushes, closes (descriptors it opened, never fd 1 or a "2".."9" one) and
 * frees; NULL is allowed. */
void tr2_dst_close(struct tr2_dst *d);

#endif
