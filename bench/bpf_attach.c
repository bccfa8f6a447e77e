/*
 * bpf-attach: loads bench/empty.bpf.o (programs that do nothing), runs CMD,
 * and attaches to CMD one of three ways, to measure what the kernel and the
 * runtime cost before a tracer does any work (BENCHMARKS.md section 2):
 *
 *   bpf-attach [-5] OBJECT.bpf.o -- CMD [ARG...]
 *       as `tr2-bpf -- CMD` does (loader/tr2_attach.c): OBJECT's probe_batch
 *       on the runtime's tr2:batch for every process that maps it (a
 *       uprobe-multi link), and the enable, a perf event on tr2:enable with
 *       its semaphore, inherited by CMD's descendants: the runtime appends
 *       each call to its thread's buffer and traps at each batch; nothing
 *       copies the batches
 *   bpf-attach -e OBJECT.bpf.o -- CMD [ARG...]
 *       the enable alone: the runtime appends, and its batches hit no uprobe
 *   bpf-attach [-5] -s PROBE[,PROBE...] OBJECT.bpf.o -- CMD [ARG...]
 *       OBJECT's program "site" on the public probes trace2:PROBE of CMD's
 *       executable (which carries the runtime: libtr2.a), one perf uprobe
 *       per site for CMD alone with the probe's semaphore as its reference
 *       counter, as bpftrace attaches; no enable: each call of those kinds
 *       enters the runtime and traps there
 *
 *   -5  the uprobes on the 5-byte nop of each site, which tr2-bpf refuses on
 *       this kernel (a child forked after the kernel made it a call
 *       crashes): only for CMDs that never fork
 *
 * CMD must stop itself before its first event (tr2bench -S): bpf-attach
 * attaches while it is stopped, then continues it, and exits with its
 * status.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2_attach.h"
#include "tr2_kernel.h"

#define MAX_SITES 8

struct scan {
	struct tr2_attach *a;
	int payload;          /* 0 with -e */
	int runtimes;
	char err[512];
};

static int fail(const char *what)
{
	fprintf(stderr, "bpf-attach: %s: %s\n", what, strerror(errno));
	return 2;
}

/* For each runtime CMD maps: as tr2-bpf's -- CMD mode (loader/tr2_mode.c). */
static int attach_runtime(void *ctx, struct tr2_object *o, pid_t pid)
{
	struct scan *sc = ctx;

	if (o->old)
		return 0;
	sc->runtimes++;
	if (sc->payload && tr2_attach_payload(sc->a, o, 0, sc->err, sizeof(sc->err)))
		return -1;
	return tr2_attach_enable(sc->a, o, pid, 1, sc->err, sizeof(sc->err));
}

/* -s: prog on each of the comma-separated trace2 probes of pid's executable. */
static int attach_sites(struct bpf_program *prog, pid_t pid, char *probes, int nop5)
{
	char exe[64];
	int n = 0;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	for (char *name = strtok(probes, ","); name; name = strtok(NULL, ",")) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		long off, ref;

		if (tr2_attach_find_probe(exe, "trace2", name, &off, &ref) || !ref) {
			fprintf(stderr, "bpf-attach: no probe trace2:%s with a semaphore in %s\n", name, exe);
			return -1;
		}
		opts.ref_ctr_offset = ref;
		if (++n > MAX_SITES || !bpf_program__attach_uprobe_opts(prog, pid, exe, off + nop5, &opts)) {
			fprintf(stderr, "bpf-attach: trace2:%s: %s\n", name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct scan sc = { .payload = 1 };
	struct bpf_object *obj;
	char *sites = NULL;
	int status, nop5 = 0, opt;
	struct tr2_kernel kernel;
	char err[512];
	pid_t child;

	while ((opt = getopt(argc, argv, "+5es:")) != -1) {
		if (opt == '5')
			nop5 = 1;
		else if (opt == 'e')
			sc.payload = 0;
		else if (opt == 's')
			sites = optarg;
		else
			goto usage;
	}
	if (argc - optind < 3 || strcmp(argv[optind + 1], "--") || (sites && !sc.payload)) {
usage:
		fprintf(stderr, "usage: bpf-attach [-5] [-e | -s PROBE[,PROBE...]] OBJECT.bpf.o -- CMD [ARG...]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[optind], NULL);
	if (!obj)
		return fail(argv[optind]);
	tr2_kernel_probe(&kernel);
	if (sites)
		kernel.uprobe_multi = 0;   /* attach_sites: one perf uprobe per site */
	tr2_attach_prepare(obj, &kernel);
	if (bpf_object__load(obj))
		return fail("failed to load the BPF object");

	argv += optind + 2;
	child = fork();
	if (child < 0)
		return fail("fork");
	if (child == 0) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status)) {
		fprintf(stderr, "bpf-attach: %s did not stop itself\n", argv[0]);
		return 2;
	}
	if (sites) {
		if (attach_sites(bpf_object__find_program_by_name(obj, "site"), child, sites, nop5)) {
			kill(child, SIGKILL);
			return 2;
		}
	} else {
		sc.a = tr2_attach_new(obj, &kernel);
		tr2_attach_set_nop5(sc.a, nop5);
		if (tr2_attach_scan(sc.a, child, attach_runtime, &sc, err, sizeof(err)) || !sc.runtimes) {
			fprintf(stderr, "bpf-attach: not attached: %s\n",
				sc.err[0] ? sc.err : !sc.runtimes ? "no tr2 runtime in CMD" : err);
			kill(child, SIGKILL);
			return 2;
		}
	}
	kill(child, SIGCONT);
	if (waitpid(child, &status, 0) != child)
		return fail("waitpid");
	tr2_attach_free(sc.a);
	bpf_object__close(obj);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
