// SPDX-License-Identifier: GPL-2.0
/* tr2.bpf.c: the eBPF side of tr2-bpf: its settings, its maps and its
 * programs, each a few lines over the two jobs, in their own headers:
 *  - the record path (tr2_batch.bpf.h): a traced thread's calls, which wait
 *    in its buffer in its process (bpf/tr2_record.h), are copied into the
 *    one BPF ring buffer at its batches (tr2:batch, docs/probes.md), when it
 *    is switched out, at timer ticks, at exec and at exit;
 *  - holds and objects (tr2_hold.bpf.h): a traced process stops for tr2-bpf
 *    to attach to an object file before that file's code runs.
 * Drops are counted, never silent.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* libbpf's USDT argument specs (tr2:batch's). */
#define BPF_USDT_MAX_SPEC_CNT 64
#include <bpf/usdt.bpf.h>

#include "tr2_record.h"

#define SIGKILL 9
#define SIGCONT 18
#define SIGSTOP 19
#define SIGTSTP 20
#define SIGTTIN 21
#define SIGTTOU 22
#define PF_KTHREAD 0x00200000  /* include/linux/sched.h */
#define X86_PF_INSTR 0x10  /* page fault error code: an instruction fetch (arch/x86) */

/* User memory straight into a ring-buffer record (Linux 6.16+; see copy_direct). */
extern int bpf_probe_read_user_dynptr(struct bpf_dynptr *dptr, u32 off, u32 size,
				      const void *unsafe_ptr) __ksym __weak;

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
/* What the kernel offers, decided once by tr2-bpf before the load
 * (loader/tr2_kernel.c); a branch on one of these is pruned by the
 * verifier, so that a program never calls what the kernel lacks:
 *  - copy_direct: bpf_probe_read_user_dynptr (6.16): batches are read from
 *    user memory straight into the ring buffer, else through a scratch;
 *  - task_storage: task local storage and bpf_get_current_task_btf (5.11),
 *    else a thread's state is in a hash map keyed by its tid;
 *  - attach_cookie: bpf_get_attach_cookie (5.15), where tr2:batch's
 *    argument spec comes from, else tr2-bpf has checked that every batch
 *    site passes its arguments in %rdi and %rsi. */
const volatile int copy_direct = 1;
/* -- CMD on a kernel before Linux 6.12: tr2-bpf anchors each process's
 * enable when its fork record arrives (loader/tr2_attach.h): woken at once. */
const volatile int wake_at_fork = 0;
const volatile int task_storage = 1;
const volatile int attach_cookie = 1;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);   /* resized by tr2-bpf before load */
} events SEC(".maps");

/* Per CPU: [0] events lost (records that did not fit in the ring buffer,
 * calls a runtime counted as dropped, calls of damaged buffers); [1] copies
 * that found a thread's buffer damaged (count_damaged). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
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
 * sends SIGCONT; its guard process (loader/tr2_guard.c) when it lets go a
 * process tr2-bpf did not serve within TR2_HOLD_MAX_NS, or every one when
 * tr2-bpf is stopped or gone.  The eBPF side sends no SIGCONT itself: from
 * a tracepoint, bpf_send_signal_task() goes through one irq_work per CPU,
 * so that all but the first of several in one run fail (EBUSY) and those
 * processes would stay stopped. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} held SEC(".maps");

/* [0]: holds ended by the guard rather than by tr2-bpf (written by the
 * guard alone); [1]: processes not held because tr2-bpf was stopped or
 * had too many held already, or the stop could not be sent (they go on
 * before tr2-bpf has attached to the new object). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} unserved SEC(".maps");

/* tr2-bpf cannot serve a hold now: it was sent a stop signal or SIGKILL,
 * it is ending, or the guard let a hold go unserved, and it has not been
 * continued (SIGCONT) or served a hold since (tr2-bpf clears it then).  No
 * process is held meanwhile: one that the guard let go would otherwise be
 * held again at its next new object, and again. */
