/* tr2_record.h: the ring-buffer record layout, shared by the eBPF programs
 * (bpf/tr2.bpf.c) and the decoder in tr2-bpf (loader/tr2_decode.c).  This is
 * the only place the layout is written down.
 *
 * A record is a struct tr2_rec header followed by `nstr` strings, each a
 * __u16 length word and that many bytes (no NUL).  The length word is
 * TR2_STR_NULL for a NULL pointer, TR2_STR_FAULT for a pointer the kernel
 * could not read, else the byte count, with TR2_STR_TRUNC set when the string
 * was cut at TR2_STR_MAX - 1 bytes.  Records are not padded; readers must not
 * assume alignment of anything after the header.
 *
 * Interned strings.  Call-site strings that are string literals (the file,
 * and category, label or key where trace2.h's __builtin_constant_p says so)
 * cannot change at a call site, so each thread sends them once per call
 * site: the eBPF side keys a call site by its probe, the calling object's
 * module number and the addresses of its literals (bpf/tr2.bpf.c,
 * site_key()), and keeps each thread's keys in SITE_SLOTS slots, direct-
 * mapped.  A record whose key is in its slot sets TR2_RECF_REF and leaves
 * the literal strings out (`interned`, bit i: the record's string i is such
 * a literal); the reader takes them from its copy for that thread and
 * `site`, the slot's number (1 .. SITE_SLOTS).  A record whose key is not
 * in its slot carries its strings whole, takes the slot and replaces the
 * reader's copy.  A thread's copies end with its TR2_REC_THREAD_INFO (after
 * which the eBPF side sends every call site's strings again) and its
 * TR2_REC_THREAD_GONE.
 */
#ifndef TR2_RECORD_H
#define TR2_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* What a record carries: one kind per trace2 probe (docs/probes.md), then
 * the tracer's own records. */
enum tr2_rec_kind {
	TR2_REC_VERSION,
	TR2_REC_START,
	TR2_REC_EXIT,
	TR2_REC_ATEXIT,
	TR2_REC_SIGNAL,
	TR2_REC_ERROR,
	TR2_REC_CMD_PATH,
	TR2_REC_CMD_ANCESTRY,
	TR2_REC_CMD_NAME,
	TR2_REC_CMD_MODE,
	TR2_REC_ALIAS,
	TR2_REC_DEF_PARAM,
	TR2_REC_DEF_REPO,
	TR2_REC_CHILD_START,
	TR2_REC_CHILD_EXIT,
	TR2_REC_CHILD_READY,
	TR2_REC_EXEC,
	TR2_REC_EXEC_RESULT,
	TR2_REC_THREAD_START,
	TR2_REC_THREAD_EXIT,
	TR2_REC_REGION_ENTER,
	TR2_REC_REGION_LEAVE,
	TR2_REC_DATA,
	TR2_REC_DATA_JSON,
	TR2_REC_PRINTF,
	TR2_REC_TIMER_START,        /* first use of a timer in a thread: its definition */
	TR2_REC_TIMER_STOP,         /* never sent: stops are summed in BPF */
	TR2_REC_COUNTER_ADD,        /* first use of a counter in a thread: its definition */
	TR2_REC__PROBES,            /* kinds below are made by the tracer, not by a probe */
	/* First record of each thread seen: who it is.  num: ppid, proc_start_ns,
	 * thread_start_ns (CLOCK_MONOTONIC, kernel task_struct start_time);
	 * thread_id = the trace2_tls thread_id; strings: base name, comm. */
	TR2_REC_THREAD_INFO = TR2_REC__PROBES,
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
	/* A thread that had sent records exited (or its process called exec
	 * from another thread): its interned strings can be forgotten. */
	TR2_REC_THREAD_GONE,
	/* A thread's timer and counter sums (see struct tr2_metric below):
	 * num[0] of them follow the header, as struct tr2_metric, unaligned.
	 * Sent just before the thread's thread_exit or atexit record, or, with
	 * num[1] = 1, when a thread that never called thread_exit ended. */
	TR2_REC_METRICS,
	/* The last thread of a traced process exited: tr2-bpf frees its state. */
	TR2_REC_PROC_GONE,
	TR2_REC__COUNT
};

#define TR2_STR_MAX   4096u     /* bytes read per string, NUL included */
#define TR2_STR_NULL  0xffffu
#define TR2_STR_FAULT 0xfffeu
#define TR2_STR_TRUNC 0x8000u
#define TR2_ARGV_MAX  64        /* vector entries read (argv, ancestry); more are cut */
#define TR2_REC_MAX   32768u    /* largest record */

/* Record flags. */
#define TR2_RECF_CUT  0x1       /* the record ran out of room: trailing strings are missing */
#define TR2_RECF_REF  0x2       /* the `interned` strings are left out: see above */

struct tr2_rec {
	__u16 size;      /* bytes, header and strings */
	__u8 kind;       /* enum tr2_rec_kind */
	__u8 nstr;       /* strings that follow */
	__u32 pid;       /* tgid of the traced process */
	__u32 tid;       /* kernel thread id */
	__s32 line;      /* __LINE__ of the call site */
	__u64 ts_ns;     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__s64 num[3];    /* numbers, per kind (docs/probes.md order: repo_id, ids, codes, values) */
	__s32 thread_id; /* TR2_REC_THREAD_INFO and THREAD_START: the runtime's thread number */
	__u16 flags;     /* TR2_RECF_* */
	__u8 nvec;       /* how many of the trailing strings form the kind's vector (argv...) */
	__u8 interned;   /* bit i: string i is a literal of call site `site` (see above) */
	/* The thread's regions as the eBPF side counts them, which sees every
	 * probe hit even when records are dropped: */
	__u32 depth;     /* open regions: before the push on region_enter, after the pop on region_leave */
	__u32 site;      /* call site slot (see above), 0 for the tracer's own records */
	__u64 region_ns; /* start (ts_ns) of the innermost open region, or of the one
			    region_leave closes; 0 when unknown (entered before the attach,
			    or deeper than TR2_REGION_MAX) or none */
};

