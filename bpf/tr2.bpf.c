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

#define SIGSTOP 19

char LICENSE[] SEC("license") = "GPL";

/* Set by tr2-bpf before load. */
const volatile int follow = 0;  /* only record processes in `traced` (tr2-bpf -- CMD) */
/* Wake the consumer only once this much is waiting; it also polls on a
 * timer.  A wakeup per record (irq_work, then a cross-CPU wakeup) nearly
 * doubled the cost of an event (BENCHMARKS.md). */
const volatile __u64 wakeup_bytes = 1 << 20;

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

/* Per thread: whether its TR2_REC_THREAD_INFO was sent, and its open
 * regions (their start times), kept here rather than in tr2-bpf so that a
 * dropped record cannot skew the nesting of the records after it. */
struct thread_state {
	__u8 announced;
	__u32 depth;
	__u64 region_start[TR2_REGION_MAX];
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* Timer and counter sums per (process, thread, metric); see tr2_record.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);  /* not 8.7 MiB locked for a few timers */
	__uint(max_entries, 65536);
	__type(key, struct tr2_metric_key);
	__type(value, struct tr2_metric_val);
} metrics SEC(".maps");

/* Metrics whose definition record was sent, per process. */
struct metric_def_key {
	__u32 pid;
	__u32 pad;
	__u64 id;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct metric_def_key);
	__type(value, __u8);
} metric_defs SEC(".maps");

/* Where a record is built before it is copied into the ring buffer, so that
 * each record takes exactly its own size there. */
#define SCRATCH_ROOM 16384u   /* strings start below this offset */
#define SCRATCH_SIZE 32768u   /* a power of 2 above SCRATCH_ROOM + TR2_STR_MAX + 2 */
struct scratch {
	char buf[SCRATCH_SIZE];
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

static __always_inline void count_lost(__u32 pid)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero), one = 1;

	if (n)
		*n += 1;
	n = bpf_map_lookup_elem(&lost_by_pid, &pid);
	if (!n && bpf_map_update_elem(&lost_by_pid, &pid, &one, BPF_NOEXIST) == 0)
		return;
	/* Another CPU inserted it first: add to its entry. */
	if (!n)
		n = bpf_map_lookup_elem(&lost_by_pid, &pid);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* Sends a record.  A Trace2 event that does not fit counts as lost; the
 * tracer's own records (thread info, metric names, fork, exec) do not count,
 * as they are not events: the caller retries or tr2-bpf copes without. */
static __always_inline int send(struct tr2_rec *rec, __u32 size)
{
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
		      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	/* The mask proves size <= sizeof(struct scratch) to the verifier where
	 * it needs it; records are never that large, so it changes nothing. */
	if (bpf_ringbuf_output(&events, rec, size & (SCRATCH_SIZE - 1), flags)) {
		if (rec->kind < TR2_REC__PROBES && rec->kind != TR2_REC_TIMER_START &&
		    rec->kind != TR2_REC_COUNTER_ADD)
			count_lost(rec->pid);
		return -1;
	}
	return 0;
}

/* Appends one user-space string to the record being built. */
static __always_inline void add_str(struct tr2_rec *r, const char *s)
{
	__u32 off = r->size;
	__u16 word;
	long n;

	if (off >= SCRATCH_ROOM) {
		r->flags |= TR2_RECF_CUT;
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
	r->pad = 0;
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
				     __u32 pid, __u32 tid, const struct trace2_tls *tls)
{
	struct tr2_rec *r;

	if (ts->announced)
		return;
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
	if (send(r, r->size) == 0)
		ts->announced = 1;
}

/* Starts the record of a probe hit: filter, announce the thread, header and
 * file name.  Returns NULL when the hit is not to be recorded. */
static __always_inline struct tr2_rec *begin(__u8 kind, const struct trace2_tls *tls,
					     const char *file, int line)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct tr2_rec *r;

	struct task_struct *task;
	struct thread_state *ts;

	if (follow && !bpf_map_lookup_elem(&traced, &pid))
		return 0;
	task = bpf_get_current_task_btf();
	ts = bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts) {
		count_lost(pid);
		return 0;
	}
	announce(ts, task, pid, tid, tls);
	r = new_rec(kind, pid, tid);
	if (!r)
		return 0;
	track_regions(ts, r);
	r->line = line;
	add_str(r, file);
	return r;
}

