// SPDX-License-Identifier: GPL-2.0
/* tr2.bpf.c: one eBPF program per trace2 USDT probe (docs/probes.md).  Each
 * copies the probe's arguments into a record (bpf/tr2_record.h) and sends it
 * through one BPF ring buffer to tr2-bpf.  Drops are counted, never silent.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* libbpf's USDT argument specs: one per distinct call-site argument layout. */
#define BPF_USDT_MAX_SPEC_CNT 4096
#include <bpf/usdt.bpf.h>

#include "tr2_record.h"

#define SIGKILL 9
#define SIGCONT 18
#define SIGSTOP 19
#define SIGTSTP 20
#define SIGTTIN 21
#define SIGTTOU 22
#define X86_PF_INSTR 0x10  /* page fault error code: an instruction fetch (arch/x86) */

/* Tasks and their signals (kernel kfuncs, Linux 6.13+). */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type, u64 value) __ksym;

char LICENSE[] SEC("license") = "GPL";

/* Set by tr2-bpf before load. */
const volatile int follow = 0;  /* only record processes in `traced` (tr2-bpf -- CMD) */
/* tr2-bpf -a: every process is traced (that the filters below let
 * through); `traced` then holds those that sent events, until they end. */
const volatile int trace_all = 0;
/* --comm, --uid, --cgroup: only processes whose leader's comm is in
 * `comms`, whose real uid is `uid`, under the cgroup in `cgroups` (its
 * descendants included) are traced, in every mode.  Decided for each
 * thread at its first event, and at each exec. */
const volatile int narrow_comm = 0, narrow_uid = 0, narrow_cgroup = 0;
const volatile __u32 uid = 0;
/* tr2-bpf -p: objects are known per traced process (its payload uprobes are
 * its own), so that another traced process mapping the same object stops
 * for tr2-bpf to attach for it too; else per object (tr2_object_key). */
const volatile int known_per_process = 0;
/* tr2-bpf's own tgid: while it is stopped no process is held for it, and
 * when it stops or ends every process it holds goes on (see `held`). */
const volatile __u32 tracer_tgid = 0;
/* Wake the consumer only once this much is waiting; it also polls on a
 * timer.  A wakeup per record (irq_work, then a cross-CPU wakeup) nearly
 * doubled the cost of an event (BENCHMARKS.md). */
const volatile __u64 wakeup_bytes = 1 << 20;
/* How often (every this many records per CPU, a power of 2) a CPU looks at
 * how much is waiting: the look reads the consumer's position, a cache line
 * the consumer writes on the other CPU (~50 ns a record when done each time). */
const volatile __u32 wakeup_check_every = 1;
/* tr2-bpf --summary: aggregate regions and integer data in "aggs" (see
 * tr2_record.h); stream: also send their records (a format was asked for). */
const volatile int summary = 0;
const volatile int stream = 1;
/* tr2-bpf --category: only categories in "cat_filter" are recorded or
 * aggregated (region_enter, region_leave, data, data_json). */
const volatile int cat_filtered = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);   /* resized by tr2-bpf before load */
} events SEC(".maps");

/* Records that did not fit in the ring buffer, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* The same drops by process (tgid), so that tr2-bpf can mark the place in
 * that process's stream.  Only touched when a record is dropped. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} lost_by_pid SEC(".maps");

/* Processes (tgids) being traced, in follow mode: CMD and its descendants. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);  /* a few entries, not 5 MiB locked */
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, char[16]);     /* TASK_COMM_LEN, NUL-padded */
	__type(value, __u8);
} comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

/* Whether the calling process is one --comm, --uid and --cgroup let
 * through (all of them, when none is given). */
static __always_inline int wanted(void)
{
	char comm[16] = {};

	if (narrow_uid && (__u32)bpf_get_current_uid_gid() != uid)
		return 0;
	if (narrow_comm) {
		bpf_probe_read_kernel_str(comm, sizeof(comm), bpf_get_current_task_btf()->group_leader->comm);
		if (!bpf_map_lookup_elem(&comms, comm))
			return 0;
	}
	if (narrow_cgroup && bpf_current_task_under_cgroup(&cgroups, 0) != 1)
		return 0;
	return 1;
}

/* Whether the calling process is traced (follow and -p: in `traced`; -a:
 * any but tr2-bpf) and let through by the filters: the one that exec'd, or
 * that runs code of an object for the first time, is one to look at. */
static __always_inline int traced_now(__u32 pid)
{
	return pid != tracer_tgid && (trace_all || bpf_map_lookup_elem(&traced, &pid)) && wanted();
}

/* The object files tr2-bpf has looked at (tr2_record.h): mapping one of
 * them stops no process.  Grows with the distinct files seen, never with
 * the processes that map them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct tr2_object_key);
	__type(value, __u8);
} known SEC(".maps");

/* The processes stopped (SIGSTOP) for tr2-bpf to attach to an object they
 * map, by tgid: when the hold began (ns).  tr2-bpf deletes an entry when it
 * sends SIGCONT.  The eBPF side itself sends SIGCONT to every process held
 * when tr2-bpf is stopped (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) or killed,
 * when it ends, and to a process held longer than TR2_HOLD_MAX_NS whenever any
 * process on the host forks, execs or exits (tr2-bpf's watchdog thread does
 * the same every 100 ms, for an idle host); those count in `unserved`. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} held SEC(".maps");

/* [0]: holds ended by the eBPF side rather than by tr2-bpf; [1]: processes
 * not held because tr2-bpf was stopped or had too many held already (they
 * go on before tr2-bpf has attached to the new object). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} unserved SEC(".maps");

/* When the oldest hold began, ns; 0: none (a hint: may be older). */
__u64 oldest_hold;
/* tr2-bpf cannot serve a hold now: it was sent a stop signal (or
 * SIGKILL), or let a hold last TR2_HOLD_MAX_NS, and has not been continued
 * (SIGCONT) or served a hold since (tr2-bpf clears it then).  No process is
 * held meanwhile: one that a hold let go would otherwise be held again at
 * its next new object, and again. */
int tracer_absent;

/* tr2-bpf is still looking at the processes it traces from the start (-p,
 * -a): no process is held until it polls the ring buffer; a record that
 * names a new object says it was not held, and tr2-bpf attaches to that
 * object when it reads it.  Set and cleared by tr2-bpf. */
int starting;

/* The interned strings a thread has sent (tr2_record.h), per call site,
 * kept 4-way set-associative: a call site's key (see site_key()) goes in
 * one of the 4 slots of its set (key % SITE_SLOTS, rounded down to 4), the
 * one that holds it, else a free one, else the first.  The key hashes
 * addresses, which ASLR moves from run to run: direct-mapped, two of a
 * program's few sites shared a slot in about 1 run of 10.  A call site
 * that lost its slot to another sends its strings again, which costs
 * bytes, never correctness. */
#define SITE_SLOTS 64
#define SITE_WAYS 4
#define CAT_SLOTS 8
#define OBJECT_SLOTS 8

/* Per thread: whether its TR2_REC_THREAD_INFO was sent, its open regions
 * (their start times), kept here rather than in tr2-bpf so that a dropped
 * record cannot skew the nesting of the records after it, the call sites
 * whose strings tr2-bpf has from this thread, and its timer and counter
 * sums (slots with id 0 are free), which go with the thread. */
