/* tr2_kernel.c: see tr2_kernel.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "tr2.skel.h"
#include "tr2_kernel.h"

/* Whether btf has an enum `type` with a value named `value`. */
static int has_enum_value(const struct btf *btf, const char *type, const char *value)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (int i = 0; e && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), value))
			return 1;
	return 0;
}

/* Whether btf has a struct `type` with a member named `member`. */
static int has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; m && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return 1;
	return 0;
}

/* The number of parameters of the tracepoint whose BTF typedef is
 * `name` (btf_trace_<tp>: a pointer to a function whose first parameter
 * is the context); -1 when btf has none. */
static int tp_params(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	if (t)
		t = btf__type_by_id(btf, t->type);   /* the pointer */
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);   /* the function */
	return t && btf_is_func_proto(t) ? btf_vlen(t) - 1 : -1;
}

static int has(const struct btf *btf, const char *name, int kind)
{
	return btf__find_by_name_kind(btf, name, kind) > 0;
}

/* Whether a perf_event program may use a hash map whose entries are
 * allocated at run time (BPF_F_NO_PREALLOC; Linux 6.1, bpf_mem_alloc): a
 * test load of one that looks up a key in such a map. */
static int loads_hash_alloc(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 4, 1, &mopts), fd;
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (map < 0)
		return 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns, sizeof(insns) / sizeof(insns[0]), NULL);
	close(map);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Whether the kernel takes an fentry program on btf's function fn (one that
 * returns 0): some kernels refuse every fentry program (EPERM, seen on a
 * Linux 6.18 built without kprobes), or have no trampolines. */
static int loads_fentry(const struct btf *btf, const char *fn)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC), fd;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY, .attach_btf_id = id);

	if (id <= 0)
		return 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

void tr2_kernel_probe(struct tr2_kernel *k)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct utsname u;

	memset(k, 0, sizeof(*k));
	snprintf(k->release, sizeof(k->release), "%s", uname(&u) ? "?" : u.release);
	k->hash_alloc = loads_hash_alloc();
	if (!btf)
		return;
	k->task_storage = has_enum_value(btf, "bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE") &&
			  has_enum_value(btf, "bpf_func_id", "BPF_FUNC_get_current_task_btf");
	k->attach_cookie = has_enum_value(btf, "bpf_func_id", "BPF_FUNC_get_attach_cookie");
	k->uprobe_multi = has_enum_value(btf, "bpf_attach_type", "BPF_TRACE_UPROBE_MULTI");
	k->copy_direct = has(btf, "bpf_probe_read_user_dynptr", BTF_KIND_FUNC);
	k->prepare_exec_tp = has(btf, "btf_trace_sched_prepare_exec", BTF_KIND_TYPEDEF);
	k->filemap_tp = has(btf, "btf_trace_mm_filemap_map_pages", BTF_KIND_TYPEDEF) &&
			has(btf, "btf_trace_mm_filemap_fault", BTF_KIND_TYPEDEF);
	k->sample_read_inherit = has_member(btf, "perf_event_context", "nr_no_switch_fast");
	k->switch_prev_state = tp_params(btf, "btf_trace_sched_switch") >= 4;
	k->fentry_do_exit = loads_fentry(btf, "do_exit");
	k->fentry_exec = k->fentry_do_exit && has(btf, "begin_new_exec", BTF_KIND_FUNC);
	k->fentry_filemap = k->fentry_do_exit && has(btf, "filemap_map_pages", BTF_KIND_FUNC) &&
			    has(btf, "filemap_fault", BTF_KIND_FUNC);
	btf__free(btf);
}

/* A per-thread map of skel as a hash map keyed by tid (no task storage). */
static void thread_map_as_hash(struct bpf_map *map)
{
	bpf_map__set_type(map, BPF_MAP_TYPE_HASH);
	bpf_map__set_max_entries(map, TR2_THREADS_MAX);
}

/* The fentry programs: attached by tr2_kernel_attach, not by the skeleton. */
static struct bpf_program **fentry_progs(struct tr2_bpf *skel, int *n)
{
	static struct bpf_program *progs[4];

	progs[0] = skel->progs.on_do_exit;
	progs[1] = skel->progs.on_begin_new_exec;
	progs[2] = skel->progs.on_filemap_map_pages_fn;
	progs[3] = skel->progs.on_filemap_fault_fn;
	*n = 4;
	return progs;
}

