/*
 * trace2.h: Git's Trace2 API as USDT probes.
 *
 * Every call below is a macro that captures __FILE__ and __LINE__ and compiles
 * to a USDT probe of provider "trace2" (one probe per event kind, listed in
 * docs/probes.md), gated by that probe's USDT semaphore. A tracer (tr2-bpf,
 * bpftrace, perf) attaches to the probes, which makes the kernel raise the
 * semaphores, reads the probe arguments and formats Git's Trace2 output.
 * The names and meanings are those of Git's Trace2 API
 * (Documentation/technical/api-trace2.txt), made generic: where git passes a
 * `struct repository *` this API passes an `int repo_id` (0 = no repository);
 * where git passes a `struct child_process *` it passes a `struct trace2_child *`.
 *
 * THE RULE (as assert() has NDEBUG):
 *   While no tracer is attached, each trace2_* call executes one not-taken
 *   branch (load its probe's 2-byte semaphore, compare, do not jump) and
 *   nothing else: its ARGUMENTS ARE NOT EVALUATED, no message is formatted, no
 *   clock is read, no memory is allocated and no system call is made. So never
 *   put side effects the program needs into the arguments of a trace2_* call:
 *   they happen only while a tracer listens.
 *   Exceptions, because the program itself sees their results:
 *     - trace2_initialize() always installs the atexit and signal handlers;
 *     - trace2_cmd_exit() always stores the exit code and returns it;
 *     - ids are assigned on every call, with one atomic increment, so that a
 *       tracer attaching later agrees with them: trace2_def_repo() returns
 *       1, 2, ...; trace2_child_start() sets child->child_id to 0, 1, ...;
 *       trace2_exec() returns 0, 1, ...; trace2_thread_start() numbers the
 *       thread 1, 2, ... and stores number and name in its struct trace2_tls.
 *   While a tracer is attached, each argument is evaluated exactly once, except
 *   as noted on the call.
 *
 * Probe sites are a 1-byte nop followed by a 5-byte nop (90 0f 1f 44 00 00),
 * the pair of the upstream libbpf/usdt header, where <sys/sdt.h> has the
 * 1-byte nop alone; the probe note points at the 1-byte nop. Since Linux 6.18
 * the kernel turns a uprobe on a 5-byte nop into a call instead of a trap,
 * halving the cost of every event a tracer receives, while older kernels
 * single-step it, about ten times dearer than the emulated 1-byte nop. So
 * tr2-bpf decides at attach time: the 5-byte nop where the kernel optimizes
 * it, the 1-byte nop elsewhere; other tracers take the 1-byte nop, correct
 * everywhere. Detached, both cost nothing beyond the branch that skips them.
 *
 * Linking: one runtime per process. Link the program with libtr2.a, or the
 * program and every instrumented shared object with libtr2.so
 * (`pkg-config --cflags --libs tr2`). Building needs <sys/sdt.h>
 * (Debian: systemtap-sdt-dev). Include this header before <sys/sdt.h>, or
 * define _SDT_HAS_SEMAPHORES yourself: its own STAP_PROBE calls then need
 * semaphores too.
 *
 * All calls are macros: their addresses cannot be taken.
 */
#ifndef TRACE2_H
#define TRACE2_H

#include <stdint.h>
#include <sys/types.h>

/* Semaphores are what make a not-taken branch possible; <sys/sdt.h> decides
 * whether its notes carry their addresses when it is first included. */
#ifndef _SDT_HAS_SEMAPHORES
# ifdef _SYS_SDT_H
#  error "include <trace2.h> before <sys/sdt.h>, or define _SDT_HAS_SEMAPHORES"
# endif
# define _SDT_HAS_SEMAPHORES 1
#endif
#include <sys/sdt.h>

/* <sys/sdt.h> defines _SDT_NOP unconditionally and reads it where a probe is
 * expanded, so the nop pair is set after the include. GNU as shrinks
 * `nopl 0(%rax,%rax,1)` to 4 bytes unless {disp8} forces the displacement;
 * %{ %} and %% are its spelling inside the extended asm of <sys/sdt.h>. */
#if defined(__x86_64__)
# undef _SDT_NOP
# define _SDT_NOP nop; %{disp8%} nopl 0(%%rax,%%rax,1)
#elif defined(__i386__)
# undef _SDT_NOP
# define _SDT_NOP nop; %{disp8%} nopl 0(%%eax,%%eax,1)
#endif

