/*
 * tr2_batch.c: the calls tr2-bpf reads.  While tr2-bpf listens, each call
 * is appended to its thread's buffer (struct tr2_tbuf, bpf/tr2_record.h,
 * where the layout and the protocol are written down) and the thread enters
 * the kernel only to send a batch (tr2:batch): at its first call, when the
 * buffer is full, and when its last batch is TR2_TRAP_NS old.  The eBPF
 * side also copies the buffer when the thread is switched out, at timer
 * ticks, at exec and at exit.
 *
 * A signal handler may call trace2 while its thread is inside an append: its
 * call is appended after the interrupted one's, unless it lands while that
 * one moves the write position or the buffer is full, where it is counted
 * in `dropped` (tr2-bpf reports it as lost).  Nothing here waits for a lock
 * or allocates but a thread's first call, which takes a buffer from the
 * free list (or maps one); buffers go back to it when their threads end.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tr2_record.h"
#include "tr2_runtime.h"
#include "tr2_wire.h"

char tr2_program_sid[TR2_SID_MAX];

void trace2__set_sid(const char *sid)
{
	size_t n = sid ? strnlen(sid, TR2_SID_MAX - 1) : 0;

	if (n)
		memcpy(tr2_program_sid, sid, n);
	tr2_program_sid[n] = '\0';
}

/* The calling thread's buffer; NULL until its first call while tr2-bpf
 * listens.  A pointer: libtr2's static TLS must stay small (tr2_format.c). */
static __thread struct tr2_tbuf *self __attribute__((tls_model("initial-exec")));

/* Buffers of threads that have ended, for the next ones: what a process
 * keeps is bounded by the threads alive at once, not by those that came
 * and went.  Only tried (trylock): a thread that finds it busy maps or
 * unmaps its own; a child forked while another thread held it finds it
 * busy for good. */
static struct {
	pthread_mutex_t lock;
	struct tr2_tbuf *free;
	pthread_key_t key;            /* its destructor: the thread ends */
	int have_key;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void release(struct tr2_tbuf *b)
{
	/* calls since the last batch: copied now, as the buffer is no longer
	 * the thread's when it exits (the eBPF side checks the owner) */
	if (b->pos != b->trap_pos)
		tr2_batch_trap(b);
	self = NULL;
	b->owner = 0;
	if (!pthread_mutex_trylock(&pool.lock)) {
		b->next = pool.free;
		pool.free = b;
		pthread_mutex_unlock(&pool.lock);
	} else {
		munmap(b, sizeof(*b));
	}
}

static void thread_end(void *b)
{
	release(b);
}

static void make_key(void)
{
	pool.have_key = !pthread_key_create(&pool.key, thread_end);
}

/* The calling thread's buffer, taken from the free list or mapped, empty;
 * NULL when no memory can be had. */
static struct tr2_tbuf *acquire(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct tr2_tbuf *b = NULL;

	pthread_once(&once, make_key);
	if (!pthread_mutex_trylock(&pool.lock)) {
		if ((b = pool.free))
			pool.free = b->next;
		pthread_mutex_unlock(&pool.lock);
	}
	if (!b) {
		/* every page present: the eBPF side cannot fault one in, and a
		 * page that only padding covers is never written (a batch over
		 * it was lost whole) */
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			 -1, 0);
		if (b == MAP_FAILED)
			return NULL;
		b->magic = TR2_TBUF_MAGIC;
	}
	b->owner = tr2_gettid();
	b->tls = (uintptr_t)&trace2__tls;
	b->trap_pos = b->pos = b->wpos;
	b->last_trap_ns = 0;
	b->depth = 0;
	b->nest = b->reserving = 0;
	b->literals.epoch++;
	b->epoch_start = 1;
	self = b;
	if (pool.have_key)
		pthread_setspecific(pool.key, b);
	return b;
}

void tr2_batch_idle(void)
{
	struct tr2_tbuf *b = self;

	if (!b)
		return;
	if (pool.have_key)
		pthread_setspecific(pool.key, NULL);
	release(b);
}

