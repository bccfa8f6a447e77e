/*
 * tr2_runtime.h: what the runtime's own files share (not installed).
 */
#ifndef TR2_RUNTIME_H
#define TR2_RUNTIME_H

#include <sys/syscall.h>
#include <unistd.h>

#include "trace2.h"
#include "tr2_call.h"

/* The calling thread's tid.  The system call, not glibc's gettid(): that
 * one is of GLIBC_2.30, and a version that a program links no other symbol
 * of costs each of its start-ups about 280 instructions in the dynamic
 * linker (issue 34). */
static inline uint32_t tr2_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* True while an in-process target is open (trace2__state.on, bits 16-23). */
static inline int tr2_inproc_on(void)
{
	return (trace2__state.on >> 16) & 0xff;
}

/* Writes the events of call c (its probe, site and arguments; the rest is
 * filled in here) to every in-process target (tr2_inproc.c). */
void tr2_inproc_call(struct tr2_call *c);
/* tr2_inproc_call, stored by tr2_inproc.c before it raises the in-process
 * byte of trace2__state.on; NULL before.  tr2_probe.c calls the targets
 * through it, not by name: libtr2.a holds them (and the formatter they
 * write with) in a member of their own, which a program that never calls
 * trace2_initialize() does not link.  Git, whose targets are its own, is
 * spared their relocations and libc imports at each start-up (issue 34).
 * Not a tr2_* name: those are local to each member. */
extern void (*trace2__inproc_call)(struct tr2_call *c);

/* Reads git's GIT_TRACE2* variables and opens the targets they name (once,
 * from trace2_initialize()); returns how many opened.  None: nothing is
 * opened, allocated or set.  Else the sid is made and exported in
 * GIT_TRACE2_PARENT_SID, and tr2_inproc_on() becomes true. */
int tr2_inproc_init(void);

/* ---- tr2_batch.c: the calls tr2-bpf reads (bpf/tr2_record.h) ---- */

struct tr2_tbuf;

/* Appends call c to the calling thread's buffer, made at its first call
 * while tr2-bpf listens; sends the batch (tr2_batch_trap) when the buffer is
 * full, at the thread's first call and when its last batch is TR2_TRAP_NS
 * old.  Async-signal-safe but for the thread's first call, which may make
 * the buffer. */
void tr2_batch_call(const struct tr2_call *c);
/* tr2-bpf does not listen: the calling thread's buffer, if it has one,
 * goes back to the runtime's free list. */
void tr2_batch_idle(void);
/* In a child just forked: the buffer it inherited is its own, with nothing
 * in it (its parent sends what was there). */
void tr2_batch_forked(void);
/* Fires tr2:batch for buffer b (tr2_probe.c). */
void tr2_batch_trap(struct tr2_tbuf *b);
/* The session id the program made itself (trace2__set_sid, or the
 * in-process targets'), NUL-terminated, "" when none. */
extern char tr2_program_sid[];

#endif
