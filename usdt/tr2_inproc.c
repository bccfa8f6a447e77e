/*
 * tr2_inproc.c: the in-process targets, Trace2 without a tracer and without
 * root (trace2(3), IN-PROCESS TARGETS).  trace2_initialize() reads git's
 * GIT_TRACE2* variables (tr2_inproc_init); while a target is open, byte 2 of
 * trace2__state.on is set, so every trace2 call reaches tr2_probe.c, which
 * hands it here (tr2_inproc_call).  The Trace2 model (formatter/tr2_model.h),
 * the one tr2-bpf's session feeds too, turns each call into its events, with
 * the values git computes in-process (sid, thread name, nesting, t_abs,
 * t_rel, cmd_name hierarchy, timer and counter totals), and they go to the
 * formatter's NORMAL, PERF and EVENT targets and destinations, the same code
 * tr2-bpf writes with, compiled into the runtime (usdt/build.mk).
 *
 * State: the model and the targets, behind one mutex, which also makes each
 * line one write(2) that no other thread's line can interleave with; per
 * thread only its tid as the model knows it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tr2_dst.h"
#include "tr2_inproc.h"
#include "tr2_json.h"
#include "tr2_mem.h"
#include "tr2_model.h"
#include "tr2_runtime.h"
#include "tr2_sid.h"
#include "tr2_tgt.h"

/*
 * Batches: a file target (a path that is a regular file) keeps the lines of
 * region, data and printf events in its destination's buffer, whole, and
 * writes them with one write(2) (O_APPEND: no other writer's line gets
 * inside it) -- a write costs more here than git's whole event (bench/
 * inproc.sh).  The batch goes out at BATCH_BYTES (a dozen lines or
 * more), once its first line is BATCH_NS old (checked at each event), with
 * every other event (start, exit, error, child_*, exec, thread_*, ...
 * atexit, signal) and before fork(); a child forked without exec writes
 * each line at once.
 * What a crash can lose: the batch, those lines of region, data and printf
 * events since the last write, when the process ends without its atexit or
 * signal event (SIGKILL, SIGSEGV, _exit(), an exec*() not announced by
 * trace2_exec()), or when a fatal signal lands inside the runtime.
 */
#define BATCH_BYTES 2048
#define BATCH_NS (10 * 1000 * 1000)

struct target {
	struct tr2_target t;
	const char *var;              /* "GIT_TRACE2", ...: for warnings */
	bool pipe;                    /* a FIFO: write with SIGPIPE blocked, as git */
	bool batch;                   /* a regular file: lines batched (above) */
	bool dead;                    /* a write failed: git disables the target */
	uint64_t batch_since;         /* CLOCK_MONOTONIC of the batch's first line */
};

static struct {
	pthread_mutex_t lock;         /* the targets and the model, and all of this but
					 the fields set once by tr2_inproc_init */
	struct target targets[3];
	int ntargets, live;
	bool debug;                   /* GIT_TRACE2_DST_DEBUG */
	char *sid;
	const char *parent_name;      /* GIT_TRACE2_PARENT_NAME at initialize */
	int64_t real_start_us;        /* the start, UTC: the sid's time */
	uint32_t pid;                 /* the process at initialize: a child forked without
					 exec writes as it, with its sid (git's behaviour) */
	uint64_t start_ns;            /* CLOCK_MONOTONIC at initialize: t_abs 0 */
	uint64_t now;                 /* the time of the call being written */
	struct tr2_model *model;      /* sid, names, nesting, times, metrics (formatter/tr2_model.h) */
	pthread_key_t key;            /* its destructor: a thread that ends without
					 trace2_thread_exit() */
	bool have_key;
} proc = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The calling thread's tid as the model knows it (the main thread's is the
 * process's pid at initialize), 0 until its first call is written. */
static __thread uint32_t self_tid __attribute__((tls_model("initial-exec")));
/* Inside tr2_inproc_call: a signal handler's trace2 call on this thread
 * must not wait for the mutex this thread may hold, or touch the state it
 * is changing (see tr2_inproc_call). */
static __thread int busy __attribute__((tls_model("initial-exec")));
/* The "signal" events deferred by handlers that interrupted this thread
 * inside tr2_inproc_call, deferred_n of them (a handler fills its entry,
 * then counts it). */