void tr2_batch_forked(void)
{
	struct tr2_tbuf *b = self;

	if (!b)
		return;
	b->owner = tr2_gettid();
	b->trap_pos = b->pos = b->wpos;
	b->last_trap_ns = 0;
	b->nest = b->reserving = 0;
	b->literals.epoch++;
	b->epoch_start = 1;
}

/* Sends the batch: every tracer's eBPF program copies what it has not yet;
 * a tracer that meets this buffer now starts at the last batch. */
static void trap(struct tr2_tbuf *b, uint64_t now)
{
	uint64_t pos = b->pos;

	tr2_batch_trap(b);
	b->trap_pos = pos;
	b->last_trap_ns = now;
	b->literals.epoch++;
	b->epoch_start = 1;
}

/* Room for more bytes until the next batch. */
static uint32_t room(const struct tr2_tbuf *b)
{
	return TR2_TBUF_DATA - (uint32_t)TR2_POS_BYTES(b->wpos - b->trap_pos);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Padding of `pad` bytes at data offset off, up to the end of the data. */
static void put_pad(struct tr2_tbuf *b, uint32_t off, uint32_t pad)
{
	struct tr2_wire w = { .size = (uint16_t)pad, .probe = TR2_WIRE_PAD };

	memcpy(b->data + off, &w, 4);
}

void tr2_batch_call(const struct tr2_call *c)
{
	struct tr2_tbuf *b = self ? self : acquire();
	uint32_t off, pad;
	struct tr2_wire_enc e;
	uint64_t now, start;
	uint8_t flags = 0;

	if (!b)
		return;
	now = now_ns();
	b->nest++;
	__asm__ __volatile__("" ::: "memory");
	if (b->reserving)
		goto dropped;   /* a handler inside another append's reservation */
	tr2_wire_measure(c, b->nest == 1 ? &b->literals : NULL, &e);
	b->reserving = 1;
	__asm__ __volatile__("" ::: "memory");
	start = b->wpos;
	off = (uint32_t)TR2_POS_BYTES(start) & (TR2_TBUF_DATA - 1);
	pad = off + e.size > TR2_TBUF_DATA ? TR2_TBUF_DATA - off : 0;
	if (room(b) < pad + e.size) {
		if (b->nest > 1) {
			b->reserving = 0;
			goto dropped;   /* only the outermost call sends a batch */
		}
		trap(b, now);
		if (pad + e.size > TR2_TBUF_DATA) {
			/* the call fits only at the data's start: the padding up
			 * to there goes in a batch of its own first */
			put_pad(b, off, pad);
			start = b->wpos += pad;
			__atomic_store_n(&b->pos, b->wpos, __ATOMIC_RELEASE);
			trap(b, now);
			off = 0;
		}
		tr2_wire_measure(c, &b->literals, &e);   /* a new epoch: its literals defined again */
		pad = off + e.size > TR2_TBUF_DATA ? TR2_TBUF_DATA - off : 0;
	}
	if (b->epoch_start) {
		flags = TR2_WIRE_EPOCH;
		b->epoch_start = 0;
	}
	/* timer and counter calls make no event of their own: not counted */
	b->wpos = start + pad + e.size + (c->probe < TRACE2__P_timer_start ? TR2_POS_EVENT : 0);
	__asm__ __volatile__("" ::: "memory");
	b->reserving = 0;
	__asm__ __volatile__("" ::: "memory");
	if (pad) {
		put_pad(b, off, pad);
		off = 0;
	}
	tr2_wire_write(b->data + off, c, &e, b->depth, now, flags);
	if (c->probe == TRACE2__P_region_enter)
		b->depth++;
	else if (c->probe == TRACE2__P_region_leave)
		b->depth--;
	goto out;
dropped:
	b->dropped++;
out:
	__asm__ __volatile__("" ::: "memory");
	if (--b->nest)
		return;
	__atomic_store_n(&b->pos, b->wpos, __ATOMIC_RELEASE);
	if (now - b->last_trap_ns >= TR2_TRAP_NS)
		trap(b, now);
}
