/* tr2_hold.bpf.h: holds and objects.  A traced process that is about to run
 * code of an object file tr2-bpf has not looked at (exec, dlopen, the
 * libraries a program starts with) stops (SIGSTOP) until tr2-bpf has
 * attached to it, and is let go (SIGCONT) by tr2-bpf, or by its guard
 * process when tr2-bpf cannot serve it (loader/tr2_guard.c).  Included by
 * tr2.bpf.c after its maps. */

/* Whether the calling process is traced (follow and -p: in `traced`; -a:
 * any but tr2-bpf and its guard) and let through by the filters: the one that exec'd, or
 * that runs code of an object for the first time, is one to look at. */
static __always_inline int traced_now(__u32 pid)
{
	return pid != tracer_tgid && pid != guard_tgid && (trace_all || bpf_map_lookup_elem(&traced, &pid)) && wanted();
}

/* Counts a process that goes on without waiting for tr2-bpf (unserved[1]). */
static __always_inline void count_unheld(void)
{
	__u32 one = 1;
	__u64 *n = bpf_map_lookup_elem(&unserved, &one);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* Whether process pid may be held (stopped) for tr2-bpf, from now_ns:
 * entered into `held`, unless tr2-bpf is starting, or cannot serve it or
 * too many are held (then counted). */
static __always_inline int hold(__u32 pid, __u64 now_ns)
{
	if (starting)
		return 0;
	if (!tracer_absent && bpf_map_update_elem(&held, &pid, &now_ns, BPF_ANY) == 0)
		return 1;
	count_unheld();
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
 * tr2-bpf is woken at once; it sends SIGCONT when done.  The stop is sent
 * before the record, which tr2-bpf answers with the SIGCONT: from a
 * tracepoint the signal goes through an irq_work on this CPU (interrupts
 * on: it runs at once), long before tr2-bpf, woken on another CPU, has read
 * the record and attached.  A stop that cannot be sent (that irq_work is
 * busy: EBUSY) is no hold: the record says so, and tr2-bpf attaches late. */
static __always_inline void send_object(__u8 kind, int stop, const struct tr2_object_key *key)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct tr2_rec *r = rec_new(kind, pid, (__u32)id, 0, key->dev, key->ino);

	if (!r)
		return;
	if (stop && hold(pid, r->ts_ns)) {
		if (bpf_send_signal(SIGSTOP) == 0) {
			r->num[0] = 1;
		} else {
			bpf_map_delete_elem(&held, &pid);
			count_unheld();
		}
	}
	bpf_ringbuf_submit(r, wake_flags(r->num[0]));
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

static __always_inline __u64 faults_of(struct task_struct *task)
{
	return BPF_CORE_READ(task, min_flt) + BPF_CORE_READ(task, maj_flt) + 1;
}

/* The page being mapped is in mapping's file: when the thread's fault is
 * the instruction fetch on_fault saw, that is the file whose code runs. */
static __always_inline void code_page(struct address_space *mapping)
{
	struct task_struct *task = current_task();
	__u64 *pending = code_fault_of(task, 0);
	struct tr2_object_key key = {};
	__u64 fault;

	if (!pending || !*pending)
		return;
	fault = *pending;
	*pending = 0;
	if (fault == faults_of(task) && unknown_object(mapping->host, &key))
		send_object(TR2_REC_NEW_OBJECT, 1, &key);
}

