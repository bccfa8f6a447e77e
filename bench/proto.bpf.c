// SPDX-License-Identifier: GPL-2.0
/* proto.bpf.c: programs for the runtime's tr2:event site that each do a
 * part of what bpf/tr2.bpf.c does for a region event, so that bench/run.sh
 * can show where tr2-bpf's cost per event goes and what a cheaper design
 * would save. Compiled once per variant (-DPROTO=...; bench/build.mk) and
 * attached by bpf-attach, whose consumer counts records and formats nothing.
 * Each reads tr2:event's arguments with libbpf's BPF_USDT (bpf_usdt_arg()):
 * the kind, the module number, then region_enter's and region_leave's own
 * (usdt/tr2_probe.c).
 *
 *   p_args    the nine arguments up to msg read, nothing else
 *   p_hdr     a 48-byte header (pid, tid, time) reserved in the ring buffer
 *   p_tr2     tr2.bpf.c's path before it sent literals once: traced-set
 *             lookup, task-storage lookup, file, category and label into a
 *             per-CPU scratch record, bpf_ringbuf_output()
 *   p_intern  strings sent once per address (a hash of seen pointers);
 *             afterwards the record carries the three pointers only
 *
 * With -DLAZY=1 every program submits with BPF_RB_NO_WAKEUP unless over
 * 1 MiB is waiting: the consumer is woken once per many records instead
 * of once per record, and finds the rest when its poll times out (10 ms).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

#define STR_MAX 256

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} rb SEC(".maps");

struct hdr {
	__u16 size;
	__u8 kind, nstr;
	__u32 pid, tid;
	__s32 line;
	__u64 ts_ns;
	__s64 num[3];
	__s32 thread_id;
	__u16 flags, nvec;
};

struct scratch {
	char buf[sizeof(struct hdr) + 3 * (2 + STR_MAX) + 16];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u8);
} announced SEC(".maps");

/* p_intern: string addresses already sent (per process in a real design). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} seen SEC(".maps");

#ifndef LAZY
#define LAZY 0
#endif

/* The submit flags: wake the consumer for every record, or lazily. */
static __always_inline __u64 wakeup(void)
{
	if (!LAZY)
		return 0;
	return bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) > (1 << 20) ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void fill(struct hdr *h, int line)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->size = sizeof(*h);
	h->kind = 20;
	h->nstr = 0;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->line = line;
	h->ts_ns = bpf_ktime_get_ns();
	h->num[0] = h->num[1] = h->num[2] = 0;
	h->thread_id = 0;
	h->flags = h->nvec = 0;
}

#define ARGS void *tls, const char *file, int line, int repo, \
	     const char *category, const char *label, const char *msg

static __always_inline int p_args(ARGS)
{
	return 0;
}

static __always_inline int p_hdr(ARGS)
{
	struct hdr *h = bpf_ringbuf_reserve(&rb, sizeof(*h), 0);

	if (!h)
		return 0;
	fill(h, line);
	bpf_ringbuf_submit(h, wakeup());
	return 0;
}

/* Reads one string at off (a __u16 length word, then the bytes). */
static __always_inline __u32 put_str(char *base, __u32 off, const char *s)
{
	long n;
	__u16 w;

	off &= 1023;
	n = bpf_probe_read_user_str(base + off + 2, STR_MAX, s);
	w = n > 0 ? n - 1 : 0;
	__builtin_memcpy(base + off, &w, 2);
	return off + 2 + (w & (STR_MAX - 1));
}

static __always_inline int p_tr2(ARGS)
{
	__u32 zero = 0, pid = bpf_get_current_pid_tgid() >> 32, off = sizeof(struct hdr);
	struct hdr *h;
	__u8 *done;

	if (!bpf_map_lookup_elem(&traced, &pid))
		return 0;
	done = bpf_task_storage_get(&announced, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (done)
		*done = 1;
	h = bpf_map_lookup_elem(&scratch, &zero);
	if (!h)
		return 0;
	fill(h, line);
	off = put_str((char *)h, off, file);
	off = put_str((char *)h, off, category);
	off = put_str((char *)h, off, label);
	h->nstr = 3;
	asm volatile("" : "+r"(off));
	if (off > sizeof(struct scratch))
		return 0;
	h->size = off;
	bpf_ringbuf_output(&rb, h, off, wakeup());
	return 0;
}

/* Sends s the first time its address is seen; returns 1 if it did. */
static __always_inline int intern(const char *s, __u32 line)
{
	__u64 key = (__u64)s;
	__u8 one = 1;
	struct hdr *h;

	if (bpf_map_lookup_elem(&seen, &key))
		return 0;
	h = bpf_ringbuf_reserve(&rb, sizeof(struct scratch), 0);
	if (!h)
		return 0;
	fill(h, line);
	h->num[0] = key;
	h->size = put_str((char *)h, sizeof(*h), s);
	h->nstr = 1;
	bpf_ringbuf_submit(h, wakeup());
	bpf_map_update_elem(&seen, &key, &one, BPF_ANY);
	return 1;
}

static __always_inline int p_intern(ARGS)
{
	struct hdr *h;

	intern(file, line);
	intern(category, line);
	intern(label, line);
	h = bpf_ringbuf_reserve(&rb, sizeof(*h), 0);
	if (!h)
		return 0;
	fill(h, line);
	h->num[0] = (__u64)file;
	h->num[1] = (__u64)category;
	h->num[2] = (__u64)label;
	bpf_ringbuf_submit(h, wakeup());
	return 0;
}

/* The variant, as the program tr2_attach looks for: probe_event. */
SEC("usdt")
int BPF_USDT(probe_event, long kind, long mod, ARGS)
{
	return PROTO(tls, file, line, repo, category, label, msg);
}
