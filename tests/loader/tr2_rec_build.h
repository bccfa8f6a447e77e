/* tr2_rec_build.h: ring-buffer records (bpf/tr2_record.h) as tr2-bpf reads
 * them, for the decoder's tests (tests/loader/test_decode.c) and the
 * fuzzer's seeds (tests/fuzz/make_decode_corpus.c).  A thread's calls are
 * written by the runtime's own encoder (usdt/tr2_wire.c) the way
 * usdt/tr2_batch.c appends them, and copied into TR2_REC_BATCH records the
 * way the eBPF side (bpf/tr2_batch.bpf.h) copies them.  Header-only; its
 * includers link usdt/tr2_wire.c. */
#ifndef TR2_REC_BUILD_H
#define TR2_REC_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_wire.h"

/* A traced thread's buffer, unrolled: the bytes written since its last
 * copy, in order (a wrap of the real ring is what rb_pad() stands for). */
struct rb_thread {
	uint32_t pid, tid;
	struct tr2_interned lits;   /* the runtime's literals of this epoch */
	int epoch_start;            /* the next call is the first of an epoch */
	int32_t depth;              /* region enters minus leaves */
	uint64_t pos;               /* bytes written since the buffer was made */
	uint64_t from;              /* pos at the last copy: the next batch's num[2] */
	int64_t calls;              /* calls since the last copy, timer and counter ones not counted */
	size_t len;                 /* bytes since the last copy */
	unsigned char data[TR2_TBUF_DATA];
	struct tr2_wire_enc enc;    /* the last call's encoding */
};

/* A thread's buffer as its first call makes it. */
static inline void rb_thread_init(struct rb_thread *t, uint32_t pid, uint32_t tid)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->lits.epoch = 1;
	t->epoch_start = 1;
}

static inline unsigned char *rb_room(struct rb_thread *t, size_t n)
{
	unsigned char *p = t->data + t->len;

	if (n > sizeof(t->data) - t->len) {
		fprintf(stderr, "tr2_rec_build: thread %u's buffer is full: copy it first\n", t->tid);
		abort();
	}
	memset(p, 0, n);
	t->len += n;
	t->pos += n;
	return p;
}

/* Appends call c at c->ts_ns (its pid and tid are the thread's; module and
 * literals say what the runtime's would): t->enc says how it was encoded. */
static inline void rb_call(struct rb_thread *t, const struct tr2_call *c)
{
	tr2_wire_measure(c, &t->lits, &t->enc);
	tr2_wire_write((char *)rb_room(t, t->enc.size), c, &t->enc, t->depth, c->ts_ns,
		       t->epoch_start ? TR2_WIRE_EPOCH : 0);
	t->epoch_start = 0;
	t->calls += c->probe < TRACE2__P_timer_start;
	t->depth += (c->probe == TRACE2__P_region_enter) - (c->probe == TRACE2__P_region_leave);
}

/* Appends `size` bytes of padding (a TR2_WIRE_PAD header), as the runtime
 * writes where a call would wrap around the end of the data area. */
static inline void rb_pad(struct rb_thread *t, uint16_t size)
{
	struct tr2_wire w = { .size = size, .probe = TR2_WIRE_PAD };

	memcpy(rb_room(t, size), &w, 4);
}

/* Appends `n` bytes as they are (a call no runtime writes). */
static inline void rb_raw(struct rb_thread *t, const void *bytes, size_t n)
{
	memcpy(rb_room(t, n), bytes, n);
}

/* The thread's calls since the last copy as one TR2_REC_BATCH record at out
 * (TR2_REC_MAX bytes), stamped ts_ns, with `lost` calls lost before them
 * (the runtime's dropped ones): the eBPF side's copy, at a switch, a tick
 * or a batch.  Returns the record's size. */
static inline size_t rb_copy(struct rb_thread *t, void *out, uint64_t ts_ns, int64_t lost)
{
	struct tr2_rec h = { .size = (uint16_t)(sizeof(h) + t->len), .kind = TR2_REC_BATCH, .pid = t->pid,
			     .tid = t->tid, .ts_ns = ts_ns, .num = { t->calls, lost, (int64_t)t->from } };

	memcpy(out, &h, sizeof(h));
	memcpy((unsigned char *)out + sizeof(h), t->data, t->len);
	t->from = t->pos;
	t->len = 0;
	t->calls = 0;
	return h.size;
}

/* The thread sends a batch (tr2:batch): copied, and an epoch starts at its
 * next call, its literals defined anew. */
static inline size_t rb_batch(struct rb_thread *t, void *out, uint64_t ts_ns)
{
	size_t n = rb_copy(t, out, ts_ns, 0);

	t->lits.epoch++;
	t->epoch_start = 1;
	return n;
}

/* A record of no more than its header at out: the tracer's own (fork,
 * execve, new_object, thread_gone, proc_gone).  Returns its size. */
static inline size_t rb_rec(void *out, unsigned kind, uint32_t pid, uint32_t tid, uint64_t ts_ns, int64_t n0,
			    int64_t n1, int64_t n2)
{
	struct tr2_rec h = { .size = sizeof(h), .kind = (uint8_t)kind, .pid = pid, .tid = tid, .ts_ns = ts_ns,
			     .num = { n0, n1, n2 } };

	memcpy(out, &h, sizeof(h));
	return sizeof(h);
}

/* A TR2_REC_THREAD_INFO at out (strings cut to fit): returns its size. */
static inline size_t rb_thread_info(void *out, uint32_t pid, uint32_t tid, int32_t thread_id, uint64_t ts_ns,
				    uint32_t ppid, uint64_t proc_start_ns, uint64_t thread_start_ns,
				    const char *base_name, const char *comm, const char *sid)
{
	struct tr2_rec_thread_info r;

	memset(&r, 0, sizeof(r));
	rb_rec(&r.hdr, TR2_REC_THREAD_INFO, pid, tid, ts_ns, ppid, (int64_t)proc_start_ns,
	       (int64_t)thread_start_ns);
	r.hdr.size = sizeof(r);
	r.hdr.thread_id = thread_id;
	snprintf(r.base_name, sizeof(r.base_name), "%s", base_name);
	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	snprintf(r.sid, sizeof(r.sid), "%s", sid);
	memcpy(out, &r, sizeof(r));
	return sizeof(r);
}

#endif
