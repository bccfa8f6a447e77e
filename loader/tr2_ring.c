/* tr2_ring.c: see tr2_ring.h.  The mapping (kernel/bpf/ringbuf.c): at offset
 * 0 the consumer page (read-write, the consumer position), at one page the
 * producer page (the producer position) and then the data, mapped twice in
 * a row so that a record that wraps around is contiguous (read-only). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "tr2_ring.h"

struct tr2_ring {
	tr2_ring_fn fn;
	void *ctx;
	unsigned long *consumer_pos;   /* the consumer page */
	unsigned long *producer_pos;   /* the producer page; the data follows */
	unsigned char *data;
	unsigned long mask;            /* data bytes - 1 (a power of 2) */
	size_t page, data_len;
	int epoll_fd;
};

struct tr2_ring *tr2_ring_new(int map_fd, tr2_ring_fn fn, void *ctx)
{
	struct bpf_map_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct epoll_event ev = { .events = EPOLLIN };
	struct tr2_ring *r;
	void *p;
	int e;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &info_len))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->data_len = info.max_entries;
	r->mask = info.max_entries - 1;
	r->epoll_fd = -1;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	r->consumer_pos = p;
	p = mmap(NULL, r->page + 2 * r->data_len, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED)
		goto fail;
	r->producer_pos = p;
	r->data = (unsigned char *)p + r->page;
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0 || epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev))
		goto fail;
	return r;
fail:
	e = errno;
	tr2_ring_free(r);
	errno = e;
	return NULL;
}

int tr2_ring_consume(struct tr2_ring *r)
{
	unsigned long cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE), released = cons;
	unsigned long start = cons, prod;
	int n = 0, rc = 0;

	/* At most one ring's worth per call, so that a producer faster than
	 * this consumer cannot keep the caller from its other work (Ctrl-C). */
	do {
		prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
		while (cons < prod) {
			uint32_t *hdr = (uint32_t *)(r->data + (cons & r->mask));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

			if (len & BPF_RINGBUF_BUSY_BIT)
				goto out;   /* still being written: later */
			cons += (BPF_RINGBUF_HDR_SZ + (len & ~BPF_RINGBUF_DISCARD_BIT) + 7) & ~7ul;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				n++;
				rc = r->fn(r->ctx, hdr + 2, len);
				if (rc)
					goto out;
			}
			if (cons - released >= TR2_RING_RELEASE_BYTES) {
				__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
				released = cons;
			}
		}
	} while (cons - start < r->data_len && prod != __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE));
out:
	if (cons != released)
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	return rc ? rc : n;
}

int tr2_ring_poll(struct tr2_ring *r, int timeout_ms)
{
	struct epoll_event ev;

	/* A timeout is no error: records sent without a wakeup are there too. */
	if (epoll_wait(r->epoll_fd, &ev, 1, timeout_ms) < 0)
		return -errno;
	return tr2_ring_consume(r);
}

void tr2_ring_free(struct tr2_ring *r)
{
	if (!r)
		return;
	if (r->consumer_pos)
		munmap(r->consumer_pos, r->page);
	if (r->producer_pos)
		munmap(r->producer_pos, r->page + 2 * r->data_len);
	if (r->epoll_fd >= 0)
		close(r->epoll_fd);
	free(r);
}
