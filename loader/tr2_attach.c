/* tr2_attach.c: see tr2_attach.h.
 *
 * The payload is attached as libbpf's USDT support would, but by tr2-bpf
 * itself, for two reasons:
 *  - one uprobe-multi link per (object, probe) instead of one perf event per
 *    site: closing a perf uprobe waits for an RCU grace period under a
 *    global mutex (~0.1 s each here); a multi link detaches with one wait;
 *  - the semaphores: tr2-bpf raises none of the trace2 probes' own (those
 *    are other tracers'), only tr2:enable's, and only where it traces.
 * The eBPF side keeps libbpf's usdt.bpf.h spec map (__bpf_usdt_specs) and
 * argument specs: this file fills the map and passes the spec id as the BPF
 * cookie, as libbpf does, in the cookie's lower 32 bits, which is all
 * usdt.bpf.h's bpf_usdt_arg() reads.  The upper 32 bits number the probe
 * site, from 1, never reused in one run (bpf/tr2.bpf.c keys call sites by it).
 *
 * The enable is a perf event on the tr2:enable site with its semaphore, of
 * the kernel's "uprobe" PMU for one process or every process, and of a
 * tracefs uprobe event where it must follow a process's descendants
 * (attr.inherit): an inherited event of the "uprobe" PMU re-reads its path
 * from the forking process's memory, and fork() fails with EFAULT (measured
 * on Linux 6.18), where a tracefs event is copied by its id.
 *
 * Every object is opened through /proc/PID/map_files, so that the bytes read
 * and the file probed are the ones the process maps, whatever its paths say;
 * the kernel is handed /proc/self/fd/N, never a path read from a process.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/mount.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2_attach.h"
#include "tr2_kernel.h"
#include "tr2_mem.h"
#include "tr2_record.h"

#define MAX_ARGS 12          /* BPF_USDT_MAX_ARG_CNT of usdt.bpf.h */
#define MAX_SPECS 4096       /* BPF_USDT_MAX_SPEC_CNT in bpf/tr2.bpf.c */

/* Kernel ABI (include/uapi/linux/bpf.h, Linux 6.6+); Debian 12's headers
 * predate it. */
#define TR2_BPF_TRACE_UPROBE_MULTI 48
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	char pad[128 - 60];  /* the rest of union bpf_attr, zeroed */
};

/* The "uprobe" PMU's config: the semaphore's file offset above this bit
 * (kernel/events/core.c, PERF_UPROBE_REF_CTR_OFFSET_SHIFT). */
#define UPROBE_REF_CTR_SHIFT 32

/* The layout of libbpf's usdt.bpf.h spec map value (struct __bpf_usdt_spec). */
enum { ARG_CONST, ARG_REG, ARG_REG_DEREF };
struct arg_spec {
	__u64 val_off;
	int arg_type;
	short reg_off;
	bool arg_signed;
	char arg_bitshift;
};
struct usdt_spec {
	struct arg_spec args[MAX_ARGS];
	__u64 usdt_cookie;
	short arg_cnt;
};

/* One probe site of an object file. */
struct site {
	char name[32];
	unsigned long offset;      /* file offset of its 1-byte nop */
	/* tr2:batch only: */
	int pair;                  /* the 1-byte nop is followed by a 5-byte nop */
	int in_regs;               /* its arguments are "8@%rdi 8@%rsi" (see probe_batch) */
	int spec_id;
	__u32 number;              /* the probe site's number (see above) */
};

/* What tr2-bpf keeps of an object looked at. */
struct object {
	struct tr2_object pub;
	int fd;                    /* open while it has a runtime: the kernel gets /proc/self/fd/N */
	struct site *sites;
	int nsites;
	unsigned long enable_off, enable_ref;  /* tr2:enable's site and semaphore, file offsets */
	struct site batch;         /* tr2:batch, the payload site of every kind */
	int tracefs_id;            /* its tracefs event for inherited enables, 0 until made */
};

