/*
 * trace2.h: Git's Trace2 API, for any C program, traced by tr2-bpf (eBPF) or
 * written in-process to git's GIT_TRACE2* targets.
 *
 * Every call below is a macro that captures __FILE__ and __LINE__ and tests,
 * inline, whether anyone listens to its event kind: a tracer attached to the
 * kind's USDT probe (provider "trace2", one probe per event kind, listed in
 * docs/probes.md), tr2-bpf, or an in-process target (GIT_TRACE2,
 * GIT_TRACE2_PERF, GIT_TRACE2_EVENT). Only then does it evaluate its
 * arguments and call the tr2 runtime (libtr2), where the kind's one probe site
 * fires and the in-process targets write their lines. No probe site sits in
 * the caller's code: what a tracer costs a process when it starts or loads a
 * shared object does not grow with the number of trace2 calls in it.
 * The names and meanings are those of Git's Trace2 API
 * (Documentation/technical/api-trace2.txt), made generic: where git passes a
 * `struct repository *` this API passes an `int repo_id` (0 = no repository);
 * where git passes a `struct child_process *` it passes a `struct trace2_child *`.
 *
 * THE RULE (as assert() has NDEBUG):
 *   While nobody listens, each trace2_* call loads two words (the kind's USDT
 *   semaphore and the runtime's word for tr2-bpf and the in-process targets),
 *   finds them zero and does not branch, and nothing else: its ARGUMENTS ARE
 *   NOT EVALUATED, no message is formatted, no clock is read, no memory is
 *   allocated and no system call is made. So never put side effects the
 *   program needs into the arguments of a trace2_* call: they happen only
 *   while someone listens.
 *   Exceptions, because the program itself sees their results:
 *     - trace2_initialize() always installs the atexit and signal handlers
 *       and reads the GIT_TRACE2* variables;
 *     - trace2_cmd_exit() always stores the exit code and returns it;
 *     - ids are assigned on every call, with one atomic increment, so that a
 *       tracer attaching later agrees with them: trace2_def_repo() returns
 *       1, 2, ...; trace2_child_start() sets child->child_id to 0, 1, ...;
 *       trace2_exec() returns 0, 1, ...; trace2_thread_start() numbers the
 *       thread 1, 2, ... and stores number and name in its struct trace2_tls.
 *   While someone listens, each argument is evaluated exactly once, except
 *   as noted on the call.
 *
 * Linking: one runtime per process. Link the program with libtr2.a, or the
 * program and every instrumented shared object with libtr2.so
 * (`pkg-config --cflags --libs tr2`). Nothing else is needed to build: the
 * probes are in the runtime.
 *
 * All calls are macros: their addresses cannot be taken.
 *
 * A program with trace2_* functions of its own (git) defines
 * TRACE2_RUNTIME_ONLY before including this header: it then gets the
 * runtime's entry points (trace2__*, TRACE2__ON) and none of the trace2_*
 * macros, and calls the runtime from its own functions; it includes this
 * header by a name its own trace2.h does not shadow (git's patch series,
 * contrib/git/: <tr2/trace2.h>).
 */
#ifndef TR2_TRACE2_H
#define TR2_TRACE2_H

#include <stdint.h>
#include <sys/types.h>

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

/* Every probe of docs/probes.md, in the order of trace2__state.sem[]. */
#define TRACE2__PROBES(X) \
	X(version) X(start) X(exit) X(atexit) X(signal) X(error) \
	X(cmd_path) X(cmd_ancestry) X(cmd_name) X(cmd_mode) X(alias) \
	X(def_param) X(def_repo) X(child_start) X(child_exit) X(child_ready) \
	X(exec) X(exec_result) X(thread_start) X(thread_exit) \
	X(region_enter) X(region_leave) X(data) X(data_json) X(printf) \
	X(timer_start) X(timer_stop) X(counter_add)

#define TRACE2__PROBE_INDEX(probe) TRACE2__P_##probe,
enum { TRACE2__PROBES(TRACE2__PROBE_INDEX) TRACE2__NPROBES };

