/* tr2_kernel.h: what the running kernel offers tr2-bpf, decided once at its
 * start and in one place (as libbpf-tools and bpftrace do), from the
 * presence of each feature in the kernel's BTF or from a test load, never
 * from its version number.  Every supported kernel (x86-64 Linux 5.10 and
 * later with BTF) traces the same lines: where one lacks what the newest
 * path uses, tr2-bpf takes another mechanism it has (README, "Kernels").
 */
#ifndef TR2_KERNEL_H
#define TR2_KERNEL_H

struct tr2_bpf;

struct tr2_kernel {
	char release[65];        /* uname -r */
	int task_storage;        /* task local storage for tracing and bpf_get_current_task_btf (5.11) */
	int hash_alloc;          /* perf_event programs may use hash maps allocated at run time (6.1) */
	int attach_cookie;       /* bpf_get_attach_cookie (5.15) */
	int uprobe_multi;        /* uprobe-multi links (6.6) */
	int copy_direct;         /* the kfunc bpf_probe_read_user_dynptr (6.16) */
	int prepare_exec_tp;     /* the sched_prepare_exec tracepoint (6.10) */
	int filemap_tp;          /* the mm_filemap_map_pages and mm_filemap_fault tracepoints */
	int sample_read_inherit; /* an inherited PERF_SAMPLE_READ event keeps a perf context its own (6.12) */
	int fentry_do_exit;      /* fentry programs load (a test load at do_exit), and */
	int fentry_exec;         /* the kernel's BTF names begin_new_exec, */
	int fentry_filemap;      /* filemap_map_pages and filemap_fault */
	int switch_prev_state;   /* sched_switch's prev_state argument (5.18) */
	/* Set by tr2_kernel_attach and tr2_kernel_check: */
	int exit_copied;         /* a thread's last calls are copied at do_exit */
	int exit_warned;         /* it was said that they are not, and cannot be */
};

/* Fills *k from the running kernel (/sys/kernel/btf/vmlinux, uname, one
 * test load of a BPF program).  A kernel without BTF leaves every BTF
 * feature 0; the load of tr2-bpf's programs then says why. */
void tr2_kernel_probe(struct tr2_kernel *k);

/*
 * Before the load of skel: sets what its programs read as constants
 * (bpf/tr2.bpf.c: task_storage, attach_cookie, copy_direct,
 * wake_at_fork, switch_prev_state), the type, flags and size of its maps, and which of each pair of
 * programs the kernel gets (a tracepoint, else an fentry program on the
 * function that holds it).
 */
void tr2_kernel_setup(const struct tr2_kernel *k, struct tr2_bpf *skel);

/* After skel's other programs are attached: attaches its fentry programs
 * that tr2_kernel_setup chose, and says on stderr, once, each thing this
 * kernel cannot do (a line that names the feature and the kernel); with
 * verbose, what it found. */
void tr2_kernel_attach(struct tr2_kernel *k, struct tr2_bpf *skel, int verbose);

/* Says once on stderr when the eBPF side has seen that a thread's memory
 * is gone at sched_process_exit while nothing copies its last calls
 * earlier (no fentry at do_exit): those calls are lost, uncounted.  Called
 * at every tick; cheap. */
void tr2_kernel_check(struct tr2_kernel *k, const struct tr2_bpf *skel);

/* The largest number of traced threads (and of threads faulting on code)
 * alive at once where thread state is a hash map (no task storage). */
#define TR2_THREADS_MAX (1 << 16)

#endif