struct tr2_attach {
	struct bpf_object *obj;
	int multi;                 /* uprobe-multi links (Linux 6.6+) */
	int cookies;               /* BPF cookies (Linux 5.15+): the spec id of each site */
	int sample_read;           /* inherited enables with PERF_SAMPLE_READ (Linux 6.12+), else anchors */
	int nop5;                  /* payload uprobes on the 5-byte nop of each pair */
	int spec_map_fd;
	int known_map_fd;          /* the eBPF side's "known" objects, or -1 */
	int known_per_process;     /* see tr2_attach_set_known_per_process */
	struct usdt_spec *specs;
	int nspecs;
	struct object **objects;   /* looked at, with or without a runtime */
	int nobjects, cap_objects;
	struct bpf_link **links;   /* fallback: one perf uprobe per site */
	int nlinks, cap_links;
	/* Closed at the end, the enables first: a semaphore up while the
	 * payload site has no program any more has threads fill their buffers
	 * with calls no one copies (they wrap, and are lost). */
	struct fds {
		int *fd;
		int n, cap;
	} enables, payloads;       /* tr2:enable's perf events; tr2:batch's multi links */
	struct anchor {
		pid_t pid;
		int fd;
	} *anchors;                /* see tr2_attach_anchor; closed with the enables */
	int nanchors, cap_anchors;
	__u32 site_numbers;        /* probe site numbers given out */
	int uprobe_pmu;            /* the "uprobe" PMU's perf type, 0 until read */
	int tracefs;               /* tracefs (see open_tracefs), -1 until needed */
	int events_fd;             /* its uprobe_events, -1 until needed */
	int tracefs_events;        /* tracefs events made (see event_name) */
	unsigned event_tag;        /* in the names of this tr2-bpf's tracefs events */
};

void tr2_attach_prepare(struct bpf_object *obj, const struct tr2_kernel *k)
{
	struct bpf_program *prog;

	if (!k->uprobe_multi)
		return;
	bpf_object__for_each_program(prog, obj)
		if (!strncmp(bpf_program__name(prog), "probe_", 6))
			bpf_program__set_expected_attach_type(prog, TR2_BPF_TRACE_UPROBE_MULTI);
}

struct tr2_attach *tr2_attach_new(struct bpf_object *obj, const struct tr2_kernel *k)
{
	struct tr2_attach *a = calloc(1, sizeof(*a));
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "__bpf_usdt_specs");

	if (!a)
		abort();
	elf_version(EV_CURRENT);
	a->obj = obj;
	a->multi = k->uprobe_multi;
	a->cookies = k->attach_cookie;
	a->sample_read = k->sample_read_inherit;
	a->tracefs = a->events_fd = -1;
	if (getrandom(&a->event_tag, sizeof(a->event_tag), 0) != sizeof(a->event_tag))
		a->event_tag = (unsigned)getpid() ^ (unsigned)time(NULL);
	a->spec_map_fd = map && bpf_map__value_size(map) == sizeof(struct usdt_spec) ? bpf_map__fd(map) : -1;
	map = bpf_object__find_map_by_name(obj, "known");
	a->known_map_fd = map ? bpf_map__fd(map) : -1;
	return a;
}

int tr2_attach_multi(const struct tr2_attach *a)
{
	return a->multi;
}

int tr2_attach_uses_nop5(const struct tr2_attach *a)
{
	return a->nop5;
}

void tr2_attach_set_nop5(struct tr2_attach *a, int nop5)
{
	a->nop5 = nop5;
}

static void keep_fd(struct fds *f, int fd)
{
	f->fd = tr2_grow(f->fd, f->n, &f->cap, sizeof(int));
	f->fd[f->n++] = fd;
}

/* struct pt_regs (x86-64) offsets of the registers USDT arguments name. */
static int reg_offset(const char *r)
{
	static const struct {
		const char *names[4];
		short off;
	} regs[] = {
		{ { "rax", "eax", "ax", "al" }, 80 },  { { "rbx", "ebx", "bx", "bl" }, 40 },
		{ { "rcx", "ecx", "cx", "cl" }, 88 },  { { "rdx", "edx", "dx", "dl" }, 96 },
		{ { "rsi", "esi", "si", "sil" }, 104 }, { { "rdi", "edi", "di", "dil" }, 112 },
		{ { "rbp", "ebp", "bp", "bpl" }, 32 }, { { "rsp", "esp", "sp", "spl" }, 152 },
		{ { "r8", "r8d", "r8w", "r8b" }, 72 },  { { "r9", "r9d", "r9w", "r9b" }, 64 },
		{ { "r10", "r10d", "r10w", "r10b" }, 56 }, { { "r11", "r11d", "r11w", "r11b" }, 48 },
		{ { "r12", "r12d", "r12w", "r12b" }, 24 }, { { "r13", "r13d", "r13w", "r13b" }, 16 },
		{ { "r14", "r14d", "r14w", "r14b" }, 8 },  { { "r15", "r15d", "r15w", "r15b" }, 0 },
	};

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int j = 0; j < 4; j++)
			if (!strcmp(r, regs[i].names[j]))
				return regs[i].off;
	return -1;
}

/* Parses one argument of a stapsdt note, "SIZE@LOCATION" with LOCATION one of
 * %reg, $imm, off(%reg), (%reg) (systemtap's sdt.h, GNU as syntax). */