int tracer_absent;

/* Whether a user thread's memory is still there at sched_process_exit:
 * 0 not known yet, 1 yes (Linux 6.18), 2 no (6.12 and older).  Where it is not and on_do_exit
 * is not attached, threads' last calls are lost (tr2_kernel_warn_exit). */
int exit_memory;

/* The guard's tgid (loader/tr2_guard.c), set by tr2-bpf before it
 * attaches: -a never holds it, which lets go the others. */
int guard_tgid;

/* tr2-bpf is still looking at the processes it traces from the start (-p,
 * -a): no process is held until it polls the ring buffer; a record that
 * names a new object says it was not held, and tr2-bpf attaches to that
 * object when it reads it.  Set and cleared by tr2-bpf. */
int starting;

/* Per thread: its fault count + 1 at an instruction fault, else 0 (see
 * code_page() in tr2_hold.bpf.h).  Task storage, or without it (task_storage
 * 0) a hash map keyed by tid: tr2-bpf sets its type and size before the
 * load (TR2_THREADS_MAX), and on_exit deletes a thread's entry. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} code_fault SEC(".maps");

#include "tr2_batch.bpf.h"
#include "tr2_sched.bpf.h"
#include "tr2_hold.bpf.h"

/* --- the record path --- */

/* tr2:batch (usdt/tr2_probe.c): arg0 the calling thread's buffer, arg1 the
 * sid its program made (NULL: none).  Without BPF cookies the spec cannot
 * be looked up: tr2-bpf attaches only to sites that pass them in %rdi and
 * %rsi (tr2_attach.c), as the runtime's noinline batch_site does. */
SEC("usdt")
int probe_batch(struct pt_regs *ctx)
{
	struct task_struct *task = current_task();
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_state *ts = thread_of(task, id >> 32, (__u32)id);
	long buf = 0, sid = 0;

	if (!ts)
		return 0;
	if (attach_cookie) {
		bpf_usdt_arg(ctx, 0, &buf);
		bpf_usdt_arg(ctx, 1, &sid);
	} else {
		buf = BPF_CORE_READ(ctx, di);
		sid = BPF_CORE_READ(ctx, si);
	}
	if (buf)
		drain(ts, task, id >> 32, (__u32)id, buf, (const char *)sid);
	return 0;
}

/* A thread is switched out (it blocks, or is preempted): what it wrote goes
 * now, so that nothing waits while it sleeps; then where prev's and next's
 * time goes (tr2_sched.bpf.h).  Runs on prev (current) for every switch on
 * the host: a bystander pays a task-storage look-up, two with the split. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	sched_switch(ctx, preempt, prev, drain_current(), next);
	return 0;
}

/* A thread becomes runnable (tr2_sched.bpf.h); loaded with the split only. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	sched_wakeup(p);
	return 0;
}

/* Every TR2_TICK_NS on each CPU (a cpu-clock perf event tr2-bpf opens): the
 * thread running there, which may run on without a call or a switch. */
SEC("perf_event")
int on_tick(void *ctx)
{
	drain_current();
	return 0;
}

/* exec, before the old image's memory goes: its last calls.  The
 * tracepoint where the kernel has it (Linux 6.10+), else the entry of
 * begin_new_exec, which replaces the memory (tr2-bpf loads one of them). */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(on_prepare_exec, struct task_struct *task, struct linux_binprm *bprm)
{
	drain_current();
	return 0;
}

SEC("fentry/begin_new_exec")
int BPF_PROG(on_begin_new_exec, struct linux_binprm *bprm)
{
	drain_current();
	return 0;
}

/* A thread ends, while its memory is still there: on Linux 6.12 and older the
 * kernel releases it (exit_mm) before sched_process_exit runs, so that a
 * copy there finds nothing to read.  The thread's last calls (exit,
 * atexit, its timers and counters) go here; on_exit finishes. */
