/* tr2_decode.h: checks the ring-buffer records (bpf/tr2_record.h) and turns
 * the calls of a batch into struct tr2_call (formatter/tr2_call.h), the
 * model's input.  Never trusts the bytes: they come from a traced process's
 * memory, which the process may have written anything into; whatever does
 * not parse is rejected with a reason, and its calls are counted as lost by
 * the caller. */
#ifndef TR2_DECODE_H
#define TR2_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include "tr2_call.h"
#include "tr2_record.h"

/* Times (ns) at or above this are refused. */
#define TR2_TS_MAX (1ull << 62)

/* Appended to a string that the runtime cut (TR2_STR_TRUNC). */
#define TR2_TRUNC_MARK "...(truncated)"

/*
 * Checks that the `size` bytes at `data` are one whole record of a known
 * kind whose header agrees with its size, and copies the header into *hdr.
 * Returns 0, or -1 with *why set to a static one-line reason.  A batch's
 * calls are not looked at here (tr2_batch_next does).
 */
int tr2_decode_rec(const void *data, size_t size, struct tr2_rec *hdr, const char **why);

/* One call of a batch, decoded: its strings NUL-terminated in `arena`. */
struct tr2_decoded_call {
	struct tr2_call call;
	int32_t depth;                       /* the runtime's region depth before it */
	const char *vec[TR2_ARGV_MAX + 1];   /* call.vec points here */
	char arena[2 * TR2_TBUF_DATA + 16 * (5 + TR2_ARGV_MAX)];   /* the call, its literals, marks */
};

/* One thread's literal strings, as its calls define them (TR2_STR_DEF) and
 * name them (TR2_STR_REF) within an epoch (bpf/tr2_record.h). */
struct tr2_literals {
	int whole;                  /* every call of the epoch so far was read: ids hold */
	char *str[TR2_INTERNED];    /* NULL: not defined in this epoch */
};

/* Forgets every string (an epoch starts, or the thread is gone). */
void tr2_literals_clear(struct tr2_literals *l);

/*
 * The next call of a batch: `*off` is its offset in the batch's `len` data
 * bytes (0 at first); fills *out (pid, tid of the record's header), with the
 * thread's literals `lits` (updated by its definitions), and moves *off past
 * it (and past any padding before it).  Returns 1; 0 at the end of the
 * data; -2 with *why set for a call that names a literal the stream does not
 * hold (calls of the thread were lost since its epoch began): that call is
 * lost, the next ones may be read; -1 with *why set when the bytes make no
 * call (the rest of the batch is then not decodable).
 */
int tr2_batch_next(const struct tr2_rec *hdr, const unsigned char *data, size_t len, size_t *off,
		   struct tr2_literals *lits, struct tr2_decoded_call *out, const char **why);

/* The time of the call at *off or after (padding skipped) into *ts_ns:
 * returns 1, 0 at the end of the data, -1 when the bytes make no call (or
 * one whose time is TR2_TS_MAX or more, which tr2_batch_next refuses). */
int tr2_batch_peek(const unsigned char *data, size_t len, size_t off, uint64_t *ts_ns);

#endif
