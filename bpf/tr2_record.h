/* tr2_record.h: what crosses from a traced process to tr2-bpf, the one place
 * it is written down: a traced thread's buffer and the calls in it, written
 * by the runtime (usdt/tr2_batch.c) and copied as they are by the eBPF side
 * (bpf/tr2.bpf.c); the ring-buffer records that carry them and the tracer's
 * own records, decoded by tr2-bpf (loader/tr2_decode.c).
 *
 * While tr2-bpf listens, the runtime appends each trace2 call of a thread to
 * that thread's buffer, struct tr2_tbuf, and enters the kernel only for a
 * batch (its probe tr2:batch, docs/probes.md): at the thread's first call,
 * when the buffer is full, and when its last batch is TR2_TRAP_NS old.  The
 * eBPF side copies what a thread's buffer holds into the ring buffer then,
 * and also when the thread is switched out, at a timer tick while it runs,
 * at exec and at its exit, so that a call waits there at most about
 * TR2_TICK_NS, and a thread that ends in any way leaves nothing behind.
 * Every copy runs on the thread itself (current), so it never races with
 * the runtime's appends: it takes what `pos` says is written.
 */
#ifndef TR2_RECORD_H
#define TR2_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* ---- a traced thread's buffer (runtime memory, read by the eBPF side) ---- */

/* A runtime and a tr2-bpf agree on all of this when the runtime's private
 * probe is named tr2:batch: a change here renames it (tr2:batch2, ...) and
 * changes the magic, so that tr2-bpf leaves a runtime of another version
 * alone (docs/probes.md) rather than misread its buffers. */
#define TR2_TBUF_MAGIC 0x01327274u  /* "tr2" and layout 1 */
#define TR2_TBUF_DATA  (16u << 10)  /* data bytes of a thread's buffer, a power of 2 */
/* pos: events << 40 | bytes, each counted since the buffer was made, wrapping;
 * the events are the calls that make one (timer_start, timer_stop and
 * counter_add, which are summed, do not count) */
#define TR2_POS_EVENT  (1ull << 40)
#define TR2_POS_BYTES(pos)  ((pos) & (TR2_POS_EVENT - 1))
#define TR2_POS_EVENTS(pos) ((pos) >> 40)
#define TR2_INTERNED   64           /* literal strings a thread names by id at once (a power of 2) */
/* A thread sends a batch when its last one is this old (ns), so that a
 * tracer that attached meanwhile meets its buffer (docs/probes.md). */
#define TR2_TRAP_NS    (50ull * 1000 * 1000)
/* The eBPF side copies the buffer of the thread running on each CPU this
 * often (ns): how long a call may wait in a running thread's buffer. */
#define TR2_TICK_NS    (25ull * 1000 * 1000)

/* The literal strings a thread's buffer has defined in the current epoch,
 * by id (TR2_STR_REF below); the runtime's. */
struct tr2_interned {
	__u32 epoch;       /* batches sent: literals are defined anew after each */
	__u32 pad;
	struct {
		const char *ptr;
		__u32 module;
		__u32 epoch;
	} slot[TR2_INTERNED];
};

struct tr2_tbuf {
	/* Read by the eBPF side (a 48-byte header it copies in one read). */
	__u32 magic;       /* TR2_TBUF_MAGIC */
	__u32 owner;       /* the thread's kernel tid: a buffer reused by another thread
			      (the first one ended) is not the first one's any more */
	__u64 pos;         /* what is written, published after the bytes (TR2_POS_*) */
	__u64 trap_pos;    /* pos at the batch before the last: where a tracer that
			      meets this buffer at a batch starts (the calls before it
			      were copied by the tracers attached then) */
	__u64 dropped;     /* calls the runtime could not write (a signal handler's call
			      that found the buffer full or being reserved): lost */
	__u64 tls;         /* the thread's struct trace2_tls (trace2.h), for its name */
	__u64 pad0;
	/* The runtime's own. */
	__u64 wpos;        /* reserved; pos catches up when no append is in progress */
	__u64 last_trap_ns;/* CLOCK_MONOTONIC of the last batch; 0: send one at the next call */
	__s32 depth;       /* region enters minus leaves written */
	__u32 nest;        /* appends in progress on the thread (a signal handler's in another) */
	__u32 reserving;   /* an append is moving wpos: a handler's append waits for none */
	__u32 epoch_start; /* the next call is the first of its epoch (TR2_WIRE_EPOCH) */
	struct tr2_tbuf *next;  /* in the runtime's free list */
	struct tr2_interned literals;   /* the literal strings defined in this epoch */
	char data[TR2_TBUF_DATA];
};
#define TR2_TBUF_HDR 48    /* the part the eBPF side reads */
/* The smallest call a buffer holds (a header and its file's word, padded
 * to 8), and so the most calls (written or dropped) a thread can have made
 * since the last copy of its buffer: a header that says more, or whose
 * counts go backwards, is a damaged buffer (the process wrote over it). */
