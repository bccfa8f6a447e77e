/* tr2_attach.h: finds the trace2 probes of a process (its executable and
 * every shared object it maps) and attaches the eBPF programs to them. */
#ifndef TR2_ATTACH_H
#define TR2_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_object;
struct bpf_program;
struct tr2_attach;

/*
 * Before obj is loaded: makes its "probe_<probe>" programs uprobe-multi
 * programs where the kernel has those links (Linux 6.6+).  Returns 1 when it
 * did, 0 when probes will be attached one perf uprobe per site.
 */
int tr2_attach_prepare(struct bpf_object *obj);

/*
 * Creates the bookkeeping for the programs of the loaded obj.  pid_filter:
 * the one process to attach to (tr2-bpf -p), or -1 to attach to every
 * process mapping an object and let the eBPF side filter (-- CMD).  multi:
 * what tr2_attach_prepare() returned.
 */
struct tr2_attach *tr2_attach_new(struct bpf_object *obj, pid_t pid_filter, int multi);

/* 1 when sites that are a `nop; nop5` pair get the uprobe on the 5-byte nop
 * (the kernel optimizes it into a call), 0 when on the 1-byte nop. */
int tr2_attach_uses_nop5(const struct tr2_attach *a);

/* Overrides that choice (benchmarks): 1 for the 5-byte nop, 0 for the 1-byte
 * nop.  Applies to objects attached afterwards. */
void tr2_attach_set_nop5(struct tr2_attach *a, int nop5);

/*
 * Attaches to the trace2 probes of every object that process pid maps and
 * that is not attached yet, and puts every object it maps executable into
 * the eBPF side's "known" map (bpf/tr2_record.h), so that mapping it again,
 * in any traced process, stops nothing.  Returns the number of objects
 * newly attached (0 when none is new), or -1 with a one-line reason in err
 * (the process is gone, an attach failed).
 */
int tr2_attach_process(struct tr2_attach *a, pid_t pid, char *err, size_t errlen);

/*
 * Attaches prog where the dynamic loader ld_so calls its r_brk hook
 * (_dl_debug_state), which it does before and after it maps or unmaps
 * objects: at each `call _dl_debug_state` its code has, else at the hook's
 * entry.  The BPF cookie is the distance from the probed instruction to
 * _r_debug.r_state (0: unknown), so that the program can tell the calls
 * apart.  Returns 0, or -1 with a reason in err.
 */
int tr2_attach_dl_hook(struct tr2_attach *a, struct bpf_program *prog, const char *ld_so,
		       char *err, size_t errlen);

/* How many `call _dl_debug_state` sites tr2_attach_dl_hook() probed; 0 when
 * it probed the hook's entry instead. */
int tr2_attach_dl_sites(const struct tr2_attach *a);

/* Puts the object (dev, ino) (struct tr2_object_key, as the eBPF side named
 * it in a stop record) into the "known" map. */
void tr2_attach_known(struct tr2_attach *a, uint64_t dev, uint64_t ino);

/* Objects with probes attached so far, and probe sites (call sites) in them. */
int tr2_attach_objects(const struct tr2_attach *a);
int tr2_attach_sites(const struct tr2_attach *a);

/* Detaches everything and frees; NULL is allowed. */
void tr2_attach_free(struct tr2_attach *a);

/* The dynamic loader that this program itself runs under (a path), or NULL. */
char *tr2_find_ld_so(void);

#endif