struct thread_state {
	__u8 announced;
	__u8 ignored;     /* the filters (--comm, --uid, --cgroup) leave its process out */
	__u32 depth;
	__u64 region_start[TR2_REGION_MAX];
	__u64 site_key[SITE_SLOTS];
	struct tr2_metric metrics[TR2_THREAD_METRICS];
	/* --category: verdicts on literal categories, direct-mapped by
	 * address: (address << 1) | let through; 0 when empty. */
	__u64 cat_seen[CAT_SLOTS];
	__u64 exec_key;   /* --summary: the task's self_exec_id + 1; 0: not read yet */
	/* object_of(): the calling objects of the thread's last few module
	 * numbers (direct-mapped by number; module 0: empty). */
	__u32 module[OBJECT_SLOTS];
	__u64 object_key[OBJECT_SLOTS];
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");
/* Every traced thread allocates its state at its first hit and frees it at
 * its exit, from BPF's allocator, whose size classes are powers of 2 and
 * which adds 80 bytes (8 of its own, 72 of struct bpf_local_storage_elem
 * before the value, Linux 6.18): in the 4 KiB class a thread cost 2-4 µs
 * more than in the 2 KiB one (BENCHMARKS.md section 7). */
_Static_assert(sizeof(struct thread_state) + 80 <= 2048, "a thread's state in BPF's 2 KiB size class");

/* --summary: the aggregate key of each open region of a thread, flags 0
 * when it is not aggregated (TR2_AGG_LOST_FULL); made at its first region
 * in summary mode, apart from its thread_state, which it would take out of
 * the 2 KiB size class. */
struct region_keys {
	struct tr2_agg_key key[TR2_REGION_MAX];
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct region_keys);
} region_keys SEC(".maps");

/* Summary mode: the aggregates, per (process, program, kind, category,
 * label or key); tr2_record.h.  Sized by tr2-bpf; full: "agg_lost". */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct tr2_agg_key);
	__type(value, struct tr2_agg_val);
} aggs SEC(".maps");

/* Events not aggregated, per reason (TR2_AGG_LOST_*), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TR2_AGG_LOST__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} agg_lost SEC(".maps");

/* Where a new aggregate is made before it goes into "aggs", per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tr2_agg_val);
} agg_new SEC(".maps");

/* --category: the names let through, NUL-padded to TR2_CAT_FILTER_MAX bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, char[TR2_CAT_FILTER_MAX]);
	__type(value, __u8);
} cat_filter SEC(".maps");

/* Where a record is built before it is copied into the ring buffer, so that
 * each record takes exactly its own size there. */
#define SCRATCH_ROOM 16384u   /* strings start below this offset */
#define SCRATCH_SIZE 32768u   /* a power of 2 above SCRATCH_ROOM + TR2_STR_MAX + 2 */
struct scratch {     /* SCRATCH_SIZE bytes: a per-CPU value's largest size */
	char buf[SCRATCH_SIZE - 8];
	__u32 sent;           /* records this CPU sent, for wakeup_check_every */
	__u32 pad;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct trace2_tls {
	__s32 thread_id;
	char base_name[32];
};

/* A probe hit's arguments (docs/probes.md), read as libbpf's bpf_usdt_arg()
 * reads them from the spec tr2-bpf put in __bpf_usdt_specs, but with one
 * spec lookup per hit, registers taken straight from the context, and only
 * the arguments the record needs.  bpf_usdt_arg() costs ~40 ns per argument
 * here (a subprogram call, a cookie and a spec lookup, bpf_probe_read_kernel
 * of the register): reading the seven of a region probe that way doubled
 * the cost of an empty program (BENCHMARKS.md, proto-args). */
#define NREGS (sizeof(struct pt_regs) / 8)
struct hit {
	const struct __bpf_usdt_spec *spec;
	__u32 site;             /* probe site number: the cookie's upper half */
	__u64 key;              /* site_key(), set by begin() */
	struct thread_state *ts;   /* the calling thread's, set by begin(); not NULL then */
	__u64 regs[NREGS];
};

/* Loads the spec and registers of this hit into *p; NULL when it has no spec. */
static __always_inline struct hit *load_hit(struct hit *p, struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 spec_id = (__u32)cookie;

	p->spec = bpf_map_lookup_elem(&__bpf_usdt_specs, &spec_id);
	if (!p->spec)
		return 0;
	p->site = cookie >> 32;
	for (int i = 0; i < NREGS; i++)
		p->regs[i] = ((const __u64 *)ctx)[i];
	return p;
}

/* Argument n of tr2:event, cast as its spec says; 0 when missing or
 * unreadable. */
static __always_inline long event_arg(const struct hit *p, __u32 n)
{
	const struct __bpf_usdt_arg_spec *a;
	__u32 reg;
	long val;

	if (n >= BPF_USDT_MAX_ARG_CNT || n >= p->spec->arg_cnt)
		return 0;
	a = &p->spec->args[n];
	reg = (__u16)a->reg_off / 8;
	barrier_var(reg);   /* so that the bound checks below are made on reg itself */
	/* Most arguments: a pointer or a long in a register, nothing to cast. */
	if (a->arg_type == BPF_USDT_ARG_REG && !a->arg_bitshift)
		return reg < NREGS ? p->regs[reg] : 0;
	switch (a->arg_type) {
	case BPF_USDT_ARG_CONST:
		val = a->val_off;
		break;
	case BPF_USDT_ARG_REG:
		if (reg >= NREGS)
			return 0;
		val = p->regs[reg];
		break;
	case BPF_USDT_ARG_REG_DEREF:
		if (reg >= NREGS ||
		    bpf_probe_read_user(&val, sizeof(val), (void *)(p->regs[reg] + a->val_off)))
			return 0;
		break;
	default:
		return 0;
	}
	val <<= a->arg_bitshift;
	return a->arg_signed ? val >> a->arg_bitshift : (long)((__u64)val >> a->arg_bitshift);
}

/* tr2:event's arguments (usdt/tr2_probe.c): the kind, the calling object's
 * module number, then the trace2 probe's (docs/probes.md) but its last.
 * arg(p, n) is argument n of the kind's trace2 probe. */
#define KIND_ARG 0
#define MODULE_ARG 1
static __always_inline long arg(const struct hit *p, __u32 n)
{
	return event_arg(p, n + 2);
}

#define STR(p, n) ((const char *)arg(p, n))

/* Counts `count` events of process pid as lost. */
static __always_inline void count_lost(__u32 pid, __u64 count)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);

	if (n)
		*n += count;
	n = bpf_map_lookup_elem(&lost_by_pid, &pid);
	if (!n && bpf_map_update_elem(&lost_by_pid, &pid, &count, BPF_NOEXIST) == 0)
		return;
	/* Another CPU inserted it first: add to its entry. */
	if (!n)
		n = bpf_map_lookup_elem(&lost_by_pid, &pid);
	if (n)
		__sync_fetch_and_add(n, count);
}

/* Sends a record; wake: wake the consumer now (a process waits stopped
 * for it), else only when the ring buffer fills.  A Trace2 event that does
 * not fit counts as lost; the tracer's own records (thread info, metric
 * names, fork, exec) do not count, as they are not events: the caller
 * retries or tr2-bpf copes without. */
