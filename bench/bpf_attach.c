/*
 * bpf-attach: loads one compiled BPF object of bench/ (empty.bpf.o or a
 * proto-*.bpf.o), runs CMD, attaches the object's probe_<probe> programs to
 * CMD's trace2 probes exactly as tr2-bpf does (loader/tr2_attach.c:
 * uprobe-multi links, the 5-byte nop), drains its ring buffer "rb" if it has
 * one without formatting anything, and exits with CMD's status.
 *
 *   bpf-attach OBJECT.bpf.o -- CMD [ARG...]
 *
 * CMD must stop itself before its first probe (tr2bench -S): bpf-attach
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

int main(int argc, char **argv)
{
	struct ring_buffer *rb = NULL;
	struct tr2_attach *a;
	struct bpf_object *obj;
	struct bpf_map *map;
	int status, multi, done = 0;
	unsigned char one = 1;
	char err[512];
	pid_t child;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: bpf-attach OBJECT.bpf.o -- CMD [ARG...]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj)
		return fail(argv[1]);
	multi = tr2_attach_prepare(obj);
	if (bpf_object__load(obj))
		return fail("failed to load the BPF object");

	child = fork();
	if (child < 0)
		return fail("fork");
	if (child == 0) {
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		_exit(127);
	}
	if (waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status)) {
		fprintf(stderr, "bpf-attach: %s did not stop itself\n", argv[3]);
		return 2;
	}
	/* pid -1 and the traced set, as tr2-bpf -- CMD does. */
	a = tr2_attach_new(obj, -1, multi);
	if (tr2_attach_process(a, child, err, sizeof(err)) <= 0) {
		fprintf(stderr, "bpf-attach: no trace2 probes attached: %s\n", err);
		kill(child, SIGKILL);
		return 2;
	}
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
	tr2_attach_free(a);
	ring_buffer__free(rb);
	bpf_object__close(obj);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