static int parse_arg(const char *s, struct arg_spec *out)
{
	char reg[16];
	long long imm;
	long off = 0;
	int size, n;

	if (sscanf(s, "%d@%n", &size, &n) != 1 || !size || abs(size) > 8)
		return -1;
	s += n;
	memset(out, 0, sizeof(*out));
	out->arg_signed = size < 0;
	out->arg_bitshift = 64 - 8 * abs(size);
	if (sscanf(s, "$%lld%n", &imm, &n) == 1 && !s[n]) {
		out->arg_type = ARG_CONST;
		out->val_off = imm;
	} else if (sscanf(s, "%%%15[a-z0-9]%n", reg, &n) == 1 && !s[n]) {
		out->arg_type = ARG_REG;
		out->reg_off = reg_offset(reg);
	} else if ((sscanf(s, "%ld(%%%15[a-z0-9])%n", &off, reg, &n) == 2 ||
		    (off = 0, sscanf(s, "(%%%15[a-z0-9])%n", reg, &n) == 1)) && !s[n]) {
		out->arg_type = ARG_REG_DEREF;
		out->reg_off = reg_offset(reg);
		out->val_off = off;
	} else {
		return -1;
	}
	return out->arg_type != ARG_CONST && out->reg_off < 0 ? -1 : 0;
}

/* The spec id of an argument list, added to the spec map when new. */
static int spec_id(struct tr2_attach *a, const char *args)
{
	struct usdt_spec spec;
	char buf[512], *save = NULL, *tok;

	memset(&spec, 0, sizeof(spec));
	snprintf(buf, sizeof(buf), "%s", args);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (spec.arg_cnt == MAX_ARGS || parse_arg(tok, &spec.args[spec.arg_cnt]))
			return -1;
		spec.arg_cnt++;
	}
	for (int i = 0; i < a->nspecs; i++)
		if (!memcmp(&a->specs[i], &spec, sizeof(spec)))
			return i;
	if (a->nspecs == MAX_SPECS || a->spec_map_fd < 0)
		return -1;
	if (!a->specs)
		a->specs = calloc(MAX_SPECS, sizeof(*a->specs));
	if (!a->specs)
		abort();
	if (bpf_map_update_elem(a->spec_map_fd, &a->nspecs, &spec, BPF_ANY))
		return -1;
	a->specs[a->nspecs] = spec;
	return a->nspecs++;
}

/* File offset of virtual address addr, from the program headers. */
static long vaddr_to_offset(Elf *elf, GElf_Addr addr)
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

/* A USDT probe of a .note.stapsdt note: its strings (in the note) and the
 * file offsets of its site and of its semaphore (0: none). */
struct note_probe {
	const char *prov, *name, *args;
	long pc_off, sema_off;
};

/*
 * Calls fn(ctx, &p) for each probe of the "trace2" and "tr2" providers in
 * the ELF file open as fd, from its .note.stapsdt notes (owner "stapsdt",
 * type 3: pc, base and semaphore addresses, then provider, name and
 * argument strings; systemtap's sdt.h), until fn returns nonzero.  Returns
 * fn's last return, 0 also for a file that is no ELF or has no notes, or -1
 * with err set when a probe's address lies outside the file.
 */
static int each_probe(int fd, int (*fn)(void *ctx, const struct note_probe *p), void *ctx,
		      const char *file, char *err, size_t errlen)
{
	GElf_Addr base_addr = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int ret = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) ||
	    gelf_getclass(elf) != ELFCLASS64)
		goto out;
	/* .stapsdt.base: where the notes' base address ended up (prelink). */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(sname, ".stapsdt.base"))
			base_addr = sh.sh_addr;
	}
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *sname;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		while (!ret && data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off, *end = desc + nh.n_descsz;
			struct note_probe p = { .prov = desc + 24 };
			GElf_Addr pc, note_base, sema;

			if (nh.n_type != 3 || nh.n_namesz != 8 ||
			    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) || nh.n_descsz < 27)
				continue;
			p.name = memchr(p.prov, '\0', end - p.prov);
			if (!p.name || ++p.name >= end || !(p.args = memchr(p.name, '\0', end - p.name)) ||
			    ++p.args >= end || !memchr(p.args, '\0', end - p.args))
				continue;
			if (strcmp(p.prov, "trace2") && strcmp(p.prov, "tr2"))
				continue;
			memcpy(&pc, desc, 8);
			memcpy(&note_base, desc + 8, 8);
			memcpy(&sema, desc + 16, 8);
			if (base_addr && note_base) {
				pc += base_addr - note_base;
				if (sema)
					sema += base_addr - note_base;
			}
			p.pc_off = vaddr_to_offset(elf, pc);
			if (sema)
				p.sema_off = vaddr_to_offset(elf, sema);
			if (p.pc_off < 0 || p.sema_off < 0) {
				snprintf(err, errlen, "probe %s:%s in %s: address outside the file", p.prov, p.name,
					 file);
				ret = -1;
				break;
			}
			ret = fn(ctx, &p);
		}
	}