static __always_inline int send_wake(struct tr2_rec *rec, __u32 size, int wake)
{
	__u32 zero = 0;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
	__u64 flags = wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	if (!wake && sc && (sc->sent++ & (wakeup_check_every - 1)) == 0 &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;

	/* The mask proves size <= sizeof(struct scratch) to the verifier where
	 * it needs it; records are never that large, so it changes nothing. */
	if (bpf_ringbuf_output(&events, rec, size & (SCRATCH_SIZE - 1), flags)) {
		if (rec->kind < TR2_REC__PROBES && rec->kind != TR2_REC_TIMER_START &&
		    rec->kind != TR2_REC_COUNTER_ADD)
			count_lost(rec->pid, 1);
		return -1;
	}
	return 0;
}

static __always_inline int send(struct tr2_rec *rec, __u32 size)
{
	return send_wake(rec, size, 0);
}

/* A record whose strings did not all arrive defines no site: tr2-bpf must
 * not keep "(unreadable)" or a cut list as the site's strings. */
static __always_inline void forget_site(struct tr2_rec *r)
{
	if (!(r->flags & TR2_RECF_REF))
		r->interned = 0;
}

/* Appends one user-space string to the record being built. */
static __always_inline void add_str(struct tr2_rec *r, const char *s)
{
	__u32 off = r->size;
	__u16 word;
	long n;

	if (off >= SCRATCH_ROOM) {
		r->flags |= TR2_RECF_CUT;
		forget_site(r);
		return;
	}
	off &= SCRATCH_ROOM - 1;
	if (!s) {
		word = TR2_STR_NULL;
		n = 0;
	} else {
		n = bpf_probe_read_user_str((char *)r + off + 2, TR2_STR_MAX, s);
		if (n <= 0) {
			word = TR2_STR_FAULT;
			n = 0;
			forget_site(r);
		} else {
			n -= 1; /* the NUL */
			word = n;
			if (n == TR2_STR_MAX - 1)
				word |= TR2_STR_TRUNC;
		}
	}
	__builtin_memcpy((char *)r + off, &word, 2);
	r->size = off + 2 + (n & (TR2_STR_MAX - 1));
	r->nstr++;
}

/* Appends probe argument n, a string, as string pos (pos < 8) of the
 * record, unless it is one of the site's interned strings and the record
 * refers to them: then the argument is not even read. */
static __always_inline void add_arg(struct tr2_rec *r, const struct hit *p, int n, int pos)
{
	if (!(r->flags & TR2_RECF_REF) || !(r->interned & (1 << pos)))
		add_str(r, STR(p, n));
}

/* Appends a NULL-terminated vector of strings (argv). */
static __always_inline void add_vec(struct tr2_rec *r, const char *const *v)
{
	const char *s;

	if (!v)
		return;
	for (int i = 0; i < TR2_ARGV_MAX; i++) {
		if (bpf_probe_read_user(&s, sizeof(s), &v[i]) || !s)
			return;
		add_str(r, s);
		r->nvec++;
	}
	r->flags |= TR2_RECF_CUT;
}

static __always_inline struct tr2_rec *new_rec(__u8 kind, __u32 pid, __u32 tid)
{
	__u32 zero = 0;
	struct tr2_rec *r = bpf_map_lookup_elem(&scratch, &zero);

	if (!r)
		return 0;
	r->size = sizeof(*r);
	r->kind = kind;
	r->nstr = 0;
	r->pid = pid;
	r->tid = tid;
	r->line = 0;
	r->ts_ns = bpf_ktime_get_ns();
	r->num[0] = r->num[1] = r->num[2] = 0;
	r->thread_id = 0;
	r->flags = 0;
	r->nvec = 0;
	r->depth = 0;
	r->interned = 0;
	r->site = 0;
	r->region_ns = 0;
	return r;
}

/* Applies a region event to the thread's stack and stamps the record with
 * the depth and the region start it refers to. */
static __always_inline void track_regions(struct thread_state *ts, struct tr2_rec *r)
{
	__u32 d = ts->depth;

	if (r->kind == TR2_REC_REGION_ENTER) {
		if (d < TR2_REGION_MAX)
			ts->region_start[d] = r->ts_ns;
		ts->depth = d + 1;
	} else if (r->kind == TR2_REC_REGION_LEAVE) {
		if (d == 0) {
			r->depth = 0;   /* entered before the attach */
			return;
		}
		d -= 1;
		ts->depth = d;
		r->region_ns = d < TR2_REGION_MAX ? ts->region_start[d] : 0;
	} else if (d > 0 && d <= TR2_REGION_MAX) {
		r->region_ns = ts->region_start[d - 1];
	}
	r->depth = d;
}

/* Sends TR2_REC_THREAD_INFO the first time a thread hits a probe, so that a
 * tracer attached mid-run still knows the thread's name and its process's
 * start time. */
static __always_inline void announce(struct thread_state *ts, struct task_struct *task,
				     __u32 pid, __u32 tid, const struct hit *p)
{
	const struct trace2_tls *tls;
	struct tr2_rec *r;

	if (ts->announced)
		return;
	tls = (const struct trace2_tls *)arg(p, 0);
	r = new_rec(TR2_REC_THREAD_INFO, pid, tid);
	if (!r)
		return;
	r->num[0] = BPF_CORE_READ(task, real_parent, tgid);
	r->num[1] = BPF_CORE_READ(task, group_leader, start_time);
	r->num[2] = BPF_CORE_READ(task, start_time);
	if (tls)
		bpf_probe_read_user(&r->thread_id, sizeof(r->thread_id), &tls->thread_id);
	add_str(r, tls ? tls->base_name : 0);
	char comm[16];
	bpf_get_current_comm(comm, sizeof(comm));
	/* comm is kernel memory: copy it as a string the same way. */
	__u32 off = r->size & (SCRATCH_ROOM - 1);
	long n = bpf_probe_read_kernel_str((char *)r + off + 2, sizeof(comm), comm);
	__u16 word = n > 0 ? n - 1 : 0;
	__builtin_memcpy((char *)r + off, &word, 2);
	r->size = off + 2 + (word & 15);
	r->nstr++;
	if (send(r, r->size) == 0) {
		ts->announced = 1;
		/* tr2-bpf forgets this thread's interned strings here. */
		for (int i = 0; i < SITE_SLOTS; i++)
			ts->site_key[i] = 0;
	}
}

/* object_of()'s bpf_find_vma() callback: *key := a hash of the mapped
 * file (device, inode, change time) and the address it is loaded at (a
 * page is 4 KiB: x86).  The kernel keeps a flag in the top bits of
 * i_ctime_nsec (I_CTIME_QUERIED, since 6.13): not part of the time. */
static long object_of_vma(struct task_struct *task, struct vm_area_struct *vma, __u64 *key)
{
	struct file *file = vma->vm_file;
	struct inode *inode;
	__u64 k;

	if (!file)
		return 0;
	inode = file->f_inode;
	if (!bpf_core_field_exists(inode->i_ctime_sec))
		return 0;
	k = (inode->i_sb->s_dev ^ inode->i_ino * 0x9e3779b97f4a7c15ull) * 0x9e3779b97f4a7c15ull;
	k = (k ^ inode->i_ctime_sec ^ (__u64)(inode->i_ctime_nsec & 0x3fffffff) << 32) * 0x9e3779b97f4a7c15ull;
	k = (k ^ (vma->vm_start - (vma->vm_pgoff << 12))) * 0x9e3779b97f4a7c15ull;
	*key = k | 1;
	return 0;
}

/* Which object made the hit's call, as far as its literals' bytes go: the
 * file that holds its __FILE__ literal and the address that file is loaded
 * at, hashed.  A module number (docs/probes.md) names one load of an object,
 * so a plugin that is dlopened and dlclosed again and again gets a new one
 * each time, while its literals stay the same bytes at the same addresses
 * as long as the same file (same device, inode and change time) is loaded
 * at the same address: keyed this way, its call sites' strings are read and
 * sent once per thread, not once per load (ld.so's fstat at each dlopen
 * makes the kernel give a file rewritten in place a new change time).
 * Looked up (bpf_find_vma) at a thread's first hit from each module number,
 * kept for its last OBJECT_SLOTS; when there is no file (or the mm is busy,
 * or the kernel is older than 5.17), the module number itself, which is
 * never given twice in a process. */
static __always_inline __u64 object_of(struct thread_state *ts, const struct hit *p)
{
	__u32 module = event_arg(p, MODULE_ARG), slot = module & (OBJECT_SLOTS - 1);
	__u64 key = 0;

	if (module && ts->module[slot] == module)
		return ts->object_key[slot];
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_find_vma))   /* 5.17 */
		bpf_find_vma(bpf_get_current_task_btf(), arg(p, 1), object_of_vma, &key, 0);
	if (!key)
		key = (__u64)module << 1;   /* even: never an object_of_vma() key */
	ts->module[slot] = module;
	ts->object_key[slot] = key;
	return key;
}

