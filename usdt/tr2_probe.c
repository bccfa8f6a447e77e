/*
 * tr2_probe.c: the probe sites, one per event kind, and the words that
 * trace2.h's inline tests read.
 *
 * Every site is the pair of the upstream libbpf/usdt header, a 1-byte nop
 * then a 5-byte nop (90 0f 1f 44 00 00); the probe note points at the 1-byte
 * nop, where other tracers (bpftrace, perf) attach. This file is compiled
 * with -mno-red-zone (usdt/build.mk): since Linux 6.18 the kernel may turn a
 * uprobe on the 5-byte nop into a call to a trampoline, which pushes its
 * return address below %rsp, into the 128-byte red zone where the x86-64 ABI
 * lets a leaf function keep data. No code here keeps data there, so a uprobe
 * on either nop changes nothing the program computes. (The callers never
 * hold a site: a function that calls the runtime is no leaf.)
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define TRACE2__RUNTIME 1
#include "tr2_runtime.h"

/* The probe notes with <sys/sdt.h>'s own macros, but for three choices made
 * after the include, where each is read when a probe is expanded:
 *  - _SDT_NOP: the nop pair. GNU as shrinks `nopl 0(%rax,%rax,1)` to 4
 *    bytes unless {disp8} forces the displacement; %{ %} and %% are its
 *    spelling inside <sys/sdt.h>'s extended asm.
 *  - arguments in registers or as constants only: the default "nor" lets the
 *    compiler name a global in place (`-4@counter(%rip)`), which libbpf's and
 *    bpftrace's USDT argument parsers reject.
 *  - each note's semaphore is a word of trace2__state (the symbols below),
 *    not a variable of its own. */
#include <sys/sdt.h>
#undef _SDT_NOP
#define _SDT_NOP nop; %{disp8%} nopl 0(%%rax,%%rax,1)
#undef STAP_SDT_ARG_CONSTRAINT
#define STAP_SDT_ARG_CONSTRAINT nr
#undef _SDT_SEMAPHORE
#define _SDT_SEMAPHORE(p, n) _SDT_ASM_1(_SDT_ASM_ADDR p##_##n##_semaphore)

/* In .probes, where <sys/sdt.h> puts semaphores: a section with bytes in
 * the file.  The kernel finds a semaphore by its offset in the file it
 * maps, which a variable in .bss, past the file's end, does not have. */
struct trace2_state trace2__state __attribute__((section(".probes")));

/* Assembler symbols for the notes: trace2_<probe>_semaphore is
 * trace2__state.sem[<probe>]; tr2_enable_semaphore and tr2_event_semaphore
 * are the low half of trace2__state.on (a tracer that attaches to tr2:event
 * with its semaphore gets every kind there). Local to this object; never
 * referenced from C. */
