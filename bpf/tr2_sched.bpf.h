/* tr2_sched.bpf.h: where a traced thread's time goes.  Each traced thread's
 * state (struct thread_state, tr2_batch.bpf.h) counts the ns it spent in
 * each enum tr2_sched_state (bpf/tr2_record.h) since the state was made,
 * at the scheduler's own events for that thread, in the order they happen
 * for it: sched_switch when it leaves a CPU (preempted or yielding:
 * runnable; else D or S, as its task state says) and when it comes on one,
 * sched_wakeup when a D or S thread becomes runnable.  Nothing is sent per
 * switch: every batch record carries the counts as they were at the
 * thread's last switch-in (struct tr2_sched), which is all tr2-bpf needs to
 * split the time between any two of its calls (a batch never holds calls
 * from two stretches on a CPU: every switch-out copies the buffer).  Only
 * --chrome's thread-state track asks for a record per switch-in
 * (TR2_REC_SCHED).  Included by tr2.bpf.c after tr2_batch.bpf.h. */

/* Set by tr2-bpf before load: count at all (--summary or --chrome, and no
 * --no-split); send TR2_REC_SCHED (--chrome); sched_switch has its
 * prev_state argument (Linux 5.18). */
const volatile int sched_split = 0;
const volatile int sched_periods = 0;
const volatile int switch_prev_state = 0;

#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_NOLOAD 0x0400     /* with TASK_UNINTERRUPTIBLE: TASK_IDLE, ps's I: counted asleep */

/* The task's state word where it is named `state` (before Linux 5.14). */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state_word(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/* The state a thread leaves the CPU in.  preempt: it was preempted.
 * state: the task state it went to sleep with (sched_switch's prev_state,
 * else read now).  now: its task state read now, which is 0 (running)
 * when a signal or a wakeup came before it was taken off the run queue:
 * it stays runnable. */
static __always_inline __u8 left_in(bool preempt, unsigned int state, unsigned int now)
{
	if (preempt || !state || !now)
		return TR2_SCHED_RUNNABLE;
	if ((state & (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) == TASK_UNINTERRUPTIBLE)
		return TR2_SCHED_BLOCKED;
	return TR2_SCHED_ASLEEP;
}

/* tr2-bpf -p: the threads of the processes it attaches to, by tid, counted
 * from the attach on until their first batch (then their thread state
 * takes the counts), so that a region entered before the attach is split
 * from the attach on.  Filled by tr2-bpf at the attach (tr2_mode.c); looked
 * at only where sched_early (a thread of the host without a state pays a
 * hash look-up at each switch and wakeup meanwhile). */
const volatile int sched_early = 0;
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct tr2_sched_acct);
} early SEC(".maps");

/* Thread task's counts: its thread state's, else (-p) those since the
 * attach; NULL: not counted. */
static __always_inline struct tr2_sched_acct *acct_of(struct thread_state *ts, struct task_struct *task, __u32 tid)
{
	if (ts)
		return ts->ignored || !ts->acct.sched.origin_ns ? 0 : &ts->acct;
	return sched_early ? bpf_map_lookup_elem(&early, &tid) : 0;
}

/* Starts counting for thread tid, which runs now (its first batch): from
 * the attach on where tr2-bpf counted it since (-p), else from now. */
static __always_inline void sched_start(struct tr2_sched_acct *a, __u32 tid)
{
	struct tr2_sched_acct *e;

	if (!sched_split)
		return;
	e = sched_early ? bpf_map_lookup_elem(&early, &tid) : 0;
	if (e) {
		*a = *e;
		bpf_map_delete_elem(&early, &tid);
		if (a->state != TR2_SCHED_CPU) {   /* running since the attach, or since its wakeup */
			a->state = TR2_SCHED_CPU;
			a->sched.in_ns = a->since;
		}
		return;
	}
	a->sched.origin_ns = a->sched.in_ns = a->since = bpf_ktime_get_ns();
	a->state = TR2_SCHED_CPU;
}

/* The time since a's last change of state goes to the state it was in. */
static __always_inline void sched_account(struct tr2_sched_acct *a, __u64 now, __u8 state)
{
	if (state < TR2_SCHED__COUNT && now > a->since)
		a->sched.ns[state] += now - a->since;
	a->since = now;
}

