/* tr2_recording.h: tr2-bpf --record=FILE, the file and its writer.
 *
 * A recording is what tr2-bpf's session is fed during a trace, in the order
 * it is fed, so that tr2-fmt can feed a session of its own the same way
 * later (loader/tr2_replay.h) and write the lines tr2-bpf would have written
 * live, byte for byte: the ring-buffer records as the eBPF side handed them
 * over (bpf/tr2_record.h), and what tr2-bpf adds from elsewhere (the clocks'
 * reference, losses counted in BPF maps, held processes, pauses, and the
 * times at which it wrote out what had arrived).  Nothing is decoded or
 * formatted on the way: a batch costs tr2-bpf a copy into a buffer and its
 * share of a write(2).
 *
 * The file: TR2_REC_FILE_MAGIC (8 bytes), then records, each a struct
 * tr2_file_rec and `size` bytes, padded with zeros to a multiple of 8.  The
 * first record is TR2_FILE_START; a recording that tr2-bpf finished ends
 * with TR2_FILE_END.  Numbers are the machine's (x86-64: little-endian).
 */
#ifndef TR2_RECORDING_H
#define TR2_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#define TR2_REC_FILE_MAGIC "tr2rec1\n"
#define TR2_REC_FILE_MAGIC_LEN 8

enum tr2_file_kind {
	TR2_FILE_START = 1,  /* struct tr2_file_start, then ncats NUL-terminated names */
	TR2_FILE_RING,       /* one ring-buffer record, as tr2_decode_rec() accepts it */
	TR2_FILE_LOST,       /* struct tr2_file_lost: tr2_session_lost() */
	TR2_FILE_HELD,       /* struct tr2_file_held: tr2_session_resumed() */
	TR2_FILE_TICK,       /* struct tr2_file_time: what arrived before now_ns -
				TR2_SESSION_DELAY_NS is written out; --summary's interval */
	TR2_FILE_PAUSE,      /* struct tr2_file_time: tracing paused (SIGUSR1): tr2_session_pause() */
	TR2_FILE_RESUME,     /* struct tr2_file_time: and resumed (SIGUSR2): tr2_session_resume() */
	TR2_FILE_END,        /* struct tr2_file_end: tr2-bpf finished the trace */
	TR2_FILE__COUNT
};

struct tr2_file_rec {
	uint32_t size;       /* bytes after this header, padding not included */
	uint16_t kind;       /* enum tr2_file_kind */
	uint16_t pad;
};

/* Flags of struct tr2_file_start. */
#define TR2_FILE_ALL 0x1     /* recorded under -a: --summary's tables per program by default */

#define TR2_FILE_CATS_MAX 64 /* --category names, at most (tr2_opts.c) */
#define TR2_FILE_CAT_LEN 63  /* bytes of one, NUL included, at most */

struct tr2_file_start {
	int64_t mono_to_real_ns;  /* CLOCK_REALTIME minus CLOCK_MONOTONIC, ns */
	uint64_t since_ns;        /* the trace began (CLOCK_MONOTONIC): earlier calls are left out */
	char host[16];            /* "H" and 8 hex digits (tr2_sid_host), NUL-terminated */
	uint32_t flags;           /* TR2_FILE_* */
	uint32_t ncats;           /* --category names that follow */
};

/* Process pid lost `count` more events, marked at ts_ns. */
struct tr2_file_lost {
	uint32_t pid, pad;
	uint64_t count, ts_ns;
};

/* Process pid was held stopped from from_ns to to_ns. */
struct tr2_file_held {
	uint32_t pid, pad;
	uint64_t from_ns, to_ns;
};

/* A moment (CLOCK_MONOTONIC). */
struct tr2_file_time {
	uint64_t now_ns;
};

struct tr2_file_end {
	uint64_t now_ns;
	uint64_t lost;            /* events lost before the session: in BPF, records refused */
};

/* A record's `size`, at most (a ring record of a whole thread's buffer is
 * 16 KiB and 48 bytes). */
#define TR2_FILE_SIZE_MAX (20u << 10)

struct tr2_recording;

/*
 * Creates (or empties) the file at path for a recording of at most
 * max_bytes (0: no limit) and writes its magic and START record
 * (categories: ncats names of --category).  file_mode: a new file's, as
 * tr2_dst_open's (--file-mode).  Returns NULL with a one-line
 * reason in err.
 */
struct tr2_recording *tr2_recording_open(const char *path, int file_mode, uint64_t max_bytes,
					 const struct tr2_file_start *start, char *const *cats, char *err,
					 size_t errlen);

/*
 * Appends one record (enum tr2_file_kind, its `size` bytes).  Returns 0;
 * -1 once the recording has stopped, from the record that would have taken
 * it past its limit or that could not be written on (tr2_recording_stopped
 * says why): then nothing more is appended but the END record.
 */
int tr2_recording_put(struct tr2_recording *r, int kind, const void *data, size_t size);

/* Writes out what is buffered (tr2-bpf calls it at each tick, so that a
 * tr2-bpf killed leaves all but its last moments readable).  Returns 0, or
 * -1 as tr2_recording_put(). */
int tr2_recording_flush(struct tr2_recording *r);

/* Why the recording stopped: NULL while it records; else a one-line reason
 * ("reached --record-size=N bytes", "failed to write 'FILE': ..."), and in
 * *full whether it was the limit (1) or an error (0). */
const char *tr2_recording_stopped(const struct tr2_recording *r, int *full);

/* Appends the END record (past the limit, if need be: it is small), writes
 * everything out and closes the file.  Returns 0, or -1 with the reason in
 * err when the file is not whole (it stopped early, or a write or close
 * failed).  NULL is allowed. */
int tr2_recording_close(struct tr2_recording *r, const struct tr2_file_end *end, char *err, size_t errlen);

#endif