#define END(r) send(r, r->size)

SEC("usdt")
int BPF_USDT(probe_version, struct trace2_tls *tls, const char *file, int line, const char *exe)
{
	struct tr2_rec *r = begin(TR2_REC_VERSION, tls, file, line);
	if (!r) return 0;
	add_str(r, exe);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_start, struct trace2_tls *tls, const char *file, int line, const char *const *argv)
{
	struct tr2_rec *r = begin(TR2_REC_START, tls, file, line);
	if (!r) return 0;
	add_vec(r, argv);
	return END(r);
}

/* Probes whose payload is one int: exit, atexit, signal. */
#define PROBE_INT(name, KIND)							\
SEC("usdt")									\
int BPF_USDT(probe_##name, struct trace2_tls *tls, const char *file, int line, int v)	\
{										\
	struct tr2_rec *r = begin(KIND, tls, file, line);			\
	if (!r) return 0;							\
	r->num[0] = v;								\
	return END(r);								\
}
PROBE_INT(exit, TR2_REC_EXIT)
PROBE_INT(atexit, TR2_REC_ATEXIT)
PROBE_INT(signal, TR2_REC_SIGNAL)

SEC("usdt")
int BPF_USDT(probe_error, struct trace2_tls *tls, const char *file, int line, const char *msg, const char *fmt)
{
	struct tr2_rec *r = begin(TR2_REC_ERROR, tls, file, line);
	if (!r) return 0;
	add_str(r, msg);
	add_str(r, fmt);
	return END(r);
}

/* Probes whose payload is one string: cmd_path, cmd_name, cmd_mode, printf. */
#define PROBE_STR(name, KIND)							\
SEC("usdt")									\
int BPF_USDT(probe_##name, struct trace2_tls *tls, const char *file, int line, const char *s) \
{										\
	struct tr2_rec *r = begin(KIND, tls, file, line);			\
	if (!r) return 0;							\
	add_str(r, s);								\
	return END(r);								\
}
PROBE_STR(cmd_path, TR2_REC_CMD_PATH)
PROBE_STR(cmd_name, TR2_REC_CMD_NAME)
PROBE_STR(cmd_mode, TR2_REC_CMD_MODE)
PROBE_STR(printf, TR2_REC_PRINTF)

SEC("usdt")
int BPF_USDT(probe_cmd_ancestry, struct trace2_tls *tls, const char *file, int line, const char *const *names)
{
	struct tr2_rec *r = begin(TR2_REC_CMD_ANCESTRY, tls, file, line);
	if (!r) return 0;
	add_vec(r, names);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_alias, struct trace2_tls *tls, const char *file, int line, const char *alias,
	     const char *const *argv)
{
	struct tr2_rec *r = begin(TR2_REC_ALIAS, tls, file, line);
	if (!r) return 0;
	add_str(r, alias);
	add_vec(r, argv);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_def_param, struct trace2_tls *tls, const char *file, int line, const char *param,
	     const char *value, const char *scope)
{
	struct tr2_rec *r = begin(TR2_REC_DEF_PARAM, tls, file, line);
	if (!r) return 0;
	add_str(r, param);
	add_str(r, value);
	add_str(r, scope);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_def_repo, struct trace2_tls *tls, const char *file, int line, int repo_id,
	     const char *worktree)
{
	struct tr2_rec *r = begin(TR2_REC_DEF_REPO, tls, file, line);
	if (!r) return 0;
	r->num[0] = repo_id;
	add_str(r, worktree);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_child_start, struct trace2_tls *tls, const char *file, int line, int child_id,
	     const char *child_class, const char *hook_name, const char *cd,
	     const char *const *argv, int use_shell)
{
	struct tr2_rec *r = begin(TR2_REC_CHILD_START, tls, file, line);
	if (!r) return 0;
	r->num[0] = child_id;
	r->num[1] = use_shell;
	add_str(r, child_class);
	add_str(r, hook_name);
	add_str(r, cd);
	add_vec(r, argv);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_child_exit, struct trace2_tls *tls, const char *file, int line, int child_id,
	     int pid, int code)
{
	struct tr2_rec *r = begin(TR2_REC_CHILD_EXIT, tls, file, line);
	if (!r) return 0;
	r->num[0] = child_id;
	r->num[1] = pid;
	r->num[2] = code;
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_child_ready, struct trace2_tls *tls, const char *file, int line, int child_id,
	     int pid, const char *ready)
{
	struct tr2_rec *r = begin(TR2_REC_CHILD_READY, tls, file, line);
	if (!r) return 0;
	r->num[0] = child_id;
	r->num[1] = pid;
	add_str(r, ready);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_exec, struct trace2_tls *tls, const char *file, int line, int exec_id,
	     const char *exe, const char *const *argv)
{
	struct tr2_rec *r = begin(TR2_REC_EXEC, tls, file, line);
	if (!r) return 0;
	r->num[0] = exec_id;
	add_str(r, exe);
	add_vec(r, argv);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_exec_result, struct trace2_tls *tls, const char *file, int line, int exec_id, int code)
{
	struct tr2_rec *r = begin(TR2_REC_EXEC_RESULT, tls, file, line);
	if (!r) return 0;
	r->num[0] = exec_id;
	r->num[1] = code;
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_thread_start, struct trace2_tls *tls, const char *file, int line, int thread_id,
	     const char *base_name)
{
	struct tr2_rec *r = begin(TR2_REC_THREAD_START, tls, file, line);
	if (!r) return 0;
	r->thread_id = thread_id;
	add_str(r, base_name);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_thread_exit, struct trace2_tls *tls, const char *file, int line)
{
	struct tr2_rec *r = begin(TR2_REC_THREAD_EXIT, tls, file, line);
	if (!r) return 0;
	return END(r);
}

/* region_enter, region_leave: repo, category, label, msg. */
#define PROBE_REGION(name, KIND)						\
SEC("usdt")									\
int BPF_USDT(probe_##name, struct trace2_tls *tls, const char *file, int line, int repo,	\
	     const char *category, const char *label, const char *msg)		\
{										\
	struct tr2_rec *r = begin(KIND, tls, file, line);			\
	if (!r) return 0;							\
	r->num[0] = repo;							\
	add_str(r, category);							\
	add_str(r, label);							\
	add_str(r, msg);							\
	return END(r);								\
}
PROBE_REGION(region_enter, TR2_REC_REGION_ENTER)
PROBE_REGION(region_leave, TR2_REC_REGION_LEAVE)

SEC("usdt")
int BPF_USDT(probe_data, struct trace2_tls *tls, const char *file, int line, int repo,
	     const char *category, const char *key, const char *value, long long ivalue)
{
	struct tr2_rec *r = begin(TR2_REC_DATA, tls, file, line);
	if (!r) return 0;
	r->num[0] = repo;
	r->num[1] = ivalue;
	add_str(r, category);
	add_str(r, key);
	add_str(r, value);
	return END(r);
}

SEC("usdt")
int BPF_USDT(probe_data_json, struct trace2_tls *tls, const char *file, int line, int repo,
	     const char *category, const char *key, const char *json)
{
	struct tr2_rec *r = begin(TR2_REC_DATA_JSON, tls, file, line);
	if (!r) return 0;
	r->num[0] = repo;
	add_str(r, category);
	add_str(r, key);
	add_str(r, json);
	return END(r);
}

/* The first use of a metric in a process sends its definition (names). */
static __always_inline void define_metric(__u8 kind, const struct trace2_tls *tls, const char *file,
					  int line, long id, const char *category, const char *name,
					  int per_thread)
{
	struct metric_def_key dk = { .pid = bpf_get_current_pid_tgid() >> 32, .id = id };
	struct tr2_rec *r;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&metric_defs, &dk))
		return;
	r = begin(kind, tls, file, line);
	if (!r)
		return;
	r->num[0] = id;
	r->num[1] = per_thread;
	add_str(r, category);
	add_str(r, name);
	if (END(r) == 0)
		bpf_map_update_elem(&metric_defs, &dk, &one, BPF_ANY);
}

