/* tr2_batch.bpf.h: the record path.  A traced thread's calls wait in its
 * buffer (struct tr2_tbuf, bpf/tr2_record.h) in its process's memory; the
 * programs in tr2.bpf.c call drain() on the thread itself (current): at its
 * batch (tr2:batch, where the buffer is met and the thread announced), when
 * it is switched out, at a timer tick while it runs, at exec and at exit.
 * drain() copies the buffer's new bytes into the ring buffer as one
 * TR2_REC_BATCH record, straight from user memory (no per-CPU scratch, so a
 * preempted program shares nothing).  Included by tr2.bpf.c after its maps. */

/* Per thread, made at its first batch in a traced process. */
struct thread_state {
	__u64 buf;        /* its buffer's address; 0: none met yet */
	__u64 tail;       /* the buffer's pos copied so far */
	__u64 dropped;    /* the buffer's `dropped` counted so far */
	__u32 own_tid;    /* its tid in its own pid namespace (gettid()): its buffer's owner */
	__u32 draining;   /* a drain of it runs (another one, nested in it, waits for none) */
	__u8 announced;   /* TR2_REC_THREAD_INFO sent */
	__u8 ignored;     /* the filters (--comm, --uid, --cgroup) leave its process out */
	struct tr2_sched_acct acct;   /* where its time goes */
};
/* Task storage, or without it (task_storage 0) a hash map keyed by tid, as
 * code_fault in tr2.bpf.c. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* The calling thread's task: a BTF pointer where the kernel gives one
 * (task_storage), else a plain address; either way read its fields with
 * BPF_CORE_READ. */
static __always_inline struct task_struct *current_task(void)
{
	return task_storage ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();
}

/* The entry of thread task (tid) in map, a task storage or a hash map by
 * tid; made (zeroed) when create and it has none.  NULL: none, or no room. */
static __always_inline void *thread_entry(void *map, struct task_struct *task, __u32 tid, int create)
{
	struct thread_state zero = {};
	void *v;

	if (task_storage)
		return bpf_task_storage_get(map, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	v = bpf_map_lookup_elem(map, &tid);
	if (v || !create)
		return v;
	/* zero is as large as the largest value of the two maps */
	bpf_map_update_elem(map, &tid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &tid);
}

static __always_inline struct thread_state *thread_state(struct task_struct *task, __u32 tid)
{
	return thread_entry(&threads, task, tid, 0);
}

/* Forgets thread task's state (it ended, or exec'd). */
static __always_inline void thread_forget(struct task_struct *task, __u32 tid)
{
	if (task_storage)
		bpf_task_storage_delete(&threads, task);
	else
		bpf_map_delete_elem(&threads, &tid);
}

static __always_inline __u64 *code_fault_of(struct task_struct *task, int create)
{
	return thread_entry(&code_fault, task, (__u32)bpf_get_current_pid_tgid(), create);
}


/* The part of a buffer the eBPF side reads (struct tr2_tbuf's first bytes). */
struct tbuf_hdr {
	__u32 magic, owner;
	__u64 pos, trap_pos, dropped, tls, pad;
};
_Static_assert(sizeof(struct tbuf_hdr) == TR2_TBUF_HDR, "the buffer header tr2_record.h gives");

struct trace2_tls {
	__s32 thread_id;
	char base_name[32];
};

/* Counts `count` events of process pid as lost. */
static __always_inline void count_lost(__u32 pid, __u64 count)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);

	if (!count)
		return;
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

/* How a record is committed: wake tr2-bpf now (a process waits stopped for
 * it, or the ring buffer is a quarter full), else it reads on its timer. */
static __always_inline __u64 wake_flags(int wake)
{
	return wake || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP :
										       BPF_RB_NO_WAKEUP;
}

/* Reserves one of the tracer's own records (no strings), filled in but
 * for what the caller adds before bpf_ringbuf_submit(); NULL when the ring
 * buffer is full. */
static __always_inline struct tr2_rec *rec_new(__u8 kind, __u32 pid, __u32 tid, __s64 n0, __s64 n1, __s64 n2)
{
	struct tr2_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r)
		return 0;
	__builtin_memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->kind = kind;
	r->pid = pid;
	r->tid = tid;
	r->ts_ns = bpf_ktime_get_ns();
	r->num[0] = n0;
	r->num[1] = n1;
	r->num[2] = n2;
	return r;
}

