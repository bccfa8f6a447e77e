/* tr2_guard.c: see tr2_guard.h.  The guard is a process rather than a
 * thread of tr2-bpf because a stopped or killed tr2-bpf takes its threads
 * with it, and it lets go with kill(2) because the eBPF side cannot: from a
 * tracepoint a BPF signal goes through one irq_work per CPU, and all but
 * the first of several sent in one run fail (bpf/tr2.bpf.c, `held`). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_guard.h"
#include "tr2_mem.h"
#include "tr2_record.h"
#include "tr2_tracer.h"

int tr2_held_elsewhere(int own_fd, struct other_holds *h, uint32_t pid)
{
	struct bpf_map_info info;
	__u32 id, len;
	__u64 since;
	int fd, found = 0;

	if (!h->own_id) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(own_fd, &info, &len))
			return 0;
		h->own_id = info.id;
	}
	/* map ids only grow: the maps made since the last look */
	while (!bpf_map_get_next_id(h->next_id, &id)) {
		h->next_id = id;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && id != h->own_id && !strcmp(info.name, "held") &&
		    info.type == BPF_MAP_TYPE_HASH && info.key_size == sizeof(__u32) &&
		    info.value_size == sizeof(__u64)) {
			h->ids = tr2_grow(h->ids, h->n, &h->cap, sizeof(*h->ids));
			h->ids[h->n++] = id;
		}
		close(fd);
	}
	for (int i = 0; i < h->n && !found; i++) {
		fd = bpf_map_get_fd_by_id(h->ids[i]);
		if (fd < 0) {   /* that tracer has ended */
			h->ids[i--] = h->ids[--h->n];
			continue;
		}
		found = !bpf_map_lookup_elem(fd, &pid, &since) && since;   /* 0: being let go */
		close(fd);
	}
	return found;
}

/* What the guard keeps of tr2-bpf. */
struct guard {
	pid_t tracer;
	int tracer_fd;        /* a pidfd: readable once tr2-bpf is gone */
	int done_fd;          /* a pipe: readable when tr2-bpf is done (tr2_guard_stop) */
	int held_fd, unserved_fd;
	volatile int *tracer_absent;   /* in the eBPF object's .bss, shared */
	__u32 prog_ids[16];   /* the eBPF programs, gone some time after tr2-bpf */
	int nprogs;
	struct other_holds others;
	uint64_t hold_max_ns;   /* TR2_HOLD_MAX_NS, or the test's TR2_BPF_TEST_HOLD_MAX_MS */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);   /* bpf_ktime_get_ns()'s clock */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One look at `held`: lets go the processes held TR2_HOLD_MAX_NS or longer,
 * or every one when all, and counts them in unserved[0].  Returns how many. */
static unsigned let_go(struct guard *g, int all)
{
	__u32 key, next, *prev = NULL, zero = 0;
	__u64 since, now = mono_ns(), count = 0;
	unsigned n = 0;

	while (!bpf_map_get_next_key(g->held_fd, prev, &next)) {
		key = next;
		prev = &key;
		/* 0: tr2-bpf is letting it go (tr2_tracer.c) */
		if (bpf_map_lookup_elem(g->held_fd, &key, &since) || (!all && (!since || now - since < g->hold_max_ns)))
			continue;
		/* out first: tr2-bpf, which deletes it too, sends its own SIGCONT */
		if (bpf_map_delete_elem(g->held_fd, &key))
			continue;
		if (!tr2_held_elsewhere(g->held_fd, &g->others, key))
			kill((pid_t)key, SIGCONT);
		n++;
	}
	if (n && !bpf_map_lookup_elem(g->unserved_fd, &zero, &count)) {
		count += n;
		bpf_map_update_elem(g->unserved_fd, &zero, &count, BPF_ANY);
	}
	return n;
}