void tr2_kernel_setup(const struct tr2_kernel *k, struct tr2_bpf *skel)
{
	struct bpf_program **fentry;
	int n;

	skel->rodata->task_storage = k->task_storage;
	skel->rodata->attach_cookie = k->attach_cookie;
	skel->rodata->copy_direct = k->copy_direct;
	skel->rodata->wake_at_fork = !k->sample_read_inherit;
	skel->rodata->switch_prev_state = k->switch_prev_state;
	if (!k->task_storage) {
		thread_map_as_hash(skel->maps.threads);
		thread_map_as_hash(skel->maps.code_fault);
	}
	/* before 6.1, every hash map a perf_event program (on_tick) names is
	 * allocated at its creation */
	if (!k->hash_alloc) {
		struct bpf_map *map;

		bpf_object__for_each_map(map, skel->obj)
			if (bpf_map__type(map) == BPF_MAP_TYPE_HASH)
				bpf_map__set_map_flags(map, bpf_map__map_flags(map) & ~BPF_F_NO_PREALLOC);
	}
	if (!k->copy_direct) {
		bpf_map__set_max_entries(skel->maps.scratch, libbpf_num_possible_cpus());
		bpf_map__set_max_entries(skel->maps.scratch_held, libbpf_num_possible_cpus());
	}
	/* exec: the tracepoint, else begin_new_exec */
	bpf_program__set_autoload(skel->progs.on_prepare_exec, k->prepare_exec_tp);
	bpf_program__set_autoload(skel->progs.on_begin_new_exec, !k->prepare_exec_tp && k->fentry_exec);
	/* code from a file: the tracepoints, else the functions that hold them */
	bpf_program__set_autoload(skel->progs.on_map_pages, k->filemap_tp);
	bpf_program__set_autoload(skel->progs.on_filemap_fault, k->filemap_tp);
	bpf_program__set_autoload(skel->progs.on_filemap_map_pages_fn, !k->filemap_tp && k->fentry_filemap);
	bpf_program__set_autoload(skel->progs.on_filemap_fault_fn, !k->filemap_tp && k->fentry_filemap);
	/* exit: do_exit's entry wherever it can be named (the tracepoint runs
	 * after the memory is gone on 6.12 and older, and costs the same) */
	bpf_program__set_autoload(skel->progs.on_do_exit, k->fentry_do_exit);
	fentry = fentry_progs(skel, &n);
	for (int i = 0; i < n; i++)
		bpf_program__set_autoattach(fentry[i], false);
}

void tr2_kernel_check(struct tr2_kernel *k, const struct tr2_bpf *skel)
{
	if (k->exit_copied || k->exit_warned || skel->bss->exit_memory != 2)
		return;
	k->exit_warned = 1;
	fprintf(stderr, "tr2-bpf: warning: Linux %s releases a thread's memory before sched_process_exit "
		"and takes no fentry program at do_exit: a thread's last calls (exit, atexit, its timers "
		"and counters) since its last switch or batch are lost when it ends, uncounted\n",
		k->release);
}

/* Says once on stderr what this kernel cannot do. */
static void cannot(const struct tr2_kernel *k, const char *what)
{
	fprintf(stderr, "tr2-bpf: warning: Linux %s: %s\n", k->release, what);
}

void tr2_kernel_attach(struct tr2_kernel *k, struct tr2_bpf *skel, int verbose)
{
	struct bpf_link **links[] = { &skel->links.on_do_exit, &skel->links.on_begin_new_exec,
				      &skel->links.on_filemap_map_pages_fn, &skel->links.on_filemap_fault_fn };
	struct bpf_program **fentry;
	int n, attached[4] = { 0 };

	fentry = fentry_progs(skel, &n);
	for (int i = 0; i < n; i++) {
		if (!bpf_program__autoload(fentry[i]))
			continue;
		*links[i] = bpf_program__attach(fentry[i]);
		attached[i] = *links[i] != NULL;
		if (!attached[i] && verbose)
			fprintf(stderr, "tr2-bpf: cannot attach at %s: %s\n",
				bpf_program__section_name(fentry[i]), strerror(errno));
	}
	k->exit_copied = attached[0];
	if (!k->prepare_exec_tp && !attached[1])
		cannot(k, "no sched_prepare_exec tracepoint and no program at begin_new_exec: the "
			  "calls a thread makes since its last switch or batch are lost at exec, uncounted");
	if (!k->filemap_tp && !(attached[2] && attached[3]))
		cannot(k, "no mm_filemap tracepoints and no program at filemap_map_pages and "
			  "filemap_fault: a shared object a process maps after tr2-bpf started is "
			  "attached to late, and its first calls are missing");
	if (verbose)
		fprintf(stderr, "tr2-bpf: Linux %s: task storage %d, hash maps allocated at run time %d, "
			"BPF cookies %d, "
			"uprobe-multi %d, direct copy %d, sched_prepare_exec %d, mm_filemap tracepoints %d, "
			"inherited PERF_SAMPLE_READ %d, fentry at do_exit %d, begin_new_exec %d, "
			"filemap functions %d, sched_switch prev_state %d\n", k->release, k->task_storage,
			k->hash_alloc, k->attach_cookie, k->uprobe_multi, k->copy_direct, k->prepare_exec_tp,
			k->filemap_tp, k->sample_read_inherit, attached[0], attached[1], attached[2] && attached[3],
			k->switch_prev_state);
}