/* Sends one of the tracer's own records (no strings); -1 when the ring
 * buffer is full (not counted: no event is lost). */
static __always_inline int send_rec(__u8 kind, __u32 pid, __u32 tid, __s64 n0, __s64 n1, __s64 n2, int wake)
{
	struct tr2_rec *r = rec_new(kind, pid, tid, n0, n1, n2);

	if (!r)
		return -1;
	bpf_ringbuf_submit(r, wake_flags(wake));
	return 0;
}

/* Whether the calling process is one --comm, --uid and --cgroup let
 * through (all of them, when none is given). */
static __always_inline int wanted(void)
{
	char comm[16] = {};

	if (narrow_uid && (__u32)bpf_get_current_uid_gid() != uid)
		return 0;
	if (narrow_comm) {
		BPF_CORE_READ_STR_INTO(&comm, current_task(), group_leader, comm);
		if (!bpf_map_lookup_elem(&comms, comm))
			return 0;
	}
	if (narrow_cgroup && bpf_current_task_under_cgroup(&cgroups, 0) != 1)
		return 0;
	return 1;
}

/* *up: struct pid p's number and namespace at pid namespace level `level`
 * (the struct pid of a task seen from that namespace); non-zero where p
 * cannot be read. */
static __always_inline int read_upid(struct pid *p, unsigned int level, struct upid *up)
{
	return bpf_core_read(up, sizeof(*up), &p->numbers[level]);
}

/* The task's id as the task knows it (gettid(), in its own pid namespace:
 * a process in a container has another id on the host); 0: unreadable. */
static __always_inline __u32 own_tid(struct task_struct *task)
{
	struct pid *p = BPF_CORE_READ(task, thread_pid);
	struct upid up;

	return read_upid(p, BPF_CORE_READ(p, level), &up) ? 0 : up.nr;
}

static __always_inline void sched_start(struct tr2_sched_acct *a, __u32 tid);   /* tr2_sched.bpf.h */

/* The state of the calling thread (task, tid of process pid), made at its
 * first batch; NULL when it is not traced. */
static __always_inline struct thread_state *thread_of(struct task_struct *task, __u32 pid, __u32 tid)
{
	struct thread_state *ts = thread_state(task, tid);
	__u8 one = 1;

	if (ts)
		return ts->ignored ? 0 : ts;
	/* Follow mode: only threads of traced processes get a state, so that
	 * having one says "traced" without a look-up in `traced` each time; a
	 * process the filters leave out gets one that says so. */
	if (follow && !bpf_map_lookup_elem(&traced, &pid))
		return 0;
	ts = thread_entry(&threads, task, tid, 1);
	if (!ts)
		return 0;
	ts->own_tid = own_tid(task);
	ts->ignored = !wanted();
	sched_start(&ts->acct, tid);
	if (trace_all && !ts->ignored)
		bpf_map_update_elem(&traced, &pid, &one, BPF_NOEXIST);
	return ts->ignored ? 0 : ts;
}

/* The process's nearest ancestor that is traced (-a: one that sent calls),
 * up to 8 generations up, else its parent: git's sid chain passes through a
 * shell that git runs a command with (GIT_TRACE2_PARENT_SID in the
 * environment), and so does the one tr2-bpf makes. */
static __always_inline __u32 traced_ancestor(struct task_struct *task)
{
	struct task_struct *t = BPF_CORE_READ(task, group_leader, real_parent);
	__u32 parent = BPF_CORE_READ(t, tgid), pid;

	for (int i = 0; i < 8 && t; i++) {
		pid = BPF_CORE_READ(t, tgid);
		if (bpf_map_lookup_elem(&traced, &pid))
			return pid;
		t = BPF_CORE_READ(t, real_parent);
	}
	return parent;
}

/* The ancestors of task's process into r (tr2_record.h): as git reads them
 * from /proc (compat/linux/procinfo.c), the process of getppid() and up,
 * each named by its main thread's comm (/proc/PID/stat's field 2), until
 * one whose parent is pid 0 in the process's pid namespace: init's, or a
 * parent outside the namespace.  A few µs of /proc reads each in git; a
 * walk of pointers here. */