/*
 * What the inline tests read, one per runtime (one per process). The kernel
 * writes both halves (uprobe reference counters, "USDT semaphores"): each
 * word is non-zero while someone listens.
 *   on       bits 0-15: the semaphore of the runtime's private probe
 *            tr2:enable, which tr2-bpf attaches to in the processes it
 *            traces (it attaches to none of sem[]); bits 16-23: non-zero
 *            while an in-process GIT_TRACE2* target is open (written by the
 *            runtime itself, never by the kernel).
 *   sem[p]   the USDT semaphore of trace2 probe p, which bpftrace, perf and
 *            libbpf's USDT support raise while they attach to that probe.
 */
struct trace2_state {
	volatile uint32_t on;
	volatile uint16_t sem[TRACE2__NPROBES];
};
/* Weak here, so that every compiler reaches it through the GOT: gcc makes a
 * position-independent executable read a plain extern variable directly and
 * relies on a copy relocation, which would give the program its own copy
 * while the kernel writes the one in libtr2.so. */
#ifndef TRACE2__RUNTIME
__attribute__((weak))
#endif
extern TRACE2__API struct trace2_state trace2__state;

/* The calling thread's record; initial-exec so that taking its address is two
 * instructions in every module. */
extern TRACE2__API __thread struct trace2_tls trace2__tls
	__attribute__((tls_model("initial-exec")));

/* This object's (program's or shared object's) number, which the runtime
 * gives it at its first event and never gives again in the process (libtr2.so
 * is never unloaded): a tracer knows by it that the object was loaded again,
 * and another may now sit at the addresses of its string literals
 * (docs/probes.md). Weak and hidden so that every object has its own, zero
 * until then (and again when it is loaded again: fresh .bss). */
__attribute__((weak, visibility("hidden"))) uint32_t trace2__module;

/* The call site, first arguments of every runtime call below. */
#define TRACE2__SITE_ARGS uint32_t *module, const char *file, int line
#define TRACE2__SITE &trace2__module, __FILE__, __LINE__

/* Installs the atexit and signal handlers, reads the GIT_TRACE2* variables;
 * returns 1 the first time, 0 after. */
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

/* One function per event kind, called only while someone listens: fires the
 * kind's probe (docs/probes.md) and writes to the in-process targets.
 * Strings may be NULL where the probe table says so; vectors are
 * NULL-terminated. `literals`: see TRACE2__LITERALS. */
TRACE2__API void trace2__version(TRACE2__SITE_ARGS, const char *exe);
/* As trace2__version, with the EVENT format version the program writes
 * itself ("3" for git 2.39; NULL: "4"), for a program with its own Trace2
 * targets (git built with USE_TR2, docs/git.md). */
TRACE2__API void trace2__version_evt(TRACE2__SITE_ARGS, const char *exe, const char *evt);
TRACE2__API void trace2__start(TRACE2__SITE_ARGS, const char **argv);
TRACE2__API void trace2__exit(TRACE2__SITE_ARGS, int code);
/* The "atexit" and "signal" events, which trace2_initialize()'s handlers
 * emit; for a program with handlers of its own (git) that does not call it. */
TRACE2__API void trace2__atexit(TRACE2__SITE_ARGS, int code);
TRACE2__API void trace2__signal(TRACE2__SITE_ARGS, int signo);
/* The session id the program made itself (git's tr2_sid_get()), which
 * tr2-bpf then writes for the process instead of one of its own; the first
 * 1023 bytes are kept.  Call it before the first event. */
TRACE2__API void trace2__set_sid(const char *sid);
/* "cmd_name" with the hierarchy the program computed itself (git's
 * tr2_cmd_name_get_hierarchy(): GIT_TRACE2_PARENT_NAME at the call, then
 * "/<name>"), which tracers then write instead of one they make. */
TRACE2__API void trace2__cmd_name_hierarchy(TRACE2__SITE_ARGS, const char *name,
					    const char *hierarchy);
TRACE2__API void trace2__error(TRACE2__SITE_ARGS, const char *msg, const char *fmt);
TRACE2__API void trace2__cmd_path(TRACE2__SITE_ARGS, const char *path);
TRACE2__API void trace2__cmd_ancestry(TRACE2__SITE_ARGS, const char **names);
TRACE2__API void trace2__cmd_name(TRACE2__SITE_ARGS, const char *name);
TRACE2__API void trace2__cmd_mode(TRACE2__SITE_ARGS, const char *mode);
TRACE2__API void trace2__alias(TRACE2__SITE_ARGS, const char *alias, const char **argv);
TRACE2__API void trace2__def_param(TRACE2__SITE_ARGS, const char *param, const char *value,
				   const char *scope);