/* The calling thread's sums for metric id, created on first use; NULL when
 * the process is not traced. */
static __always_inline struct tr2_metric_val *metric_of(long id, int create)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct tr2_metric_key k = { .pid = pt >> 32, .tid = (__u32)pt, .id = id };
	struct tr2_metric_val zero = {}, *v;

	if (follow && !bpf_map_lookup_elem(&traced, &k.pid))
		return 0;
	v = bpf_map_lookup_elem(&metrics, &k);
	if (v || !create)
		return v;
	bpf_map_update_elem(&metrics, &k, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&metrics, &k);
	if (!v)
		count_lost(k.pid);
	return v;
}

SEC("usdt")
int BPF_USDT(probe_timer_start, struct trace2_tls *tls, const char *file, int line, long id,
	     const char *category, const char *name, int per_thread)
{
	struct tr2_metric_val *v = metric_of(id, 1);

	if (!v)
		return 0;
	define_metric(TR2_REC_TIMER_START, tls, file, line, id, category, name, per_thread);
	if (v->recursion++ == 0)   /* git ignores recursive starts */
		v->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int BPF_USDT(probe_timer_stop, struct trace2_tls *tls, const char *file, int line, long id)
{
	struct tr2_metric_val *v = metric_of(id, 0);
	__u64 len;

	/* A stop whose start came before the attach is not counted. */
	if (!v || v->recursion == 0 || --v->recursion)
		return 0;
	len = bpf_ktime_get_ns() - v->start_ns;
	if (!v->intervals || len < v->min_ns)
		v->min_ns = len;
	if (len > v->max_ns)
		v->max_ns = len;
	v->total_ns += len;
	v->intervals++;
	return 0;
}

SEC("usdt")
int BPF_USDT(probe_counter_add, struct trace2_tls *tls, const char *file, int line, long id,
	     const char *category, const char *name, int per_thread, long long value)
{
	struct tr2_metric_val *v = metric_of(id, 1);

	if (!v)
		return 0;
	define_metric(TR2_REC_COUNTER_ADD, tls, file, line, id, category, name, per_thread);
	v->is_counter = 1;
	v->count += value;
	return 0;
}

/* Follow mode: a traced process forked a process. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid;
	__u8 one = 1;
	struct tr2_rec *r;

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

/* A traced process called exec (either mode: tr2-bpf -p puts its PID in
 * `traced`).  Stop it, as dl_update does, so that tr2-bpf attaches to the
 * new executable before it runs. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = p->tgid;
	struct tr2_rec *r;

	if (!bpf_map_lookup_elem(&traced, &pid))
		return 0;
	/* A new program: no regions open, announce the thread again. */
	bpf_task_storage_delete(&threads, p);
	r = new_rec(TR2_REC_EXECVE, pid, p->pid);
	if (!r)
		return 0;
	if (send(r, r->size) == 0)
		bpf_send_signal(SIGSTOP);
	return 0;
}

/* The dynamic loader's r_brk hook (_dl_debug_state) in a traced process:
 * objects were mapped.  Stop the process so that tr2-bpf attaches to their
 * probes before any of them runs; tr2-bpf sends SIGCONT when done. */
SEC("uprobe")
int dl_update(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct tr2_rec *r;

	if (follow && !bpf_map_lookup_elem(&traced, &pid))
		return 0;
	r = new_rec(TR2_REC_DL_UPDATE, pid, (__u32)id);
	if (!r)
		return 0;
	if (send(r, r->size) == 0)
		bpf_send_signal(SIGSTOP);
	return 0;
}
