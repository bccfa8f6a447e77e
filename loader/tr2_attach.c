/* tr2_attach.c: see tr2_attach.h.
 *
 * tr2-bpf attaches USDT probes itself rather than through libbpf's
 * bpf_program__attach_usdt(), for two reasons:
 *  - one uprobe-multi link per (object, probe) instead of one perf event per
 *    call site: closing a perf uprobe waits for an RCU grace period under a
 *    global mutex (~0.1 s each here), so detaching a program with 80 call
 *    sites took 8 s; a multi link detaches with one wait;
 *  - the choice of instruction: where a site is the `nop; nop5` pair of the
 *    upstream libbpf/usdt header, the 5-byte nop is taken on kernels that
 *    optimize uprobes on it (Linux 6.18: a call instead of a trap), the
 *    1-byte nop elsewhere.
 * The eBPF side keeps libbpf's usdt.bpf.h spec map (__bpf_usdt_specs) and
 * argument specs: this file fills the map and passes the spec id as the BPF
 * cookie, as libbpf does, in the cookie's lower 32 bits, which is all
 * usdt.bpf.h's bpf_usdt_arg() reads.  The upper 32 bits number the call
 * site, from 1, never reused in one run: the eBPF side sends a site's
 * literal strings once per thread (bpf/tr2_record.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>

#include "tr2_attach.h"
#include "tr2_mem.h"
#include "tr2_record.h"

#define PROVIDER "trace2"
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
	unsigned long offset;      /* file offset of the instruction to attach at */
	unsigned long ref_ctr;     /* file offset of the semaphore, 0 when none */
	int spec_id;
	__u32 number;              /* the call site's number (see above) */
};

struct object {
	dev_t dev;
	ino_t ino;
	int has_probes;
};

struct tr2_attach {
	struct bpf_object *obj;
	pid_t pid_filter;
	int multi;                 /* uprobe-multi links (Linux 6.6+) */
	int nop5;                  /* the kernel optimizes uprobes on a 5-byte nop */
	int spec_map_fd;
	int known_map_fd;          /* the eBPF side's "known" objects, or -1 */
	struct usdt_spec *specs;
	int nspecs;
	struct object *objects;    /* looked at, with or without probes */
	int nobjects, cap_objects;
	struct bpf_link **links;   /* fallback: one perf uprobe per site */
	int nlinks, cap_links;
	int *link_fds;             /* multi links */
	int nlink_fds, cap_link_fds;
	int attached_objects, sites;
	__u32 site_numbers;        /* call site numbers given out */
	int dl_sites;              /* calls of _dl_debug_state probed; 0: its entry */
};

static int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	return !uname(&u) && sscanf(u.release, "%d.%d", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

/* Whether this kernel turns a uprobe on a 5-byte nop into a call
 * (arch_uprobe_optimize, Linux 6.18+). */
static int kernel_optimizes_nop5(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[256];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " arch_uprobe_optimize\n") != NULL;
	fclose(f);
	return found;
}

int tr2_attach_prepare(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int multi = kernel_at_least(6, 6);

	if (!multi)
		return 0;
	bpf_object__for_each_program(prog, obj)
		if (!strncmp(bpf_program__name(prog), "probe_", 6) ||
		    !strcmp(bpf_program__name(prog), "dl_update"))
			bpf_program__set_expected_attach_type(prog, TR2_BPF_TRACE_UPROBE_MULTI);
	return 1;
}

struct tr2_attach *tr2_attach_new(struct bpf_object *obj, pid_t pid_filter, int multi)
{
	struct tr2_attach *a = calloc(1, sizeof(*a));
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "__bpf_usdt_specs");

	if (!a)
		abort();
	elf_version(EV_CURRENT);
	a->obj = obj;
	a->pid_filter = pid_filter;
	a->multi = multi;
	a->nop5 = kernel_optimizes_nop5();
	a->spec_map_fd = map && bpf_map__value_size(map) == sizeof(struct usdt_spec) ? bpf_map__fd(map) : -1;
	map = bpf_object__find_map_by_name(obj, "known");
	a->known_map_fd = map ? bpf_map__fd(map) : -1;
	return a;
}