static __always_inline void ancestry(struct tr2_rec_thread_info *r, struct task_struct *task)
{
	struct task_struct *t = BPF_CORE_READ(task, group_leader);
	struct pid *own = BPF_CORE_READ(t, thread_pid), *pp;
	unsigned int level = BPF_CORE_READ(own, level);
	struct pid_namespace *ns;
	struct upid up;
	__u32 n = 0;

	if (read_upid(own, level, &up))
		goto out;
	ns = up.ns;
	for (int i = 0; i < TR2_ANCESTRY_MAX; i++) {
		t = BPF_CORE_READ(t, real_parent, group_leader);
		pp = BPF_CORE_READ(t, thread_pid);
		if (!pp || BPF_CORE_READ(pp, level) < level ||
		    read_upid(pp, level, &up) || up.ns != ns || !up.nr)
			break;
		BPF_CORE_READ_STR_INTO(&r->ancestry[i], t, comm);
		n = i + 1;
	}
out:
	r->nancestry = n;
}

/* TR2_REC_THREAD_INFO for the calling thread (tr2_record.h), before its
 * first batch: its name from its struct trace2_tls, its process's parent
 * and start, sid, the sid its program made itself (NULL: none), and for
 * the main thread, the process's ancestors. */
static __always_inline void announce(struct thread_state *ts, struct task_struct *task, __u32 pid,
				     __u32 tid, const struct tbuf_hdr *h, const char *sid)
{
	struct tr2_rec_thread_info *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r)
		return;
	__builtin_memset(&r->hdr, 0, sizeof(r->hdr));
	r->hdr.size = sizeof(*r);
	r->hdr.kind = TR2_REC_THREAD_INFO;
	r->hdr.pid = pid;
	r->hdr.tid = tid;
	r->hdr.ts_ns = bpf_ktime_get_ns();
	r->hdr.num[0] = traced_ancestor(task);
	r->hdr.num[1] = BPF_CORE_READ(task, group_leader, start_time);
	r->hdr.num[2] = BPF_CORE_READ(task, start_time);
	/* fork copies the parent's exec count into both; exec counts on */
	if (BPF_CORE_READ(task, group_leader, self_exec_id) == BPF_CORE_READ(task, group_leader, parent_exec_id))
		r->hdr.flags = TR2_REC_FORKED;
	if (bpf_probe_read_user(&r->hdr.thread_id, sizeof(r->hdr.thread_id),
				&((struct trace2_tls *)h->tls)->thread_id))
		r->hdr.thread_id = 0;
	if (bpf_probe_read_user_str(r->base_name, sizeof(r->base_name),
				    ((struct trace2_tls *)h->tls)->base_name) <= 0)
		r->base_name[0] = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	if (!sid || bpf_probe_read_user_str(r->sid, sizeof(r->sid), sid) <= 0)
		r->sid[0] = 0;
	r->nancestry = 0;
	if (tid == pid)
		ancestry(r, task);
	bpf_ringbuf_submit(r, wake_flags(0));
	ts->announced = 1;
}

/* Kernels before 6.16 have no bpf_probe_read_user_dynptr: there a batch is
 * read into this CPU's scratch first, then copied into the ring buffer
 * (`copy_direct` 0).  A drain takes the scratch of its CPU by making its
 * entry in scratch_held (BPF_NOEXIST: atomic on every kernel, where BPF's
 * own atomic exchange is 5.12+ and refused in any program before), and
 * gives it back by deleting it: a program at a uprobe may be preempted
 * while it holds it, and one that finds it held counts its calls as lost. */
struct scratch {
	struct tr2_rec r;
	char data[2 * TR2_TBUF_DATA];   /* room past the first piece, for the verifier */
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);         /* one per CPU where copy_direct is 0 (tr2-bpf) */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);         /* as scratch */
	__type(key, __u32);
	__type(value, __u8);
} scratch_held SEC(".maps");

/* The header r and the bytes first bytes at data + off, then the rest at
 * data (the buffer wraps), into one ring-buffer record; 0, else -1. */
