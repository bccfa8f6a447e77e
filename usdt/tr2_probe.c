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
#include "tr2_record.h"
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
 * trace2__state.sem[<probe>]; tr2_enable_semaphore and tr2_batch_semaphore
 * are the low half of trace2__state.on. Local to this object; never
 * referenced from C. */
#define DEFINE_SEMAPHORE(probe) \
	__asm__ __volatile__(".set trace2_" #probe "_semaphore, trace2__state + %c0" \
			     : : "i"(offsetof(struct trace2_state, sem) + 2 * TRACE2__P_##probe));
static void __attribute__((used)) define_semaphores(void)
{
	TRACE2__PROBES(DEFINE_SEMAPHORE)
	__asm__ __volatile__(".set tr2_enable_semaphore, trace2__state + %c0\n"
			     ".set tr2_batch_semaphore, trace2__state + %c0"
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

/* Public probe p's semaphore is raised: bpftrace, perf or libbpf listen. */
#define PUBLIC(p) (trace2__state.sem[TRACE2__P_##p])

/* The eBPF programs of other tracers read strings without taking page
 * faults, and a string literal that only a trace2 call refers to may sit on
 * a page this process has not touched yet (after fork or exec, file pages
 * are mapped lazily): read every byte first. */
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

/* Fires public probe `probe` with n arguments: the thread, file and line,
 * the kind's own (docs/probes.md), and the module number last. */
#define FIRE(n, probe, ...) \
	STAP_PROBE##n(trace2, probe, &trace2__tls, file, line, __VA_ARGS__, c.module)

/*
 * tr2:batch, tr2-bpf's one site: the thread's buffer (bpf/tr2_record.h) has
 * calls for it, and the sid the program made itself (NULL: none).  The
 * kernel installs a process's uprobes in each new mapping of the runtime,
 * one by one, so one site for every kind is what a traced exec costs.
 */
static void __attribute__((noinline)) batch_site(struct tr2_tbuf *b, const char *sid)
{
	STAP_PROBE2(tr2, batch, b, sid);
}

void tr2_batch_trap(struct tr2_tbuf *b)
{
	batch_site(b, tr2_program_sid[0] ? tr2_program_sid : NULL);
}

void (*trace2__inproc_call)(struct tr2_call *c);

/* Hands call c to tr2-bpf (the thread's buffer) and the in-process targets,
 * whichever listen. */
static void dispatch(struct tr2_call *c)
{
	uint32_t on = trace2__state.on;

	if (on & 0xffff)
		tr2_batch_call(c);
	else
		tr2_batch_idle();
	if ((on >> 16) & 0xff)
		trace2__inproc_call(c);
}

/* The call of `kind` at the call site (its fields by designator). */
#define CALL(kind, ...) \
	struct tr2_call c = { .probe = TRACE2__P_##kind, .file = file, .line = line, \
			      .module = module_of(module), __VA_ARGS__ }

void trace2__version_evt(TRACE2__SITE_ARGS, const char *exe, const char *evt)
{
	CALL(version, .s = { exe, evt });

	if (PUBLIC(version)) {
		touch(exe);
		FIRE(5, version, exe);
	}
	dispatch(&c);
}

void trace2__version(TRACE2__SITE_ARGS, const char *exe)
{
	trace2__version_evt(module, file, line, exe, NULL);
}

void trace2__start(TRACE2__SITE_ARGS, const char **argv)
{
	CALL(start, .vec = argv);

	if (PUBLIC(start)) {
		touch_vec(argv);
		FIRE(5, start, argv);
	}
	dispatch(&c);
}

void trace2__exit(TRACE2__SITE_ARGS, int code)
{
	CALL(exit, .code = code);

	if (PUBLIC(exit))
		FIRE(5, exit, code);
	dispatch(&c);
}

void trace2__atexit(TRACE2__SITE_ARGS, int code)
{
	CALL(atexit, .code = code);

	if (PUBLIC(atexit))
		FIRE(5, atexit, code);
	dispatch(&c);
}

void trace2__signal(TRACE2__SITE_ARGS, int signo)
{
	CALL(signal, .code = signo);

	if (PUBLIC(signal))
		FIRE(5, signal, signo);
	dispatch(&c);
}

void trace2__error(TRACE2__SITE_ARGS, const char *msg, const char *fmt)
{
	CALL(error, .s = { msg, fmt });

	if (PUBLIC(error)) {
		touch(msg);
		touch(fmt);
		FIRE(6, error, msg, fmt);
	}
	dispatch(&c);
}

/* The calls with one string argument. */
#define STRING_PROBE(probe) \
	void trace2__##probe(TRACE2__SITE_ARGS, const char *arg) \
	{ \
		CALL(probe, .s = { arg }); \
 \
		if (PUBLIC(probe)) { \
			touch(arg); \
			FIRE(5, probe, arg); \
		} \
		dispatch(&c); \
	}
STRING_PROBE(cmd_path)
STRING_PROBE(cmd_mode)
STRING_PROBE(printf)

void trace2__cmd_name_hierarchy(TRACE2__SITE_ARGS, const char *name, const char *hierarchy)
{
	CALL(cmd_name, .s = { name, hierarchy });

	if (PUBLIC(cmd_name)) {
		touch(name);
		FIRE(5, cmd_name, name);
	}
	dispatch(&c);
}

void trace2__cmd_name(TRACE2__SITE_ARGS, const char *name)
{
	trace2__cmd_name_hierarchy(module, file, line, name, NULL);
}

void trace2__cmd_ancestry(TRACE2__SITE_ARGS, const char **names)
{
	CALL(cmd_ancestry, .vec = names);

	if (PUBLIC(cmd_ancestry)) {
		touch_vec(names);
		FIRE(5, cmd_ancestry, names);
	}
	dispatch(&c);
}

void trace2__alias(TRACE2__SITE_ARGS, const char *alias, const char **argv)
{
	CALL(alias, .s = { alias }, .vec = argv);

	if (PUBLIC(alias)) {
		touch(alias);
		touch_vec(argv);
		FIRE(6, alias, alias, argv);
	}
	dispatch(&c);
}

void trace2__def_param(TRACE2__SITE_ARGS, const char *param, const char *value, const char *scope)
{
	CALL(def_param, .s = { param, value, scope });

	if (PUBLIC(def_param)) {
		touch(param);
		touch(value);
		touch(scope);
		FIRE(7, def_param, param, value, scope);
	}
	dispatch(&c);
}

void trace2__def_repo(TRACE2__SITE_ARGS, int repo_id, const char *worktree)
{
	CALL(def_repo, .repo_id = repo_id, .s = { worktree });

	if (PUBLIC(def_repo)) {
		touch(worktree);
		FIRE(6, def_repo, repo_id, worktree);
	}
	dispatch(&c);
}

void trace2__child_start(TRACE2__SITE_ARGS, const struct trace2_child *child)
{
	const char *class = child->child_class ? child->child_class : "?";
	CALL(child_start, .id = child->child_id, .use_shell = child->use_shell,
	     .s = { class, child->hook_name, child->cd }, .vec = child->argv);

	if (PUBLIC(child_start)) {
		touch(class);
		touch(child->hook_name);
		touch(child->cd);
		touch_vec(child->argv);
		FIRE(10, child_start, child->child_id, class, child->hook_name, child->cd,
		     child->argv, child->use_shell);
	}
	dispatch(&c);
}

void trace2__child_exit(TRACE2__SITE_ARGS, const struct trace2_child *child, int code)
{
	CALL(child_exit, .id = child->child_id, .pid_arg = child->pid, .code = code);

	if (PUBLIC(child_exit))
		FIRE(7, child_exit, child->child_id, child->pid, code);
	dispatch(&c);
}

void trace2__child_ready(TRACE2__SITE_ARGS, const struct trace2_child *child, const char *ready)
{
	CALL(child_ready, .id = child->child_id, .pid_arg = child->pid, .s = { ready });

	if (PUBLIC(child_ready)) {
		touch(ready);
		FIRE(7, child_ready, child->child_id, child->pid, ready);
	}
	dispatch(&c);
}

void trace2__exec(TRACE2__SITE_ARGS, int exec_id, const char *exe, const char **argv)
{
	CALL(exec, .id = exec_id, .s = { exe }, .vec = argv);

	if (PUBLIC(exec)) {
		touch(exe);
		touch_vec(argv);
		FIRE(7, exec, exec_id, exe, argv);
	}
	dispatch(&c);
}

void trace2__exec_result(TRACE2__SITE_ARGS, int exec_id, int code)
{
	CALL(exec_result, .id = exec_id, .code = code);

	if (PUBLIC(exec_result))
		FIRE(6, exec_result, exec_id, code);
	dispatch(&c);
}

void trace2__thread_started(TRACE2__SITE_ARGS)
{
	CALL(thread_start, .id = trace2__tls.thread_id, .s = { trace2__tls.base_name });

	if (PUBLIC(thread_start))
		FIRE(6, thread_start, trace2__tls.thread_id, trace2__tls.base_name);
	dispatch(&c);
}

void trace2__thread_exit(TRACE2__SITE_ARGS)
{
	CALL(thread_exit);

	if (PUBLIC(thread_exit))
		STAP_PROBE4(trace2, thread_exit, &trace2__tls, file, line, c.module);
	dispatch(&c);
}

/* region_enter and region_leave. */
#define REGION_PROBE(probe) \
	void trace2__##probe(TRACE2__SITE_ARGS, int repo_id, const char *category, \
			     const char *label, const char *msg, int literals) \
	{ \
		CALL(probe, .repo_id = repo_id, .s = { category, label, msg }, .literals = literals); \
 \
		if (PUBLIC(probe)) { \
			touch(category); \
			touch(label); \
			touch(msg); \
			FIRE(9, probe, repo_id, category, label, msg, literals); \
		} \
		dispatch(&c); \
	}
REGION_PROBE(region_enter)
REGION_PROBE(region_leave)

void trace2__data(TRACE2__SITE_ARGS, int repo_id, const char *category, const char *key,
		  const char *string_value, intmax_t int_value, int literals)
{
	CALL(data, .repo_id = repo_id, .s = { category, key, string_value }, .value = int_value,
	     .literals = literals);

	if (PUBLIC(data)) {
		touch(category);
		touch(key);
		touch(string_value);
		FIRE(10, data, repo_id, category, key, string_value, int_value, literals);
	}
	dispatch(&c);
}

void trace2__data_json(TRACE2__SITE_ARGS, int repo_id, const char *category, const char *key,
		       const char *json, int literals)
{
	CALL(data_json, .repo_id = repo_id, .s = { category, key, json }, .literals = literals);

	if (PUBLIC(data_json)) {
		touch(category);
		touch(key);
		touch(json);
		FIRE(9, data_json, repo_id, category, key, json, literals);
	}
	dispatch(&c);
}

/* timer_start and timer_stop: the definition's address and fields. */
#define TIMER_PROBE(probe) \
	void trace2__##probe(TRACE2__SITE_ARGS, const struct trace2_timer *timer) \
	{ \
		CALL(probe, .metric = (uintptr_t)timer, .per_thread = timer->per_thread, \
		     .s = { timer->category, timer->name }, .literals = 2 | 4); \
 \
		if (PUBLIC(probe)) { \
			touch(timer->category); \
			touch(timer->name); \
			FIRE(8, probe, timer, timer->category, timer->name, timer->per_thread); \
		} \
		dispatch(&c); \
	}
TIMER_PROBE(timer_start)
TIMER_PROBE(timer_stop)

void trace2__counter_add(TRACE2__SITE_ARGS, const struct trace2_counter *counter, intmax_t value)
{
	CALL(counter_add, .metric = (uintptr_t)counter, .per_thread = counter->per_thread,
	     .s = { counter->category, counter->name }, .value = value, .literals = 2 | 4);

	if (PUBLIC(counter_add)) {
		touch(counter->category);
		touch(counter->name);
		FIRE(9, counter_add, counter, counter->category, counter->name, counter->per_thread,
		     value);
	}
	dispatch(&c);
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
	tr2_batch_forked();
	if (trace2__state.on & 0xffff)
		enable_site();
}

/* At load, whether or not the program ever calls trace2_initialize(): a
 * pthread_atfork registration, no system call. */
static void __attribute__((constructor)) watch_forks(void)
{
	pthread_atfork(NULL, NULL, forked);
}