TRACE2__API void trace2__def_repo(TRACE2__SITE_ARGS, int repo_id, const char *worktree);
TRACE2__API void trace2__child_start(TRACE2__SITE_ARGS, const struct trace2_child *child);
TRACE2__API void trace2__child_exit(TRACE2__SITE_ARGS, const struct trace2_child *child, int code);
TRACE2__API void trace2__child_ready(TRACE2__SITE_ARGS, const struct trace2_child *child,
				     const char *ready);
TRACE2__API void trace2__exec(TRACE2__SITE_ARGS, int exec_id, const char *exe, const char **argv);
TRACE2__API void trace2__exec_result(TRACE2__SITE_ARGS, int exec_id, int code);
TRACE2__API void trace2__thread_started(TRACE2__SITE_ARGS);
TRACE2__API void trace2__thread_exit(TRACE2__SITE_ARGS);
TRACE2__API void trace2__region_enter(TRACE2__SITE_ARGS, int repo_id, const char *category,
				      const char *label, const char *msg, int literals);
TRACE2__API void trace2__region_leave(TRACE2__SITE_ARGS, int repo_id, const char *category,
				      const char *label, const char *msg, int literals);
TRACE2__API void trace2__data(TRACE2__SITE_ARGS, int repo_id, const char *category, const char *key,
			      const char *string_value, intmax_t int_value, int literals);
TRACE2__API void trace2__data_json(TRACE2__SITE_ARGS, int repo_id, const char *category,
				   const char *key, const char *json, int literals);
TRACE2__API void trace2__printf(TRACE2__SITE_ARGS, const char *msg);
TRACE2__API void trace2__timer_start(TRACE2__SITE_ARGS, const struct trace2_timer *timer);
TRACE2__API void trace2__timer_stop(TRACE2__SITE_ARGS, const struct trace2_timer *timer);
TRACE2__API void trace2__counter_add(TRACE2__SITE_ARGS, const struct trace2_counter *counter,
				     intmax_t value);

/* trace2_data_string()'s value: NULL is sent as "". */
static inline const char *trace2__nonnull(const char *value)
{
	return value ? value : "";
}

#ifdef __cplusplus
}
#endif

/* True while someone listens to event kind `probe`. Two loads and one
 * branch, predicted not taken; volatile, so that a loop notices a tracer that
 * attaches while it runs. */