out:
	if (elf)
		elf_end(elf);
	return ret;
}

/* What read_probe needs. */
struct reading {
	struct tr2_attach *a;
	int fd;
	struct object *o;
	int cap;           /* of o->sites */
	char *err;
	size_t errlen;
};

/* Into rd->o: a trace2 probe site, tr2:enable or tr2:batch (each_probe's fn). */
static int read_probe(void *ctx, const struct note_probe *p)
{
	struct reading *rd = ctx;
	struct object *o = rd->o;
	unsigned char insn[6] = { 0 };
	struct site *s;

	if (!strcmp(p->prov, "tr2") && !strcmp(p->name, "enable")) {
		o->enable_off = p->pc_off;
		o->enable_ref = p->sema_off;
		return 0;
	}
	if (!strcmp(p->prov, "tr2") && strcmp(p->name, "batch"))
		return 0;   /* a probe of another runtime: leave it */
	if (!strcmp(p->prov, "tr2")) {
		s = &o->batch;
	} else {
		o->sites = tr2_grow(o->sites, o->nsites, &rd->cap, sizeof(*o->sites));
		s = &o->sites[o->nsites++];
	}
	snprintf(s->name, sizeof(s->name), "%s", p->name);
	s->offset = p->pc_off;
	if (s != &o->batch)
		return 0;   /* a trace2 probe: other tracers' */
	s->pair = pread(rd->fd, insn, sizeof(insn), p->pc_off) == sizeof(insn) &&
		  !memcmp(insn, "\x90\x0f\x1f\x44\x00\x00", 6);
	s->in_regs = !strcmp(p->args, "8@%rdi 8@%rsi");
	s->spec_id = spec_id(rd->a, p->args);
	s->number = ++rd->a->site_numbers;
	if (s->spec_id < 0) {
		snprintf(rd->err, rd->errlen, "probe %s:%s in %s: cannot read its arguments '%s'", p->prov,
			 p->name, o->pub.name, p->args);
		return -1;
	}
	return 0;
}

/* Reads the probes of the ELF file open as fd into o: the trace2 probe
 * sites, tr2:enable and tr2:batch.  Returns 0 (also for a file that is no
 * ELF, or has no notes), or -1 with err set when a probe cannot be read. */
static int read_probes(struct tr2_attach *a, int fd, struct object *o, char *err, size_t errlen)
{
	struct reading rd = { .a = a, .fd = fd, .o = o, .err = err, .errlen = errlen };
	int ret = each_probe(fd, read_probe, &rd, o->pub.name, err, errlen);

	o->pub.sites = o->nsites;
	o->pub.runtime = o->enable_ref > 0 && o->batch.number;
	return ret;
}

/* What tr2_attach_find_probe looks for, and what it found. */
struct finding {
	const char *prov, *name;
	long site, sema;
};

static int find_probe(void *ctx, const struct note_probe *p)
{
	struct finding *f = ctx;

	if (strcmp(p->prov, f->prov) || strcmp(p->name, f->name))
		return 0;
	f->site = p->pc_off;
	f->sema = p->sema_off;
	return 1;
}

int tr2_attach_find_probe(const char *path, const char *prov, const char *name, long *site, long *sema)
{
	struct finding f = { .prov = prov, .name = name };
	char err[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC), found;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	found = each_probe(fd, find_probe, &f, path, err, sizeof(err)) == 1;
	close(fd);
	*site = f.site;
	*sema = f.sema;
	return found ? 0 : -1;
}

/* A site's BPF cookie; 0 where the kernel has none (probe_batch then reads
 * %rdi and %rsi). */
static __u64 cookie(const struct tr2_attach *a, const struct site *s)
{
	return a->cookies ? (__u64)s->number << 32 | (__u32)s->spec_id : 0;
}

/* /proc/self/fd/N of an object, the path the kernel is handed. */
static void fd_path(const struct object *o, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/fd/%d", o->fd);
}

/* One uprobe-multi link of prog_fd at the n file offsets offs of path, with
 * their semaphores (refs, 0: none; NULL: no semaphores) and BPF cookies,
 * for process pid (0: every process). */