#define DEFERRED_MAX 8
struct deferred {
	const char *file;
	int line;
	int signo;
	uint64_t ns;
};
static __thread struct deferred deferred[DEFERRED_MAX] __attribute__((tls_model("initial-exec")));
static __thread unsigned deferred_n __attribute__((tls_model("initial-exec")));
/* before_fork took the mutex (after_fork_* give it back). */
static __thread int fork_locked __attribute__((tls_model("initial-exec")));
/* Byte 2 of trace2__state.on (bits 16-23 on this little-endian target):
 * ours; bytes 0-1 are the kernel's, never written here. */
static void set_open(int on)
{
	trace2__inproc_call = tr2_inproc_call;
	__atomic_thread_fence(__ATOMIC_RELEASE);   /* the pointer, then the byte */
	((volatile uint8_t *)&trace2__state.on)[2] = (uint8_t)on;
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* git's warning(): "warning: <msg>" on stderr, one write. */
static void git_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void git_warning(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	memcpy(line, "warning: ", 9);
	va_start(ap, fmt);
	n = vsnprintf(line + 9, sizeof(line) - 10, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = 9 + (n < (int)sizeof(line) - 10 ? n : (int)sizeof(line) - 11);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/* ---- writing ---- */

/* Writes ev to target tg; for a FIFO with SIGPIPE blocked (git ignores
 * SIGPIPE around its write), taking back a SIGPIPE this write raised. */
static int emit_to(struct target *tg, const struct tr2_ev *ev)
{
	sigset_t pipe_set, old, pending;
	int rc, e, was_pending;

	if (!tg->pipe)
		return tr2_target_emit(&tg->t, ev);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	was_pending = !sigpending(&pending) && sigismember(&pending, SIGPIPE);
	rc = tr2_target_emit(&tg->t, ev);
	e = errno;
	if (rc && e == EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return rc;
}

/* Writes target tg's batch; false when the write failed. */
static bool flush_batch(struct target *tg)
{
	return !tg->batch || !tr2_dst_flush(tg->t.dst);
}

/* A failed write: git's tr2_dst_write_line disables the target. */
static void target_failed(struct target *tg)
{
	if (proc.debug)
		git_warning("unable to write trace to '%s': %s", tg->var, strerror(errno));
	tg->dead = true;
	if (!--proc.live)
		set_open(0);
}

/* The events whose lines may wait in a batch: the ones a program makes by
 * the thousand.  Any other event writes the batch out with its own line. */
static bool batched_kind(enum tr2_ev_kind kind)
{
	return kind == TR2_EV_REGION_ENTER || kind == TR2_EV_REGION_LEAVE || kind == TR2_EV_DATA ||
	       kind == TR2_EV_DATA_JSON || kind == TR2_EV_PRINTF;
}

/* Writes ev, made at time now, to every live target; the caller holds the
 * mutex.  A batching target's batch goes out when it reaches BATCH_BYTES,
 * when its first line is BATCH_NS old, and with every event but those of
 * batched_kind(). */
static void emit_locked(const struct tr2_ev *ev, uint64_t now)
{
	for (int i = 0; i < proc.ntargets; i++) {
		struct target *tg = &proc.targets[i];
		struct tr2_buf *batch;
		size_t before;

		if (tg->dead)
			continue;
		batch = tg->batch ? tr2_dst_buffer(tg->t.dst) : NULL;
		before = batch ? batch->len : 0;
		if (emit_to(tg, ev)) {
			target_failed(tg);
			continue;
		}
		if (!batch)
			continue;
		if (!before)
			tg->batch_since = now;
		if ((!batched_kind(ev->kind) || batch->len >= BATCH_BYTES || now - tg->batch_since >= BATCH_NS) &&
		    !flush_batch(tg))
			target_failed(tg);
	}
}

/* The model's sink: each event to every target, at the time of the call
 * being written; a cmd_name's hierarchy goes to the children, as git's. */
static void model_emit(void *ctx, uint32_t pid, const struct tr2_ev *ev)
{
	if (ev->kind == TR2_EV_CMD_NAME)
		setenv("GIT_TRACE2_PARENT_NAME", ev->hierarchy, 1);
	emit_locked(ev, proc.now);
}

/* ---- threads ---- */

/* A thread ends without trace2_thread_exit(): its sums still count in the
 * process totals, as tr2-bpf counts them when the thread is gone. */
static void thread_gone(void *arg)
{
	pthread_mutex_lock(&proc.lock);
	tr2_model_thread_gone(proc.model, proc.pid, (uint32_t)(uintptr_t)arg);
	pthread_mutex_unlock(&proc.lock);
	self_tid = 0;
}

/* The calling thread's tid for the model; at its first call (or its first
 * after trace2_thread_exit) the model learns its name and start. */
static uint32_t thread_self_locked(uint64_t now)
{
	struct tr2_thread_info info = { .pid = proc.pid, .proc_start_ns = proc.start_ns,
					.sid = proc.sid, .parent_name = proc.parent_name };

	if (self_tid)
		return self_tid;
	info.tid = tr2_gettid();
	if (info.tid == (uint32_t)getpid())
		info.tid = proc.pid;
	info.thread_start_ns = info.tid == proc.pid ? proc.start_ns : now;
	info.thread_id = trace2__tls.thread_id;
	info.base_name = trace2__tls.base_name;
	tr2_model_thread(proc.model, &info);
	if (proc.have_key)
		pthread_setspecific(proc.key, (void *)(uintptr_t)info.tid);
	return self_tid = info.tid;
}

/* Writes the events of call c (its probe and strings filled in) at time now. */
static void call_event(struct tr2_call *c, uint64_t now)
{
	pthread_mutex_lock(&proc.lock);
	proc.now = now;
	c->pid = proc.pid;
	c->tid = thread_self_locked(now);
	c->ts_ns = now;
	tr2_model_call(proc.model, c);
	pthread_mutex_unlock(&proc.lock);
	if (c->probe == TRACE2__P_atexit) {
		/* git's last event: its targets are disabled after it */
		set_open(0);
	} else if (c->probe == TRACE2__P_thread_exit) {
		/* git forgets the thread: a later call starts afresh */
		if (proc.have_key)
			pthread_setspecific(proc.key, NULL);
		self_tid = 0;
	}
}

/* Writes the signal events handlers deferred (see tr2_inproc_call), the
 * ones a handler adds meanwhile too. */
static void drain_deferred(void)
{
	unsigned done = 0;

	for (;;) {
		unsigned n = __atomic_load_n(&deferred_n, __ATOMIC_SEQ_CST);
		struct tr2_call d = { .probe = TRACE2__P_signal };
		uint64_t at;

		if (done == n) {
			/* all written: empty the list, unless one came since */
			if (__atomic_compare_exchange_n(&deferred_n, &n, 0, false, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				return;
			continue;
		}
		d.file = deferred[done].file;
		d.line = deferred[done].line;
		d.code = deferred[done].signo;
		at = deferred[done].ns;
		done++;
		call_event(&d, at);
	}
}

void tr2_inproc_call(struct tr2_call *c)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (busy) {
		/* A signal handler's call on a thread inside this file: it
		 * waits for the interrupted call (whose mutex or state it would
		 * meet half-done) and is written right after it, at its own
		 * time (up to DEFERRED_MAX of them); other calls from handlers
		 * are dropped.  If the handler ends the process (a fatal
		 * signal's default action), the event is lost, with the lines
		 * still in a batch. */
		unsigned n = __atomic_load_n(&deferred_n, __ATOMIC_SEQ_CST);

		if (c->probe == TRACE2__P_signal && n < DEFERRED_MAX) {
			deferred[n] = (struct deferred){ c->file, c->line, c->code, now };
			__atomic_store_n(&deferred_n, n + 1, __ATOMIC_SEQ_CST);
		}
		return;
	}
	busy = 1;
	drain_deferred();
	call_event(c, now);
	drain_deferred();
	busy = 0;
}

/* The formatter's data_json check (formatter/tr2_json.h): simdjson's in
 * tr2-bpf and tr2-fmt, this C twin of it in the runtime. */
bool tr2_json_is_valid(const char *text)
{
	return tr2_json_check(text);
}

/* ---- opening: git's GIT_TRACE2* variables ---- */

/* fork: the mutex is taken around it, so that the child's copy of the state
 * is whole, and batches are written first; not by a thread that forks from
 * a signal handler inside this file (it may hold the mutex already). */
static void before_fork(void)
{
	if (busy)
		return;
	pthread_mutex_lock(&proc.lock);
	fork_locked = 1;
	/* the child must not inherit lines it would write a second time */
	for (int i = 0; i < proc.ntargets; i++)
		if (!proc.targets[i].dead && !flush_batch(&proc.targets[i]))
			target_failed(&proc.targets[i]);
}

static void after_fork(void)
{
	if (fork_locked) {
		fork_locked = 0;
		pthread_mutex_unlock(&proc.lock);
	}
}

/* Every target writes each line at once from now on. */
static void stop_batching(void)
{
	for (int i = 0; i < proc.ntargets; i++)
		if (proc.targets[i].batch) {
			tr2_dst_set_buffered(proc.targets[i].t.dst, false);
			proc.targets[i].batch = false;
		}
}

/* A child forked without exec writes each line at once: it may well leave
 * by _exit(), which would lose a batch. */
static void after_fork_child(void)
{
	stop_batching();
	after_fork();
}

/* The process's own session id, made once (at the first target that
 * opens, or for the warning of a directory target that does not), under
 * GIT_TRACE2_PARENT_SID as git's tr2_sid.c makes it; the model and tr2-bpf
 * take it as the program's own (trace2__set_sid). */
static void make_own_sid(void)
{
	const char *parent = getenv("GIT_TRACE2_PARENT_SID");
	char host[16];
	size_t n;

	if (proc.sid)
		return;
	tr2_sid_host(host, sizeof(host));
	n = tr2_sid_format(NULL, 0, parent, proc.real_start_us, host, (uint32_t)getpid()) + 1;
	proc.sid = xrealloc(NULL, n);
	tr2_sid_format(proc.sid, n, parent, proc.real_start_us, host, (uint32_t)getpid());
}

/* The value of an integer variable, git's way: atoi of a non-empty value,
 * -1 when unset or empty. */
static int env_int(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : -1;
}

/* Opens the target that variable var asks for, as git's tr2_dst_get_trace_fd
 * does, with git's warnings: an unknown value always, the others with
 * GIT_TRACE2_DST_DEBUG. */
static void open_target(const char *var, const char *brief_var, const struct tr2_tgt *tgt)
{
	const char *value = getenv(var), *brief = getenv(brief_var), *socket_path = NULL;
	struct tr2_tgt_opts opts = { 0 };
	struct target *tg = &proc.targets[proc.ntargets];
	struct tr2_dst *d = NULL;
	char fd_value[2] = "2";
	struct stat st;
	bool pipe = false, batch = false;
	int fd = -1, e, b;

	switch (tr2_sysenv_target(value, &fd, &socket_path)) {
	case TR2_SYSENV_OFF:
		return;
	case TR2_SYSENV_UNKNOWN:
		git_warning("trace2: unknown value for '%s': '%s'", var, value);
		return;
	case TR2_SYSENV_BAD_SOCKET:
		if (proc.debug)
			git_warning("trace2: invalid AF_UNIX value '%s' for '%s' tracing", value, var);
		return;
	case TR2_SYSENV_BAD_SOCKET_PATH:
		if (proc.debug)
			git_warning("trace2: invalid AF_UNIX path '%s' for '%s' tracing", socket_path, var);
		return;
	case TR2_SYSENV_FD:
		/* git writes to it and disables the target at the first failure */
		if (fstat(fd, &st)) {
			if (proc.debug)
				git_warning("unable to write trace to '%s': %s", var, strerror(errno));
			return;
		}
		pipe = S_ISFIFO(st.st_mode);
		fd_value[0] = (char)('0' + fd);
		d = tr2_dst_open(fd_value, TR2_DST_MODE_GIT, NULL, 0);
		break;
	case TR2_SYSENV_PATH:
		d = tr2_dst_open(value, TR2_DST_MODE_GIT, NULL, 0);
		e = errno;
		if (d) {
			pipe = !stat(value, &st) && S_ISFIFO(st.st_mode);
			batch = !pipe && S_ISREG(st.st_mode);
		} else if (proc.debug) {
			/* git names the file it could not create in a directory */
			bool dir = !stat(value, &st) && S_ISDIR(st.st_mode);
			const char *own;

			make_own_sid();
			own = strrchr(proc.sid, '/');
			own = own ? own + 1 : proc.sid;
			git_warning("trace2: could not open '%s%s%s' for '%s' tracing: %s", value,
				    dir && value[strlen(value) - 1] != '/' ? "/" : "", dir ? own : "", var,
				    strerror(e));
		}
		break;
	case TR2_SYSENV_AF_UNIX:
		d = tr2_dst_open(value, TR2_DST_MODE_GIT, NULL, 0);
		if (!d && proc.debug)
			git_warning("trace2: could not connect to socket '%s' for '%s' tracing: %s",
				    socket_path, var, strerror(errno));
		break;
	}
	if (!d)
		return;
	tr2_dst_set_quiet(d, true);
	tr2_dst_set_max_files(d, env_int("GIT_TRACE2_MAX_FILES"));
	if (brief && *brief && (b = tr2_sysenv_bool(brief)) != -1)
		opts.brief = b;
	if (tgt == &tr2_tgt_event && env_int("GIT_TRACE2_EVENT_NESTING") > 0)
		opts.event_nesting = env_int("GIT_TRACE2_EVENT_NESTING");
	tr2_target_init(&tg->t, tgt, &opts, d);
	tr2_dst_set_buffered(d, batch);
	tg->var = var;
	tg->pipe = pipe;
	tg->batch = batch;
	proc.ntargets++;
	proc.live++;
}

int tr2_inproc_init(void)
{
	static const char *const vars[] = { "GIT_TRACE2", "GIT_TRACE2_PERF", "GIT_TRACE2_EVENT" };
	uint64_t real_ns, mono_ns;
	char host[16];
	int any = 0;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		any |= tr2_sysenv_target(getenv(vars[i]), &(int){ 0 }, NULL) != TR2_SYSENV_OFF;
	if (!any)
		return 0;   /* nothing set: nothing opened, allocated or set */

	proc.debug = env_int("GIT_TRACE2_DST_DEBUG") > 0;
	mono_ns = clock_ns(CLOCK_MONOTONIC);
	real_ns = clock_ns(CLOCK_REALTIME);
	proc.start_ns = mono_ns;
	proc.real_start_us = (int64_t)(real_ns / 1000);
	proc.pid = (uint32_t)getpid();

	/* git's order: NORMAL, PERF, EVENT */
	open_target("GIT_TRACE2", "GIT_TRACE2_BRIEF", &tr2_tgt_normal);
	open_target("GIT_TRACE2_PERF", "GIT_TRACE2_PERF_BRIEF", &tr2_tgt_perf);
	open_target("GIT_TRACE2_EVENT", "GIT_TRACE2_EVENT_BRIEF", &tr2_tgt_event);
	if (!proc.ntargets) {
		free(proc.sid);
		proc.sid = NULL;
		return 0;
	}
	make_own_sid();
	trace2__set_sid(proc.sid);
	/* Children (git, or another program of ours) nest their sessions in
	 * this one; GIT_TRACE2_PARENT_NAME is set at cmd_name. */
	setenv("GIT_TRACE2_PARENT_SID", proc.sid, 1);
	proc.parent_name = getenv("GIT_TRACE2_PARENT_NAME");
	if (proc.parent_name)
		proc.parent_name = xstrdup(proc.parent_name);
	tr2_sid_host(host, sizeof(host));
	proc.model = tr2_model_new(&(struct tr2_model_sink){ .emit = model_emit }, host,
				   (int64_t)(real_ns - mono_ns));
	/* Without the key, a thread that ends without trace2_thread_exit()
	 * takes its sums and its memory with it; without the fork handlers,
	 * a child could write its parent's batch again: no batches then. */
	proc.have_key = !pthread_key_create(&proc.key, thread_gone);
	if (pthread_atfork(before_fork, after_fork, after_fork_child))
		stop_batching();
	set_open(1);
	return proc.ntargets;
}