/* Whether every eBPF program of tr2-bpf's object is unloaded. */
static int programs_gone(const struct guard *g)
{
	for (int i = 0; i < g->nprogs; i++) {
		int fd = bpf_prog_get_fd_by_id(g->prog_ids[i]);

		if (fd >= 0 || errno != ENOENT) {
			if (fd >= 0)
				close(fd);
			return 0;
		}
	}
	return 1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static _Noreturn void guard_run(struct guard *g)
{
	for (;;) {
		struct pollfd fds[2] = { { .fd = g->tracer_fd, .events = POLLIN }, { .fd = g->done_fd, .events = POLLIN } };
		__u32 key;
		char st;

		if (poll(fds, 2, TR2_GUARD_POLL_MS) > 0) {
			if (fds[1].revents & POLLIN && read(g->done_fd, &st, 1) == 1)
				_exit(0);   /* tr2-bpf has detached and served every hold */
			break;
		}
		if (bpf_map_get_next_key(g->held_fd, NULL, &key))
			continue;   /* none held: the usual case */
		st = tr2_state_letter(g->tracer, g->tracer);
		if (let_go(g, st == 'T' || st == 't') && st != 'T' && st != 't')
			*g->tracer_absent = 1;   /* alive, not serving: hold no one until it does */
	}
	/* tr2-bpf is gone.  Its programs go when the kernel has closed its
	 * files; a run that began before may still be holding a process:
	 * wait for them to be unloaded, then for a grace period (membarrier's
	 * GLOBAL command is synchronize_rcu(), which outlasts every tracepoint
	 * program run that began before it), then let go whoever is held. */
	for (int ms = 0; ms < 5000 && !programs_gone(g); ms += 10)
		sleep_ms(10);
	syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	let_go(g, 1);
	sleep_ms(20);   /* a stop still on its way (an irq_work) */
	let_go(g, 1);
	_exit(0);
}

/* In the guard: keeps fds keep[0..n) as 3, 4, ...; closes every other one
 * (the BPF links among them: they must go with tr2-bpf); 0-2 on /dev/null
 * (a pipe tr2-bpf writes to must see its end when tr2-bpf ends).  tr2-bpf
 * has few fds yet: the ones kept move above them, at 1000. */
static void keep_only(int *keep, int n)
{
	int null;

	for (int i = 0; i < n; i++)
		keep[i] = fcntl(keep[i], F_DUPFD, 1000 + i);
	syscall(SYS_close_range, 3, 999, 0);
	for (int i = 0; i < n; i++) {
		dup2(keep[i], 3 + i);
		keep[i] = 3 + i;
	}
	syscall(SYS_close_range, 3 + n, ~0U, 0);
	null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		if (fd != null)
			dup2(null, fd);
	if (null > 2)
		close(null);
}

static pid_t guard_pid;
static int guard_done_fd = -1;   /* tr2-bpf's end of the done pipe */

int tr2_guard_start(struct tr2_bpf *skel)
{
	struct guard g = { .tracer = getpid(), .hold_max_ns = TR2_HOLD_MAX_NS };
	struct bpf_program *prog;
	int done[2];

	/* The suites in emulated guests (tests/lib.sh slow), where attaching
	 * takes ten times as long, scale the bound with the rest. */
	if (getenv("TR2_BPF_TEST_HOLD_MAX_MS"))
		g.hold_max_ns = strtoull(getenv("TR2_BPF_TEST_HOLD_MAX_MS"), NULL, 10) * 1000000u;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) < 0 || g.nprogs == (int)(sizeof(g.prog_ids) / sizeof(g.prog_ids[0])))
			continue;
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			return -1;
		g.prog_ids[g.nprogs++] = info.id;
	}
	g.tracer_fd = (int)syscall(SYS_pidfd_open, g.tracer, 0);
	if (g.tracer_fd < 0)
		return -1;
	if (pipe2(done, O_CLOEXEC)) {
		close(g.tracer_fd);
		return -1;
	}
	g.tracer_absent = &skel->bss->tracer_absent;
	guard_pid = fork();
	if (guard_pid == 0) {
		/* In a session of its own: timeout(1) and the terminal signal
		 * tr2-bpf's process group, not the guard. */
		static const int deaf[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };
		int keep[4] = { g.tracer_fd, done[0], bpf_map__fd(skel->maps.held), bpf_map__fd(skel->maps.unserved) };

		setsid();
		keep_only(keep, 4);
		g.tracer_fd = keep[0];
		g.done_fd = keep[1];
		g.held_fd = keep[2];
		g.unserved_fd = keep[3];
		for (size_t i = 0; i < sizeof(deaf) / sizeof(deaf[0]); i++)
			signal(deaf[i], SIG_IGN);
		prctl(PR_SET_NAME, "tr2-guard");
		guard_run(&g);
	}
	close(g.tracer_fd);
	close(done[0]);
	if (guard_pid < 0) {
		close(done[1]);
		return -1;
	}
	guard_done_fd = done[1];
	skel->bss->guard_tgid = guard_pid;   /* -a never holds it */
	return 0;
}

void tr2_guard_stop(void)
{
	int status;

	if (guard_pid <= 0)
		return;
	if (write(guard_done_fd, "", 1) != 1)
		kill(guard_pid, SIGKILL);
	close(guard_done_fd);
	while (waitpid(guard_pid, &status, 0) < 0 && errno == EINTR)
		;
	guard_pid = 0;
}