/* A call site, as far as its strings go: the probe site (which runtime),
 * the event kind, the calling object (object_of()) and the addresses of
 * the call's literal strings (the file, arg 1, and arg 3 + i for literals
 * bit i), hashed; never 0.  Same key, same bytes: the addresses count
 * because one call site may pass different literals (a compiler may merge
 * two call sites that differ only in the literals they load; gcc -Os
 * cross-jumping does). */
static __always_inline __u64 site_key(struct thread_state *ts, const struct hit *p, __u8 literals)
{
	__u64 k = p->site;

	k = (k ^ event_arg(p, KIND_ARG)) * 0x9e3779b97f4a7c15ull;
	k = (k ^ object_of(ts, p)) * 0x9e3779b97f4a7c15ull;
	k = (k ^ arg(p, 1)) * 0x9e3779b97f4a7c15ull;
#pragma unroll
	for (int i = 1; i <= 3; i++)
		if (literals & (1 << i))
			k = (k ^ arg(p, 3 + i)) * 0x9e3779b97f4a7c15ull;
	return (k ^ k >> 29) | 1;
}

/* The state of the calling thread (task, of process pid), made at its first
 * hit; NULL when it is not traced. */
static __always_inline struct thread_state *thread_of(struct task_struct *task, __u32 pid)
{
	struct thread_state *ts = bpf_task_storage_get(&threads, task, 0, 0);

	if (!ts) {
		/* The thread's first hit.  Follow mode: only threads of traced
		 * processes get a state, so that having one says "traced"
		 * without a lookup in `traced` at every hit.  A process the
		 * filters leave out gets one that says so, for the same reason. */
		__u8 one = 1;

		if (follow && !bpf_map_lookup_elem(&traced, &pid))
			return 0;
		ts = bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts) {
			count_lost(pid, 1);
			return 0;
		}
		ts->ignored = !wanted();
		if (trace_all && !ts->ignored)
			bpf_map_update_elem(&traced, &pid, &one, BPF_NOEXIST);
	}
	return ts->ignored ? 0 : ts;
}

/* --category: whether the hit's category (arg 4 of region_enter,
 * region_leave, data, data_json) is one to leave out.  A literal category's
 * verdict is kept per thread by address, so that it is read once; one built
 * at run time is read at every hit. */
static __always_inline int cat_rejected(struct thread_state *ts, const struct hit *p, __u8 literals)
{
	const char *cat;
	char name[TR2_CAT_FILTER_MAX];
	__u64 seen, *slot;
	long n;
	int pass;

	if (!cat_filtered)
		return 0;
	cat = STR(p, 4);
	if (!cat)
		return 1;
	slot = &ts->cat_seen[(((__u64)cat * 0x9e3779b97f4a7c15ull) >> 61) & (CAT_SLOTS - 1)];
	seen = *slot;
	if ((literals & 2) && seen >> 1 == (__u64)cat)
		return !(seen & 1);
	__builtin_memset(name, 0, sizeof(name));
	n = bpf_probe_read_user_str(name, sizeof(name), cat);
	/* n == sizeof(name): longer than any name tr2-bpf allows */
	pass = n > 0 && n < sizeof(name) && bpf_map_lookup_elem(&cat_filter, name);
	if (literals & 2)
		*slot = (__u64)cat << 1 | pass;
	return !pass;
}

/* Whether records of this kind carry a category (arg 4), for --category. */
static __always_inline int has_category(__u8 kind)
{
	return kind >= TR2_REC_REGION_ENTER && kind <= TR2_REC_DATA_JSON;
}

/* Starts the record of a probe hit: filter, announce the thread, header,
 * line and file.  literals: bit i set when string i of the record is a
 * string literal at this call site (the file always is; docs/probes.md).
 * Returns NULL when the hit is not to be recorded. */
static __always_inline struct tr2_rec *begin(struct hit *p, __u8 kind, __u8 literals)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *ts = thread_of(task, pid);
	struct tr2_rec *r;

	if (!ts || (has_category(kind) && cat_rejected(ts, p, literals)))
		return 0;
	announce(ts, task, pid, tid, p);
	r = new_rec(kind, pid, tid);
	if (!r)
		return 0;
	track_regions(ts, r);
	r->line = arg(p, 2);
	r->interned = literals | 1;
	p->key = site_key(ts, p, literals);
	p->ts = ts;
	__u32 set = p->key % SITE_SLOTS & ~(SITE_WAYS - 1), slot = set, free = SITE_SLOTS;

#pragma unroll
	for (int i = 0; i < SITE_WAYS; i++) {
		__u64 k = ts->site_key[(set + i) & (SITE_SLOTS - 1)];

		if (k == p->key) {
			slot = set + i;
			r->flags |= TR2_RECF_REF;
			break;
		}
		if (!k && free == SITE_SLOTS)
			free = set + i;
	}
	if (!(r->flags & TR2_RECF_REF) && free != SITE_SLOTS)
		slot = free;
	r->site = 1 + slot;
	add_arg(r, p, 1, 0);
	return r;
}

/* Sends the record begun by begin(); once a site's strings went out whole,
 * the thread's later records from that site leave them out. */
static __always_inline int end(const struct hit *p, struct tr2_rec *r)
{
	if (send(r, r->size))
		return -1;
	if (r->interned && !(r->flags & TR2_RECF_REF))
		p->ts->site_key[(r->site - 1) & (SITE_SLOTS - 1)] = p->key;
	return 0;
}

/* The calling thread's slot of metric id, made when missing if create;
 * NULL when the process is not traced or (counted as lost) the thread has
 * no free slot.  Slots fill in order and are freed all at once. */
static __always_inline struct tr2_metric *metric_slot(long id, int create)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_state *ts = create ? thread_of(task, pid) :
					   bpf_task_storage_get(&threads, task, 0, 0);
	struct tr2_metric *m;
	int i;

	if (!ts)
		return 0;
	for (i = 0; i < TR2_THREAD_METRICS; i++) {
		if (ts->metrics[i].id == id)
			return &ts->metrics[i];
		if (!ts->metrics[i].id)
			break;
	}
	if (!create)
		return 0;
	if (i >= TR2_THREAD_METRICS) {
		count_lost(pid, 1);
		return 0;
	}
	m = &ts->metrics[i];
	__builtin_memset(m, 0, sizeof(*m));
	m->id = id;
	return m;
}

/* timer_start and counter_add: the thread's slot of the metric (arg 3),
 * whose definition (args category, name, per_thread) goes out at the
 * thread's first use; NULL when the hit is not recorded. */