#define TR2_REGION_MAX 32       /* region start times kept per thread */

/*
 * Timers and counters are summed on the eBPF side, per thread, in the
 * thread's own state (BPF task storage, TR2_THREAD_METRICS slots):
 * timer_start, timer_stop and counter_add send no record.  A metric's first
 * use in a thread sends its definition (TR2_REC_TIMER_START or
 * TR2_REC_COUNTER_ADD: num[0] id, num[1] per_thread; strings: file,
 * category, name), so that tr2-bpf learns its names; the sums go out in one
 * TR2_REC_METRICS record when the thread ends.  Nothing is kept per thread
 * or process outside the thread itself, so nothing grows with the threads
 * that have come and gone.  A thread that uses more metrics than it has
 * slots counts each hit on the others as lost.
 */
#define TR2_THREAD_METRICS 16

struct tr2_metric {
	__u64 id;          /* address of the TRACE2_DEFINE_TIMER/_COUNTER definition */
	__u32 recursion;   /* timer: starts not yet stopped (git's recursion_count) */
	__u8 is_counter;
	__u8 defined;      /* eBPF side: the definition record went out */
	__u16 pad;
	__u64 start_ns;    /* timer: start of the open interval */
	__u64 intervals;   /* timer: closed intervals */
	__u64 total_ns, min_ns, max_ns;
	__s64 count;       /* counter: sum of the values added */
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

#endif

/*
 * Summary mode (tr2-bpf --summary): region durations and integer data
 * values are aggregated on the eBPF side, per process and per (category,
 * label or key), in the hash map "aggs"; with no event stream asked for,
 * region_enter, region_leave and integer `data` send no record at all.
 *
 * A key names its strings cheaply: a string that is a literal at the call
 * site (docs/probes.md, `literals`) by its address, which cannot change in
 * that program (exec_id tells programs in one pid apart); a string built at
 * run time by a 64-bit hash of its first TR2_AGG_CAT_MAX - 1 or
 * TR2_AGG_LABEL_MAX - 1 bytes (read at every hit).  The same strings at
 * different addresses make different keys: tr2-bpf merges those rows by the
 * names kept in the value.  The key space is bounded by the map's size
 * (tr2-bpf sets it): an event whose key cannot be added to a full map is not
 * aggregated and is counted in "agg_lost" (TR2_AGG_LOST_FULL), as is a region
 * nested deeper than TR2_REGION_MAX (TR2_AGG_LOST_DEEP).
 */
#define TR2_AGG_CAT_MAX   64    /* bytes of a category kept, NUL included */
#define TR2_AGG_LABEL_MAX 128   /* bytes of a label or key kept, NUL included */
#define TR2_AGG_SLOTS     64    /* log2 histogram slots: slot i counts [2^i, 2^(i+1)) ns, slot 0 [0, 2) */

#define TR2_AGGK_REGION    0x1  /* key flags: a region, or */
#define TR2_AGGK_DATA      0x2  /* an integer data value */
#define TR2_AGGK_CAT_LIT   0x10 /* cat is the address of a literal, else a hash of its bytes */
#define TR2_AGGK_LABEL_LIT 0x20 /* label likewise */

struct tr2_agg_key {
	__u32 pid;        /* tgid */
	__u32 flags;      /* TR2_AGGK_* */
	__u64 exec_id;    /* the task's self_exec_id: changes at exec */
	__u64 cat;        /* category: address (with its object's key) or hash (flags) */
	__u64 label;      /* label (regions) or key (data): address (idem) or hash */
};

struct tr2_agg_val {
	__u64 count;      /* regions: closed (enter and leave seen); data: values */
	__s64 sum;        /* regions: total duration, ns; data: sum of the values (wraps) */
	__s64 min, max;   /* regions: ns; data: values; valid when count > 0 */
	__s64 last;       /* data: the latest value */
	__u64 open;       /* regions entered here and not left yet */
	__u64 before;     /* leaves of regions entered before the attach (no duration) */
	__u64 hist[TR2_AGG_SLOTS];   /* regions: durations per log2 slot */
	char cat[TR2_AGG_CAT_MAX];     /* NUL-terminated, cut at TR2_AGG_CAT_MAX - 1 bytes */
	char label[TR2_AGG_LABEL_MAX]; /* likewise */
};

/* Indexes of the per-CPU array "agg_lost": events not aggregated. */
enum { TR2_AGG_LOST_FULL, TR2_AGG_LOST_DEEP, TR2_AGG_LOST__COUNT };

#define TR2_CAT_FILTER_MAX 64   /* bytes of a --category name, NUL included */

/* A process is held (stopped for tr2-bpf to attach to a new object) at
 * most this long, ns: then the eBPF side or tr2-bpf's watchdog lets it go. */
#define TR2_HOLD_MAX_NS 900000000ull