int tr2_attach_uses_nop5(const struct tr2_attach *a)
{
	return a->nop5;
}

void tr2_attach_set_nop5(struct tr2_attach *a, int nop5)
{
	a->nop5 = nop5;
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

/*
 * Reads the trace2 probe sites of the ELF file at path from its
 * .note.stapsdt notes (owner "stapsdt", type 3: pc, base and semaphore
 * addresses, then provider, name and argument strings; systemtap's sdt.h).
 * Returns the number of sites (*out, malloc'd), or -1 on a bad file, or -2
 * with err set when a site cannot be read.
 */
static int read_sites(struct tr2_attach *a, const char *path, struct site **out,
		      char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0, cap = 0, ret = -1;
	struct site *sites = NULL;
	GElf_Addr base_addr = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
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
	while ((scn = elf_nextscn(elf, scn))) {
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
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off, *end = desc + nh.n_descsz;
			const char *prov = desc + 24, *name, *args;
			GElf_Addr pc, note_base, sema;
			unsigned char insn[6] = { 0 };
			long pc_off, sema_off = 0;
			struct site *s;

			if (nh.n_type != 3 || nh.n_namesz != 8 ||
			    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) || nh.n_descsz < 27)
				continue;
			name = memchr(prov, '\0', end - prov);
			if (!name || ++name >= end || !(args = memchr(name, '\0', end - name)) || ++args >= end ||
			    !memchr(args, '\0', end - args) || strcmp(prov, PROVIDER))
				continue;
			memcpy(&pc, desc, 8);
			memcpy(&note_base, desc + 8, 8);
			memcpy(&sema, desc + 16, 8);
			if (base_addr && note_base) {
				pc += base_addr - note_base;
				if (sema)
					sema += base_addr - note_base;
			}
			pc_off = vaddr_to_offset(elf, pc);
			if (sema)
				sema_off = vaddr_to_offset(elf, sema);
			if (pc_off < 0 || sema_off < 0) {
				snprintf(err, errlen, "probe %s:%s in %s: address outside the file", PROVIDER, name, path);
				ret = -2;
				goto out;
			}
			/* The upstream libbpf/usdt pair `nop; nop5`: take the nop5 where
			 * the kernel optimizes it. */
			if (a->nop5 && pread(fd, insn, sizeof(insn), pc_off) == sizeof(insn) &&
			    !memcmp(insn, "\x90\x0f\x1f\x44\x00\x00", 6))
				pc_off++;
			sites = tr2_grow(sites, n, &cap, sizeof(*sites));
			s = &sites[n++];
			snprintf(s->name, sizeof(s->name), "%s", name);
			s->offset = pc_off;
			s->ref_ctr = sema_off;
			s->spec_id = spec_id(a, args);
			s->number = ++a->site_numbers;
			if (s->spec_id < 0) {
				snprintf(err, errlen, "probe %s:%s in %s: cannot read its arguments '%s'",
					 PROVIDER, name, path, args);
				ret = -2;
				goto out;
			}
		}
	}
	ret = n;
out:
	if (ret < 0)
		free(sites);
	else
		*out = sites;
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static __u64 cookie(const struct site *s)
{
	return (__u64)s->number << 32 | (__u32)s->spec_id;
}

/* One uprobe-multi link of prog_fd at the n file offsets offs of path, with
 * their semaphores (refs, 0: none; NULL: no semaphores) and BPF cookies. */
static int link_multi(struct tr2_attach *a, int prog_fd, const char *path, const unsigned long *offs,
		      const unsigned long *refs, const __u64 *cookies, int m)
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
	attr.pid = a->pid_filter > 0 ? a->pid_filter : 0;
	fd = syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd >= 0) {
		a->link_fds = tr2_grow(a->link_fds, a->nlink_fds, &a->cap_link_fds, sizeof(int));
		a->link_fds[a->nlink_fds++] = fd;
	}
	return fd < 0 ? -1 : 0;
}