static __always_inline struct tr2_metric *use_metric(struct hit *p, __u8 kind)
{
	struct tr2_metric *m = metric_slot(arg(p, 3), 1);
	struct tr2_rec *r;

	if (!m || m->defined)
		return m;
	r = begin(p, kind, 0);
	if (!r)
		return m;
	r->num[0] = m->id;
	r->num[1] = (int)arg(p, 6);
	add_str(r, STR(p, 4));
	add_str(r, STR(p, 5));
	if (end(p, r) == 0)
		m->defined = 1;
	return m;
}

/* Sends the thread's sums (TR2_REC_METRICS) and frees its slots.  gone: the
 * thread ended without thread_exit.  Sums that do not fit in the ring
 * buffer count as lost, one per metric. */
static __always_inline void send_metrics(struct thread_state *ts, __u32 pid, __u32 tid, int gone)
{
	struct tr2_rec *r;
	int n;

	if (!ts->metrics[0].id)
		return;
	r = new_rec(TR2_REC_METRICS, pid, tid);
	if (!r)
		return;
	for (n = 0; n < TR2_THREAD_METRICS && ts->metrics[n].id; n++) {
		__builtin_memcpy((char *)r + sizeof(*r) + n * sizeof(struct tr2_metric), &ts->metrics[n],
				 sizeof(struct tr2_metric));
		ts->metrics[n].id = 0;
	}
	r->num[0] = n;
	r->num[1] = gone;
	r->size = sizeof(*r) + n * sizeof(struct tr2_metric);
	if (send(r, r->size))
		count_lost(pid, n);
}

/* thread_exit and atexit: the calling thread's sums go out just before the
 * event, which reports them. */
static __always_inline void flush_metrics(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_state *ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0);

	if (ts)
		send_metrics(ts, id >> 32, (__u32)id, 0);
}

/* The body of a probe program: p is the hit, r its record (NULL: return);
 * `before` runs first, before the record is begun in the CPU's scratch. */
#define PROBE_AFTER(before, name, KIND, literals_arg, body)			\
SEC("usdt")									\
int probe_##name(struct pt_regs *ctx)						\
{										\
	struct hit hit, *p = load_hit(&hit, ctx);			\
	struct tr2_rec *r;							\
										\
	if (!p)									\
		return 0;							\
	before									\
	r = begin(p, KIND, literals_arg);					\
	if (!r)									\
		return 0;							\
	body									\
	return end(p, r);								\
}
#define PROBE(name, KIND, literals_arg, body) PROBE_AFTER(, name, KIND, literals_arg, body)

/* Arguments from 3 on, per probe (docs/probes.md). */
PROBE(version, TR2_REC_VERSION, 0,
      add_str(r, STR(p, 3));)
PROBE(start, TR2_REC_START, 0,
      add_vec(r, (const char *const *)arg(p, 3));)
PROBE(exit, TR2_REC_EXIT, 0,
      r->num[0] = (int)arg(p, 3);)
PROBE_AFTER(flush_metrics();, atexit, TR2_REC_ATEXIT, 0,
      r->num[0] = (int)arg(p, 3);)
PROBE(signal, TR2_REC_SIGNAL, 0,
      r->num[0] = (int)arg(p, 3);)
PROBE(error, TR2_REC_ERROR, 0,
      add_str(r, STR(p, 3));
      add_str(r, STR(p, 4));)
PROBE(cmd_path, TR2_REC_CMD_PATH, 0,
      add_str(r, STR(p, 3));)
PROBE(cmd_ancestry, TR2_REC_CMD_ANCESTRY, 0,
      add_vec(r, (const char *const *)arg(p, 3));)
PROBE(cmd_name, TR2_REC_CMD_NAME, 0,
      add_str(r, STR(p, 3));)
PROBE(cmd_mode, TR2_REC_CMD_MODE, 0,
      add_str(r, STR(p, 3));)
PROBE(alias, TR2_REC_ALIAS, 0,
      add_str(r, STR(p, 3));
      add_vec(r, (const char *const *)arg(p, 4));)
PROBE(def_param, TR2_REC_DEF_PARAM, 0,
      add_str(r, STR(p, 3));
      add_str(r, STR(p, 4));
      add_str(r, STR(p, 5));)
PROBE(def_repo, TR2_REC_DEF_REPO, 0,
      r->num[0] = (int)arg(p, 3);
      add_str(r, STR(p, 4));)
PROBE(child_start, TR2_REC_CHILD_START, 0,
      r->num[0] = (int)arg(p, 3);
      r->num[1] = (int)arg(p, 8);
      add_str(r, STR(p, 4));
      add_str(r, STR(p, 5));
      add_str(r, STR(p, 6));
      add_vec(r, (const char *const *)arg(p, 7));)
PROBE(child_exit, TR2_REC_CHILD_EXIT, 0,
      r->num[0] = (int)arg(p, 3);
      r->num[1] = (int)arg(p, 4);
      r->num[2] = (int)arg(p, 5);)
PROBE(child_ready, TR2_REC_CHILD_READY, 0,
      r->num[0] = (int)arg(p, 3);
      r->num[1] = (int)arg(p, 4);
      add_str(r, STR(p, 5));)
PROBE(exec, TR2_REC_EXEC, 0,
      r->num[0] = (int)arg(p, 3);
      add_str(r, STR(p, 4));
      add_vec(r, (const char *const *)arg(p, 5));)
PROBE(exec_result, TR2_REC_EXEC_RESULT, 0,
      r->num[0] = (int)arg(p, 3);
      r->num[1] = (int)arg(p, 4);)
PROBE(thread_start, TR2_REC_THREAD_START, 0,
      r->thread_id = (int)arg(p, 3);
      add_str(r, STR(p, 4));)
PROBE_AFTER(flush_metrics();, thread_exit, TR2_REC_THREAD_EXIT, 0, )
PROBE(printf, TR2_REC_PRINTF, 0,
      add_str(r, STR(p, 3));)
/* region_enter, region_leave, data, data_json: repo_id, then category,
 * label or key, and msg, value or JSON text as strings 1-3, which the
 * literals argument (trace2.h) marks. */
#define REPO_AND_STRINGS			\
	r->num[0] = (int)arg(p, 3);		\
	add_arg(r, p, 4, 1);			\
	add_arg(r, p, 5, 2);			\
	add_arg(r, p, 6, 3);

/* --summary (tr2_record.h): aggregates of regions and integer data. */