static __always_inline int copy_out(const struct tr2_rec *r, __u32 bytes, __u32 first, __u64 data, __u32 off)
{
	struct bpf_dynptr d;
	struct scratch *sc;
	__u32 cpu, rest;
	__u8 one = 1;
	int err;

	if (copy_direct) {
		if (bpf_ringbuf_reserve_dynptr(&events, sizeof(*r) + bytes, 0, &d) ||
		    bpf_dynptr_write(&d, 0, (void *)r, sizeof(*r), 0) ||
		    bpf_probe_read_user_dynptr(&d, sizeof(*r), first, (void *)(data + off)) ||
		    (bytes > first &&
		     bpf_probe_read_user_dynptr(&d, sizeof(*r) + first, bytes - first, (void *)data))) {
			bpf_ringbuf_discard_dynptr(&d, 0);
			return -1;
		}
		bpf_ringbuf_submit_dynptr(&d, wake_flags(0));
		return 0;
	}
	cpu = bpf_get_smp_processor_id();
	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!sc || bpf_map_update_elem(&scratch_held, &cpu, &one, BPF_NOEXIST))
		return -1;
	rest = bytes - first;
	if (first > TR2_TBUF_DATA || rest > TR2_TBUF_DATA)   /* never: bounds for the verifier */
		first = rest = 0;
	sc->r = *r;
	err = bpf_probe_read_user(sc->data, first, (void *)(data + off)) ||
	      (rest && bpf_probe_read_user(sc->data + first, rest, (void *)data)) ||
	      bpf_ringbuf_output(&events, sc, sizeof(*r) + first + rest, wake_flags(0));
	bpf_map_delete_elem(&scratch_held, &cpu);
	return err ? -1 : 0;
}

/* A copy found the buffer of a thread of process pid damaged: nothing is
 * copied, the calls its header counts are lost (as many as the buffer can
 * hold at most, at least one: its stream gets a marker), and the copy is
 * counted as a damaged buffer. */
static __always_inline void count_damaged(__u32 pid, __u64 calls)
{
	__u32 key = 1;
	__u64 *n = bpf_map_lookup_elem(&lost, &key);

	if (n)
		*n += 1;
	count_lost(pid, calls < 1 ? 1 : calls > TR2_CALLS_MAX ? TR2_CALLS_MAX : calls);
}

/*
 * Fair shares of the ring buffer.  While it is more than half full, a
 * process may put into it at most a sixteenth of the room left per
 * SHARE_NS, and the processes of one user together a quarter: a process
 * (or a user) that floods it loses its own batches (counted, marked in its
 * stream), and the others' still fit.  Counted per process (tgid) and per
 * user (uid | SHARE_USER) in `shares`, only while the ring is that full.
 */
#define SHARE_NS   (10 * 1000 * 1000)
#define SHARE_USER (1ull << 32)
struct share {
	__u64 window;     /* bpf_ktime_get_ns() / SHARE_NS it counts */
	__u64 bytes;      /* put into the ring buffer in it */
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct share);
} shares SEC(".maps");

/* The share of key in this window (made, or begun anew); NULL: none to be had. */
static __always_inline struct share *share_of(__u64 key, __u64 window)
{
	struct share fresh = { .window = window }, *s = bpf_map_lookup_elem(&shares, &key);

	if (!s) {
		bpf_map_update_elem(&shares, &key, &fresh, BPF_ANY);
		s = bpf_map_lookup_elem(&shares, &key);
	}
	if (s && s->window != window) {
		s->window = window;
		s->bytes = 0;
	}
	return s;
}

/* Whether `bytes` more of process pid may go into the ring buffer now. */
static __always_inline int within_share(__u32 pid, __u64 bytes)
{
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	__u64 used = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 window = bpf_ktime_get_ns() / SHARE_NS, room;
	struct share *proc, *user;

	if (used < size / 2)
		return 1;
	room = used < size ? size - used : 0;
	proc = share_of(pid, window);
	user = share_of(SHARE_USER | (__u32)bpf_get_current_uid_gid(), window);
	if (!proc || !user || proc->bytes + bytes > room / 16 || user->bytes + bytes > room / 4)
		return 0;
	__sync_fetch_and_add(&proc->bytes, bytes);
	__sync_fetch_and_add(&user->bytes, bytes);
	return 1;
}