/* One perf uprobe of prog at path's file offset off, with its semaphore
 * (0: none) and BPF cookie: kernels before uprobe-multi links. */
static int link_one(struct tr2_attach *a, struct bpf_program *prog, const char *path, unsigned long off,
		    unsigned long ref, __u64 bpf_cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .ref_ctr_offset = ref, .bpf_cookie = bpf_cookie);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, a->pid_filter, path, off, &opts);

	if (!l)
		return -1;
	a->links = tr2_grow(a->links, a->nlinks, &a->cap_links, sizeof(*a->links));
	a->links[a->nlinks++] = l;
	return 0;
}

static int attach_multi(struct tr2_attach *a, int prog_fd, const char *path, const struct site *sites,
			int n, const char *name)
{
	unsigned long *offs = calloc(n, sizeof(*offs)), *refs = calloc(n, sizeof(*refs));
	__u64 *cookies = calloc(n, sizeof(*cookies));
	int m = 0, r;

	if (!offs || !refs || !cookies)
		abort();
	for (int i = 0; i < n; i++)
		if (!strcmp(sites[i].name, name)) {
			offs[m] = sites[i].offset;
			refs[m] = sites[i].ref_ctr;
			cookies[m] = cookie(&sites[i]);
			m++;
		}
	r = link_multi(a, prog_fd, path, offs, refs, cookies, m);
	free(offs);
	free(refs);
	free(cookies);
	return r;
}

static int attach_each(struct tr2_attach *a, struct bpf_program *prog, const char *path,
		       const struct site *sites, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(sites[i].name, name) &&
		    link_one(a, prog, path, sites[i].offset, sites[i].ref_ctr, cookie(&sites[i])))
			return -1;
	return 0;
}

/* Attaches every program whose probe the object at path has.  Returns 1,
 * 0 when it has no trace2 probes, -1 with err set. */
static int attach_object(struct tr2_attach *a, const char *path, char *err, size_t errlen)
{
	struct site *sites = NULL;
	int n = read_sites(a, path, &sites, err, errlen), r = 0;

	if (n == -2)
		return -1;
	if (n <= 0)
		return 0;
	for (int i = 0; i < n && !r; i++) {
		char prog_name[64];
		struct bpf_program *prog;
		int first = 1;

		for (int j = 0; j < i; j++)
			first &= strcmp(sites[j].name, sites[i].name) != 0;
		if (!first)
			continue;
		snprintf(prog_name, sizeof(prog_name), "probe_%s", sites[i].name);
		prog = bpf_object__find_program_by_name(a->obj, prog_name);
		if (!prog)
			continue; /* a probe this tracer does not know: leave it */
		r = a->multi ? attach_multi(a, bpf_program__fd(prog), path, sites, n, sites[i].name)
			     : attach_each(a, prog, path, sites, n, sites[i].name);
		if (r)
			snprintf(err, errlen, "failed to attach to probe %s:%s in %s: %s", PROVIDER,
				 sites[i].name, path, strerror(errno));
	}
	free(sites);
	if (r)
		return -1;
	a->attached_objects++;
	a->sites += n;
	return 1;
}

static struct object *find_object(struct tr2_attach *a, const struct stat *st)
{
	for (int i = 0; i < a->nobjects; i++)
		if (a->objects[i].dev == st->st_dev && a->objects[i].ino == st->st_ino)
			return &a->objects[i];
	return NULL;
}

/*
 * Faults in [start, end) of process pid by reading it.  The eBPF programs
 * read strings with bpf_probe_read_user_str(), which cannot take a page
 * fault: a string literal that only a probe refers to (__FILE__, a category)
 * sits in a .rodata page that the program itself may never have touched.
 * Reading it through process_vm_readv() maps the page into the target.
 */