SEC("fentry/do_exit")
int BPF_PROG(on_do_exit, long code)
{
	drain_current();
	return 0;
}

/* --- holds and objects --- */

/* tr2-bpf is being stopped or killed: it cannot serve a hold until it is
 * continued.  The guard lets go the processes held already. */
SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal, int sig, struct kernel_siginfo *info, struct task_struct *task, int group, int result)
{
	if (task->tgid != tracer_tgid)
		return 0;
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGKILL)
		tracer_absent = 1;
	else if (sig == SIGCONT)
		tracer_absent = 0;
	return 0;
}

/* Follow mode: a traced process forked a process. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid;
	__u8 one = 1;

	if (!follow || ppid == cpid || !bpf_map_lookup_elem(&traced, &ppid))
		return 0;
	bpf_map_update_elem(&traced, &cpid, &one, BPF_ANY);
	send_rec(TR2_REC_FORK, cpid, child->pid, ppid, child->start_time, 0, wake_at_fork);
	return 0;
}

/* A thread exited: its last calls go (on this kernel the tracepoint runs
 * before its memory is released: SIGKILL, a crash, _exit() alike), then,
 * if it was announced, TR2_REC_THREAD_GONE.  If it was the last thread of
 * a traced process, the process leaves `traced` (a later process that got
 * the same pid would be taken for a traced one) and tr2-bpf frees what it
 * kept of it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct thread_state *ts = thread_state(p, p->pid);
	__u32 pid = p->tgid, tid = p->pid;

	if (pid == tracer_tgid) {
		tracer_absent = 1;   /* tr2-bpf ends (killed, crashed, done): no one to wait for */
		return 0;
	}
	if (!exit_memory && !(p->flags & PF_KTHREAD))
		exit_memory = p->mm ? 1 : 2;
	sched_exit(ts, p);
	if (ts) {
		drain_current();
		if (ts->announced)
			send_rec(TR2_REC_THREAD_GONE, pid, tid, 0, 0, 0, 0);
		thread_forget(p, tid);
	}
	if (!task_storage)
		bpf_map_delete_elem(&code_fault, &tid);
	/* do_exit() counts live threads down before this tracepoint. */
	if (BPF_CORE_READ(p, signal, live.counter) == 0) {
		/* killed while held: its pid may be another process's soon */
		bpf_map_delete_elem(&held, &pid);
		if (bpf_map_delete_elem(&traced, &pid) == 0)
			send_rec(TR2_REC_PROC_GONE, pid, p->pid, 0, 0, 0, 0);
	}
	return 0;
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
	struct tr2_object_key key = {};
	int stop;

	/* A new program: a new thread state, the filters decided again. */
	if (had_events || trace_all)
		thread_forget(p, p->pid);
	if (!traced_now(pid))
		return 0;
	stop = unknown_object(p->mm->exe_file->f_inode, &key);
	/* -a: only a process that sent events before has a session to end */
	if (stop || had_events)
		send_object(TR2_REC_EXECVE, stop, stop ? &key : &(struct tr2_object_key){});
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	struct task_struct *task;
	__u64 *pending;

	if (!(error_code & X86_PF_INSTR) || !traced_now(bpf_get_current_pid_tgid() >> 32))
		return 0;
	task = current_task();
	pending = code_fault_of(task, 1);
	if (pending)
		*pending = faults_of(task);
	return 0;
}

/* The tracepoints where the kernel has them (newer than 6.1), else the entries
 * of the two functions that hold them (tr2-bpf loads one pair). */
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

SEC("fentry/filemap_map_pages")
int BPF_PROG(on_filemap_map_pages_fn, struct vm_fault *vmf)
{
	code_page(vmf->vma->vm_file->f_mapping);
	return 0;
}

SEC("fentry/filemap_fault")
int BPF_PROG(on_filemap_fault_fn, struct vm_fault *vmf)
{
	code_page(vmf->vma->vm_file->f_mapping);
	return 0;
}