/* Probe arguments in registers or as constants only. The default "nor" lets
 * the compiler name a global in place (`-4@counter(%rip)`), which libbpf's
 * and bpftrace's USDT argument parsers reject; registers cost nothing more,
 * since the arguments are computed only while a tracer listens. Read where a
 * probe is expanded, so it is set after the include too. */
#undef STAP_SDT_ARG_CONSTRAINT
#define STAP_SDT_ARG_CONSTRAINT nr

#ifdef __cplusplus
extern "C" {
#endif

/*
 * struct trace2_tls: the calling thread's runtime record, arg0 of every probe.
 *   thread_id  0 for the main thread and for threads that never called
 *              trace2_thread_start(), else 1, 2, ... in start order.
 *   base_name  the name given to trace2_thread_start(), NUL-terminated and
 *              truncated to 31 bytes; empty while thread_id is 0.
 * A tracer reads it at each event to name the thread ("th%02d:<base_name>").
 * The runtime writes it; programs only read it.
 */
struct trace2_tls {
	int32_t thread_id;
	char base_name[32];
};

/*
 * struct trace2_child: describes a child process, as git's
 * struct child_process does for trace2_child_start().
 *   child_class  "editor", "pager", "hook", "transport/ssh", ...; NULL means "?".
 *   hook_name    the hook's name when child_class is "hook", else NULL.
 *   cd           the directory the child runs in, or NULL.
 *   argv         the child's command line, NULL-terminated.
 *   use_shell    non-zero when argv[0] is run through the shell.
 *   pid          set by the caller once the child is spawned.
 *   child_id     set by trace2_child_start(): 0, 1, ... in call order.
 */
struct trace2_child {
	const char *child_class;
	const char *hook_name;
	const char *cd;
	const char **argv;
	int use_shell;
	pid_t pid;
	int child_id;
};

/*
 * struct trace2_timer, struct trace2_counter: defined with
 * TRACE2_DEFINE_TIMER / TRACE2_DEFINE_COUNTER; their address is the id a
 * tracer aggregates by. Programs do not touch the fields.
 */
struct trace2_timer {
	const char *category;
	const char *name;
	int per_thread;
};

struct trace2_counter {
	const char *category;
	const char *name;
	int per_thread;
};

/* Longest formatted message, NUL included, of the _printf variants,
 * trace2_printf() and trace2_cmd_error(); longer ones are truncated. */
#define TRACE2_MSG_MAX 4096

/* Exe version reported by the "version" event: define TRACE2_EXE_VERSION
 * before including this header (or with -D) as any expression yielding a
 * const char *; the default is "unknown". */
#ifndef TRACE2_EXE_VERSION
# define TRACE2_EXE_VERSION "unknown"
#endif

/* ---- The runtime (libtr2). Called through the macros below only. ---- */

#define TRACE2__API __attribute__((visibility("default")))

/* The calling thread's record; initial-exec so that taking its address is two
 * instructions in every module. */
extern TRACE2__API __thread struct trace2_tls trace2__tls
	__attribute__((tls_model("initial-exec")));

/* Installs the atexit and signal handlers; returns 1 the first time, 0 after. */
TRACE2__API int trace2__initialize(void);
/* Stores exit_code for the "atexit" event and returns it. */
TRACE2__API int trace2__set_exit_code(int exit_code);
/* Each returns the next id of its kind (one atomic increment). */
TRACE2__API int trace2__new_repo_id(void);
TRACE2__API int trace2__new_child_id(void);
TRACE2__API int trace2__new_exec_id(void);
/* Numbers the calling thread and copies base_name into trace2__tls. */
TRACE2__API void trace2__thread_start(const char *base_name);
/* Formats into a thread-local buffer of TRACE2_MSG_MAX bytes and returns it;
 * stores fmt in *fmt_out unless fmt_out is NULL. */
TRACE2__API const char *trace2__format(const char **fmt_out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* trace2_data_string()'s value: NULL is sent as "". */
static inline const char *trace2__nonnull(const char *value)
{
	return value ? value : "";
}

/* ---- Probes and semaphores ---- */

/* Every probe of docs/probes.md, for code that must visit them all. */
#define TRACE2__PROBES(X) \
	X(version) X(start) X(exit) X(atexit) X(signal) X(error) \
	X(cmd_path) X(cmd_ancestry) X(cmd_name) X(cmd_mode) X(alias) \
	X(def_param) X(def_repo) X(child_start) X(child_exit) X(child_ready) \
	X(exec) X(exec_result) X(thread_start) X(thread_exit) \
	X(region_enter) X(region_leave) X(data) X(data_json) X(printf) \
	X(timer_start) X(timer_stop) X(counter_add)

/* One semaphore per probe per ELF module: weak so every translation unit may
 * define it, hidden so an executable and each shared object keep their own
 * (the probe notes hold link-time addresses), volatile because the kernel
 * raises it behind the compiler's back, in .probes where USDT tools look. */
#define TRACE2__DEFINE_SEMAPHORE(probe) \
	__attribute__((weak, visibility("hidden"), section(".probes"))) \
	volatile unsigned short trace2_##probe##_semaphore = 0;
TRACE2__PROBES(TRACE2__DEFINE_SEMAPHORE)

#ifdef __cplusplus
}
#endif

/* While a tracer listens, each string argument's first byte is read before
 * the probe fires: the eBPF program reads strings without taking page
 * faults, and a literal that only a probe refers to may sit on a page this
 * process has not mapped yet (after fork, file pages are mapped lazily).
 * One load per string, only while enabled. */
static inline void trace2__touch(const char *s)
{
	if (s)
		__asm__ __volatile__("" : : "r"(*(const volatile char *)s));
}

static inline void trace2__touch_vec(const void *v)
{
	const char *const *p = (const char *const *)v;

	for (; p && *p; p++)
		trace2__touch(*p);
}

/* True while a tracer is attached to this module's probe `probe`. */
#define TRACE2__ON(probe) __builtin_expect(trace2_##probe##_semaphore != 0, 0)

/* The literals argument of region_enter, region_leave, data and data_json
 * (docs/probes.md): bit 1, 2, 3 set when the probe's category, label or key,
 * and msg or value argument is a string literal (or a null pointer
 * constant), whose bytes cannot change at this call site, so that a tracer
 * may read them once per site (bpf/tr2_record.h).  A compile-time constant,
 * so it costs no instruction: it sits in the probe's note as `$N`. */
#define TRACE2__LITERALS(a, b, c) \
	(2 * __builtin_constant_p(a) + 4 * __builtin_constant_p(b) + 8 * __builtin_constant_p(c))

/* The three arguments every probe starts with. */
#define TRACE2__FL &trace2__tls, __FILE__, __LINE__

/* STAP_PROBEn(trace2, probe, ...) once TRACE2__FL is split into its three
 * arguments. <sys/sdt.h> passes no variadic argument to one of its own macros,
 * which clang -pedantic reports at every probe; silenced here only. */
#ifdef __clang__
# define TRACE2__PROBE(n, probe, ...) \
	_Pragma("clang diagnostic push") \
	_Pragma("clang diagnostic ignored \"-Wgnu-zero-variadic-macro-arguments\"") \
	TRACE2__PROBE_(n, probe, __VA_ARGS__) \
	_Pragma("clang diagnostic pop")
#else
# define TRACE2__PROBE(n, probe, ...) TRACE2__PROBE_(n, probe, __VA_ARGS__)
#endif
#define TRACE2__PROBE_(n, probe, ...) \
	trace2__touch(__FILE__); \
	STAP_PROBE##n(trace2, probe, __VA_ARGS__)

/* While enabled, each macro below copies its arguments, left to right, into
 * typed locals (trace2__*) before the probe: each is evaluated once, a wrong
 * type draws one warning, and <sys/sdt.h>, which names each probe argument
 * several times, sees plain variables. Vectors are `const void *` so that
 * main's `char **argv` is accepted as well as `const char **`. */

/* ======================= Basic command messages ======================= */

/*
 * void trace2_initialize_clock(void)
 * Kept for Git's API; does nothing. The tracer timestamps every event itself
 * from the kernel's clock, so there is no start clock to initialize.
 */
#define trace2_initialize_clock() ((void)0)

/*
 * void trace2_initialize(void)
 * Emits "version" with exe = TRACE2_EXE_VERSION (default "unknown").
 * Always (the one call that makes system calls while detached, once per
 * process): registers an atexit handler that emits "atexit" with the code
 * stored by trace2_cmd_exit() (0 if never called), and, for SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT and SIGPIPE unless ignored, a handler that emits "signal"
 * with the signal number, then calls the handler that was installed before
 * or, if that was the default action, dies of the signal by it. A handler the
 * program installs later replaces this one. Call it early in main(); later
 * calls do nothing.
 */
#define trace2_initialize() \
	do { \
		if (trace2__initialize() && TRACE2__ON(version)) { \
			const char *trace2__exe = (TRACE2_EXE_VERSION); \
			trace2__touch(trace2__exe); \
			TRACE2__PROBE(4, version, TRACE2__FL, trace2__exe); \
		} \
	} while (0)

/*
 * int trace2_is_enabled(void)
 * 1 while a tracer is attached to any trace2 probe of the calling module (the
 * executable or shared object this call is compiled into), else 0. Reads 28
 * semaphores; use it to skip building expensive data, not around each call.
 */
#define TRACE2__OR_SEMAPHORE(probe) | trace2_##probe##_semaphore
#define trace2_is_enabled() ((0 TRACE2__PROBES(TRACE2__OR_SEMAPHORE)) != 0)

/*
 * void trace2_cmd_start(const char **argv)
 * Emits "start" with the command line; argv is NULL-terminated (main's argv
 * is).
 */
#define trace2_cmd_start(argv) \
	do { \
		if (TRACE2__ON(start)) { \
			const void *trace2__argv = (argv); \
			trace2__touch_vec(trace2__argv); \
			TRACE2__PROBE(4, start, TRACE2__FL, trace2__argv); \
		} \
	} while (0)

/*
 * int trace2_cmd_exit(int exit_code)
 * Emits "exit" with exit_code, stores it for the "atexit" event and returns
 * it: `return trace2_cmd_exit(code);` or `exit(trace2_cmd_exit(code));`.
 * exit_code is always evaluated.
 */
#define trace2_cmd_exit(exit_code) \
	__extension__ ({ \
		int trace2__code = trace2__set_exit_code(exit_code); \
		if (TRACE2__ON(exit)) \
			TRACE2__PROBE(4, exit, TRACE2__FL, trace2__code); \
		trace2__code; \
	})

/*
 * void trace2_cmd_error(const char *fmt, ...)
 * Emits "error" with the printf-formatted message (truncated to
 * TRACE2_MSG_MAX - 1 bytes) and fmt itself.
 */
#define trace2_cmd_error(...) \
	do { \
		if (TRACE2__ON(error)) { \
			const char *trace2__fmt; \
			const char *trace2__msg = trace2__format(&trace2__fmt, __VA_ARGS__); \
			trace2__touch(trace2__msg); \
			TRACE2__PROBE(5, error, TRACE2__FL, trace2__msg, trace2__fmt); \
		} \
	} while (0)

/*
 * void trace2_cmd_path(const char *pathname)
 * Emits "cmd_path" with the full pathname of the running program.
 */
#define trace2_cmd_path(pathname) \
	do { \
		if (TRACE2__ON(cmd_path)) { \
			const char *trace2__path = (pathname); \
			trace2__touch(trace2__path); \
			TRACE2__PROBE(4, cmd_path, TRACE2__FL, trace2__path); \
		} \
	} while (0)

/*
 * void trace2_cmd_ancestry(const char **names)
 * Emits "cmd_ancestry" with the names of the parent processes, nearest parent
 * first, NULL-terminated.
 */
#define trace2_cmd_ancestry(names) \
	do { \
		if (TRACE2__ON(cmd_ancestry)) { \
			const void *trace2__names = (names); \
			trace2__touch_vec(trace2__names); \
			TRACE2__PROBE(4, cmd_ancestry, TRACE2__FL, trace2__names); \
		} \
	} while (0)

/* ======================= Command detail messages ====================== */

/*
 * void trace2_cmd_name(const char *name)
 * Emits "cmd_name" with the canonical name of the command, e.g. "status".
 */
#define trace2_cmd_name(name) \
	do { \
		if (TRACE2__ON(cmd_name)) { \
			const char *trace2__name = (name); \
			trace2__touch(trace2__name); \
			TRACE2__PROBE(4, cmd_name, TRACE2__FL, trace2__name); \
		} \
	} while (0)

/*
 * void trace2_cmd_mode(const char *mode)
 * Emits "cmd_mode": a qualifier of the command's major mode, e.g. "branch"
 * or "file" for a checkout.
 */
#define trace2_cmd_mode(mode) \
	do { \
		if (TRACE2__ON(cmd_mode)) { \
			const char *trace2__mode = (mode); \
			trace2__touch(trace2__mode); \
			TRACE2__PROBE(4, cmd_mode, TRACE2__FL, trace2__mode); \
		} \
	} while (0)

/*
 * void trace2_cmd_alias(const char *alias, const char **argv)
 * Emits "alias" with the alias used and its expansion (NULL-terminated).
 */
#define trace2_cmd_alias(alias_name, argv) \
	do { \
		if (TRACE2__ON(alias)) { \
			const char *trace2__alias = (alias_name); \
			const void *trace2__argv = (argv); \
			trace2__touch(trace2__alias); \
			trace2__touch_vec(trace2__argv); \
			TRACE2__PROBE(5, alias, TRACE2__FL, trace2__alias, trace2__argv); \
		} \
	} while (0)

/*
 * void trace2_def_param(const char *param, const char *value)
 * Emits "def_param": a setting or option that shapes the command's behavior
 * or performance, e.g. ("core.abbrev", "12"). Its scope argument is NULL.
 */
#define trace2_def_param(param, value) \
	trace2_def_param_scope(param, value, (const char *)0)

/*
 * void trace2_def_param_scope(const char *param, const char *value,
 *                             const char *scope)
 * As trace2_def_param(), with the scope the value came from ("system",
 * "global", "local", ...; NULL: none).
 */
#define trace2_def_param_scope(param, value, scope) \
	do { \
		if (TRACE2__ON(def_param)) { \
			const char *trace2__param = (param); \
			const char *trace2__value = (value); \
			const char *trace2__scope = (scope); \
			trace2__touch(trace2__param); \
			trace2__touch(trace2__value); \
			trace2__touch(trace2__scope); \
			TRACE2__PROBE(6, def_param, TRACE2__FL, trace2__param, \
				      trace2__value, trace2__scope); \
		} \
	} while (0)

/*
 * int trace2_def_repo(const char *worktree)
 * Registers a repository (worktree: its path) and returns its repo_id, 1, 2,
 * ... in call order, assigned even while detached; emits "def_repo". Pass the
 * repo_id to region and data calls to attribute them to the repository.
 */
#define trace2_def_repo(worktree) \
	__extension__ ({ \
		int trace2__repo_id = trace2__new_repo_id(); \
		if (TRACE2__ON(def_repo)) { \
			const char *trace2__worktree = (worktree); \
			trace2__touch(trace2__worktree); \
			TRACE2__PROBE(5, def_repo, TRACE2__FL, trace2__repo_id, \
				      trace2__worktree); \
		} \
		trace2__repo_id; \
	})

/* ======================= Child process messages ======================= */

/*
 * void trace2_child_start(struct trace2_child *child)
 * Call before spawning the child. Sets child->child_id (0, 1, ... in call
 * order, assigned even while detached; child is always evaluated) and emits
 * "child_start" with the child's class ("?" when NULL), hook name, directory,
 * argv and use_shell.
 */
#define trace2_child_start(child) \
	do { \
		struct trace2_child *trace2__child = (child); \
		trace2__child->child_id = trace2__new_child_id(); \
		if (TRACE2__ON(child_start)) { \
			int trace2__child_id = trace2__child->child_id; \
			const char *trace2__class = trace2__child->child_class ? \
				trace2__child->child_class : "?"; \
			const char *trace2__hook = trace2__child->hook_name; \
			const char *trace2__cd = trace2__child->cd; \
			const void *trace2__argv = trace2__child->argv; \
			int trace2__use_shell = trace2__child->use_shell; \
			trace2__touch(trace2__class); \
			trace2__touch(trace2__hook); \
			trace2__touch(trace2__cd); \
			trace2__touch_vec(trace2__argv); \
			TRACE2__PROBE(9, child_start, TRACE2__FL, trace2__child_id, \
				      trace2__class, trace2__hook, trace2__cd, \
				      trace2__argv, trace2__use_shell); \
		} \
	} while (0)

/*
 * void trace2_child_exit(struct trace2_child *child, int exit_code)
 * Call after reaping the child. Emits "child_exit" with child->child_id,
 * child->pid and the child's exit code; the tracer reports the elapsed time
 * since trace2_child_start().
 */
#define trace2_child_exit(child, exit_code) \
	do { \
		if (TRACE2__ON(child_exit)) { \
			const struct trace2_child *trace2__child = (child); \
			int trace2__child_id = trace2__child->child_id; \
			int trace2__pid = trace2__child->pid; \
			int trace2__code = (exit_code); \
			TRACE2__PROBE(6, child_exit, TRACE2__FL, trace2__child_id, \
				      trace2__pid, trace2__code); \
		} \
	} while (0)

/*
 * void trace2_child_ready(struct trace2_child *child, const char *ready)
 * For a child left running in the background: emits "child_ready" with
 * child->child_id, child->pid and its state when the parent stopped waiting
 * for it: "ready", "timeout" or "error".
 */
#define trace2_child_ready(child, ready) \
	do { \
		if (TRACE2__ON(child_ready)) { \
			const struct trace2_child *trace2__child = (child); \
			int trace2__child_id = trace2__child->child_id; \
			int trace2__pid = trace2__child->pid; \
			const char *trace2__ready = (ready); \
			trace2__touch(trace2__ready); \
			TRACE2__PROBE(6, child_ready, TRACE2__FL, trace2__child_id, \
				      trace2__pid, trace2__ready); \
		} \
	} while (0)

/*
 * int trace2_exec(const char *exe, const char **argv)
 * Call just before an exec*(): emits "exec" with exe (may be NULL) and argv
 * (NULL-terminated) and returns the exec_id, 0, 1, ... in call order, assigned
 * even while detached.
 */
#define trace2_exec(exe, argv) \
	__extension__ ({ \
		int trace2__exec_id = trace2__new_exec_id(); \
		if (TRACE2__ON(exec)) { \
			const char *trace2__exe = (exe); \
			const void *trace2__argv = (argv); \
			trace2__touch(trace2__exe); \
			trace2__touch_vec(trace2__argv); \
			TRACE2__PROBE(6, exec, TRACE2__FL, trace2__exec_id, \
				      trace2__exe, trace2__argv); \
		} \
		trace2__exec_id; \
	})

/*
 * void trace2_exec_result(int exec_id, int error_code)
 * Call when the exec*() announced by trace2_exec() returned, i.e. failed:
 * emits "exec_result" with the exec_id and an error code (e.g. -1 or errno).
 */
#define trace2_exec_result(exec_id, error_code) \
	do { \
		if (TRACE2__ON(exec_result)) { \
			int trace2__exec_id = (exec_id); \
			int trace2__code = (error_code); \
			TRACE2__PROBE(5, exec_result, TRACE2__FL, trace2__exec_id, \
				      trace2__code); \
		} \
	} while (0)

/* ========================== Thread messages =========================== */

/*
 * void trace2_thread_start(const char *thread_base_name)
 * Call first thing in the new thread's function (not in the caller of
 * pthread_create()). Always numbers the thread (1, 2, ... in start order) and
 * stores the number and thread_base_name (truncated to 31 bytes) in its
 * struct trace2_tls; emits "thread_start" with both (the stored copy of the
 * name). The tracer names the thread "th%02d:<base name>" in its later events.
 */
#define trace2_thread_start(thread_base_name) \
	do { \
		trace2__thread_start(thread_base_name); \
		if (TRACE2__ON(thread_start)) { \
			int trace2__thread_id = trace2__tls.thread_id; \
			const char *trace2__base_name = trace2__tls.base_name; \
			trace2__touch(trace2__base_name); \
			TRACE2__PROBE(5, thread_start, TRACE2__FL, trace2__thread_id, \
				      trace2__base_name); \
		} \
	} while (0)

/*
 * void trace2_thread_exit(void)
 * Call last thing in the thread's function: emits "thread_exit"; the tracer
 * reports the thread's elapsed time and its per-thread timers and counters.
 */
#define trace2_thread_exit() \
	do { \
		if (TRACE2__ON(thread_exit)) \
			TRACE2__PROBE(3, thread_exit, TRACE2__FL); \
	} while (0)

/* ======================= Region and data messages ===================== */

/* The region probes' common body; msg is evaluated only while enabled. */
#define TRACE2__REGION(probe, category, label, repo_id, msg) \
	do { \
		if (TRACE2__ON(probe)) { \
			const char *trace2__category = (category); \
			const char *trace2__label = (label); \
			int trace2__repo_id = (repo_id); \
			const char *trace2__msg = (msg); \
			trace2__touch(trace2__category); \
			trace2__touch(trace2__label); \
			trace2__touch(trace2__msg); \
			TRACE2__PROBE(8, probe, TRACE2__FL, trace2__repo_id, \
				      trace2__category, trace2__label, trace2__msg, \
				      TRACE2__LITERALS(category, label, msg)); \
		} \
	} while (0)

/*
 * void trace2_region_enter(const char *category, const char *label, int repo_id)
 * Emits "region_enter": opens a nested region of the calling thread, e.g.
 * ("index", "do_read_index", repo_id). The tracer keeps the per-thread
 * nesting and times the region until the matching trace2_region_leave().
 * category classifies by feature area; repo_id is 0 or from trace2_def_repo().
 * The probe's msg argument is NULL.
 */
#define trace2_region_enter(category, label, repo_id) \
	TRACE2__REGION(region_enter, category, label, repo_id, (const char *)0)

/*
 * void trace2_region_enter_printf(const char *category, const char *label,
 *                                 int repo_id, const char *fmt, ...)
 * As trace2_region_enter(), with a printf-formatted message (truncated to
 * TRACE2_MSG_MAX - 1 bytes).
 */
#define trace2_region_enter_printf(category, label, repo_id, ...) \
	TRACE2__REGION(region_enter, category, label, repo_id, \
		       trace2__format((const char **)0, __VA_ARGS__))

/*
 * void trace2_region_leave(const char *category, const char *label, int repo_id)
 * Emits "region_leave": closes the innermost open region of the calling
 * thread. Pass the same category and label as the enter (not checked).
 */
#define trace2_region_leave(category, label, repo_id) \
	TRACE2__REGION(region_leave, category, label, repo_id, (const char *)0)

/*
 * void trace2_region_leave_printf(const char *category, const char *label,
 *                                 int repo_id, const char *fmt, ...)
 * As trace2_region_leave(), with a printf-formatted message (truncated to
 * TRACE2_MSG_MAX - 1 bytes).
 */
#define trace2_region_leave_printf(category, label, repo_id, ...) \
	TRACE2__REGION(region_leave, category, label, repo_id, \
		       trace2__format((const char **)0, __VA_ARGS__))

/* The data probe's common body. */
#define TRACE2__DATA(category, repo_id, key, string_value, int_value) \
	do { \
		if (TRACE2__ON(data)) { \
			const char *trace2__category = (category); \
			int trace2__repo_id = (repo_id); \
			const char *trace2__key = (key); \
			const char *trace2__string = (string_value); \
			intmax_t trace2__int = (int_value); \
			trace2__touch(trace2__category); \
			trace2__touch(trace2__key); \
			trace2__touch(trace2__string); \
			TRACE2__PROBE(9, data, TRACE2__FL, trace2__repo_id, \
				      trace2__category, trace2__key, trace2__string, \
				      trace2__int, \
				      TRACE2__LITERALS(category, key, string_value)); \
		} \
	} while (0)

/*
 * void trace2_data_string(const char *category, int repo_id, const char *key,
 *                         const char *value)
 * Emits "data" with a string value, relative to the calling thread's current
 * region, e.g. ("status", 0, "untracked", "no"). A NULL value is sent as "",
 * so that NULL always means an integer; the probe's integer argument is 0.
 */
#define trace2_data_string(category, repo_id, key, value) \
	TRACE2__DATA(category, repo_id, key, trace2__nonnull(value), 0)

/*
 * void trace2_data_intmax(const char *category, int repo_id, const char *key,
 *                         intmax_t value)
 * Emits "data" with an integer value, e.g. ("index", repo_id,
 * "read/cache_nr", nr). The probe's string argument is NULL.
 */
#define trace2_data_intmax(category, repo_id, key, value) \
	TRACE2__DATA(category, repo_id, key, (const char *)0, value)

/*
 * void trace2_data_json(const char *category, int repo_id, const char *key,
 *                       const char *json_text)
 * Emits "data_json" with a JSON value (object, array, ...) as text. The text
 * is passed through as is: it must be valid JSON.
 */
#define trace2_data_json(category, repo_id, key, json_text) \
	do { \
		if (TRACE2__ON(data_json)) { \
			const char *trace2__category = (category); \
			int trace2__repo_id = (repo_id); \
			const char *trace2__key = (key); \
			const char *trace2__json = (json_text); \
			trace2__touch(trace2__category); \
			trace2__touch(trace2__key); \
			trace2__touch(trace2__json); \
			TRACE2__PROBE(8, data_json, TRACE2__FL, trace2__repo_id, \
				      trace2__category, trace2__key, trace2__json, \
				      TRACE2__LITERALS(category, key, json_text)); \
		} \
	} while (0)

/*
 * void trace2_printf(const char *fmt, ...)
 * Emits "printf" with a printf-formatted message (truncated to
 * TRACE2_MSG_MAX - 1 bytes), relative to the calling thread's current region.
 */
#define trace2_printf(...) \
	do { \
		if (TRACE2__ON(printf)) { \
			const char *trace2__msg = trace2__format((const char **)0, __VA_ARGS__); \
			trace2__touch(trace2__msg); \
			TRACE2__PROBE(4, printf, TRACE2__FL, trace2__msg); \
		} \
	} while (0)

/* =================== Stopwatch timers and counters ==================== */

/*
 * TRACE2_DEFINE_TIMER(ident, "category", "name", per_thread);
 * At file scope: defines the static timer `ident`. The tracer sums the time
 * between each trace2_timer_start(ident) and trace2_timer_stop(ident) of a
 * thread and reports the "timer" event (intervals, total, min, max over all
 * threads) at process exit; with per_thread non-zero also "th_timer" when
 * each thread that used it calls trace2_thread_exit(). The id is the
 * definition's address: to share a timer across files, call it through a
 * function of the defining file.
 */
#define TRACE2_DEFINE_TIMER(ident, category, name, per_thread) \
	static const struct trace2_timer ident = { category, name, per_thread }

/* The timer probes' common body. */
#define TRACE2__TIMER(probe, ident) \
	do { \
		if (TRACE2__ON(probe)) { \
			const struct trace2_timer *trace2__timer = &(ident); \
			const char *trace2__category = trace2__timer->category; \
			const char *trace2__name = trace2__timer->name; \
			int trace2__per_thread = trace2__timer->per_thread; \
			trace2__touch(trace2__category); \
			trace2__touch(trace2__name); \
			TRACE2__PROBE(7, probe, TRACE2__FL, trace2__timer, \
				      trace2__category, trace2__name, trace2__per_thread); \
		} \
	} while (0)

/*
 * void trace2_timer_start(ident)
 * Emits "timer_start": starts the calling thread's interval of timer ident.
 */
#define trace2_timer_start(ident) TRACE2__TIMER(timer_start, ident)

/*
 * void trace2_timer_stop(ident)
 * Emits "timer_stop": ends the calling thread's interval of timer ident.
 */
#define trace2_timer_stop(ident) TRACE2__TIMER(timer_stop, ident)

/*
 * TRACE2_DEFINE_COUNTER(ident, "category", "name", per_thread);
 * At file scope: defines the static counter `ident`. The tracer sums the
 * values given to trace2_counter_add(ident, value) and reports the "counter"
 * event (the sum over all threads) at process exit; with per_thread non-zero
 * also "th_counter" when each thread that used it calls trace2_thread_exit().
 * The id is the definition's address, as for timers.
 */
#define TRACE2_DEFINE_COUNTER(ident, category, name, per_thread) \
	static const struct trace2_counter ident = { category, name, per_thread }

/*
 * void trace2_counter_add(ident, intmax_t value)
 * Emits "counter_add": adds value to the calling thread's count of ident.
 */
#define trace2_counter_add(ident, value) \
	do { \
		if (TRACE2__ON(counter_add)) { \
			const struct trace2_counter *trace2__counter = &(ident); \
			const char *trace2__category = trace2__counter->category; \
			const char *trace2__name = trace2__counter->name; \
			int trace2__per_thread = trace2__counter->per_thread; \
			intmax_t trace2__value = (value); \
			trace2__touch(trace2__category); \
			trace2__touch(trace2__name); \
			TRACE2__PROBE(8, counter_add, TRACE2__FL, trace2__counter, \
				      trace2__category, trace2__name, trace2__per_thread, \
				      trace2__value); \
		} \
	} while (0)

#endif /* TRACE2_H */
