/* tr2_attach.h: finds the tr2 runtimes a process maps (its executable and
 * every shared object; docs/probes.md) and attaches to them.
 *
 * A runtime carries the trace2 probes, one site per event kind, and the
 * private probe tr2:enable, whose semaphore is the word every trace2 call
 * tests inline (usdt/trace2.h, trace2__state.on).  Attaching to a runtime
 * is two things, each scoped by the caller (loader/tr2_mode.c):
 *  - the payload: the eBPF programs on the trace2 probe sites, with no
 *    semaphore, for one process or for every process that maps the object;
 *  - the enable: a perf event on tr2:enable with its semaphore, which makes
 *    the kernel raise trace2__state.on in exactly the processes the event
 *    covers, and lower it again when the event is closed, whatever happens
 *    to tr2-bpf.  Only those processes call into the runtime at all.
 */
#ifndef TR2_ATTACH_H
#define TR2_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;
struct bpf_program;

struct bpf_object;
struct bpf_program;
struct tr2_attach;
struct tr2_kernel;

/* An object file looked at, by the (dev, ino) of the file a process maps. */
struct tr2_object {
	uint64_t dev, ino;   /* kernel encoding (MAJOR << 20 | MINOR), as the eBPF side names it */
	int runtime;         /* carries a tr2 runtime (the tr2:enable probe) */
	int old;             /* carries trace2 probes but no runtime this tracer reads
				(tr2:enable and tr2:batch): built with another version of
				tr2; never attached */
	int sites;           /* trace2 probe sites in it */
	int payload_all;     /* the payload is attached for every process */
	int enable_all;      /* tr2:enable is raised in every process (tr2_attach_enable_all) */
	int warned;          /* the mode has said that it is old */
	char *name;          /* the path the process maps it by, for messages only */
};

/*
 * Before obj is loaded: makes its "probe_<probe>" programs uprobe-multi
 * programs where the kernel k has those links (Linux 6.6+); elsewhere
 * probes are attached one perf uprobe per site.
 */
void tr2_attach_prepare(struct bpf_object *obj, const struct tr2_kernel *k);

/* Creates the bookkeeping for the programs of the loaded obj, on kernel k
 * (the same as tr2_attach_prepare's). */
struct tr2_attach *tr2_attach_new(struct bpf_object *obj, const struct tr2_kernel *k);

/* 1 when probes are attached with uprobe-multi links, 0 with one perf
 * uprobe per site. */
int tr2_attach_multi(const struct tr2_attach *a);

/* 1 when payload uprobes go on the 5-byte nop of each site, 0 when on the
 * 1-byte nop (the default; see tr2_attach_set_nop5). */
int tr2_attach_uses_nop5(const struct tr2_attach *a);

/* Chooses the nop of the payload sites attached from now on: 1 for the
 * 5-byte nop, 0 for the 1-byte one. */
void tr2_attach_set_nop5(struct tr2_attach *a, int nop5);

/*
 * Looks at every object process pid maps executable: puts each into the
 * eBPF side's "known" map (bpf/tr2_record.h), so that mapping it again, in
 * any traced process, stops nothing, and reads the probes of each one not
 * looked at before (by /proc/PID/map_files: the file the process maps).
 * Then calls fn(ctx, o, pid) for each object with a runtime, or with trace2
 * probes but no runtime of this version (o->old), that pid maps, looked at before or
 * not.  A nonzero return of fn stops the walk and is returned.  Returns 0,
 * or -1 with a one-line reason in err (the process is gone, an object's
 * probes cannot be read).
 */
int tr2_attach_scan(struct tr2_attach *a, pid_t pid, int (*fn)(void *ctx, struct tr2_object *o, pid_t pid),
		    void *ctx, char *err, size_t errlen);

/* Attaches the eBPF programs to o's trace2 probe sites for process pid, or
 * for every process that maps o when pid is 0 (then o->payload_all is set).
 * Returns 0, or -1 with a reason in err. */
int tr2_attach_payload(struct tr2_attach *a, struct tr2_object *o, pid_t pid, char *err, size_t errlen);