static int link_multi(struct tr2_attach *a, int prog_fd, const char *path, const unsigned long *offs,
		      const unsigned long *refs, const __u64 *cookies, int m, pid_t pid)
{
	struct link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = TR2_BPF_TRACE_UPROBE_MULTI;
	attr.path = (unsigned long)path;
	attr.offsets = (unsigned long)offs;
	attr.ref_ctr_offsets = (unsigned long)refs;
	attr.cookies = (unsigned long)cookies;
	attr.cnt = m;
	attr.pid = pid;
	fd = syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd >= 0)
		keep_fd(&a->payloads, fd);
	return fd < 0 ? -1 : 0;
}

/* One perf uprobe of prog at path's file offset off, with its BPF cookie,
 * for process pid (0: every process): kernels before uprobe-multi links. */
static int link_one(struct tr2_attach *a, struct bpf_program *prog, const char *path, unsigned long off,
		    __u64 bpf_cookie, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = bpf_cookie);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, pid ? pid : -1, path, off, &opts);

	if (!l)
		return -1;
	a->links = tr2_grow(a->links, a->nlinks, &a->cap_links, sizeof(*a->links));
	a->links[a->nlinks++] = l;
	return 0;
}

int tr2_attach_payload(struct tr2_attach *a, struct tr2_object *pub, pid_t pid, char *err, size_t errlen)
{
	struct object *o = (struct object *)pub;
	struct bpf_program *prog = bpf_object__find_program_by_name(a->obj, "probe_batch");
	/* the 5-byte nop of a pair, where chosen (tr2_attach_set_nop5) */
	unsigned long off = o->batch.offset + (a->nop5 && o->batch.pair);
	__u64 bpf_cookie = cookie(a, &o->batch);
	char path[64];
	int r;

	if (!a->cookies && !o->batch.in_regs) {
		snprintf(err, errlen, "cannot attach to probe tr2:batch in %s: without BPF cookies (Linux "
			 "before 5.15) its arguments must be in %%rdi and %%rsi (a runtime built with -O0?)",
			 o->pub.name);
		return -1;
	}
	fd_path(o, path, sizeof(path));
	r = !prog ? -1 : a->multi ? link_multi(a, bpf_program__fd(prog), path, &off, NULL, &bpf_cookie, 1, pid) :
		link_one(a, prog, path, off, bpf_cookie, pid);
	if (r) {
		snprintf(err, errlen, "failed to attach to probe tr2:batch in %s: %s", o->pub.name,
			 strerror(errno));
		return -1;
	}
	if (!pid)
		o->pub.payload_all = 1;
	return 0;
}

/* The "uprobe" PMU's perf event type (sysfs), 0 when there is none. */
static int uprobe_pmu(struct tr2_attach *a)
{
	FILE *f;

	if (a->uprobe_pmu)
		return a->uprobe_pmu;
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (f && fscanf(f, "%d", &a->uprobe_pmu) != 1)
		a->uprobe_pmu = 0;
	if (f)
		fclose(f);
	return a->uprobe_pmu;
}

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A perf event of the "uprobe" PMU on o's tr2:enable, with its semaphore,
 * for (pid, cpu) as perf_event_open(2) takes them. */
static int enable_pmu(struct tr2_attach *a, struct object *o, pid_t pid, int cpu)
{
	struct perf_event_attr attr;
	char path[64];
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = uprobe_pmu(a);
	if (!attr.type) {
		errno = ENOENT;
		return -1;
	}
	fd_path(o, path, sizeof(path));
	attr.config = (__u64)o->enable_ref << UPROBE_REF_CTR_SHIFT;
	attr.uprobe_path = (unsigned long)path;
	attr.probe_offset = o->enable_off;
	attr.disabled = 1;   /* see tr2_attach_enable */
	fd = perf_open(&attr, pid, cpu);
	if (fd >= 0)
		keep_fd(&a->enables, fd);
	return fd;
}

/*
 * tracefs, for the uprobe events of inherited enables, shared by every tracer
 * on the host (one instance: the same uprobe_events wherever it is mounted):
 *  - tr2-bpf mounts nothing where others see it: its own detached mount
 *    (fsopen, fsmount: in no mount namespace, gone with its descriptor), or
 *    where that is refused, a tracefs mounted at its usual places, which it
 *    never unmounts;
 *  - its events are group tr2_<its pid>, event e<n>_<a random tag of this
 *    tr2-bpf>, unique even between tracers in different pid namespaces;
 *  - while it makes an event and opens its perf event, and while it removes
 *    the events of tracers that are gone, it holds an exclusive flock on
 *    uprobe_events, so that a tracer's event is never removed between the
 *    two steps; once a perf event uses it, the kernel refuses to remove it.
 */
