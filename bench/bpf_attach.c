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
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2_attach.h"

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

/* The file offset of virtual address addr in elf, from its PT_LOAD
 * segments; -1 when none holds it. */
static long file_offset(Elf *elf, GElf_Addr addr)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr < ph.p_vaddr + ph.p_memsz)
			return (long)(addr - ph.p_vaddr + ph.p_offset);
	return -1;
}

/*
 * The site and semaphore file offsets of USDT probe trace2:name in the ELF
 * file path, from its .note.stapsdt notes (desc: pc, base and semaphore
 * addresses, then provider, name and arguments; <sys/sdt.h>).  Returns 0,
 * or -1 when the file has no such probe with a semaphore.
 */
static int find_probe(const char *path, const char *name, long *off, long *ref)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd = open(path, O_RDONLY), found = -1;
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while (found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *sname;
		size_t pos = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(sname = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(sname, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		while (found && data && (pos = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			GElf_Addr pc, sema;

			if (nh.n_type != 3 || nh.n_descsz < 24 + sizeof("trace2") + strlen(name) + 1 ||
			    strcmp(desc + 24, "trace2") || strcmp(desc + 24 + sizeof("trace2"), name))
				continue;
			memcpy(&pc, desc, 8);
			memcpy(&sema, desc + 16, 8);
			*off = file_offset(elf, pc);
			*ref = sema ? file_offset(elf, sema) : -1;
			found = *off < 0 || *ref < 0 ? -1 : 0;
			if (found)
				break;
		}
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
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

		if (find_probe(exe, name, &off, &ref)) {
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
	int status, multi = 0, nop5 = 0, opt;
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
	elf_version(EV_CURRENT);
	obj = bpf_object__open_file(argv[optind], NULL);
	if (!obj)
		return fail(argv[optind]);
	if (!sites)
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
	if (sites) {
		if (attach_sites(bpf_object__find_program_by_name(obj, "site"), child, sites, nop5)) {
			kill(child, SIGKILL);
			return 2;
		}
	} else {
		sc.a = tr2_attach_new(obj, multi);
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