static __always_inline void agg_lost_add(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&agg_lost, &why);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* A 64-bit hash of the n bytes at buf (size bytes, a multiple of 8, n <= size). */
static __always_inline __u64 hash_bytes(const char *buf, long n, int size)
{
	__u64 h = 0xcbf29ce484222325ull, w;

#pragma unroll
	for (int i = 0; i < size / 8; i++) {
		if (i * 8 >= n)
			break;
		__builtin_memcpy(&w, buf + i * 8, 8);
		if (n - i * 8 < 8)
			w &= (1ull << ((n - i * 8) * 8)) - 1;
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ^ n;
}

/* String s of a key: when it is a literal (lit), its address, mixed with
 * its object's key (object_of(): another object loaded at the same address
 * may hold other bytes there); else a hash of its bytes, read into buf
 * (size bytes) and *read set.  NULL and unreadable strings are empty. */
static __always_inline __u64 key_str(const char *s, int lit, __u64 object, char *buf, int size,
				     int *read)
{
	long n = 0;

	if (lit)
		return (__u64)s ^ object;
	if (s)
		n = bpf_probe_read_user_str(buf, size, s);
	if (n <= 0) {
		buf[0] = 0;
		n = 1;
	}
	*read = 1;
	return hash_bytes(buf, n, size);
}

/* The aggregate of the hit's (category, label or key) in the calling
 * thread's process, made when new; its key in *k.  NULL when "aggs" is full
 * (counted). */
static __always_inline struct tr2_agg_val *agg_of(struct thread_state *ts, const struct hit *p,
						  __u32 pid, __u32 kind, __u8 literals,
						  struct tr2_agg_key *k)
{
	const char *cat = STR(p, 4), *label = STR(p, 5);
	struct tr2_agg_val *nv, *v;
	int cat_read = 0, label_read = 0;
	__u64 object;
	__u32 zero = 0;

	nv = bpf_map_lookup_elem(&agg_new, &zero);
	if (!nv)
		return 0;
	if (!ts->exec_key)
		ts->exec_key = BPF_CORE_READ(bpf_get_current_task_btf(), self_exec_id) + 1;
	k->pid = pid;
	k->flags = kind | (literals & 2 ? TR2_AGGK_CAT_LIT : 0) | (literals & 4 ? TR2_AGGK_LABEL_LIT : 0);
	k->exec_id = ts->exec_key - 1;
	object = literals & 6 ? object_of(ts, p) : 0;
	k->cat = key_str(cat, literals & 2, object, nv->cat, TR2_AGG_CAT_MAX, &cat_read);
	k->label = key_str(label, literals & 4, object, nv->label, TR2_AGG_LABEL_MAX, &label_read);
	v = bpf_map_lookup_elem(&aggs, k);
	if (v)
		return v;
	/* New: its names, read once, and zero sums. */
	if (!cat_read && (!cat || bpf_probe_read_user_str(nv->cat, TR2_AGG_CAT_MAX, cat) <= 0))
		nv->cat[0] = 0;
	if (!label_read && (!label || bpf_probe_read_user_str(nv->label, TR2_AGG_LABEL_MAX, label) <= 0))
		nv->label[0] = 0;
	nv->count = nv->sum = nv->last = nv->open = nv->before = 0;
	nv->min = 0x7fffffffffffffffll;
	nv->max = -0x7fffffffffffffffll - 1;
	__builtin_memset(nv->hist, 0, sizeof(nv->hist));
	bpf_map_update_elem(&aggs, k, nv, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&aggs, k);
	if (!v)
		agg_lost_add(TR2_AGG_LOST_FULL);
	return v;
}

/* *m = min(*m, x) and max, against other CPUs updating the same aggregate. */
static __always_inline void agg_min(__s64 *m, __s64 x)
{
	for (int i = 0; i < 8; i++) {
		__s64 cur = *m;

		if (x >= cur || __sync_val_compare_and_swap(m, cur, x) == cur)
			return;
	}
}

static __always_inline void agg_max(__s64 *m, __s64 x)
{
	for (int i = 0; i < 8; i++) {
		__s64 cur = *m;

		if (x <= cur || __sync_val_compare_and_swap(m, cur, x) == cur)
			return;
	}
}

/* floor(log2(v)), 0 for v < 2: the histogram slot of a duration. */
static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffull) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	return r | (v >> 1);
}

/* region_enter at depth d (before the push) of thread ts. */
static __always_inline void agg_enter(struct thread_state *ts, const struct hit *p, __u32 pid,
				      __u8 literals, __u32 d)
{
	struct region_keys *rk;
	struct tr2_agg_key *k;
	struct tr2_agg_val *v;

	if (d >= TR2_REGION_MAX) {
		agg_lost_add(TR2_AGG_LOST_DEEP);
		return;
	}
	rk = bpf_task_storage_get(&region_keys, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!rk) {
		agg_lost_add(TR2_AGG_LOST_FULL);
		return;
	}
	k = &rk->key[d & (TR2_REGION_MAX - 1)];
	v = agg_of(ts, p, pid, TR2_AGGK_REGION, literals, k);
	if (!v) {
		k->flags = 0;
		return;
	}
	__sync_fetch_and_add(&v->open, 1);
}

/* region_leave of the region at depth d (after the pop), entered at start
 * (ns; 0: deeper than the stack keeps), left at now; or, `before`, of a
 * region entered before the attach: no duration, counted apart. */
static __always_inline void agg_leave(struct thread_state *ts, const struct hit *p, __u32 pid,
				      __u8 literals, __u32 d, __u64 start, __u64 now, int before)
{
	struct tr2_agg_key *k, pre;
	struct region_keys *rk;
	struct tr2_agg_val *v;
	__s64 len;

	if (before) {
		v = agg_of(ts, p, pid, TR2_AGGK_REGION, literals, &pre);
		if (v)
			__sync_fetch_and_add(&v->before, 1);
		return;
	}
	if (d >= TR2_REGION_MAX || !start) {
		agg_lost_add(TR2_AGG_LOST_DEEP);
		return;
	}
	rk = bpf_task_storage_get(&region_keys, bpf_get_current_task_btf(), 0, 0);
	k = rk ? &rk->key[d & (TR2_REGION_MAX - 1)] : 0;
	v = k && k->flags ? bpf_map_lookup_elem(&aggs, k) : 0;
	if (!v) {
		agg_lost_add(TR2_AGG_LOST_FULL);
		return;
	}
	len = now - start;
	__sync_fetch_and_add(&v->open, -1);
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->sum, len);
	__sync_fetch_and_add(&v->hist[log2_slot(len) & (TR2_AGG_SLOTS - 1)], 1);
	agg_min(&v->min, len);
	agg_max(&v->max, len);
}

/* An integer `data` value (arg 7) of thread ts. */
static __always_inline void agg_data(struct thread_state *ts, const struct hit *p, __u32 pid, __u8 literals)
{
	struct tr2_agg_key k;
	struct tr2_agg_val *v;
	__s64 x = arg(p, 7);

	v = agg_of(ts, p, pid, TR2_AGGK_DATA, literals, &k);
	if (!v)
		return;
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->sum, x);
	v->last = x;
	agg_min(&v->min, x);
	agg_max(&v->max, x);
}

/* --summary without a stream: region_enter and region_leave only keep the
 * thread's region stack and the aggregates; no record. */
static __always_inline int region_summary_only(const struct hit *p, __u8 kind, __u8 literals)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32, d;
	struct thread_state *ts = thread_of(bpf_get_current_task_btf(), pid);
	__u64 now;

	if (!ts || cat_rejected(ts, p, literals))
		return 0;
	now = bpf_ktime_get_ns();
	d = ts->depth;
	if (kind == TR2_REC_REGION_ENTER) {
		if (d < TR2_REGION_MAX)
			ts->region_start[d & (TR2_REGION_MAX - 1)] = now;
		ts->depth = d + 1;
		agg_enter(ts, p, pid, literals, d);
	} else if (d == 0) {
		agg_leave(ts, p, pid, literals, 0, 0, now, 1);
	} else {
		d -= 1;
		ts->depth = d;
		agg_leave(ts, p, pid, literals, d,
			  d < TR2_REGION_MAX ? ts->region_start[d & (TR2_REGION_MAX - 1)] : 0, now, 0);
	}
	return 0;
}

/* --summary with a stream: aggregate what the record r (begun) says. */
static __always_inline void region_summary(const struct hit *p, const struct tr2_rec *r, __u8 literals)
{
	struct thread_state *ts = p->ts;

	if (r->kind == TR2_REC_REGION_ENTER)
		agg_enter(ts, p, r->pid, literals, r->depth);
	else
		agg_leave(ts, p, r->pid, literals, r->depth, r->region_ns, r->ts_ns,
			  r->depth == 0 && r->region_ns == 0);
}