static int open_tracefs(struct tr2_attach *a)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	int fs, mnt = -1;

	if (a->tracefs >= 0)
		return 0;
	fs = syscall(SYS_fsopen, "tracefs", FSOPEN_CLOEXEC);
	if (fs >= 0) {
		if (!syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
			mnt = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
		close(fs);
	}
	for (size_t i = 0; mnt < 0 && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		mnt = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (mnt >= 0 && faccessat(mnt, "uprobe_events", W_OK, 0)) {
			close(mnt);
			mnt = -1;
		}
	}
	if (mnt < 0)
		return -1;
	a->events_fd = openat(mnt, "uprobe_events", O_RDWR | O_APPEND | O_CLOEXEC);
	if (a->events_fd < 0) {
		close(mnt);
		return -1;
	}
	a->tracefs = mnt;
	return 0;
}

/* Appends one line to tracefs's uprobe_events (its syntax:
 * Documentation/trace/uprobetracer.rst). */
static int uprobe_events(struct tr2_attach *a, const char *line)
{
	return write(a->events_fd, line, strlen(line)) == (ssize_t)strlen(line) ? 0 : -1;
}

/* Removes the tracefs events of a tr2-bpf that ended without removing its
 * own (killed): groups tr2_<pid> whose pid is no tr2-bpf now.  Such an
 * event does nothing (no perf event uses it), but it keeps its file busy.
 * The kernel refuses to remove an event in use, and the caller holds the
 * flock, so that no tracer's event is taken between its making and use. */
