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

/* Starts counting for thread ts, which runs now (its first batch). */
static __always_inline void sched_start(struct thread_state *ts)
{
	__u64 now = bpf_ktime_get_ns();

	if (!sched_split)
		return;
	ts->sched.origin_ns = ts->sched.in_ns = ts->since = now;
	ts->sched_state = TR2_SCHED_CPU;
}

/* The time since ts's last change of state goes to the state it was in. */
static __always_inline void sched_account(struct thread_state *ts, __u64 now)
{
	if (ts->sched_state < TR2_SCHED__COUNT && now > ts->since)
		ts->sched.ns[ts->sched_state] += now - ts->since;
	ts->since = now;
}

/* Thread ts (of tid in process pid) leaves the CPU in state `to`. */
static __always_inline void sched_out(struct thread_state *ts, __u8 to)
{
	__u64 now = bpf_ktime_get_ns();

	sched_account(ts, now);
	ts->sched_state = ts->off_state = to;
	ts->off_ns = ts->woken_ns = now;
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

/* Thread ts (task) comes on the CPU. */
static __always_inline void sched_in(struct thread_state *ts, struct task_struct *task)
{
	__u64 now = bpf_ktime_get_ns();

	sched_account(ts, now);
	if (sched_periods && ts->sched_state != TR2_SCHED_CPU)
		send_period(task->tgid, task->pid, ts->sched.in_ns, ts->off_ns, ts->woken_ns, now, ts->off_state);
	ts->sched_state = TR2_SCHED_CPU;
	ts->sched.in_ns = now;
}

/* sched_switch: the state of prev (its thread state prev_ts, drained
 * already) and of next, where they are traced. */
static __always_inline void sched_switch(unsigned long long *ctx, bool preempt, struct task_struct *prev,
					 struct thread_state *prev_ts, struct task_struct *next)
{
	struct thread_state *ts;
	unsigned int now_state;

	if (!sched_split)
		return;
	if (prev_ts && !prev_ts->ignored && prev_ts->sched.origin_ns) {
		now_state = task_state_word(prev);
		sched_out(prev_ts, left_in(preempt, switch_prev_state ? (unsigned int)ctx[3] : now_state, now_state));
	}
	ts = thread_state(next, next->pid);
	if (ts && !ts->ignored && ts->sched.origin_ns)
		sched_in(ts, next);
}

/* sched_wakeup: a traced thread that slept (D or S) becomes runnable.  One
 * that is on a CPU or runnable already (woken before it was taken off the
 * run queue) stays as it is. */
static __always_inline void sched_wakeup(struct task_struct *p)
{
	struct thread_state *ts = thread_state(p, p->pid);
	__u64 now;

	if (!ts || ts->ignored || !ts->sched.origin_ns ||
	    (ts->sched_state != TR2_SCHED_BLOCKED && ts->sched_state != TR2_SCHED_ASLEEP))
		return;
	now = bpf_ktime_get_ns();
	sched_account(ts, now);
	ts->sched_state = TR2_SCHED_RUNNABLE;
	ts->woken_ns = now;
}

/* The thread ts (task) exits: its last stretch on the CPU, for --chrome. */
static __always_inline void sched_exit(struct thread_state *ts, struct task_struct *task)
{
	__u64 now = bpf_ktime_get_ns();

	if (sched_periods && ts->sched.origin_ns && ts->sched_state == TR2_SCHED_CPU)
		send_period(task->tgid, task->pid, ts->sched.in_ns, now, now, now, TR2_SCHED_CPU);
}