#define TR2_WIRE_MIN   32
#define TR2_CALLS_MAX  (TR2_TBUF_DATA / TR2_WIRE_MIN)

/*
 * One call in a thread's buffer, 8-byte aligned: this header, then nnum
 * __s64 numbers (the fields of struct tr2_call, formatter/tr2_call.h, whose
 * bit is set in `nums`, in bit order), then the call site's file and nstr
 * more strings (tr2_call's s[0..nstr)), then nvec strings (its vector), then
 * padding to 8.  A string is a __u16 word:
 *   TR2_STR_NULL        a NULL pointer;
 *   TR2_STR_REF | id    the literal string defined as `id` in this epoch;
 *   TR2_STR_DEF | len   a literal string, defined as the id in the byte that
 *                       follows, then its len bytes (no NUL);
 *   [TR2_STR_TRUNC |] len  len bytes, cut (at TR2_STR_MAX - 1 bytes, or to
 *                       fit the call in the buffer) when TR2_STR_TRUNC is set.
 * Literal strings (the file; category, label or key where the call site
 * passes literals, trace2.h's TRACE2__LITERALS; timer and counter names)
 * are sent once per epoch, named by id after that: an epoch starts at the
 * call after each batch (TR2_WIRE_EPOCH), which is where a reader that
 * missed calls can find its footing again.  A signal handler's call inside
 * another call defines and names none.  A header with probe TR2_WIRE_PAD is
 * no call: the `size` bytes up to the end of the data area are skipped (a
 * call never wraps around).
 */
struct tr2_wire {
	__u16 size;        /* bytes, header to padding */
	__u8 probe;        /* TRACE2__P_* (trace2.h), or TR2_WIRE_PAD */
	__u8 nums;         /* TR2_WN_* */
	__u8 nstr;         /* strings after the file: tr2_call s[0..nstr) */
	__u8 nvec;         /* vector strings after those; TR2_ARGV_MAX at most */
	__u8 flags;        /* TR2_WIRE_* */
	__u8 pad;
	__s32 line;        /* __LINE__ of the call site */
	__s32 depth;       /* the thread's region enters minus leaves before this call */
	__u64 ts_ns;       /* CLOCK_MONOTONIC */
};
#define TR2_WIRE_PAD   0xff
#define TR2_WIRE_CUT   0x1   /* flags: the vector was longer */
#define TR2_WIRE_EPOCH 0x2   /* flags: the first call of an epoch (see above) */
#define TR2_WIRE_NOVEC 0x4   /* flags: the call's vector was NULL (not empty) */
/* The numbers of a call, in this order (struct tr2_call's fields). */
#define TR2_WN_REPO    0x01  /* repo_id */
#define TR2_WN_ID      0x02  /* id */
#define TR2_WN_CODE    0x04  /* code */
#define TR2_WN_PID     0x08  /* pid_arg */
#define TR2_WN_SHELL   0x10  /* use_shell */
#define TR2_WN_THREAD  0x20  /* per_thread */
#define TR2_WN_VALUE   0x40  /* value */
#define TR2_WN_METRIC  0x80  /* metric */

