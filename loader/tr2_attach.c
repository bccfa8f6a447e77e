/* tr2_attach.c: see tr2_attach.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "tr2_attach.h"

#define PROVIDER "trace2"

struct object {
	dev_t dev;
	ino_t ino;
	int has_probes;
};

struct tr2_attach {
	struct bpf_object *obj;
	pid_t pid_filter;
	struct object *objects;     /* looked at, with or without probes */
	int nobjects, cap_objects;
	struct bpf_link **links;
	int nlinks, cap_links;
	int attached_objects, sites;
};

struct tr2_attach *tr2_attach_new(struct bpf_object *obj, pid_t pid_filter)
{
	struct tr2_attach *a = calloc(1, sizeof(*a));

	if (!a)
		abort();
	elf_version(EV_CURRENT);
	a->obj = obj;
	a->pid_filter = pid_filter;
	return a;
}

static void add_link(struct tr2_attach *a, struct bpf_link *l)
{
	if (a->nlinks == a->cap_links) {
		a->cap_links = a->cap_links ? 2 * a->cap_links : 64;
		a->links = realloc(a->links, a->cap_links * sizeof(*a->links));
		if (!a->links)
			abort();
	}
	a->links[a->nlinks++] = l;
}

static struct object *find_object(struct tr2_attach *a, const struct stat *st)
{
	for (int i = 0; i < a->nobjects; i++)
		if (a->objects[i].dev == st->st_dev && a->objects[i].ino == st->st_ino)
			return &a->objects[i];
	return NULL;
}

/* Records the object as seen; returns 1 when it was seen before. */
static int seen(struct tr2_attach *a, const struct stat *st)
{
	if (find_object(a, st))
		return 1;
	if (a->nobjects == a->cap_objects) {
		a->cap_objects = a->cap_objects ? 2 * a->cap_objects : 32;
		a->objects = realloc(a->objects, a->cap_objects * sizeof(*a->objects));
		if (!a->objects)
			abort();
	}
	a->objects[a->nobjects].dev = st->st_dev;
	a->objects[a->nobjects].ino = st->st_ino;
	a->objects[a->nobjects].has_probes = 0;
	a->nobjects++;
	return 0;
}

/* Calls fn(name) for each trace2 probe site in the ELF file at path (its
 * .note.stapsdt notes: owner "stapsdt", type 3, three addresses then
 * provider, name and argument strings; systemtap's sdt.h). Returns the
 * number of sites, or -1 when the file is not a readable ELF file. */
static int for_each_site(const char *path, void (*fn)(void *ctx, const char *name), void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), sites = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	size_t addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
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
			const char *owner = (const char *)data->d_buf + name_off;
			const char *desc = (const char *)data->d_buf + desc_off;
			const char *end = desc + nh.n_descsz, *prov, *name;

			if (nh.n_type != 3 || nh.n_namesz != 8 || memcmp(owner, "stapsdt", 8) ||
			    nh.n_descsz < 3 * addr_size + 2)
				continue;
			prov = desc + 3 * addr_size;
			name = memchr(prov, '\0', end - prov);
			if (!name || ++name >= end || !memchr(name, '\0', end - name))
				continue;
			if (strcmp(prov, PROVIDER))
				continue;
			sites++;
			if (fn)
				fn(ctx, name);
		}
	}
	elf_end(elf);
	close(fd);
	return sites;
}

struct probe_set {
	char names[64][32];
	int n;
};

static void collect(void *ctx, const char *name)
{
	struct probe_set *ps = ctx;

	for (int i = 0; i < ps->n; i++)
		if (!strcmp(ps->names[i], name))
			return;
	if (ps->n < 64 && strlen(name) < sizeof(ps->names[0]))
		strcpy(ps->names[ps->n++], name);
}

/* Attaches every program whose probe the object at path has. */
static int attach_object(struct tr2_attach *a, const char *path, char *err, size_t errlen)
{
	struct probe_set ps = { .n = 0 };
	int sites = for_each_site(path, collect, &ps);

	if (sites <= 0)
		return 0;
	for (int i = 0; i < ps.n; i++) {
		char prog_name[64];
		struct bpf_program *prog;
		struct bpf_link *l;

		snprintf(prog_name, sizeof(prog_name), "probe_%s", ps.names[i]);
		prog = bpf_object__find_program_by_name(a->obj, prog_name);
		if (!prog)
			continue; /* a probe this tracer does not know: leave it */
		l = bpf_program__attach_usdt(prog, a->pid_filter, path, PROVIDER, ps.names[i], NULL);
		if (!l) {
			snprintf(err, errlen, "failed to attach to probe %s:%s in %s: %s", PROVIDER,
				 ps.names[i], path, strerror(errno));
			return -1;
		}
		add_link(a, l);
	}
	a->attached_objects++;
	a->sites += sites;
	return 1;
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
		char *path = strchr(line, '/');
		struct stat st;
		int r;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		/* Read the file through the process's root: same bytes it mapped. */
		char rooted[PATH_MAX + 64];
		unsigned long start, end;
		char perms[8];
		struct object *o;

		snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, path);
		if (stat(rooted, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!seen(a, &st)) {
			r = attach_object(a, rooted, err, errlen);
			if (r < 0) {
				fclose(maps);
				return -1;
			}
			find_object(a, &st)->has_probes = r;
			added += r;
		}
		o = find_object(a, &st);
		if (o->has_probes && sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 &&
		    perms[2] != 'x')
			prefault(pid, start, end);
	}
	fclose(maps);
	return added;
}

int tr2_attach_dl_hook(struct tr2_attach *a, struct bpf_program *prog, const char *ld_so,
		       char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "_dl_debug_state");
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, a->pid_filter, ld_so, 0, &opts);

	if (!l) {
		snprintf(err, errlen, "failed to attach to _dl_debug_state in %s: %s", ld_so,
			 strerror(errno));
		return -1;
	}
	add_link(a, l);
	return 0;
}

int tr2_attach_objects(const struct tr2_attach *a)
{
	return a->attached_objects;
}

int tr2_attach_sites(const struct tr2_attach *a)
{
	return a->sites;
}

void tr2_attach_free(struct tr2_attach *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	free(a->links);
	free(a->objects);
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