#define DEFINE_SEMAPHORE(probe) \
	__asm__ __volatile__(".set trace2_" #probe "_semaphore, trace2__state + %c0" \
			     : : "i"(offsetof(struct trace2_state, sem) + 2 * TRACE2__P_##probe));
static void __attribute__((used)) define_semaphores(void)
{
	TRACE2__PROBES(DEFINE_SEMAPHORE)
	__asm__ __volatile__(".set tr2_enable_semaphore, trace2__state + %c0\n"
			     ".set tr2_event_semaphore, trace2__state + %c0"
			     : : "i"(offsetof(struct trace2_state, on)));
}

/* The number of the object whose call this is: see trace2__module. */
static uint32_t module_of(uint32_t *slot)
{
	static uint32_t last;
	uint32_t id = __atomic_load_n(slot, __ATOMIC_RELAXED), next;

	if (id)
		return id;
	next = __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
	if (__atomic_compare_exchange_n(slot, &id, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return next;
	return id;   /* another thread numbered it first */
}

/* A tracer attached to probe p, or to tr2:enable. */
#define TRACED(p) ((trace2__state.on & 0xffff) | trace2__state.sem[TRACE2__P_##p])

/* The eBPF programs read strings without taking page faults, and a string
 * literal that only a trace2 call refers to may sit on a page this process
 * has not touched yet (after fork or exec, file pages are mapped lazily):
 * read every byte first, while traced. */
static void touch(const char *s)
{
	if (s)
		__asm__ __volatile__("" : : "r"(strlen(s)));
}

static void touch_vec(const char *const *v)
{
	for (; v && *v; v++)
		touch(*v);
}

/*
 * tr2:event, tr2-bpf's one payload site for every kind: the kernel installs
 * a process's uprobes in each new mapping of the runtime, one by one, so one
 * site instead of one per kind is what a traced exec costs.  Its arguments:
 * the kind (TRACE2__P_*), the module number, then the trace2 probe's own
 * but the last, padded with zeros (bpf/tr2.bpf.c reads them with the trace2
 * probe's numbering, shifted by 2).  Fired while tr2-bpf is attached (the
 * semaphore of tr2:enable), and only then.
 */
static void __attribute__((noinline)) event_site(long kind, long mod, long tls, long file, long line,
						 long a0, long a1, long a2, long a3, long a4, long a5)
{
	STAP_PROBE11(tr2, event, kind, mod, tls, file, line, a0, a1, a2, a3, a4, a5);
}

/* Fires probe `probe` with n arguments: the thread, file and line, the
 * kind's own (docs/probes.md), and the module number last; and tr2:event
 * while tr2-bpf is attached. */
#define FIRE(n, probe, ...) \
	do { \
		uint32_t trace2__mod = module_of(module); \
		STAP_PROBE##n(trace2, probe, &trace2__tls, file, line, __VA_ARGS__, trace2__mod); \
		if (trace2__state.on & 0xffff) \
			EVENT(probe, trace2__mod, __VA_ARGS__, 0, 0, 0, 0, 0, 0); \
	} while (0)
#define FIRE0(probe) \
	do { \
		uint32_t trace2__mod = module_of(module); \
		STAP_PROBE4(trace2, probe, &trace2__tls, file, line, trace2__mod); \
		if (trace2__state.on & 0xffff) \
			EVENT(probe, trace2__mod, 0, 0, 0, 0, 0, 0); \
	} while (0)
/* event_site() with the kind, the thread, file and line, and the first 6
 * of the kind's arguments given (the rest are zeros). */
#define EVENT(probe, ...) EVENT_(probe, __VA_ARGS__)
#define EVENT_(probe, mod, a0, a1, a2, a3, a4, a5, ...) \
	event_site(TRACE2__P_##probe, mod, (long)&trace2__tls, (long)file, line, (long)(a0), (long)(a1), \
		   (long)(a2), (long)(a3), (long)(a4), (long)(a5))

/* Writes the call of event kind `kind` (its fields by designator) to the
 * in-process targets while one is open. */
#define INPROC(kind, ...) \
	do { \
		if (tr2_inproc_on()) { \
			struct tr2_call c = { .probe = TRACE2__P_##kind, .file = file, .line = line, \
					      __VA_ARGS__ }; \
			tr2_inproc_call(&c); \
		} \
	} while (0)

void trace2__version(TRACE2__SITE_ARGS, const char *exe)
{
	if (TRACED(version)) {
		touch(exe);
		FIRE(5, version, exe);
	}
	INPROC(version, .s = { exe });
}

void trace2__start(TRACE2__SITE_ARGS, const char **argv)
{
	if (TRACED(start)) {
		touch_vec(argv);
		FIRE(5, start, argv);
	}
	INPROC(start, .vec = argv);
}

void trace2__exit(TRACE2__SITE_ARGS, int code)
{
	if (TRACED(exit))
		FIRE(5, exit, code);
	INPROC(exit, .code = code);
}

void trace2__error(TRACE2__SITE_ARGS, const char *msg, const char *fmt)
{
	if (TRACED(error)) {
		touch(msg);
		touch(fmt);
		FIRE(6, error, msg, fmt);
	}
	INPROC(error, .s = { msg, fmt });
}

void trace2__cmd_path(TRACE2__SITE_ARGS, const char *path)
{
	if (TRACED(cmd_path)) {
		touch(path);
		FIRE(5, cmd_path, path);
	}
	INPROC(cmd_path, .s = { path });
}

void trace2__cmd_ancestry(TRACE2__SITE_ARGS, const char **names)
{
	if (TRACED(cmd_ancestry)) {
		touch_vec(names);
		FIRE(5, cmd_ancestry, names);
	}
	INPROC(cmd_ancestry, .vec = names);
}

void trace2__cmd_name(TRACE2__SITE_ARGS, const char *name)
{
	if (TRACED(cmd_name)) {
		touch(name);
		FIRE(5, cmd_name, name);
	}
	INPROC(cmd_name, .s = { name });
}

void trace2__cmd_mode(TRACE2__SITE_ARGS, const char *mode)
{
	if (TRACED(cmd_mode)) {
		touch(mode);
		FIRE(5, cmd_mode, mode);
	}
	INPROC(cmd_mode, .s = { mode });
}

void trace2__alias(TRACE2__SITE_ARGS, const char *alias, const char **argv)
{
	if (TRACED(alias)) {
		touch(alias);
		touch_vec(argv);
		FIRE(6, alias, alias, argv);
	}
	INPROC(alias, .s = { alias }, .vec = argv);
}

void trace2__def_param(TRACE2__SITE_ARGS, const char *param, const char *value, const char *scope)
{
	if (TRACED(def_param)) {
		touch(param);
		touch(value);
		touch(scope);
		FIRE(7, def_param, param, value, scope);
	}
	INPROC(def_param, .s = { param, value, scope });
}

void trace2__def_repo(TRACE2__SITE_ARGS, int repo_id, const char *worktree)
{
	if (TRACED(def_repo)) {
		touch(worktree);
		FIRE(6, def_repo, repo_id, worktree);
	}
	INPROC(def_repo, .repo_id = repo_id, .s = { worktree });
}

void trace2__child_start(TRACE2__SITE_ARGS, const struct trace2_child *child)
{
	const char *class = child->child_class ? child->child_class : "?";

	if (TRACED(child_start)) {
		touch(class);
		touch(child->hook_name);
		touch(child->cd);
		touch_vec(child->argv);
		FIRE(10, child_start, child->child_id, class, child->hook_name, child->cd,
		     child->argv, child->use_shell);
	}
	INPROC(child_start, .id = child->child_id,
	       .s = { class, child->hook_name, child->cd }, .vec = child->argv,
	       .use_shell = child->use_shell);
}

void trace2__child_exit(TRACE2__SITE_ARGS, const struct trace2_child *child, int code)
{
	if (TRACED(child_exit))
		FIRE(7, child_exit, child->child_id, child->pid, code);
	INPROC(child_exit, .id = child->child_id, .pid_arg = child->pid, .code = code);
}

void trace2__child_ready(TRACE2__SITE_ARGS, const struct trace2_child *child, const char *ready)
{
	if (TRACED(child_ready)) {
		touch(ready);
		FIRE(7, child_ready, child->child_id, child->pid, ready);
	}
	INPROC(child_ready, .id = child->child_id, .pid_arg = child->pid, .s = { ready });
}

void trace2__exec(TRACE2__SITE_ARGS, int exec_id, const char *exe, const char **argv)
{
	if (TRACED(exec)) {
		touch(exe);
		touch_vec(argv);
		FIRE(7, exec, exec_id, exe, argv);
	}
	INPROC(exec, .id = exec_id, .s = { exe }, .vec = argv);
}

void trace2__exec_result(TRACE2__SITE_ARGS, int exec_id, int code)
{
	if (TRACED(exec_result))
		FIRE(6, exec_result, exec_id, code);
	INPROC(exec_result, .id = exec_id, .code = code);
}

void trace2__thread_started(TRACE2__SITE_ARGS)
{
	if (TRACED(thread_start))
		FIRE(6, thread_start, trace2__tls.thread_id, trace2__tls.base_name);
	INPROC(thread_start, .id = trace2__tls.thread_id,
	       .s = { trace2__tls.base_name });
}

void trace2__thread_exit(TRACE2__SITE_ARGS)
{
	if (TRACED(thread_exit))
		FIRE0(thread_exit);
	INPROC(thread_exit);
}

void trace2__region_enter(TRACE2__SITE_ARGS, int repo_id, const char *category, const char *label,
			  const char *msg, int literals)
{
	if (TRACED(region_enter)) {
		touch(category);
		touch(label);
		touch(msg);
		FIRE(9, region_enter, repo_id, category, label, msg, literals);
	}
	INPROC(region_enter, .repo_id = repo_id, .s = { category, label, msg });
}

void trace2__region_leave(TRACE2__SITE_ARGS, int repo_id, const char *category, const char *label,
			  const char *msg, int literals)
{
	if (TRACED(region_leave)) {
		touch(category);
		touch(label);
		touch(msg);
		FIRE(9, region_leave, repo_id, category, label, msg, literals);
	}
	INPROC(region_leave, .repo_id = repo_id, .s = { category, label, msg });
}

void trace2__data(TRACE2__SITE_ARGS, int repo_id, const char *category, const char *key,
		  const char *string_value, intmax_t int_value, int literals)
{
	if (TRACED(data)) {
		touch(category);
		touch(key);
		touch(string_value);
		FIRE(10, data, repo_id, category, key, string_value, int_value, literals);
	}
	INPROC(data, .repo_id = repo_id, .s = { category, key, string_value },
	       .value = int_value);
}

void trace2__data_json(TRACE2__SITE_ARGS, int repo_id, const char *category, const char *key,
		       const char *json, int literals)
{
	if (TRACED(data_json)) {
		touch(category);
		touch(key);
		touch(json);
		FIRE(9, data_json, repo_id, category, key, json, literals);
	}
	INPROC(data_json, .repo_id = repo_id, .s = { category, key, json });
}

void trace2__printf(TRACE2__SITE_ARGS, const char *msg)
{
	if (TRACED(printf)) {
		touch(msg);
		FIRE(5, printf, msg);
	}
	INPROC(printf, .s = { msg });
}

/* timer_start and timer_stop: the definition's address and fields. */
#define TIMER_PROBE(probe) \
	void trace2__##probe(TRACE2__SITE_ARGS, const struct trace2_timer *timer) \
	{ \
		if (TRACED(probe)) { \
			touch(timer->category); \
			touch(timer->name); \
			FIRE(8, probe, timer, timer->category, timer->name, timer->per_thread); \
		} \
		INPROC(probe, .metric = (uintptr_t)timer, .per_thread = timer->per_thread, \
		       .s = { timer->category, timer->name }); \
	}
TIMER_PROBE(timer_start)
TIMER_PROBE(timer_stop)

void trace2__counter_add(TRACE2__SITE_ARGS, const struct trace2_counter *counter, intmax_t value)
{
	if (TRACED(counter_add)) {
		touch(counter->category);
		touch(counter->name);
		FIRE(9, counter_add, counter, counter->category, counter->name, counter->per_thread,
		     value);
	}
	INPROC(counter_add, .metric = (uintptr_t)counter, .per_thread = counter->per_thread,
	       .s = { counter->category, counter->name }, .value = value);
}

/* atexit and signal are fired by the runtime's own handlers (tr2_process.c),
 * whose call sites they report. */
void tr2_emit_atexit(const char *file, int line, int code)
{
	uint32_t *module = &trace2__module;

	if (TRACED(atexit))
		FIRE(5, atexit, code);
	INPROC(atexit, .code = code);
}

void tr2_emit_signal(const char *file, int line, int signo)
{
	uint32_t *module = &trace2__module;

	if (TRACED(signal))
		FIRE(5, signal, signo);
	INPROC(signal, .code = signo);
}

/*
 * tr2:enable, tr2-bpf's switch: tr2-bpf attaches a uprobe here, with its
 * semaphore, in the processes it traces, which raises trace2__state.on in
 * each of them (and only them) and so sends every trace2 call to the probe
 * sites above. The site never runs, but in a child just forked (below):
 * fork copies the raised semaphore and the breakpoint, and the hit lets the
 * kernel decide for the child. A tracer that follows the child keeps it; one
 * that traces only the parent (its uprobe filtered on the parent, a perf
 * event) makes the kernel take the breakpoint out of the child and lower the
 * child's semaphore, so that a child tr2-bpf does not trace pays nothing.
 */
static void __attribute__((noinline)) enable_site(void)
{
	STAP_PROBE(tr2, enable);
}

static void forked(void)
{
	if (trace2__state.on & 0xffff)
		enable_site();
}

/* At load, whether or not the program ever calls trace2_initialize(): a
 * pthread_atfork registration, no system call. */
static void __attribute__((constructor)) watch_forks(void)
{
	pthread_atfork(NULL, NULL, forked);
}