#define REGION_PROBE(name, KIND)						\
SEC("usdt")									\
int probe_##name(struct pt_regs *ctx)						\
{										\
	struct hit hit, *p = load_hit(&hit, ctx);				\
	struct tr2_rec *r;							\
	__u8 literals;								\
										\
	if (!p)									\
		return 0;							\
	literals = arg(p, 7);							\
	if (summary && !stream)							\
		return region_summary_only(p, KIND, literals);			\
	r = begin(p, KIND, literals);						\
	if (!r)									\
		return 0;							\
	if (summary)								\
		region_summary(p, r, literals);					\
	REPO_AND_STRINGS							\
	return end(p, r);							\
}
REGION_PROBE(region_enter, TR2_REC_REGION_ENTER)
REGION_PROBE(region_leave, TR2_REC_REGION_LEAVE)

SEC("usdt")
int probe_data(struct pt_regs *ctx)
{
	struct hit hit, *p = load_hit(&hit, ctx);
	struct thread_state *ts;
	struct tr2_rec *r;
	__u8 literals;
	__u32 pid;
	int agg;

	if (!p)
		return 0;
	literals = arg(p, 8);
	agg = summary && !arg(p, 6);   /* an integer value: no string */
	if (agg && !stream) {
		pid = bpf_get_current_pid_tgid() >> 32;
		ts = thread_of(bpf_get_current_task_btf(), pid);
		if (ts && !cat_rejected(ts, p, literals))
			agg_data(ts, p, pid, literals);
		return 0;
	}
	r = begin(p, TR2_REC_DATA, literals);
	if (!r)
		return 0;
	if (agg)
		agg_data(p->ts, p, r->pid, literals);
	REPO_AND_STRINGS
	r->num[1] = arg(p, 7);
	return end(p, r);
}
PROBE(data_json, TR2_REC_DATA_JSON, arg(p, 7), REPO_AND_STRINGS)

SEC("usdt")
int probe_timer_start(struct pt_regs *ctx)
{
	struct hit hit, *p = load_hit(&hit, ctx);
	struct tr2_metric *m = p ? use_metric(p, TR2_REC_TIMER_START) : 0;

	if (!m)
		return 0;
	if (m->recursion++ == 0)   /* git ignores recursive starts */
		m->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int probe_timer_stop(struct pt_regs *ctx)
{
	struct hit hit, *p = load_hit(&hit, ctx);
	struct tr2_metric *m;
	__u64 len;

	if (!p)
		return 0;
	m = metric_slot(arg(p, 3), 0);
	/* A stop whose start came before the attach is not counted. */
	if (!m || m->recursion == 0 || --m->recursion)
		return 0;
	len = bpf_ktime_get_ns() - m->start_ns;
	if (!m->intervals || len < m->min_ns)
		m->min_ns = len;
	if (len > m->max_ns)
		m->max_ns = len;
	m->total_ns += len;
	m->intervals++;
	return 0;
}

SEC("usdt")
int probe_counter_add(struct pt_regs *ctx)
{
	struct hit hit, *p = load_hit(&hit, ctx);
	struct tr2_metric *m = p ? use_metric(p, TR2_REC_COUNTER_ADD) : 0;

	if (!m)
		return 0;
	m->is_counter = 1;
	m->count += arg(p, 7);
	return 0;
}

/* tr2:event, the one payload site (usdt/tr2_probe.c): the program of the
 * event's kind (its first argument), by tail call; a kind this tracer does
 * not know does nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, TR2_REC__PROBES);
	__uint(key_size, sizeof(__u32));
	__array(values, int (struct pt_regs *));
} kinds SEC(".maps") = {
	.values = {
		[TR2_REC_VERSION] = (void *)&probe_version,
		[TR2_REC_START] = (void *)&probe_start,
		[TR2_REC_EXIT] = (void *)&probe_exit,
		[TR2_REC_ATEXIT] = (void *)&probe_atexit,
		[TR2_REC_SIGNAL] = (void *)&probe_signal,
		[TR2_REC_ERROR] = (void *)&probe_error,
		[TR2_REC_CMD_PATH] = (void *)&probe_cmd_path,
		[TR2_REC_CMD_ANCESTRY] = (void *)&probe_cmd_ancestry,
		[TR2_REC_CMD_NAME] = (void *)&probe_cmd_name,
		[TR2_REC_CMD_MODE] = (void *)&probe_cmd_mode,
		[TR2_REC_ALIAS] = (void *)&probe_alias,
		[TR2_REC_DEF_PARAM] = (void *)&probe_def_param,
		[TR2_REC_DEF_REPO] = (void *)&probe_def_repo,
		[TR2_REC_CHILD_START] = (void *)&probe_child_start,
		[TR2_REC_CHILD_EXIT] = (void *)&probe_child_exit,
		[TR2_REC_CHILD_READY] = (void *)&probe_child_ready,
		[TR2_REC_EXEC] = (void *)&probe_exec,
		[TR2_REC_EXEC_RESULT] = (void *)&probe_exec_result,
		[TR2_REC_THREAD_START] = (void *)&probe_thread_start,
		[TR2_REC_THREAD_EXIT] = (void *)&probe_thread_exit,
		[TR2_REC_REGION_ENTER] = (void *)&probe_region_enter,
		[TR2_REC_REGION_LEAVE] = (void *)&probe_region_leave,
		[TR2_REC_DATA] = (void *)&probe_data,
		[TR2_REC_DATA_JSON] = (void *)&probe_data_json,
		[TR2_REC_PRINTF] = (void *)&probe_printf,
		[TR2_REC_TIMER_START] = (void *)&probe_timer_start,
		[TR2_REC_TIMER_STOP] = (void *)&probe_timer_stop,
		[TR2_REC_COUNTER_ADD] = (void *)&probe_counter_add,
	},
};

SEC("usdt")
int probe_event(struct pt_regs *ctx)
{
	struct hit hit, *p = load_hit(&hit, ctx);

	if (p)
		bpf_tail_call(ctx, &kinds, (__u32)event_arg(p, KIND_ARG));
	return 0;
}

/* Sends SIGCONT to the held process *pid; counts it in `unserved`. */
static long release_one(struct bpf_map *map, __u32 *pid, __u64 *since, void *ctx)
{
	struct task_struct *t = bpf_task_from_pid(*pid);
	__u32 zero = 0;
	__u64 *n;

	if (t) {
		bpf_send_signal_task(t, SIGCONT, PIDTYPE_TGID, 0);
		bpf_task_release(t);
	}
	bpf_map_delete_elem(map, pid);
	n = bpf_map_lookup_elem(&unserved, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

/* Lets every held process go on. */
static __always_inline void release_all(void)
{
	bpf_for_each_map_elem(&held, release_one, 0, 0);
	oldest_hold = 0;
}

static long release_if_old(struct bpf_map *map, __u32 *pid, __u64 *since, __u64 *now)
{
	if (*now - *since >= TR2_HOLD_MAX_NS) {
		tracer_absent = 1;
		release_one(map, pid, since, 0);
	}
	else if (!oldest_hold || *since < oldest_hold)
		oldest_hold = *since;
	return 0;
}

/* Lets the processes held longer than TR2_HOLD_MAX_NS go on: tr2-bpf is alive
 * but does not serve them (a debugger holds it, it is starved, ...).  The
 * same as tr2-bpf's watchdog (loader/tr2_bpf.c), which counts its own. */
static __always_inline void release_expired(void)
{
	__u64 now, since = oldest_hold;

	if (!since)
		return;
	now = bpf_ktime_get_ns();
	if (now - since < TR2_HOLD_MAX_NS)
		return;
	oldest_hold = 0;
	bpf_for_each_map_elem(&held, release_if_old, &now, 0);
}

/* tr2-bpf is being stopped or killed: it cannot serve a held process, nor
 * one that would be held until it is continued. */
SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal, int sig, struct kernel_siginfo *info, struct task_struct *task, int group, int result)
{
	if (task->tgid != tracer_tgid)
		return 0;
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGKILL) {
		tracer_absent = 1;
		release_all();
	} else if (sig == SIGCONT) {
		tracer_absent = 0;
	}
	return 0;
}

/* Follow mode: a traced process forked a process. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid;
	__u8 one = 1;
	struct tr2_rec *r;

	release_expired();
	if (!follow || ppid == cpid || !bpf_map_lookup_elem(&traced, &ppid))
		return 0;
	bpf_map_update_elem(&traced, &cpid, &one, BPF_ANY);
	r = new_rec(TR2_REC_FORK, cpid, child->pid);
	if (!r)
		return 0;
	r->num[0] = ppid;
	r->num[1] = child->start_time;
	send(r, r->size);
	return 0;
}

/* A thread exited.  Sums of a thread that never called thread_exit go to
 * tr2-bpf now (for its process's totals); if it had sent records, tr2-bpf
 * forgets its interned strings (task storage goes with the task by
 * itself).  If it was the last thread of a traced process, the process
 * leaves `traced` (a later process that got the same pid would be taken
 * for a traced one) and tr2-bpf frees what it kept of it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct thread_state *ts = bpf_task_storage_get(&threads, p, 0, 0);
	__u32 pid = p->tgid;
	struct tr2_rec *r;

	if (pid == tracer_tgid) {
		release_all();   /* tr2-bpf ends (killed, crashed, done): no one to wait for */
		return 0;
	}
	release_expired();
	if (ts) {
		send_metrics(ts, pid, p->pid, 1);
		if (ts->announced && (r = new_rec(TR2_REC_THREAD_GONE, pid, p->pid)))
			send(r, r->size);
	}
	/* do_exit() counts live threads down before this tracepoint. */
	if (BPF_CORE_READ(p, signal, live.counter) == 0 && bpf_map_delete_elem(&traced, &pid) == 0 &&
	    (r = new_rec(TR2_REC_PROC_GONE, pid, p->pid)))
		send(r, r->size);
	return 0;
}