static void remove_stale_events(struct tr2_attach *a)
{
	char path[128], line[512], comm[32];
	int fd = openat(a->tracefs, "uprobe_events", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	while (f && fgets(line, sizeof(line), f)) {
		char event[64], del[96];
		int pid, live = 0;
		FILE *c;

		if (sscanf(line, "p:tr2_%d/%63s", &pid, event) != 2)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if ((c = fopen(path, "re"))) {
			live = fgets(comm, sizeof(comm), c) && !strcmp(comm, "tr2-bpf\n");
			fclose(c);
		}
		if (live)
			continue;
		snprintf(del, sizeof(del), "-:tr2_%d/%s\n", pid, event);
		uprobe_events(a, del);
	}
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
}

/* The name of this tr2-bpf's n-th tracefs event, "tr2_<pid>/e<n>_<tag>". */
static void event_name(const struct tr2_attach *a, int n, char *buf, size_t size)
{
	snprintf(buf, size, "tr2_%d/e%d_%08x", (int)getpid(), n, a->event_tag);
}

/* perf_event_open(2) of an enable for process pid, inherited (what it
 * forks from now on has it too) or not; an inherited one with
 * PERF_SAMPLE_READ where the kernel has what that does (Linux 6.12+; see
 * tr2_attach_enable in tr2_attach.h for why). */
static int perf_open_enable(struct tr2_attach *a, struct perf_event_attr *attr, pid_t pid, int inherit)
{
	attr->inherit = inherit;
	attr->sample_type = inherit && a->sample_read ? PERF_SAMPLE_READ | PERF_SAMPLE_TID : 0;
	return perf_open(attr, pid, -1);
}

/* A perf event of the tracefs event on o's tr2:enable, with its semaphore,
 * for process pid, and what it forks from now on when inherit is 1; the
 * event is made at the first call.  Returns the perf event's descriptor, or
 * -1 with errno set. */
static int enable_tracefs(struct tr2_attach *a, struct object *o, pid_t pid, int inherit)
{
	struct perf_event_attr attr;
	char line[256], name[64], path[128];
	int made = 0, fd = -1, id_fd, e;
	FILE *f = NULL;

	if (open_tracefs(a))
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.disabled = 1;   /* see tr2_attach_enable */
	if (o->tracefs_id) {
		attr.config = o->tracefs_id;
		return perf_open_enable(a, &attr, pid, inherit);
	}
	flock(a->events_fd, LOCK_EX);
	if (!a->tracefs_events)
		remove_stale_events(a);
	event_name(a, a->tracefs_events + 1, name, sizeof(name));
	snprintf(line, sizeof(line), "p:%s /proc/%d/fd/%d:0x%lx(0x%lx)\n", name, (int)getpid(), o->fd,
		 o->enable_off, o->enable_ref);
	if (!uprobe_events(a, line)) {
		made = ++a->tracefs_events;
		snprintf(path, sizeof(path), "events/%s/id", name);
		id_fd = openat(a->tracefs, path, O_RDONLY | O_CLOEXEC);
		if (id_fd >= 0 && !(f = fdopen(id_fd, "re")))
			close(id_fd);
		if (f && fscanf(f, "%llu", &attr.config) == 1 && attr.config > 0)
			fd = perf_open_enable(a, &attr, pid, inherit);
		else
			errno = ENOENT;
		if (f)
			fclose(f);
	}
	e = errno;
	if (fd >= 0) {
		o->tracefs_id = attr.config;
	} else if (made) {
		/* unused, it could be taken by another tracer's clean-up */
		snprintf(line, sizeof(line), "-:%s\n", name);
		uprobe_events(a, line);
	}
	flock(a->events_fd, LOCK_UN);
	errno = e;
	return fd;
}

int tr2_attach_enable(struct tr2_attach *a, struct tr2_object *pub, pid_t pid, int inherit,
		      char *err, size_t errlen)
{
	struct object *o = (struct object *)pub;
	int fd;

	if (!inherit) {
		fd = enable_pmu(a, o, pid, -1);
	} else {
		fd = enable_tracefs(a, o, pid, 1);
		if (fd >= 0)
			keep_fd(&a->enables, fd);
	}
	if (fd < 0 && errno != ESRCH) {
		snprintf(err, errlen, "failed to attach to probe tr2:enable in %s for process %d: %s%s",
			 o->pub.name, (int)pid, strerror(errno),
			 inherit ? " (a tracefs uprobe event, which follows its descendants)" : "");
		return -1;
	}
	return 0;   /* a process already gone needs nothing */
}

int tr2_attach_anchored(const struct tr2_attach *a)
{
	return !a->sample_read;
}

int tr2_attach_anchor(struct tr2_attach *a, struct tr2_object *pub, pid_t pid)
{
	int fd = enable_tracefs(a, (struct object *)pub, pid, 0);

	if (fd < 0)
		return -1;
	a->anchors = tr2_grow(a->anchors, a->nanchors, &a->cap_anchors, sizeof(*a->anchors));
	a->anchors[a->nanchors].pid = pid;
	a->anchors[a->nanchors++].fd = fd;
	return 0;
}

void tr2_attach_unanchor(struct tr2_attach *a, pid_t pid)
{
	for (int i = 0; i < a->nanchors; i++)
		if (a->anchors[i].pid == pid) {
			close(a->anchors[i].fd);
			a->anchors[i--] = a->anchors[--a->nanchors];
		}
}

int tr2_attach_enable_all(struct tr2_attach *a, struct tr2_object *pub, char *err, size_t errlen)
{
	struct object *o = (struct object *)pub;
	int ncpu = libbpf_num_possible_cpus();

	for (int cpu = 0; cpu < ncpu; cpu++)
		if (enable_pmu(a, o, -1, cpu) < 0 && errno != ENODEV) {
			snprintf(err, errlen, "failed to attach to probe tr2:enable in %s: %s", o->pub.name,
				 strerror(errno));
			return -1;
		}
	o->pub.enable_all = 1;
	return 0;
}

static struct object *find_object(struct tr2_attach *a, uint64_t dev, uint64_t ino)
{
	for (int i = 0; i < a->nobjects; i++)
		if (a->objects[i]->pub.dev == dev && a->objects[i]->pub.ino == ino)
			return a->objects[i];
	return NULL;
}

void tr2_attach_known(struct tr2_attach *a, uint64_t dev, uint64_t ino, pid_t pid)
{
	struct tr2_object_key key = { .dev = dev, .ino = ino, .pid = a->known_per_process ? pid : 0 };
	__u8 one = 1;

	if (a->known_map_fd >= 0)
		bpf_map_update_elem(a->known_map_fd, &key, &one, BPF_ANY);
}

void tr2_attach_set_known_per_process(struct tr2_attach *a, int per_process)
{
	a->known_per_process = per_process;
}

/* The object mapped at start-end in process pid, looked at now if it was
 * not before; NULL when it is no regular file or is gone. */
static struct object *object_at(struct tr2_attach *a, pid_t pid, unsigned long start, unsigned long end,
				const char *name, char *err, size_t errlen, int *failed)
{
	char path[96];
	struct object *o;
	struct stat st;
	uint64_t dev;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid, start, end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	o = find_object(a, dev, st.st_ino);
	if (o) {
		close(fd);
		return o;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		abort();
	o->pub.dev = dev;
	o->pub.ino = st.st_ino;
	o->pub.name = strdup(name);
	o->fd = fd;
	if (!o->pub.name)
		abort();
	if (read_probes(a, fd, o, err, errlen))
		*failed = 1;
	o->pub.old = o->nsites && !o->pub.runtime;
	if (!o->pub.runtime) {
		close(o->fd);
		o->fd = -1;
	}
	a->objects = tr2_grow(a->objects, a->nobjects, &a->cap_objects, sizeof(*a->objects));
	a->objects[a->nobjects++] = o;
	return o;
}

int tr2_attach_scan(struct tr2_attach *a, pid_t pid, int (*fn)(void *ctx, struct tr2_object *o, pid_t pid),
		    void *ctx, char *err, size_t errlen)
{
	char maps_path[64], line[PATH_MAX + 256];
	int r = 0, failed = 0;
	FILE *maps;

	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)pid);
	maps = fopen(maps_path, "re");
	if (!maps) {
		snprintf(err, errlen, "failed to read %s: %s", maps_path, strerror(errno));
		return -1;
	}
	while (!r && !failed && fgets(line, sizeof(line), maps)) {
		char *name = strchr(line, '/'), perms[8];
		unsigned long start, end;
		struct object *o;

		if (!name || sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[2] != 'x')
			continue;
		name[strcspn(name, "\n")] = '\0';
		o = object_at(a, pid, start, end, name, err, errlen, &failed);
		if (!o)
			continue;
		if ((o->pub.runtime || o->pub.old) && !failed)
			r = fn(ctx, &o->pub, pid);
		/* Known only once fn has attached (and enabled: -- CMD): until
		 * then another process that maps o is held too, not let run
		 * with its semaphore still down. */
		tr2_attach_known(a, o->pub.dev, o->pub.ino, pid);
	}
	fclose(maps);
	return failed ? -1 : r;
}

