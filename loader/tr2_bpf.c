/* tr2-bpf: attaches eBPF programs to the trace2 USDT probes of the tr2
 * runtimes that processes map and writes their Trace2 events in git's
 * NORMAL, PERF and EVENT formats (and the views: chrome, folded, summary).
 * The contract (options, summary line, exit status) is
 * ../shared/trace2-api.md §3.  main reads the options (tr2_opts.c), picks
 * the mode (tr2_mode.h: -p, -- CMD, -a), opens, loads and attaches the BPF
 * programs and runs one loop; the trace itself is tr2_tracer.c's. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_attach.h"
#include "tr2_cmd.h"
#include "tr2_kernel.h"
#include "tr2_mode.h"
#include "tr2_ring.h"
#include "tr2_tracer.h"

/* The eBPF side wakes the consumer only when the ring buffer is a quarter
 * full (bpf/tr2.bpf.c, wakeup_bytes); otherwise records wait for this poll
 * timer: the latency of live output. */
#define POLL_MS 20

/* libbpf's messages, shown with -v only. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static int has_format(const struct tr2_opts *o, int fmt)
{
	for (int i = 0; i < o->nformats; i++)
		if (o->formats[i].fmt == fmt)
			return 1;
	return 0;
}

/* Before the load: what the eBPF side reads as constants, and the sizes of
 * its maps (what the kernel offers: tr2_kernel_setup). */
static void set_rodata(struct tr2_bpf *skel, const struct tr2_opts *o, const struct tr2_mode *mode,
		       const struct tr2_kernel *k)
{
	struct tr2_kernel test = *k;

	skel->rodata->follow = mode->follow;
	skel->rodata->trace_all = mode->all;
	skel->rodata->narrow_comm = o->ncomms > 0;
	skel->rodata->narrow_uid = o->narrow_uid;
	skel->rodata->uid = o->uid;
	skel->rodata->narrow_cgroup = o->cgroup != NULL;
	skel->rodata->known_per_process = mode->known_per_process;
	skel->rodata->tracer_tgid = getpid();
	skel->rodata->wakeup_bytes = o->ring_bytes / 4;
	bpf_map__set_max_entries(skel->maps.events, o->ring_bytes);
	/* TR2_BPF_TEST_NO_DIRECT=1 takes the path of kernels before 6.16
	 * anywhere (a scratch per CPU), for tests. */
	if (getenv("TR2_BPF_TEST_NO_DIRECT"))
		test.copy_direct = 0;
	tr2_kernel_setup(&test, skel);
	/* where regions' time goes: for the views that show it, and for a
	 * recording, which tr2-fmt may format as any of them later */
	skel->rodata->sched_split = !o->no_split && (o->sum.on || has_format(o, TR2_FMT_CHROME) || o->record);
	skel->rodata->sched_periods = !o->no_split && (has_format(o, TR2_FMT_CHROME) || o->record);
	skel->rodata->sched_early = skel->rodata->sched_split && !mode->follow && !mode->all;   /* -p */
	bpf_program__set_autoload(skel->progs.on_wakeup, skel->rodata->sched_split);
	if (!mode->follow)
		bpf_program__set_autoload(skel->progs.on_fork, false);
}

/* Whether dest, a DEST value (NULL: standard output), writes to the file
 * that standard output is, *out. */
static int on_stdout(const char *dest, const struct stat *out)
{
	struct stat st;

	if (!dest)
		return 1;
	if (dest[0] >= '2' && dest[0] <= '9' && !dest[1] ? fstat(dest[0] - '0', &st) : stat(dest, &st))
		return 0;
	return !S_ISDIR(st.st_mode) && st.st_dev == out->st_dev && st.st_ino == out->st_ino;
}

/* -- CMD: whether CMD's standard output must be tr2-bpf's standard error, so
 * that CMD's output and trace lines do not mix by accident: a format or
 * --summary-json writes to the file standard output is (DEST omitted, or a
 * path or descriptor naming it), and that is no terminal (a file, a pipe to
 * tr2-fmt), where the two would make one stream no reader can take apart. */