/* Copies what thread ts (tid, of process pid) wrote into its buffer at addr
 * since the last copy (header h, read now) into one TR2_REC_BATCH record;
 * what cannot be copied counts as lost.  The counts come from the traced
 * process, which may have written anything there: they count only as far
 * as the buffer could have held since the last copy (TR2_CALLS_MAX). */
static __always_inline void copy_batch(struct thread_state *ts, __u32 pid, __u32 tid, __u64 addr,
				       const struct tbuf_hdr *h)
{
	__u64 from = ts->tail, since = h->pos - from, lost = h->dropped - ts->dropped;
	__u64 bytes = TR2_POS_BYTES(since), calls = TR2_POS_EVENTS(since);
	__u32 off = TR2_POS_BYTES(ts->tail) & (TR2_TBUF_DATA - 1), first;
	__u64 data = addr + __builtin_offsetof(struct tr2_tbuf, data);
	struct tr2_rec r = {};

	ts->tail = h->pos;
	ts->dropped = h->dropped;
	if (bytes > TR2_TBUF_DATA || calls > bytes / TR2_WIRE_MIN || lost > TR2_CALLS_MAX) {
		count_damaged(pid, calls);
		return;
	}
	if (!bytes && !lost)
		return;
	if (!within_share(pid, sizeof(r) + bytes)) {
		count_lost(pid, calls + lost);
		return;
	}
	r.size = sizeof(r) + bytes;
	r.kind = TR2_REC_BATCH;
	r.pid = pid;
	r.tid = tid;
	r.ts_ns = bpf_ktime_get_ns();
	r.num[0] = calls;
	r.num[1] = lost;
	r.num[2] = from;
	r.sched = ts->acct.sched;
	first = TR2_TBUF_DATA - off < bytes ? TR2_TBUF_DATA - off : bytes;
	if (copy_out(&r, bytes, first, data, off)) {
		count_lost(pid, calls + lost);
		return;
	}
	count_lost(pid, lost);   /* the runtime's: lost before this batch, marked by tr2-bpf */
}

/*
 * Copies the new calls of the calling thread (task, tid of process pid,
 * state ts).  At its batch, addr is its buffer and sid the sid its program
 * made (or NULL), and the thread is announced if it was not; elsewhere
 * addr is 0: the buffer met at its last batch.  A buffer that is not the
 * thread's (magic, owner: it ended, and another thread took its memory) is
 * forgotten.
 */
static __always_inline void drain(struct thread_state *ts, struct task_struct *task, __u32 pid, __u32 tid,
				  __u64 addr, const char *sid)
{
	int at_batch = addr != 0;

	struct tbuf_hdr h;

	/* Only programs on this thread drain it, and one that runs amid
	 * another (an interrupt, or the switch of a preempted uprobe program)
	 * ends before the other goes on: a plain test and set serves. */
	if (ts->draining)
		return;
	ts->draining = 1;
	if (!addr)
		addr = ts->buf;
	if (!addr || bpf_probe_read_user(&h, sizeof(h), (void *)addr) || h.magic != TR2_TBUF_MAGIC ||
	    h.owner != ts->own_tid) {
		if (addr == ts->buf)
			ts->buf = 0;
		goto out;
	}
	if (addr != ts->buf) {
		/* met at this batch: the calls since the batch before it are new
		 * to this tracer (tr2-bpf drops those older than its start) */
		ts->buf = addr;
		ts->tail = h.trap_pos;
		ts->dropped = h.dropped;
	}
	if (!ts->announced && at_batch)
		announce(ts, task, pid, tid, &h, sid);
	copy_batch(ts, pid, tid, addr, &h);
out:
	ts->draining = 0;
}

/* The calling thread's calls, from a program that is not its batch;
 * returns its state (NULL: none). */
static __always_inline struct thread_state *drain_current(void)
{
	struct task_struct *task = current_task();
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_state *ts = thread_state(task, (__u32)id);

	if (ts && ts->buf)
		drain(ts, task, id >> 32, (__u32)id, 0, 0);
	return ts;
}