int tr2_attach_objects(const struct tr2_attach *a)
{
	int n = 0;

	for (int i = 0; i < a->nobjects; i++)
		n += a->objects[i]->pub.runtime;
	return n;
}

int tr2_attach_sites(const struct tr2_attach *a)
{
	int n = 0;

	for (int i = 0; i < a->nobjects; i++)
		n += a->objects[i]->pub.runtime ? a->objects[i]->nsites : 0;
	return n;
}

static void *close_fd(void *fd)
{
	close((int)(long)fd);
	return NULL;
}

/* Closes every fd of f.  Closing a multi link or a uprobe perf event waits
 * for an RCU grace period (~40 ms here); from one thread each, the waits
 * overlap. */
static void close_fds(struct fds *f)
{
	pthread_t *th = calloc(f->n + 1, sizeof(*th));
	int nth = 0;

	if (!th)
		abort();
	for (int i = 0; i < f->n; i++)
		if (pthread_create(&th[nth], NULL, close_fd, (void *)(long)f->fd[i]))
			close(f->fd[i]);
		else
			nth++;
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	free(th);
	free(f->fd);
}

void tr2_attach_lower_enables(struct tr2_attach *a)
{
	close_fds(&a->enables);
	memset(&a->enables, 0, sizeof(a->enables));
	for (int i = 0; i < a->nobjects; i++)
		a->objects[i]->pub.enable_all = 0;
}

void tr2_attach_free(struct tr2_attach *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->nanchors; i++)
		keep_fd(&a->enables, a->anchors[i].fd);
	free(a->anchors);
	close_fds(&a->enables);
	close_fds(&a->payloads);
	for (int i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	/* The tracefs events, once no perf event uses them. */
	for (int i = 1; i <= a->tracefs_events; i++) {
		char line[80];

		line[0] = '-';
		line[1] = ':';
		event_name(a, i, line + 2, sizeof(line) - 3);
		strcat(line, "\n");
		uprobe_events(a, line);
	}
	if (a->events_fd >= 0)
		close(a->events_fd);
	if (a->tracefs >= 0)
		close(a->tracefs);
	for (int i = 0; i < a->nobjects; i++) {
		if (a->objects[i]->fd >= 0)
			close(a->objects[i]->fd);
		free(a->objects[i]->sites);
		free(a->objects[i]->pub.name);
		free(a->objects[i]);
	}
	free(a->links);
	free(a->objects);
	free(a->specs);
	free(a);
}

int tr2_attach_ticks(struct bpf_program *prog, uint64_t period_ns, struct bpf_link **links, int max,
		     char *err, size_t errlen)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
					.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = period_ns };
	int ncpu = libbpf_num_possible_cpus(), n = 0;

	for (int cpu = 0; cpu < ncpu && n < max; cpu++) {
		int fd = perf_open(&attr, -1, cpu);

		if (fd < 0 && errno == ENODEV)
			continue;   /* a CPU that is offline */
		if (fd < 0 || !(links[n] = bpf_program__attach_perf_event(prog, fd))) {
			snprintf(err, errlen, "failed to attach the timer tick on CPU %d: %s", cpu, strerror(errno));
			if (fd >= 0)
				close(fd);
			while (n)
				bpf_link__destroy(links[--n]);
			return -1;
		}
		n++;
	}
	return n;
}
