/* tr2_summary.c: tr2-bpf --summary, the user-space half (tr2_summary.h). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tr2_buf.h"
#include "tr2_dst.h"
#include "tr2_json.h"
#include "tr2_mem.h"
#include "tr2_summary.h"

/* One eBPF key and the value last read for it. */
struct entry {
	struct tr2_agg_key k;
	struct tr2_agg_val v;
	int used;
};

/* A process's name and where it came from (higher wins). */
enum { NAME_NONE, NAME_COMM, NAME_ARGV0, NAME_CMD };
struct proc_name {
	uint32_t pid;
	int from;
	char *name;
};

/* A row of a table: the entries of one process (per process) or of one
 * program's processes (per program) with the same strings. */
struct row {
	uint32_t pid;
	uint64_t exec_id;
	const char *prog;       /* per program: the program's name; NULL per process */
	uint64_t seq;           /* per program, which of two rows merges first: see cmp_strings */
	uint64_t nprocs;        /* per program: the processes its table adds up */
	uint32_t kind;
	struct tr2_agg_val v;   /* its strings name the row: v.cat, v.label */
};

/* Per program: a program whose ended processes were added up. */
struct program {
	char *name;
	uint64_t procs;         /* how many: processes with values, told apart by (pid, exec_id) */
};

/* Per program: a process that has ended (TR2_REC_PROC_GONE), with its name
 * then, whose entries go into its program at the next table. */
struct gone {
	uint32_t pid;
	uint32_t order;         /* 0, 1, ...: the order they ended in */
	char *name;
};

struct tr2_summary {
	int aggs_fd, lost_fd, hist, table;
	struct tr2_dst *json;
	int64_t mono_to_real_ns;
	uint64_t start_ns, interval_ns, next_ns;
	struct entry *tab;      /* open addressing, cap a power of 2 */
	size_t cap, n;
	struct proc_name *names;
	int nnames, cap_names;
	uint64_t lost[TR2_AGG_LOST__COUNT];

	/* tr2_summary_set_per_program: the tables add up each program's
	 * processes; those that have ended leave tab for `folded`. */
	int per_program;
	struct gone *gone;      /* ended since the last table */
	int ngone, cap_gone;
	int gone_sorted;        /* gone is sorted by pid (find_gone) */
	struct program *progs;
	int nprogs, cap_progs;
	struct row *folded;     /* one row per (program, kind, strings); prog points into progs */
	int nfolded, cap_folded;
};

int64_t tr2_hist_percentile(const __u64 *hist, uint64_t count, int64_t min, int64_t max, double pct)
{
	uint64_t rank, below = 0;
	double lo, hi, v;
	int i;

	if (!count)
		return 0;
	rank = (uint64_t)(pct / 100.0 * (double)count);
	if ((double)rank < pct / 100.0 * (double)count)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > count)
		rank = count;
	for (i = 0; i < TR2_AGG_SLOTS - 1 && below + hist[i] < rank; i++)
		below += hist[i];
	if (!hist[i])   /* the slots do not add up to count (read while it changed) */
		return max;
	lo = i ? (double)(1ull << i) : 0;
	hi = i < 63 ? (double)(1ull << (i + 1)) : 18446744073709551616.0;
	v = lo + (hi - lo) * (double)(rank - below) / (double)hist[i];
	if (v < (double)min)
		return min;
	if (v > (double)max)
		return max;
	return (int64_t)v;
}