#define TR2_STR_MAX   4096u     /* bytes kept of a string, NUL included */
#define TR2_STR_NULL  0xffffu
#define TR2_STR_REF   0xc000u   /* and an id < TR2_INTERNED */
#define TR2_STR_TRUNC 0x8000u
#define TR2_STR_DEF   0x4000u
#define TR2_STR_LEN   0x3fffu   /* the length bits */
#define TR2_ARGV_MAX  64        /* vector entries kept (argv, ancestry); more are cut */

/* ---- ring-buffer records ---- */

enum tr2_rec_kind {
	/* A thread's calls: the bytes of its buffer from where the last copy
	 * ended (whole struct tr2_wire calls, TR2_WIRE_PAD included).  num[0]:
	 * the calls in them; num[1]: calls lost before them (the runtime's
	 * `dropped`, or a buffer that made no sense). */
	TR2_REC_BATCH,
	/* Sent before a thread's first batch: who it is (struct
	 * tr2_rec_thread_info).  num: the nearest traced ancestor (else the
	 * parent), proc_start_ns, thread_start_ns
	 * (CLOCK_MONOTONIC, the kernel's task_struct start_time); thread_id:
	 * trace2__tls's. */
	TR2_REC_THREAD_INFO,
	/* A traced process forked a process (follow mode).  pid = child, num[0] = parent. */
	TR2_REC_FORK,
	/* A traced process called exec: a new program, a new session.  num[1],
	 * num[2]: the struct tr2_object_key (dev, ino) of an object it maps that
	 * tr2-bpf has not looked at yet, 0 when none; num[0] is 1 when the
	 * process is stopped (SIGSTOP) for that: tr2-bpf attaches, then sends
	 * SIGCONT.  An unknown object without a stop (tr2-bpf was stopped, see
	 * `held` in bpf/tr2.bpf.c): tr2-bpf attaches when it reads the record. */
	TR2_REC_EXECVE,
	/* A traced process is about to run code of an object file not known
	 * yet (the first instruction fetched from it faulted: dlopen, or the
	 * libraries a program starts with): num[] as for TR2_REC_EXECVE.
	 * tr2-bpf looks at every object the process maps. */
	TR2_REC_NEW_OBJECT,
	/* A thread that had sent calls exited (or its process called exec from
	 * another thread); its last batch came just before. */
	TR2_REC_THREAD_GONE,
	/* The last thread of a traced process exited: tr2-bpf frees its state. */
	TR2_REC_PROC_GONE,
	/* --chrome's thread states (bpf/tr2_sched.bpf.h): a traced thread's
	 * stretch off the CPU, sent at its switch-in (ts_ns).  num[0]: its
	 * switch-in before (on the CPU from then), num[1]: its switch-out,
	 * num[2]: its wakeup (num[1] when it left the CPU runnable); `state`:
	 * the enum tr2_sched_state it left the CPU in.  At its exit: ts_ns,
	 * num[1] and num[2] the exit, state TR2_SCHED_CPU (on the CPU until
	 * then). */
	TR2_REC_SCHED,
	TR2_REC__COUNT
};

/* What the scheduler does with a traced thread, as ps(1) says it (R, D, S):
 * on a CPU; runnable, waiting for one (woken, or preempted); blocked in an
 * uninterruptible sleep (D: disk I/O, a page fault from disk, a killable
 * lock); asleep (S: interruptible, a lock, a pipe, poll, nanosleep, a
 * child; also stopped, T).  formatter/tr2_event.h has the same order. */
enum tr2_sched_state { TR2_SCHED_CPU, TR2_SCHED_RUNNABLE, TR2_SCHED_BLOCKED, TR2_SCHED_ASLEEP, TR2_SCHED__COUNT };

/* A traced thread's time by state since the eBPF side began to count it
 * (bpf/tr2_sched.bpf.h), as at its last switch-in: a batch's calls were
 * all made after that switch-in and before the next switch-out, so that
 * at a call's time t the thread's on-CPU time is ns[TR2_SCHED_CPU] + (t -
 * in_ns) and the others are ns[] as they are. */