static int keep_stdout_for_trace(const struct tr2_opts *o)
{
	struct stat out;
	int shared;

	if (isatty(STDOUT_FILENO) || fstat(STDOUT_FILENO, &out))
		return 0;
	shared = o->sum.json_set && on_stdout(o->sum.json_dest, &out);
	for (int i = 0; i < o->nformats && !shared; i++)
		shared = on_stdout(o->formats[i].dest, &out);
	return shared;
}

/* tr2-bpf keeps descriptors per traced process (a directory DEST's files,
 * -- CMD's late enables): the soft limit up to the hard one, after CMD was
 * forked with the caller's. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	struct tr2_opts opts = { 0 };
	struct tr2_kernel kernel;
	struct tracer tr = { .opts = &opts, .kernel = &kernel };
	int status = 0;
	char err[512];

	tr2_opts_parse(&opts, argc, argv);
	libbpf_set_print(opts.verbose ? libbpf_print : NULL);
	/* CMD first, before anything it must not inherit is opened or set
	 * (tr2_cmd.h); held until the mode starts it. */
	if (opts.cmd) {
		tr.cmd = tr2_cmd_start(opts.cmd, opts.user, keep_stdout_for_trace(&opts), err, sizeof(err));
		if (!tr.cmd)
			tr2_fail("%s", err);
	}
	tr.mode = opts.cmd ? &tr2_mode_cmd : opts.all ? &tr2_mode_all : &tr2_mode_pid;
	raise_nofile();
	tr2_tracer_open_targets(&tr);

	tr.skel = tr2_bpf__open();
	if (!tr.skel)
		tr2_fail("failed to open the BPF object: %s", strerror(errno));
	tr2_kernel_probe(&kernel);
	set_rodata(tr.skel, &opts, tr.mode, &kernel);
	tr2_attach_prepare(tr.skel->obj, &kernel);
	if (tr2_bpf__load(tr.skel)) {
		int e = errno;

		tr2_fail("failed to load the BPF programs: %s%s", strerror(e),
			 e == EPERM ? " (run as root: needs CAP_BPF and CAP_PERFMON)" :
			 e == EACCES ? " (the kernel's verifier refused one; -v shows its log)" : "");
	}
	tr2_tracer_init(&tr);

	/* Until -p or -a has looked at what runs now, a process that runs code
	 * of an object not seen yet is not stopped for it: nothing would serve
	 * the stop before the loop below.  -- CMD traces only CMD, which starts
	 * at the end of its start and is held at its exec as ever. */
	tr.skel->bss->starting = !tr.mode->follow;
	if (tr2_bpf__attach(tr.skel))
		tr2_fail("failed to attach the fork, exec, exit, switch and page fault tracepoints: %s",
			 strerror(errno));
	tr2_kernel_attach(&kernel, tr.skel, opts.verbose);
	tr.nticks = tr2_attach_ticks(tr.skel->progs.on_tick, TR2_TICK_NS, tr.ticks,
				     (int)(sizeof(tr.ticks) / sizeof(tr.ticks[0])), err, sizeof(err));
	if (tr.nticks < 0)
		tr2_fail("%s", err);
	tr.mode->start(&tr);
	tr.skel->bss->starting = 0;
	tr.started_ns = tr2_mono_ns();   /* --duration's */

	for (;;) {
		/* Returns early only when the eBPF side forced a wakeup; then or
		 * after POLL_MS it reads whatever arrived. */
		int r = tr2_ring_poll(tr.ring, POLL_MS);

		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "tr2-bpf: failed to poll the ring buffer: %s\n", strerror(-r));
			status = 1;
			break;
		}
		if (!tr2_tracer_tick(&tr))
			break;
	}
	tr2_tracer_stop(&tr);
	status = tr2_tracer_report(&tr, status);

	tr2_tracer_free(&tr);
	tr2_opts_free(&opts);
	return status;
}