static void add_fmt(struct tr2_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_fmt(struct tr2_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vsnprintf(tr2_buf_reserve(b, n), n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void tr2_hist_print(struct tr2_buf *b, const __u64 *hist, int nslots, const char *unit)
{
	int idx_max = -1, stars_max = 40, stars, width;
	uint64_t val_max = 0;

	for (int i = 0; i < nslots; i++) {
		if (hist[i])
			idx_max = i;
		if (hist[i] > val_max)
			val_max = hist[i];
	}
	if (idx_max < 0)
		return;
	add_fmt(b, "%*s%-*s : count    distribution\n", idx_max <= 32 ? 5 : 15, "",
		idx_max <= 32 ? 19 : 29, unit);
	stars = idx_max <= 32 ? stars_max : stars_max / 2;
	width = idx_max <= 32 ? 10 : 20;
	for (int i = 0; i <= idx_max; i++) {
		unsigned long long low = (1ull << i), high = i < 63 ? (1ull << (i + 1)) - 1 : ~0ull;
		int n = (int)(hist[i] * stars / val_max);

		if (i == 0)
			low = 0;
		add_fmt(b, "%*llu -> %-*llu : %-8llu |", width, low, width, high,
			(unsigned long long)hist[i]);
		memset(tr2_buf_reserve(b, stars), '*', n);
		memset(b->p + b->len + n, ' ', stars - n);
		b->len += stars;
		tr2_buf_addlit(b, "|\n");
	}
}

void tr2_agg_merge(struct tr2_agg_val *into, const struct tr2_agg_val *from)
{
	if (from->count) {
		if (!into->count || from->min < into->min)
			into->min = from->min;
		if (!into->count || from->max > into->max)
			into->max = from->max;
		into->last = from->last;
	}
	into->count += from->count;
	into->sum += from->sum;
	into->open += from->open;
	into->before += from->before;
	for (int i = 0; i < TR2_AGG_SLOTS; i++)
		into->hist[i] += from->hist[i];
}

struct tr2_summary *tr2_summary_new(int aggs_fd, int lost_fd, int hist, int table, struct tr2_dst *json,
				    int64_t mono_to_real_ns, uint64_t start_ns)
{
	struct tr2_summary *s = calloc(1, sizeof(*s));

	if (!s)
		abort();
	s->aggs_fd = aggs_fd;
	s->lost_fd = lost_fd;
	s->hist = hist;
	s->table = table;
	s->json = json;
	s->mono_to_real_ns = mono_to_real_ns;
	s->start_ns = start_ns;
	return s;
}

void tr2_summary_set_interval(struct tr2_summary *s, uint64_t interval_ns)
{
	s->interval_ns = interval_ns;
	s->next_ns = interval_ns ? s->start_ns + interval_ns : 0;
}

static void set_name(struct tr2_summary *s, uint32_t pid, const char *name, int from)
{
	int i;

	for (i = 0; i < s->nnames && s->names[i].pid != pid; i++)
		;
	if (i == s->nnames) {
		s->names = tr2_grow(s->names, s->nnames, &s->cap_names, sizeof(*s->names));
		s->names[i].pid = pid;
		s->names[i].from = NAME_NONE;
		s->names[i].name = NULL;
		s->nnames++;
	}
	if (from < s->names[i].from)
		return;
	free(s->names[i].name);
	s->names[i].name = name ? strdup(name) : NULL;
	s->names[i].from = name ? from : NAME_NONE;
}

void tr2_summary_set_name(struct tr2_summary *s, uint32_t pid, const char *name)
{
	set_name(s, pid, name, NAME_CMD);
}

void tr2_summary_set_per_program(struct tr2_summary *s, int on)
{
	s->per_program = on;
}

static const char *name_of(struct tr2_summary *s, uint32_t pid);

/* Per program: process pid has ended; its name goes with it into the gone
 * list (a later process with its pid starts unnamed). */
static void proc_gone(struct tr2_summary *s, uint32_t pid)
{
	char *name = strdup(name_of(s, pid));

	if (!name)
		abort();
	s->gone = tr2_grow(s->gone, s->ngone, &s->cap_gone, sizeof(*s->gone));
	s->gone[s->ngone].pid = pid;
	s->gone[s->ngone].order = (uint32_t)s->ngone;
	s->gone[s->ngone++].name = name;
	s->gone_sorted = 0;
	for (int i = 0; i < s->nnames; i++)
		if (s->names[i].pid == pid) {
			free(s->names[i].name);
			s->names[i] = s->names[--s->nnames];
			break;
		}
}

static int cmp_gone(const void *a, const void *b)
{
	const struct gone *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The gone-list entry of pid, or NULL (the gone list can be long: every
 * process that ended since the last table). */
static struct gone *find_gone(struct tr2_summary *s, uint32_t pid)
{
	struct gone key = { .pid = pid };
	int lo = 0, hi = s->ngone;

	if (!s->gone_sorted && s->ngone)
		qsort(s->gone, s->ngone, sizeof(*s->gone), cmp_gone);
	s->gone_sorted = 1;
	while (lo < hi) {   /* the first entry of pid: bsearch may find any */
		int mid = lo + (hi - lo) / 2;

		if (cmp_gone(&s->gone[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->ngone && s->gone[lo].pid == pid ? &s->gone[lo] : NULL;
}

/* Until the summary is fed the model's events (in the works): names none. */
void tr2_summary_record(struct tr2_summary *s, const void *d)
{
	(void)s;
	(void)d;
	(void)set_name;
	(void)proc_gone;
}

static size_t key_hash(const struct tr2_agg_key *k)
{
	uint64_t h = k->pid * 0x9e3779b97f4a7c15ull;

	h = (h ^ k->flags ^ k->exec_id) * 0x9e3779b97f4a7c15ull;
	h = (h ^ k->cat) * 0x9e3779b97f4a7c15ull;
	h = (h ^ k->label) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 31;
}

void tr2_summary_put(struct tr2_summary *s, const struct tr2_agg_key *k, const struct tr2_agg_val *v)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct entry *old = s->tab;
		size_t oldcap = s->cap;

		s->cap = s->cap ? 2 * s->cap : 256;
		s->tab = calloc(s->cap, sizeof(*s->tab));
		if (!s->tab)
			abort();
		s->n = 0;
		for (size_t j = 0; j < oldcap; j++)
			if (old[j].used)
				tr2_summary_put(s, &old[j].k, &old[j].v);
		free(old);
	}
	for (i = key_hash(k) & (s->cap - 1); s->tab[i].used; i = (i + 1) & (s->cap - 1))
		if (!memcmp(&s->tab[i].k, k, sizeof(*k)))
			break;
	if (!s->tab[i].used) {
		s->tab[i].used = 1;
		s->tab[i].k = *k;
		s->n++;
	}
	s->tab[i].v = *v;
	/* The names come from the eBPF side: make sure they end. */
	s->tab[i].v.cat[TR2_AGG_CAT_MAX - 1] = 0;
	s->tab[i].v.label[TR2_AGG_LABEL_MAX - 1] = 0;
}

/* Whether process pid has exited and been reaped. */
static int pid_gone(uint32_t pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

static void read_maps(struct tr2_summary *s)
{
	struct tr2_agg_key key, next, *prev = NULL, *dead = NULL;
	struct tr2_agg_val v;
	int ndead = 0, cap = 0, ncpu;
	uint32_t gone_pid = 0, live_pid = 0;

	if (s->aggs_fd < 0)
		return;
	while (!bpf_map_get_next_key(s->aggs_fd, prev, &next)) {
		int gone;

		key = next;
		prev = &key;
		/* Whether the process is gone is decided before its value is
		 * read: then that value is its last, and the entry can go.  Per
		 * program, one that has ended (not reaped yet) is gone too: its
		 * entries are added into its program, so must not be read again. */
		gone = key.pid == gone_pid ||
		       (key.pid != live_pid && (find_gone(s, key.pid) || pid_gone(key.pid)));
		if (gone)
			gone_pid = key.pid;
		else
			live_pid = key.pid;
		if (bpf_map_lookup_elem(s->aggs_fd, &key, &v))
			continue;
		tr2_summary_put(s, &key, &v);
		if (gone) {
			dead = tr2_grow(dead, ndead, &cap, sizeof(*dead));
			dead[ndead++] = key;
		}
	}
	for (int i = 0; i < ndead; i++)
		bpf_map_delete_elem(s->aggs_fd, &dead[i]);
	free(dead);

	ncpu = libbpf_num_possible_cpus();
	if (s->lost_fd < 0 || ncpu <= 0)
		return;
	uint64_t *per = calloc(ncpu, sizeof(*per));

	if (!per)
		abort();
	for (uint32_t i = 0; i < TR2_AGG_LOST__COUNT; i++) {
		if (bpf_map_lookup_elem(s->lost_fd, &i, per))
			continue;
		s->lost[i] = 0;
		for (int c = 0; c < ncpu; c++)
			s->lost[i] += per[c];
	}
	free(per);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a, *y = *(const struct entry *const *)b;
	int c;

	if (x->k.pid != y->k.pid)
		return x->k.pid < y->k.pid ? -1 : 1;
	if (x->k.exec_id != y->k.exec_id)
		return x->k.exec_id < y->k.exec_id ? -1 : 1;
	if ((x->k.flags & 3) != (y->k.flags & 3))
		return (x->k.flags & 3) < (y->k.flags & 3) ? -1 : 1;
	c = strcmp(x->v.cat, y->v.cat);
	return c ? c : strcmp(x->v.label, y->v.label);
}

/* Per process (pid, exec_id) or per program (by name); then regions by
 * total time, largest first, then by name; data by name. */
static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if (x->prog && y->prog) {
		if ((c = strcmp(x->prog, y->prog)))
			return c;
	} else {
		if (x->pid != y->pid)
			return x->pid < y->pid ? -1 : 1;
		if (x->exec_id != y->exec_id)
			return x->exec_id < y->exec_id ? -1 : 1;
	}
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == TR2_AGGK_REGION && x->v.sum != y->v.sum)
		return x->v.sum > y->v.sum ? -1 : 1;
	c = strcmp(x->v.cat, y->v.cat);
	return c ? c : strcmp(x->v.label, y->v.label);
}

/* Per program: the order of rows by (program, kind, category, label), then
 * seq: ended processes first (seq 0 once added up; before that, the order
 * they ended in from 1), then the live ones (seq UINT64_MAX) by pid and
 * exec_id, so that merging in this order leaves a data row's `last` to
 * the last of them. */
static int cmp_strings(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->prog, y->prog);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if ((c = strcmp(x->v.cat, y->v.cat)) || (c = strcmp(x->v.label, y->v.label)))
		return c;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->exec_id < y->exec_id ? -1 : x->exec_id > y->exec_id;
}

/* Sorts r[0..n) by cmp_strings and merges the rows of equal strings into
 * the first of them; returns the rows left. */
static int merge_rows(struct row *r, int n)
{
	int nr = 0;

	if (n)
		qsort(r, n, sizeof(*r), cmp_strings);
	for (int i = 0; i < n; i++) {
		if (nr && !strcmp(r[nr - 1].prog, r[i].prog) && r[nr - 1].kind == r[i].kind &&
		    !strcmp(r[nr - 1].v.cat, r[i].v.cat) && !strcmp(r[nr - 1].v.label, r[i].v.label)) {
			tr2_agg_merge(&r[nr - 1].v, &r[i].v);
			continue;
		}
		r[nr++] = r[i];
	}
	return nr;
}

/* The program named name (made on first sight). */
static struct program *program_of(struct tr2_summary *s, const char *name)
{
	for (int i = 0; i < s->nprogs; i++)
		if (!strcmp(s->progs[i].name, name))
			return &s->progs[i];
	s->progs = tr2_grow(s->progs, s->nprogs, &s->cap_progs, sizeof(*s->progs));
	s->progs[s->nprogs].name = strdup(name);
	if (!s->progs[s->nprogs].name)
		abort();
	s->progs[s->nprogs].procs = 0;
	return &s->progs[s->nprogs++];
}

static int cmp_pid_exec(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->exec_id < y->exec_id ? -1 : x->exec_id > y->exec_id;
}

/*
 * Per program: the entries of the processes that have ended (the gone
 * list) leave tab and are added into their programs' rows (folded), so
 * that what is kept is bounded by the processes alive and the programs
 * seen, not by every process that has come and gone; each (pid, exec_id)
 * among them counts as one process of its program.
 */
static void fold_gone(struct tr2_summary *s)
{
	struct entry *kept;
	struct row *added;
	int nadded = 0, nkept = 0;

	if (!s->ngone)
		return;
	kept = malloc((s->n + 1) * sizeof(*kept));
	added = malloc((s->n + 1) * sizeof(*added));
	if (!kept || !added)
		abort();
	for (size_t i = 0; i < s->cap; i++) {
		struct entry *e = &s->tab[i];
		struct gone *g;

		if (!e->used)
			continue;
		g = find_gone(s, e->k.pid);
		if (!g) {
			kept[nkept++] = *e;
			continue;
		}
		memset(&added[nadded], 0, sizeof(added[nadded]));
		added[nadded].pid = e->k.pid;
		added[nadded].exec_id = e->k.exec_id;
		added[nadded].prog = program_of(s, g->name)->name;
		added[nadded].seq = 1 + (uint64_t)g->order;
		added[nadded].kind = e->k.flags & 3;
		added[nadded++].v = e->v;
	}
	/* the processes: one per (pid, exec_id) */
	if (nadded)
		qsort(added, nadded, sizeof(*added), cmp_pid_exec);
	for (int i = 0; i < nadded; i++)
		if (!i || cmp_pid_exec(&added[i - 1], &added[i]))
			program_of(s, added[i].prog)->procs++;
	/* tab without them */
	memset(s->tab, 0, s->cap * sizeof(*s->tab));
	s->n = 0;
	for (int i = 0; i < nkept; i++)
		tr2_summary_put(s, &kept[i].k, &kept[i].v);
	/* folded with them, one row per strings again */
	for (int i = 0; i < nadded; i++) {
		s->folded = tr2_grow(s->folded, s->nfolded, &s->cap_folded, sizeof(*s->folded));
		s->folded[s->nfolded++] = added[i];
	}
	s->nfolded = merge_rows(s->folded, s->nfolded);
	for (int i = 0; i < s->nfolded; i++)
		s->folded[i].seq = 0;
	for (int i = 0; i < s->ngone; i++)
		free(s->gone[i].name);
	s->ngone = 0;
	free(kept);
	free(added);
}

static int cmp_prog_pid(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->prog, y->prog);

	return c ? c : cmp_pid_exec(a, b);
}

/* Per program: the rows, the ended processes' and the live ones' merged by
 * (program, kind, strings), sorted as cmp_row sorts them; each program's
 * rows carry how many processes they add up (nprocs). */
static struct row *program_rows(struct tr2_summary *s, int *nrows)
{
	struct row *rows, *live;
	int nr = 0, nlive = 0;

	fold_gone(s);
	rows = malloc((s->n + s->nfolded + 1) * sizeof(*rows));
	live = malloc((s->n + 1) * sizeof(*live));
	if (!rows || !live)
		abort();
	for (int i = 0; i < s->nfolded; i++)
		rows[nr++] = s->folded[i];
	for (size_t i = 0; i < s->cap; i++) {
		const struct entry *e = &s->tab[i];

		if (!e->used)
			continue;
		memset(&rows[nr], 0, sizeof(rows[nr]));
		rows[nr].pid = e->k.pid;
		rows[nr].exec_id = e->k.exec_id;
		rows[nr].prog = name_of(s, e->k.pid);
		rows[nr].seq = UINT64_MAX;
		rows[nr].kind = e->k.flags & 3;
		rows[nr].v = e->v;
		live[nlive++] = rows[nr++];
	}
	nr = merge_rows(rows, nr);
	/* live processes: one per (program, pid, exec_id) */
	if (nlive)
		qsort(live, nlive, sizeof(*live), cmp_prog_pid);
	for (int i = 0; i < nr; i++) {
		if (i && !strcmp(rows[i - 1].prog, rows[i].prog)) {
			rows[i].nprocs = rows[i - 1].nprocs;
			continue;
		}
		rows[i].nprocs = 0;
		for (int j = 0; j < s->nprogs; j++)
			if (!strcmp(s->progs[j].name, rows[i].prog))
				rows[i].nprocs = s->progs[j].procs;
		for (int j = 0; j < nlive; j++)
			if (!strcmp(live[j].prog, rows[i].prog) && !(j && !cmp_prog_pid(&live[j - 1], &live[j])))
				rows[i].nprocs++;
	}
	free(live);
	if (nr)
		qsort(rows, nr, sizeof(*rows), cmp_row);
	*nrows = nr;
	return rows;
}

/* The rows: entries merged by (process, program, kind, strings), sorted;
 * per program, program_rows'. */
static struct row *make_rows(struct tr2_summary *s, int *nrows)
{
	struct entry **e;
	struct row *rows;
	size_t n = 0;
	int nr = 0;

	if (s->per_program)
		return program_rows(s, nrows);
	e = malloc((s->n + 1) * sizeof(*e));
	rows = malloc((s->n + 1) * sizeof(*rows));
	if (!e || !rows)
		abort();
	for (size_t i = 0; i < s->cap; i++)
		if (s->tab[i].used)
			e[n++] = &s->tab[i];
	qsort(e, n, sizeof(*e), cmp_entry);
	for (size_t i = 0; i < n; i++) {
		if (i && !cmp_entry(&e[i - 1], &e[i])) {
			tr2_agg_merge(&rows[nr - 1].v, &e[i]->v);
			continue;
		}
		memset(&rows[nr], 0, sizeof(rows[nr]));
		rows[nr].pid = e[i]->k.pid;
		rows[nr].exec_id = e[i]->k.exec_id;
		rows[nr].kind = e[i]->k.flags & 3;
		rows[nr].v = e[i]->v;
		nr++;
	}
	free(e);
	qsort(rows, nr, sizeof(*rows), cmp_row);
	*nrows = nr;
	return rows;
}

static const char *name_of(struct tr2_summary *s, uint32_t pid)
{
	for (int i = 0; i < s->nnames; i++)
		if (s->names[i].pid == pid && s->names[i].name)
			return s->names[i].name;
	return "?";
}

/* ns as PERF shows durations: truncated to µs, seconds with 6 decimals. */
static void add_secs(struct tr2_buf *b, int64_t ns, int width)
{
	tr2_buf_add_secs(b, ns / 1000, width);
}

static void add_json_secs(struct tr2_buf *b, const char *name, int64_t ns)
{
	add_fmt(b, ",\"%s\":", name);
	add_secs(b, ns, 0);
}

/* Opens the JSON object of row r (after a comma unless first): category and
 * label (named `what`). */
static void json_names(struct tr2_buf *js, int comma, const struct row *r, const char *what)
{
	if (comma)
		tr2_buf_putc(js, ',');
	tr2_buf_addlit(js, "{\"category\":");
	tr2_json_add_string(js, r->v.cat);
	add_fmt(js, ",\"%s\":", what);
	tr2_json_add_string(js, r->v.label);
}

static void format_process(struct tr2_summary *s, struct tr2_buf *b, struct tr2_buf *js,
			   const struct row *r, int n)
{
	int catw = 8, nreg = 0, ndata = 0, first;

	for (int i = 0; i < n; i++) {
		int w = strlen(r[i].v.cat);

		if (w > catw)
			catw = w;
		if (r[i].kind == TR2_AGGK_REGION)
			nreg++;
		else
			ndata++;
	}
	if (b && r[0].prog)
		add_fmt(b, "\nprogram %s: %llu process%s\n", r[0].prog, (unsigned long long)r[0].nprocs,
			r[0].nprocs == 1 ? "" : "es");
	else if (b)
		add_fmt(b, "\npid %u %s\n", r[0].pid, name_of(s, r[0].pid));
	if (b) {
		if (nreg)
			add_fmt(b, "%9s %10s %10s %10s %10s %10s %10s %5s %6s  %-*s %s\n", "count", "total",
				"mean", "min", "max", "p50", "p99", "open", "before", catw, "category", "label");
		for (int i = 0; i < nreg; i++) {
			const struct tr2_agg_val *v = &r[i].v;

			add_fmt(b, "%9llu ", (unsigned long long)v->count);
			if (v->count) {
				add_secs(b, v->sum, 10);
				tr2_buf_putc(b, ' ');
				add_secs(b, v->sum / (int64_t)v->count, 10);
				tr2_buf_putc(b, ' ');
				add_secs(b, v->min, 10);
				tr2_buf_putc(b, ' ');
				add_secs(b, v->max, 10);
				tr2_buf_putc(b, ' ');
				add_secs(b, tr2_hist_percentile(v->hist, v->count, v->min, v->max, 50), 10);
				tr2_buf_putc(b, ' ');
				add_secs(b, tr2_hist_percentile(v->hist, v->count, v->min, v->max, 99), 10);
			} else {
				add_fmt(b, "%10s %10s %10s %10s %10s %10s", "-", "-", "-", "-", "-", "-");
			}
			add_fmt(b, " %5llu %6llu  %-*s %s\n", (unsigned long long)v->open,
				(unsigned long long)v->before, catw, r[i].v.cat, r[i].v.label);
		}
		if (ndata)
			add_fmt(b, "%9s %10s %10s %10s %10s  %-*s %s\n", "count", "sum", "min", "max", "last",
				catw, "category", "key");
		for (int i = nreg; i < n; i++) {
			const struct tr2_agg_val *v = &r[i].v;

			add_fmt(b, "%9llu %10lld %10lld %10lld %10lld  %-*s %s\n", (unsigned long long)v->count,
				(long long)v->sum, (long long)v->min, (long long)v->max, (long long)v->last,
				catw, r[i].v.cat, r[i].v.label);
		}
		for (int i = 0; s->hist && i < nreg; i++) {
			if (!r[i].v.count)
				continue;
			add_fmt(b, "\n%s %s\n", r[i].v.cat, r[i].v.label);
			tr2_hist_print(b, r[i].v.hist, TR2_AGG_SLOTS, "nsecs");
		}
	}
	if (!js)
		return;
	if (r[0].prog) {
		tr2_buf_addlit(js, "{\"name\":");
		tr2_json_add_string(js, r[0].prog);
		add_fmt(js, ",\"processes\":%llu", (unsigned long long)r[0].nprocs);
	} else {
		add_fmt(js, "{\"pid\":%u,\"name\":", r[0].pid);
		tr2_json_add_string(js, name_of(s, r[0].pid));
	}
	tr2_buf_addlit(js, ",\"regions\":[");
	for (int i = 0; i < nreg; i++) {
		const struct tr2_agg_val *v = &r[i].v;

		json_names(js, i > 0, &r[i], "label");
		add_fmt(js, ",\"count\":%llu,\"open\":%llu,\"before\":%llu,\"total_ns\":%lld",
			(unsigned long long)v->count, (unsigned long long)v->open,
			(unsigned long long)v->before, (long long)v->sum);
		add_json_secs(js, "total", v->sum);
		if (v->count) {
			add_fmt(js, ",\"min_ns\":%lld,\"max_ns\":%lld", (long long)v->min, (long long)v->max);
			add_json_secs(js, "mean", v->sum / (int64_t)v->count);
			add_json_secs(js, "min", v->min);
			add_json_secs(js, "max", v->max);
			add_json_secs(js, "p50", tr2_hist_percentile(v->hist, v->count, v->min, v->max, 50));
			add_json_secs(js, "p99", tr2_hist_percentile(v->hist, v->count, v->min, v->max, 99));
		}
		tr2_buf_addlit(js, ",\"hist\":[");
		first = 1;
		for (int j = 0; j < TR2_AGG_SLOTS; j++) {
			if (!v->hist[j])
				continue;
			add_fmt(js, "%s{\"low\":%llu,\"high\":%llu,\"count\":%llu}", first ? "" : ",",
				j ? 1ull << j : 0ull, j < 63 ? (1ull << (j + 1)) - 1 : ~0ull,
				(unsigned long long)v->hist[j]);
			first = 0;
		}
		tr2_buf_addlit(js, "]}");
	}
	tr2_buf_addlit(js, "],\"data\":[");
	for (int i = nreg; i < n; i++) {
		const struct tr2_agg_val *v = &r[i].v;

		json_names(js, i > nreg, &r[i], "key");
		add_fmt(js, ",\"count\":%llu,\"sum\":%lld,\"min\":%lld,\"max\":%lld,\"last\":%lld}",
			(unsigned long long)v->count, (long long)v->sum, (long long)v->min,
			(long long)v->max, (long long)v->last);
	}
	tr2_buf_addlit(js, "]}");
}

void tr2_summary_format(struct tr2_summary *s, struct tr2_buf *b, struct tr2_buf *js,
			const char *stamp, double elapsed_s, int final)
{
	int nrows, first = 1;
	struct row *rows = make_rows(s, &nrows);
	uint64_t lost = s->lost[TR2_AGG_LOST_FULL] + s->lost[TR2_AGG_LOST_DEEP];

	if (b)
		add_fmt(b, "%s tr2-bpf summary after %.3f s%s: durations in seconds, p50 and p99 approximate\n",
			stamp, elapsed_s, final ? ", final" : "");
	if (js) {
		tr2_buf_addlit(js, "{\"time\":");
		tr2_json_add_string(js, stamp);
		add_fmt(js, ",\"elapsed\":%.3f,\"final\":%s,\"%s\":[", elapsed_s, final ? "true" : "false",
			s->per_program ? "programs" : "processes");
	}
	for (int i = 0, j; i < nrows; i = j) {
		for (j = i + 1; j < nrows && (s->per_program ? !strcmp(rows[j].prog, rows[i].prog) :
					      rows[j].pid == rows[i].pid && rows[j].exec_id == rows[i].exec_id); j++)
			;
		if (js && !first)
			tr2_buf_putc(js, ',');
		format_process(s, b, js, rows + i, j - i);
		first = 0;
	}
	if (b && !nrows)
		tr2_buf_addlit(b, "no regions or data values yet\n");
	if (b && lost)
		add_fmt(b, "\nnot aggregated: %llu events (key space full: %llu; regions nested deeper than %d: %llu)\n",
			(unsigned long long)lost, (unsigned long long)s->lost[TR2_AGG_LOST_FULL], TR2_REGION_MAX,
			(unsigned long long)s->lost[TR2_AGG_LOST_DEEP]);
	if (js)
		add_fmt(js, "],\"not_aggregated\":{\"key_space_full\":%llu,\"too_deep\":%llu}}\n",
			(unsigned long long)s->lost[TR2_AGG_LOST_FULL],
			(unsigned long long)s->lost[TR2_AGG_LOST_DEEP]);
	free(rows);
}

void tr2_summary_print(struct tr2_summary *s, uint64_t now_ns, int final)
{
	struct tr2_buf b = { 0 }, js = { 0 };
	char stamp[32];
	struct tm tm;
	time_t t;

	read_maps(s);
	t = (time_t)(((int64_t)now_ns + s->mono_to_real_ns) / 1000000000);
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	tr2_summary_format(s, s->table ? &b : NULL, s->json ? &js : NULL, stamp,
			   (double)(now_ns - s->start_ns) / 1e9, final);
	if (s->table) {
		fwrite(b.p, 1, b.len, stdout);
		fflush(stdout);
	}
	if (s->json && tr2_dst_write(s->json, "tr2-bpf-summary", js.p, js.len))
		s->json = NULL;   /* reported once by tr2_dst_write */
	tr2_buf_free(&b);
	tr2_buf_free(&js);
}

void tr2_summary_poll(struct tr2_summary *s, uint64_t now_ns)
{
	if (!s->interval_ns || now_ns < s->next_ns)
		return;
	while (s->next_ns <= now_ns)
		s->next_ns += s->interval_ns;
	tr2_summary_print(s, now_ns, 0);
}

/* The events a value took in: 2 per closed region, 1 per open one or early
 * leave, 1 per data value. */
static uint64_t events_of(uint32_t kind, const struct tr2_agg_val *v)
{
	return kind & TR2_AGGK_REGION ? 2 * v->count + v->open + v->before : v->count;
}

uint64_t tr2_summary_events(const struct tr2_summary *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->cap; i++)
		if (s->tab[i].used)
			n += events_of(s->tab[i].k.flags, &s->tab[i].v);
	for (int i = 0; i < s->nfolded; i++)
		n += events_of(s->folded[i].kind, &s->folded[i].v);
	return n;
}

uint64_t tr2_summary_lost(const struct tr2_summary *s)
{
	return s->lost[TR2_AGG_LOST_FULL] + s->lost[TR2_AGG_LOST_DEEP];
}

void tr2_summary_free(struct tr2_summary *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nnames; i++)
		free(s->names[i].name);
	for (int i = 0; i < s->ngone; i++)
		free(s->gone[i].name);
	for (int i = 0; i < s->nprogs; i++)
		free(s->progs[i].name);
	free(s->names);
	free(s->gone);
	free(s->progs);
	free(s->folded);
	free(s->tab);
	free(s);
}
