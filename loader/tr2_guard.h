/* tr2_guard.h: the processes held stopped for tr2-bpf (bpf/tr2_hold.bpf.h)
 * and who lets them go: tr2-bpf once it has attached (tr2_tracer.c), and
 * the guard, a process of its own, when tr2-bpf does not (tr2_guard.c). */
#ifndef TR2_GUARD_H
#define TR2_GUARD_H

#include <stdint.h>
#include <sys/types.h>

struct tr2_bpf;

/* The other tracers' `held` maps, by id (tr2_held_elsewhere). */
struct other_holds {
	uint32_t own_id;             /* this tracer's own, 0 until read */
	uint32_t next_id;            /* the maps up to this id have been looked at */
	uint32_t *ids;
	int n, cap;
};

/*
 * Whether another tr2-bpf holds process pid too.  own_fd: this tracer's
 * `held` map; h: what the caller learned of the others (zeroed at first,
 * its ids freed by the caller).  A process that two tracers trace is
 * stopped by the eBPF programs of both at the same exec or fault, and one
 * SIGCONT lets it run: the first tracer done must not send it while the
 * other is still attaching.  So each marks pid let go in its own `held`
 * first (0, or out), then looks in the others' (found among the host's BPF
 * maps by name and shape): the last one out sends the SIGCONT.  Both out at
 * once: both send it, harmless.
 */
int tr2_held_elsewhere(int own_fd, struct other_holds *h, uint32_t pid);

/*
 * Starts the guard of the eBPF object skel, loaded and not attached yet,
 * while the caller has one thread and few fds.  The guard is a child
 * process in a session of its own, deaf to the terminal's signals and to
 * SIGTERM, that keeps only skel's `held` and `unserved` maps and lets a
 * held process go (SIGCONT, counted in unserved[0]) when:
 *  - it has waited TR2_HOLD_MAX_NS (tr2-bpf alive but not serving: busy
 *    attaching, starved); then no process is held until tr2-bpf serves
 *    again (skel's tracer_absent);
 *  - tr2-bpf is stopped (SIGSTOP, Ctrl-Z, a debugger): every held one;
 *  - tr2-bpf is gone, however it ended: every held one, once the eBPF
 *    programs are unloaded and none can still be running; then it exits.
 * It looks every TR2_GUARD_POLL_MS.  Returns 0, or -1 with errno (fork,
 * pipe2, pidfd_open, the programs' ids).
 */
int tr2_guard_start(struct tr2_bpf *skel);

/* Once tr2-bpf has detached and served every hold: ends the guard and
 * reaps it.  Nothing when it was not started. */
void tr2_guard_stop(void);

#define TR2_GUARD_POLL_MS 50

#endif