#define TRACE2__ON(probe) \
	__builtin_expect((trace2__state.on | trace2__state.sem[TRACE2__P_##probe]) != 0, 0)

/* True while someone listens to any event kind. Reads 29 words. */
#define TRACE2__OR_SEMAPHORE(probe) | trace2__state.sem[TRACE2__P_##probe]
#define TRACE2__ANY() ((trace2__state.on TRACE2__PROBES(TRACE2__OR_SEMAPHORE)) != 0)

/* True while tr2-bpf is all that listens to event kind `probe`: it raised
 * tr2:enable, no in-process target is open and no other tracer raised the
 * probe's own semaphore.  What only tr2-bpf can fill in (cmd_ancestry's
 * names) need not be computed then. */
#define TRACE2__TRACER_ONLY(probe) \
	((trace2__state.on & 0xffff) && !(trace2__state.on >> 16) && !trace2__state.sem[TRACE2__P_##probe])

/* The literals argument of region_enter, region_leave, data and data_json
 * (docs/probes.md): bit 1, 2, 3 set when the call's category, label or key,
 * and msg or value argument is a string literal (or a null pointer
 * constant), whose bytes cannot change at this call site, so that a tracer
 * may read them once per call site. A compile-time constant. */
#define TRACE2__LITERALS(a, b, c) \
	(2 * __builtin_constant_p(a) + 4 * __builtin_constant_p(b) + 8 * __builtin_constant_p(c))

#ifndef TRACE2_RUNTIME_ONLY

/* While enabled, each macro below evaluates its arguments once, left to
 * right where the order can be seen, into the typed parameters of its
 * runtime call; a wrong type draws one warning. Vectors are `const void *`
 * in the macros so that main's `char **argv` is accepted as well as
 * `const char **`. */

/* ======================= Basic command messages ======================= */

/*
 * void trace2_initialize_clock(void)
 * Kept for Git's API; does nothing. Every event is timestamped when it
 * happens, so there is no start clock to initialize.
 */
#define trace2_initialize_clock() ((void)0)

/*
 * void trace2_initialize(void)
 * Emits "version" with exe = TRACE2_EXE_VERSION (default "unknown").
 * Always (the one call that makes system calls while nobody listens, once
 * per process): reads git's GIT_TRACE2* variables and opens the in-process
 * targets they name (trace2(3), IN-PROCESS TARGETS: GIT_TRACE2,
 * GIT_TRACE2_PERF, GIT_TRACE2_EVENT with git's values, their options, and
 * GIT_TRACE2_PARENT_SID, which it sets for children when a target opens;
 * none set: nothing is opened, allocated or set; a value git does not know:
 * git's one-line warning on stderr); registers an atexit handler that emits
 * "atexit" with the code stored by trace2_cmd_exit() (0 if never called),
 * and, for SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE unless ignored, a
 * handler that emits "signal" with the signal number, then calls the handler
 * that was installed before or, if that was the default action, dies of the
 * signal by it. A handler the program installs later replaces this one. Call
 * it early in main(); later calls do nothing.
 */
#define trace2_initialize() \
	do { \
		if (trace2__initialize() && TRACE2__ON(version)) \
			trace2__version(TRACE2__SITE, (TRACE2_EXE_VERSION)); \
	} while (0)

/*
 * int trace2_is_enabled(void)
 * 1 while anyone listens to any trace2 event kind of this process (a tracer
 * attached to any probe, or an in-process target), else 0. Reads 29 words;
 * use it to skip building expensive data, not around each call.
 */
#define trace2_is_enabled() TRACE2__ANY()

/*
 * void trace2_cmd_start(const char **argv)
 * Emits "start" with the command line; argv is NULL-terminated (main's argv
 * is).
 */
#define trace2_cmd_start(argv) \
	do { \
		if (TRACE2__ON(start)) \
			trace2__start(TRACE2__SITE, (const char **)(const void *)(argv)); \
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
			trace2__exit(TRACE2__SITE, trace2__code); \
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
			trace2__error(TRACE2__SITE, trace2__msg, trace2__fmt); \
		} \
	} while (0)

/*
 * void trace2_cmd_path(const char *pathname)
 * Emits "cmd_path" with the full pathname of the running program.
 */
#define trace2_cmd_path(pathname) \
	do { \
		if (TRACE2__ON(cmd_path)) \
			trace2__cmd_path(TRACE2__SITE, (pathname)); \
	} while (0)

/*
 * void trace2_cmd_ancestry(const char **names)
 * Emits "cmd_ancestry" with the names of the parent processes, nearest parent
 * first, NULL-terminated.  names NULL: tr2-bpf names them itself, from the
 * kernel's process tree when the process made its first call (each
 * ancestor's comm, the name /proc/PID/stat gives, up to init or the edge of
 * the process's pid namespace; at most 64), and writes no event when it
 * has none; the in-process targets write no event, other tracers get NULL.
 * See TRACE2__TRACER_ONLY(cmd_ancestry).
 */
#define trace2_cmd_ancestry(names) \
	do { \
		if (TRACE2__ON(cmd_ancestry)) \
			trace2__cmd_ancestry(TRACE2__SITE, (const char **)(const void *)(names)); \
	} while (0)

/* ======================= Command detail messages ====================== */

/*
 * void trace2_cmd_name(const char *name)
 * Emits "cmd_name" with the canonical name of the command, e.g. "status".
 */
#define trace2_cmd_name(name) \
	do { \
		if (TRACE2__ON(cmd_name)) \
			trace2__cmd_name(TRACE2__SITE, (name)); \
	} while (0)

/*
 * void trace2_cmd_mode(const char *mode)
 * Emits "cmd_mode": a qualifier of the command's major mode, e.g. "branch"
 * or "file" for a checkout.
 */
#define trace2_cmd_mode(mode) \
	do { \
		if (TRACE2__ON(cmd_mode)) \
			trace2__cmd_mode(TRACE2__SITE, (mode)); \
	} while (0)

/*
 * void trace2_cmd_alias(const char *alias, const char **argv)
 * Emits "alias" with the alias used and its expansion (NULL-terminated).
 */
#define trace2_cmd_alias(alias_name, argv) \
	do { \
		if (TRACE2__ON(alias)) { \
			const char *trace2__alias_name = (alias_name); \
			trace2__alias(TRACE2__SITE, trace2__alias_name, \
				      (const char **)(const void *)(argv)); \
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
			trace2__def_param(TRACE2__SITE, trace2__param, trace2__value, (scope)); \
		} \
	} while (0)

/*
 * int trace2_def_repo(const char *worktree)
 * Registers a repository (worktree: its path) and returns its repo_id, 1, 2,
 * ... in call order, assigned even while nobody listens; emits "def_repo".
 * Pass the repo_id to region and data calls to attribute them to the
 * repository.
 */
#define trace2_def_repo(worktree) \
	__extension__ ({ \
		int trace2__repo_id = trace2__new_repo_id(); \
		if (TRACE2__ON(def_repo)) \
			trace2__def_repo(TRACE2__SITE, trace2__repo_id, (worktree)); \
		trace2__repo_id; \
	})

/* ======================= Child process messages ======================= */

/*
 * void trace2_child_start(struct trace2_child *child)
 * Call before spawning the child. Sets child->child_id (0, 1, ... in call
 * order, assigned even while nobody listens; child is always evaluated) and
 * emits "child_start" with the child's class ("?" when NULL), hook name,
 * directory, argv and use_shell.
 */
#define trace2_child_start(child) \
	do { \
		struct trace2_child *trace2__child = (child); \
		trace2__child->child_id = trace2__new_child_id(); \
		if (TRACE2__ON(child_start)) \
			trace2__child_start(TRACE2__SITE, trace2__child); \
	} while (0)

/*
 * void trace2_child_exit(struct trace2_child *child, int exit_code)
 * Call after reaping the child. Emits "child_exit" with child->child_id,
 * child->pid and the child's exit code; the elapsed time since
 * trace2_child_start() is reported too.
 */
#define trace2_child_exit(child, exit_code) \
	do { \
		if (TRACE2__ON(child_exit)) { \
			const struct trace2_child *trace2__child = (child); \
			trace2__child_exit(TRACE2__SITE, trace2__child, (exit_code)); \
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
			trace2__child_ready(TRACE2__SITE, trace2__child, (ready)); \
		} \
	} while (0)

/*
 * int trace2_exec(const char *exe, const char **argv)
 * Call just before an exec*(): emits "exec" with exe (may be NULL) and argv
 * (NULL-terminated) and returns the exec_id, 0, 1, ... in call order, assigned
 * even while nobody listens.
 */
#define trace2_exec(exe, argv) \
	__extension__ ({ \
		int trace2__exec_id = trace2__new_exec_id(); \
		if (TRACE2__ON(exec)) { \
			const char *trace2__exe = (exe); \
			trace2__exec(TRACE2__SITE, trace2__exec_id, trace2__exe, \
				     (const char **)(const void *)(argv)); \
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
			trace2__exec_result(TRACE2__SITE, trace2__exec_id, (error_code)); \
		} \
	} while (0)

/* ========================== Thread messages =========================== */

/*
 * void trace2_thread_start(const char *thread_base_name)
 * Call first thing in the new thread's function (not in the caller of
 * pthread_create()). Always numbers the thread (1, 2, ... in start order) and
 * stores the number and thread_base_name (truncated to 31 bytes) in its
 * struct trace2_tls; emits "thread_start" with both (the stored copy of the
 * name). Later events of the thread are named "th%02d:<base name>".
 */
#define trace2_thread_start(thread_base_name) \
	do { \
		trace2__thread_start(thread_base_name); \
		if (TRACE2__ON(thread_start)) \
			trace2__thread_started(TRACE2__SITE); \
	} while (0)

/*
 * void trace2_thread_exit(void)
 * Call last thing in the thread's function: emits "thread_exit" with the
 * thread's elapsed time and its per-thread timers and counters.
 */
#define trace2_thread_exit() \
	do { \
		if (TRACE2__ON(thread_exit)) \
			trace2__thread_exit(TRACE2__SITE); \
	} while (0)

/* ======================= Region and data messages ===================== */

/* The region calls' common body; msg is evaluated only while enabled. */
#define TRACE2__REGION(probe, category, label, repo_id, msg) \
	do { \
		if (TRACE2__ON(probe)) { \
			const char *trace2__category = (category); \
			const char *trace2__label = (label); \
			int trace2__repo_id = (repo_id); \
			trace2__##probe(TRACE2__SITE, trace2__repo_id, trace2__category, \
					trace2__label, (msg), \
					TRACE2__LITERALS(category, label, msg)); \
		} \
	} while (0)

/*
 * void trace2_region_enter(const char *category, const char *label, int repo_id)
 * Emits "region_enter": opens a nested region of the calling thread, e.g.
 * ("index", "do_read_index", repo_id), timed until the matching
 * trace2_region_leave(). category classifies by feature area; repo_id is 0
 * or from trace2_def_repo(). The probe's msg argument is NULL.
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

/* The data calls' common body. */
#define TRACE2__DATA(category, repo_id, key, string_value, int_value) \
	do { \
		if (TRACE2__ON(data)) { \
			const char *trace2__category = (category); \
			int trace2__repo_id = (repo_id); \
			const char *trace2__key = (key); \
			const char *trace2__string = (string_value); \
			trace2__data(TRACE2__SITE, trace2__repo_id, trace2__category, trace2__key, \
				     trace2__string, (int_value), \
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
			trace2__data_json(TRACE2__SITE, trace2__repo_id, trace2__category, \
					  trace2__key, (json_text), \
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
		if (TRACE2__ON(printf)) \
			trace2__printf(TRACE2__SITE, trace2__format((const char **)0, __VA_ARGS__)); \
	} while (0)

/* =================== Stopwatch timers and counters ==================== */

/*
 * TRACE2_DEFINE_TIMER(ident, "category", "name", per_thread);
 * At file scope: defines the static timer `ident`. The time between each
 * trace2_timer_start(ident) and trace2_timer_stop(ident) of a thread is
 * summed and reported as the "timer" event (intervals, total, min, max over
 * all threads) at process exit; with per_thread non-zero also as "th_timer"
 * when each thread that used it calls trace2_thread_exit(). The id is the
 * definition's address: to share a timer across files, call it through a
 * function of the defining file.
 */
#define TRACE2_DEFINE_TIMER(ident, category, name, per_thread) \
	static const struct trace2_timer ident = { category, name, per_thread }

/*
 * void trace2_timer_start(ident)
 * Emits "timer_start": starts the calling thread's interval of timer ident.
 */
#define trace2_timer_start(ident) \
	do { \
		if (TRACE2__ON(timer_start)) \
			trace2__timer_start(TRACE2__SITE, &(ident)); \
	} while (0)

/*
 * void trace2_timer_stop(ident)
 * Emits "timer_stop": ends the calling thread's interval of timer ident.
 */
#define trace2_timer_stop(ident) \
	do { \
		if (TRACE2__ON(timer_stop)) \
			trace2__timer_stop(TRACE2__SITE, &(ident)); \
	} while (0)

/*
 * TRACE2_DEFINE_COUNTER(ident, "category", "name", per_thread);
 * At file scope: defines the static counter `ident`. The values given to
 * trace2_counter_add(ident, value) are summed and reported as the "counter"
 * event (the sum over all threads) at process exit; with per_thread non-zero
 * also as "th_counter" when each thread that used it calls
 * trace2_thread_exit(). The id is the definition's address, as for timers.
 */
#define TRACE2_DEFINE_COUNTER(ident, category, name, per_thread) \
	static const struct trace2_counter ident = { category, name, per_thread }

/*
 * void trace2_counter_add(ident, intmax_t value)
 * Emits "counter_add": adds value to the calling thread's count of ident.
 */
#define trace2_counter_add(ident, value) \
	do { \
		if (TRACE2__ON(counter_add)) \
			trace2__counter_add(TRACE2__SITE, &(ident), (value)); \
	} while (0)

#endif /* TRACE2_RUNTIME_ONLY */

#endif /* TR2_TRACE2_H */