/* TR2_REC_SCHED for thread tid of pid: on the CPU from run_ns to off_ns,
 * then in state `state`, woken at woken_ns, on the CPU again at in_ns. */
static __always_inline void send_period(__u32 pid, __u32 tid, __u64 run_ns, __u64 off_ns, __u64 woken_ns,
					__u64 in_ns, __u8 state)
{
	struct tr2_rec *r = rec_new(TR2_REC_SCHED, pid, tid, run_ns, off_ns, woken_ns);

	if (!r)
		return;
	r->ts_ns = in_ns;
	r->state = state;
	bpf_ringbuf_submit(r, wake_flags(0));
}

/* The thread leaves the CPU in state `to` at now (its state before: on
 * it, or unknown since the attach: then it ran). */
static __always_inline void sched_out(struct tr2_sched_acct *a, __u8 to, __u64 now)
{
	sched_account(a, now, TR2_SCHED_CPU);
	a->state = a->off_state = to;
	a->off_ns = a->woken_ns = now;
}

/* The thread (task) comes on the CPU at now (from a state that is not on
 * it: unknown since the attach, it waited runnable).  With --chrome, its
 * stretch off the CPU goes as a record, once its thread state exists. */
static __always_inline void sched_in(struct tr2_sched_acct *a, struct task_struct *task, int has_state, __u64 now)
{
	__u8 was = a->state == TR2_SCHED_R_UNKNOWN ? TR2_SCHED_RUNNABLE : a->state;

	sched_account(a, now, was);
	if (sched_periods && has_state && a->state != TR2_SCHED_R_UNKNOWN)
		send_period(task->tgid, task->pid, a->sched.in_ns, a->off_ns, a->woken_ns, now, a->off_state);
	a->state = TR2_SCHED_CPU;
	a->sched.in_ns = now;
}

/* sched_switch: the state of prev (its thread state prev_ts, drained
 * already, NULL: none) and of next, where they are counted. */
static __always_inline void sched_switch(unsigned long long *ctx, bool preempt, struct task_struct *prev,
					 struct thread_state *prev_ts, struct task_struct *next)
{
	struct thread_state *ts;
	struct tr2_sched_acct *a;
	unsigned int now_state;
	__u64 now = 0;   /* one clock read for both, none for neither */

	if (!sched_split)
		return;
	a = acct_of(prev_ts, prev, prev->pid);
	if (a) {
		now = bpf_ktime_get_ns();
		now_state = task_state_word(prev);
		sched_out(a, left_in(preempt, switch_prev_state ? (unsigned int)ctx[3] : now_state, now_state), now);
	}
	ts = thread_state(next, next->pid);
	a = acct_of(ts, next, next->pid);
	if (a)
		sched_in(a, next, ts != 0, now ? now : bpf_ktime_get_ns());
}

/* sched_wakeup: a counted thread that slept (D or S) becomes runnable.  One
 * on a CPU or runnable already (woken before it was taken off the run
 * queue) stays as it is. */
static __always_inline void sched_wakeup(struct task_struct *p)
{
	struct tr2_sched_acct *a = acct_of(thread_state(p, p->pid), p, p->pid);
	__u64 now;

	if (!a || (a->state != TR2_SCHED_BLOCKED && a->state != TR2_SCHED_ASLEEP))
		return;
	now = bpf_ktime_get_ns();
	sched_account(a, now, a->state);
	a->state = TR2_SCHED_RUNNABLE;
	a->woken_ns = now;
}

/* Thread task (its state ts, NULL: none) exits: its last stretch on the
 * CPU, for --chrome; its counts since the attach go. */
static __always_inline void sched_exit(struct thread_state *ts, struct task_struct *task)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = task->pid;

	if (sched_early)
		bpf_map_delete_elem(&early, &tid);
	if (sched_periods && ts && ts->acct.sched.origin_ns && ts->acct.state == TR2_SCHED_CPU)
		send_period(task->tgid, tid, ts->acct.sched.in_ns, now, now, now, TR2_SCHED_CPU);
}
