/*
 * bpf-attach: loads one compiled BPF object of bench/ (empty.bpf.o or a
 * proto-*.bpf.o), runs CMD, attaches the object's probe_event program to
 * CMD's tr2 runtime exactly as `tr2-bpf -- CMD` does (loader/tr2_attach.c):
 * the payload on the runtime's tr2:event site for every process that maps
 * it (a uprobe-multi link, the 1-byte nop unless -5), and the enable, a perf
 * event on tr2:enable with its semaphore, inherited by CMD's descendants.
 * Drains the object's ring buffer "rb" if it has one without formatting
 * anything, and exits with CMD's status.
 *
 *   bpf-attach [-5] [-e] OBJECT.bpf.o -- CMD [ARG...]
 *
 *   -5  the payload uprobe on the 5-byte nop of the site, which tr2-bpf
 *       refuses on this kernel (a child forked after the kernel made it a
 *       call crashes): only for CMDs that never fork
 *   -e  the enable alone, no payload: CMD's trace2 calls run the runtime's
 *       path to the tr2:event site and hit no uprobe
 *
 * CMD must stop itself before its first event (tr2bench -S): bpf-attach
 * attaches while it is stopped, then continues it. Prints "bpf-attach: R
 * records" on stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2_attach.h"

static unsigned long long records;

struct scan {
	struct tr2_attach *a;
	int payload;          /* 0 with -e */
	int runtimes;
	char err[512];
};

static int on_record(void *ctx, void *data, size_t size)
{
	records++;
	return 0;
}

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

int main(int argc, char **argv)
{
	struct ring_buffer *rb = NULL;
	struct scan sc = { .payload = 1 };
	struct bpf_object *obj;
	struct bpf_map *map;
	int status, multi, nop5 = 0, done = 0, opt;
	unsigned char one = 1;
	char err[512];
	pid_t child;

	while ((opt = getopt(argc, argv, "+5e")) != -1) {
		if (opt == '5')
			nop5 = 1;
		else if (opt == 'e')
			sc.payload = 0;
		else
			goto usage;
	}
	if (argc - optind < 3 || strcmp(argv[optind + 1], "--")) {
usage:
		fprintf(stderr, "usage: bpf-attach [-5] [-e] OBJECT.bpf.o -- CMD [ARG...]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[optind], NULL);
	if (!obj)
		return fail(argv[optind]);
	multi = tr2_attach_prepare(obj);
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
	sc.a = tr2_attach_new(obj, multi);
	tr2_attach_set_nop5(sc.a, nop5);
	if (tr2_attach_scan(sc.a, child, attach_runtime, &sc, err, sizeof(err)) || !sc.runtimes) {
		fprintf(stderr, "bpf-attach: not attached: %s\n",
			sc.err[0] ? sc.err : !sc.runtimes ? "no tr2 runtime in CMD" : err);
		kill(child, SIGKILL);
		return 2;
	}
	/* The traced set, as tr2-bpf keeps it (proto-tr2 looks there). */
	map = bpf_object__find_map_by_name(obj, "traced");
	if (map)
		bpf_map_update_elem(bpf_map__fd(map), &child, &one, BPF_ANY);
	map = bpf_object__find_map_by_name(obj, "rb");
	if (map && !(rb = ring_buffer__new(bpf_map__fd(map), on_record, NULL, NULL)))
		return fail("failed to open the ring buffer");
	kill(child, SIGCONT);

	while (!done) {
		if (rb)
			ring_buffer__poll(rb, 10);
		else
			usleep(10000);
		if (waitpid(child, &status, WNOHANG) == child)
			done = 1;
	}
	if (rb)
		ring_buffer__consume(rb);
	fprintf(stderr, "bpf-attach: %llu records\n", records);
	tr2_attach_free(sc.a);
	ring_buffer__free(rb);
	bpf_object__close(obj);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