static void prefault(pid_t pid, unsigned long start, unsigned long end)
{
	static char buf[1 << 16];

	while (start < end) {
		size_t n = end - start < sizeof(buf) ? end - start : sizeof(buf);
		struct iovec local = { buf, n }, remote = { (void *)start, n };

		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) <= 0)
			return;
		start += n;
	}
}

void tr2_attach_known(struct tr2_attach *a, uint64_t dev, uint64_t ino)
{
	struct tr2_object_key key = { .dev = dev, .ino = ino };
	__u8 one = 1;

	if (a->known_map_fd >= 0)
		bpf_map_update_elem(a->known_map_fd, &key, &one, BPF_ANY);
}

/* Tells the eBPF side that the object mapped executable at start-end in
 * process pid has been looked at.  The key is the file the mapping holds
 * as the kernel names it, which /proc/PID/map_files shows (it can differ
 * from the path's: overlayfs). */
static void mark_known(struct tr2_attach *a, pid_t pid, unsigned long start, unsigned long end)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid, start, end);
	if (!stat(path, &st))
		tr2_attach_known(a, (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev), st.st_ino);
}

int tr2_attach_process(struct tr2_attach *a, pid_t pid, char *err, size_t errlen)
{
	char maps_path[64], line[PATH_MAX + 256];
	FILE *maps;
	int added = 0;

	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)pid);
	maps = fopen(maps_path, "re");
	if (!maps) {
		snprintf(err, errlen, "failed to read %s: %s", maps_path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/'), rooted[PATH_MAX + 64], perms[8];
		unsigned long start, end;
		struct object *o;
		struct stat st;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		/* Read the file through the process's root: the bytes it mapped. */
		snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, path);
		if (stat(rooted, &st) || !S_ISREG(st.st_mode))
			continue;
		o = find_object(a, &st);
		if (!o) {
			int r = attach_object(a, rooted, err, errlen);

			if (r < 0) {
				fclose(maps);
				return -1;
			}
			a->objects = tr2_grow(a->objects, a->nobjects, &a->cap_objects, sizeof(*a->objects));
			o = &a->objects[a->nobjects++];
			o->dev = st.st_dev;
			o->ino = st.st_ino;
			o->has_probes = r;
			added += r;
		}
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3)
			continue;
		if (perms[2] == 'x')
			mark_known(a, pid, start, end);
		else if (o->has_probes)
			prefault(pid, start, end);
	}
	fclose(maps);
	return added;
}

#define MAX_DL_SITES 32

/* Where to probe the loader's hook (_dl_debug_state in ld_so): the file
 * offsets (offs) of the `call _dl_debug_state` instructions in its code,
 * found by a linear disassembly of its executable sections (capstone), or
 * else of the hook's own entry; and for each, the distance in memory from
 * it to _r_debug.r_state (to_state; 0 when ld_so has no _r_debug).  The
 * symbols come from its .dynsym; struct r_debug (<link.h>) is int
 * r_version; struct link_map *r_map; ElfW(Addr) r_brk; then r_state, at 24
 * on x86-64.  Returns how many places (1 or more; *calls set when they are
 * call sites), or -1 when ld_so has no hook. */