struct tr2_sched {
	__u64 origin_ns;   /* when counting began (CLOCK_MONOTONIC); 0: not counted */
	__u64 in_ns;       /* the last switch-in (origin_ns before the first) */
	__u64 ns[TR2_SCHED__COUNT];   /* from origin_ns to in_ns */
};

/* A thread's state when tr2-bpf -p attached, /proc's R: running or
 * runnable, told apart at its next switch. */
#define TR2_SCHED_R_UNKNOWN TR2_SCHED__COUNT

/* How the eBPF side counts a thread's time (bpf/tr2_sched.bpf.h); tr2-bpf
 * -p starts one for each thread of a process it attaches to. */
struct tr2_sched_acct {
	__u8 state;       /* enum tr2_sched_state now, or TR2_SCHED_R_UNKNOWN */
	__u8 off_state;   /* the one it left the CPU in last */
	__u8 pad[6];
	__u64 since;      /* its last change of state (CLOCK_MONOTONIC) */
	__u64 off_ns, woken_ns;  /* its last switch-out and wakeup */
	struct tr2_sched sched;  /* counted since sched.origin_ns (0: not counted) */
};

#define TR2_SID_MAX   1024u     /* bytes of a program's own sid kept, NUL included */
#define TR2_REC_MAX   (sizeof(struct tr2_rec) + TR2_TBUF_DATA)  /* largest record */

/* TR2_REC_THREAD_INFO's flags: the process was forked and has not called
 * exec since (the kernel's exec ids say so): it runs its parent's program,
 * whose session it continues, as git's targets write such a child. */
#define TR2_REC_FORKED 0x1

struct tr2_rec {
	__u16 size;      /* bytes, header and what follows */
	__u8 kind;       /* enum tr2_rec_kind */
	union {
		__u8 flags;  /* TR2_REC_THREAD_INFO: TR2_REC_FORKED; else 0 */
		__u8 state;  /* TR2_REC_SCHED: an enum tr2_sched_state; else 0 */
	};
	__u32 pid;       /* tgid of the traced process */
	__u32 tid;       /* kernel thread id */
	__s32 thread_id; /* TR2_REC_THREAD_INFO: the runtime's thread number */
	__u64 ts_ns;     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__s64 num[3];    /* numbers, per kind */
	struct tr2_sched sched;   /* TR2_REC_BATCH: the thread's, where it is counted; else 0 */
};

#define TR2_ANCESTRY_MAX 64     /* ancestors named in a TR2_REC_THREAD_INFO */

/* TR2_REC_THREAD_INFO's record. */
struct tr2_rec_thread_info {
	struct tr2_rec hdr;
	char base_name[32];        /* trace2__tls.base_name, NUL-terminated (cut) */
	char comm[16];             /* the thread's comm, NUL-terminated */
	char sid[TR2_SID_MAX];     /* the sid its program made itself, NUL-terminated; "": none */
	/* The process's main thread only (else nancestry is 0): the names
	 * /proc/PID/stat gives of its ancestors when it made its first call,
	 * nearest first (the parent's comm, its parent's, ...), while its
	 * pid namespace sees them, up to init: what git's cmd_ancestry
	 * reads (compat/linux/procinfo.c), for a call made with NULL names
	 * (trace2.h, trace2_cmd_ancestry). */
	__u32 nancestry;
	char ancestry[TR2_ANCESTRY_MAX][16];
};

/* An object file as the kernel names it: the inode's super block dev_t
 * (kernel encoding, MAJOR << 20 | MINOR) and inode number (and, where
 * tr2-bpf attaches per process, the process).  The eBPF side
 * keeps the objects tr2-bpf has looked at (attached, or without trace2
 * probes) in the map "known", and stops a traced process only when it maps
 * one that is not there. */
struct tr2_object_key {
	__u64 dev;
	__u64 ino;
	__u32 pid;       /* tr2-bpf -p: the traced process it was looked at for; else 0 */
	__u32 pad;
};

/* A process is held (stopped for tr2-bpf to attach to a new object) at
 * most this long, ns: then the eBPF side or tr2-bpf's watchdog lets it go. */
#define TR2_HOLD_MAX_NS 900000000ull

#endif