/*
 * Raises trace2__state.on in process pid while tr2-bpf runs, with a perf
 * event on o's tr2:enable.  inherit 0: that process only (its children's
 * copies are lowered at their first fork hook, usdt/tr2_probe.c); inherit 1:
 * and every descendant it has from now on, through fork and exec (the
 * kernel copies the event into each child; a tracefs uprobe event, made
 * through tr2-bpf's own detached tracefs mount, or else a tracefs mounted at
 * /sys/kernel/tracing or /sys/kernel/debug/tracing).  Returns 0, or -1 with
 * a reason in err.
 *
 * The event is made disabled: it must exist, not count.  The kernel
 * registers the uprobe and its per-process filter when the event is made
 * (perf_trace_event_init), which installs the breakpoint and raises the
 * semaphore in the processes the filter names; a disabled event is not
 * scheduled in or out at the traced threads' context switches (measured:
 * a switch between two traced threads 0.3 µs cheaper than enabled).
 *
 * An inherited event asks for PERF_SAMPLE_READ (it never samples), for
 * what that does to the kernel's context switch.  When the
 * kernel switches between two processes whose perf contexts are copies
 * (a parent and its child, or two children), it swaps their contexts
 * (perf_event_context_sched_out, "context_equiv") without moving the
 * events' targets; a process that ends frees the inherited events of the
 * context it holds then, and one may name another process that goes on:
 * the uprobe filter (kernel/trace/trace_uprobe.c, uprobe_perf_close) then
 * finds no event for that process's memory, removes its breakpoint and
 * lowers its semaphore, and its later calls are never made.  A context
 * with an inherited PERF_SAMPLE_READ event is never swapped (its
 * nr_no_switch_fast, Linux 6.12+).  Measured on Linux 6.18, tr2_stress
 * family 20: 9 runs of 10 lost events without it, 0 of 50 with it.  An
 * older kernel refuses the flag with inherit (EINVAL): there each process
 * of the tree gets an anchor (tr2_attach_anchor).
 */
int tr2_attach_enable(struct tr2_attach *a, struct tr2_object *o, pid_t pid, int inherit,
		      char *err, size_t errlen);

/* 1 on a kernel before Linux 6.12, where inherited enables need anchors. */
int tr2_attach_anchored(const struct tr2_attach *a);

/*
 * Keeps process pid's inherited enable of o on where the kernel could take
 * it away (tr2_attach_anchored; see tr2_attach_enable for how): a perf
 * event of the same enable for pid alone, which names pid for as long as
 * it lives, so that the uprobe filter always finds an event for pid's
 * memory; closed by tr2_attach_unanchor or at the end.  Made when pid's
 * fork record arrives (the eBPF side wakes tr2-bpf at once for it, about
 * 0.1 ms after the fork): a relative's end within that window can still
 * take pid's enable.  Returns 0, or -1 with errno set (ESRCH: pid is gone).
 */
int tr2_attach_anchor(struct tr2_attach *a, struct tr2_object *o, pid_t pid);

/* Closes process pid's anchors, if any: once it has ended. */
void tr2_attach_unanchor(struct tr2_attach *a, pid_t pid);

/* Raises trace2__state.on in every process that maps o (one perf event per
 * CPU); sets o->enable_all.  Returns 0, or -1 with a reason in err. */
int tr2_attach_enable_all(struct tr2_attach *a, struct tr2_object *o, char *err, size_t errlen);

/* Closes every tr2:enable event (tr2-bpf paused): the kernel lowers the
 * semaphores they raised, inherited copies included, and the traced
 * processes' calls stop at their inline test; the payload stays attached.
 * Clears every object's enable_all.  The caller raises them again with
 * tr2_attach_enable() and tr2_attach_enable_all(). */
void tr2_attach_lower_enables(struct tr2_attach *a);

/* Puts the object (dev, ino) (struct tr2_object_key, as the eBPF side named
 * it in a stop record) into the "known" map, for process pid where objects
 * are known per process (tr2_attach_set_known_per_process). */
void tr2_attach_known(struct tr2_attach *a, uint64_t dev, uint64_t ino, pid_t pid);

/* Objects are known per process (tr2-bpf -p, whose payload uprobes are each
 * process's own) when per_process is 1, else per object; the eBPF side's
 * known_per_process must agree. */
void tr2_attach_set_known_per_process(struct tr2_attach *a, int per_process);

/* The file offsets of probe prov:name ("trace2" or "tr2" provider) in the
 * ELF file path: its site, and its semaphore in *sema (0: none), from its
 * .note.stapsdt notes as tr2_attach_scan reads them.  Returns 0, or -1 when
 * the file cannot be read or has no such probe. */
int tr2_attach_find_probe(const char *path, const char *prov, const char *name, long *site, long *sema);

/* Objects with a runtime looked at so far, and the trace2 probe sites in them. */
int tr2_attach_objects(const struct tr2_attach *a);
int tr2_attach_sites(const struct tr2_attach *a);

/* Detaches everything (links, perf events, tracefs events) and frees; NULL
 * is allowed.  The kernel lowers every semaphore tr2-bpf raised. */
void tr2_attach_free(struct tr2_attach *a);


/*
 * The eBPF program prog (tr2.bpf.c's on_tick) on a cpu-clock perf event of
 * every CPU that is online, firing every period_ns of the CPU's time: the
 * links go into links[] (max of them).  Returns how many, or -1 with err
 * set (nothing left attached).
 */
int tr2_attach_ticks(struct bpf_program *prog, uint64_t period_ns, struct bpf_link **links, int max,
		     char *err, size_t errlen);

#endif