static int find_dl_sites(const char *ld_so, unsigned long *offs, __u64 *to_state, int *calls)
{
	int fd = open(ld_so, O_RDONLY | O_CLOEXEC), n = 0, entry_seen = 0;
	GElf_Addr hook_va = 0, r_debug_va = 0, va_of[MAX_DL_SITES];
	Elf_Scn *scn = NULL;
	Elf *elf;
	csh cs;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(name, "_dl_debug_state"))
				hook_va = sym.st_value;
			else if (!strcmp(name, "_r_debug"))
				r_debug_va = sym.st_value;
		}
	}
	if (!elf || !hook_va || vaddr_to_offset(elf, hook_va) < 0) {
		n = -1;
		goto out;
	}
	/* A linear sweep of each executable section: compiled code, no data in
	 * it on x86-64.  The call sites are trusted only if the sweep also met
	 * the hook's own entry as an instruction: the sweep was in step. */
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
		cs_option(cs, CS_OPT_SKIPDATA, CS_OPT_ON);
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			const uint8_t *code;
			size_t size;
			uint64_t va;
			cs_insn *insn;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR) || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
				continue;
			code = data->d_buf;
			size = data->d_size;
			va = sh.sh_addr;
			insn = cs_malloc(cs);
			while (cs_disasm_iter(cs, &code, &size, &va, insn)) {
				int32_t rel;

				if (insn->address == hook_va)
					entry_seen = 1;
				if (insn->size != 5 || insn->bytes[0] != 0xe8)
					continue;
				memcpy(&rel, insn->bytes + 1, 4);
				if (insn->address + 5 + rel == hook_va && n < MAX_DL_SITES &&
				    vaddr_to_offset(elf, insn->address) >= 0)
					va_of[n++] = insn->address;
			}
			cs_free(insn, 1);
		}
		cs_close(&cs);
	}
	*calls = entry_seen && n > 0;
	if (!*calls) {
		va_of[0] = hook_va;
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		offs[i] = vaddr_to_offset(elf, va_of[i]);
		to_state[i] = r_debug_va ? r_debug_va + 24 - va_of[i] : 0;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

int tr2_attach_dl_hook(struct tr2_attach *a, struct bpf_program *prog, const char *ld_so,
		       char *err, size_t errlen)
{
	unsigned long offs[MAX_DL_SITES];
	__u64 cookies[MAX_DL_SITES];
	int calls, n = find_dl_sites(ld_so, offs, cookies, &calls), r = 0;

	if (n < 0) {
		snprintf(err, errlen, "no _dl_debug_state in %s", ld_so);
		return -1;
	}
	/* A uprobe on a `call` is emulated.  On the hook's entry, a `ret`, the
	 * kernel single-steps a copy of the instruction out of line: ~20 µs a
	 * hit here, four hits per dlopen and dlclose. */
	if (a->multi)
		r = link_multi(a, bpf_program__fd(prog), ld_so, offs, NULL, cookies, n);
	else
		for (int i = 0; i < n && !r; i++)
			r = link_one(a, prog, ld_so, offs[i], 0, cookies[i]);
	if (r) {
		snprintf(err, errlen, "failed to attach to _dl_debug_state in %s: %s", ld_so, strerror(errno));
		return -1;
	}
	a->dl_sites = calls ? n : 0;
	return 0;
}

int tr2_attach_dl_sites(const struct tr2_attach *a)
{
	return a->dl_sites;
}

int tr2_attach_objects(const struct tr2_attach *a)
{
	return a->attached_objects;
}

int tr2_attach_sites(const struct tr2_attach *a)
{
	return a->sites;
}

static void *close_link(void *fd)
{
	close((int)(long)fd);
	return NULL;
}

void tr2_attach_free(struct tr2_attach *a)
{
	pthread_t *th;
	int nth = 0;

	if (!a)
		return;
	/* Closing a multi link waits for an RCU grace period (~40 ms here);
	 * from one thread each, the waits overlap. */
	th = calloc(a->nlink_fds + 1, sizeof(*th));
	if (!th)
		abort();
	for (int i = 0; i < a->nlink_fds; i++)
		if (pthread_create(&th[nth], NULL, close_link, (void *)(long)a->link_fds[i]))
			close(a->link_fds[i]);
		else
			nth++;
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	free(th);
	for (int i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	free(a->link_fds);
	free(a->links);
	free(a->objects);
	free(a->specs);
	free(a);
}

char *tr2_find_ld_so(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 256], *found = NULL;

	if (!maps)
		return NULL;
	while (!found && fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		if (strstr(path, "/ld-linux") || strstr(path, "/ld-musl") || strstr(path, "/ld.so"))
			found = strdup(path);
	}
	fclose(maps);
	return found;
}