/* Whether process pid may be held (stopped) for tr2-bpf, from now_ns:
 * entered into `held`, unless tr2-bpf is starting, or cannot serve it or
 * too many are held (then counted in unserved[1]). */
static __always_inline int hold(__u32 pid, __u64 now_ns)
{
	__u32 one = 1;
	__u64 *n;

	if (starting)
		return 0;
	if (!tracer_absent && bpf_map_update_elem(&held, &pid, &now_ns, BPF_ANY) == 0) {
		if (!oldest_hold)
			oldest_hold = now_ns;
		return 1;
	}
	n = bpf_map_lookup_elem(&unserved, &one);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

/* Whether the object file of inode has not been looked at by tr2-bpf;
 * *key: its key in `known`. */
static __always_inline int unknown_object(struct inode *inode, struct tr2_object_key *key)
{
	if (!inode)
		return 0;
	key->dev = inode->i_sb->s_dev;
	key->ino = inode->i_ino;
	key->pid = known_per_process ? bpf_get_current_pid_tgid() >> 32 : 0;
	return !bpf_map_lookup_elem(&known, key);
}

/* Sends a TR2_REC_EXECVE or TR2_REC_NEW_OBJECT record for the calling
 * thread (tr2_record.h).  When stop, key names an object the process maps
 * that is not known yet: the process stops (SIGSTOP, on its way back to
 * user space) so that tr2-bpf attaches to it before its code runs, and
 * tr2-bpf is woken at once; it sends SIGCONT when done. */
static __always_inline void send_object(__u8 kind, int stop, const struct tr2_object_key *key)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct tr2_rec *r = new_rec(kind, pid, (__u32)id);

	if (!r)
		return;
	if (stop && !hold(pid, r->ts_ns))
		stop = 0;
	r->num[0] = stop;
	r->num[1] = key->dev;
	r->num[2] = key->ino;
	if (send_wake(r, r->size, stop) == 0 && stop)
		bpf_send_signal(SIGSTOP);
	else if (stop)
		bpf_map_delete_elem(&held, &pid);
}

/* A traced process called exec (either mode: tr2-bpf -p puts its PID in
 * `traced`): a new session, and a stop if the new program is not known.
 * Its loader, and the objects the loader maps, are looked at when their
 * code first runs (on_fault). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = p->tgid;

	int had_events = bpf_map_lookup_elem(&traced, &pid) != 0;

	release_expired();
	/* A new program: no regions open, announce the thread again, decide
	 * the filters again. */
	if (had_events || trace_all) {
		bpf_task_storage_delete(&threads, p);
		bpf_task_storage_delete(&region_keys, p);
	}
	if (!traced_now(pid))
		return 0;
	struct tr2_object_key key = {};
	int stop = unknown_object(p->mm->exe_file->f_inode, &key);

	/* -a: only a process that sent events before has a session to end */
	if (stop || had_events)
		send_object(TR2_REC_EXECVE, stop, stop ? &key : &(struct tr2_object_key){});
	return 0;
}

/* Where a traced process meets an object file's code for the first time:
 * an instruction fetched from a page of a file mapping that is not in its
 * page tables yet faults, and the kernel maps that page from the file's page
 * cache (filemap_map_pages, the fault-around, or filemap_fault).  When that
 * file was not looked at, the process stops so that tr2-bpf attaches to it
 * before any of its code runs: an object that dlopen maps, or the libraries
 * a program starts with.  The fault's own tracepoint (x86) says whether it
 * is an instruction fetch, and the filemap ones which file it is in; the
 * thread's fault count, which the kernel raises once the fault is done,
 * ties the two together (code_fault).  Every user page fault on the host
 * passes here while tr2-bpf runs: one test for a data fault, one task
 * storage look-up for a page of a file.  A page mapped by the fault-around
 * of a read fault in the same mapping runs without a fault of its own: an
 * object whose code the loader reads as data (-z noseparate-code) can be
 * looked at late (docs/probes.md). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);   /* the thread's faults + 1 at an instruction fault, or 0 */
} code_fault SEC(".maps");

static __always_inline __u64 faults_of(struct task_struct *task)
{
	return task->min_flt + task->maj_flt + 1;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	struct task_struct *task;
	__u64 *pending;

	if (!(error_code & X86_PF_INSTR) || !traced_now(bpf_get_current_pid_tgid() >> 32))
		return 0;
	task = bpf_get_current_task_btf();
	pending = bpf_task_storage_get(&code_fault, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (pending)
		*pending = faults_of(task);
	return 0;
}

/* The page being mapped is in mapping's file: when the thread's fault is
 * the instruction fetch on_fault saw, that is the file whose code runs. */
static __always_inline void code_page(struct address_space *mapping)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 *pending = bpf_task_storage_get(&code_fault, task, 0, 0);
	struct tr2_object_key key = {};
	__u64 fault;

	if (!pending || !*pending)
		return;
	fault = *pending;
	*pending = 0;
	if (fault == faults_of(task) && unknown_object(mapping->host, &key))
		send_object(TR2_REC_NEW_OBJECT, 1, &key);
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(on_map_pages, struct address_space *mapping, unsigned long index, unsigned long last)
{
	code_page(mapping);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(on_filemap_fault, struct address_space *mapping, unsigned long index)
{
	code_page(mapping);
	return 0;
}
