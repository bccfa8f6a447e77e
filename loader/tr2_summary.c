/* tr2_summary.c: tr2-bpf --summary (tr2_summary.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tr2_buf.h"
#include "tr2_dst.h"
#include "tr2_json.h"
#include "tr2_mem.h"
#include "tr2_summary.h"

enum { KIND_REGION = 1, KIND_DATA = 2 };             /* a table shows regions, then data */
enum { NAME_NONE, NAME_COMM, NAME_ARGV0, NAME_CMD }; /* where a name came from: higher wins */
enum { LOST_FULL, LOST_DEEP, LOST__COUNT };          /* why an event was not aggregated */

#define COMM_MAX 16        /* the kernel's TASK_COMM_LEN, NUL included */
#define PID_BUCKETS 1024

struct owner;

/* The aggregate of one key: (owner, kind, category, label or key). */
struct entry {
	struct entry *hnext;       /* hash chain */
	struct entry *onext;       /* the owner's entries */
	struct owner *owner;
	uint64_t strings_hash;     /* of kind, category and label (the owner apart: see hash_of) */
	uint64_t hash;
	uint32_t kind;
	uint32_t cat_len, label_len;
	char *cat, *label;         /* NUL-terminated, in the entry's allocation */
	struct tr2_agg v;
};

/* What entries belong to: a process, that is one session (a sid; its exec
 * starts another, under the same pid), or per program a program, which adds
 * up the processes of one name that have ended. */
struct owner {
	uint64_t id;               /* 1, 2, ... in the order made: a pid's images in order */
	uint32_t pid;              /* 0 for a program */
	char *sid;                 /* NULL for a program */
	char *name;                /* NULL: none yet */
	int name_from;             /* NAME_* */
	int ended;                 /* a process that has ended: its entries are out of the hash */
	uint64_t procs;            /* a program: the ended processes with values it adds up */
	unsigned long nkeys;       /* its entries */
	struct entry *entries;
	struct owner *prev, *next; /* in s->procs or s->programs */
};

/* A pid: its comm and its process now. */
struct pid_info {
	uint32_t pid;
	char comm[COMM_MAX];       /* "": not known */
	struct owner *cur;         /* NULL until its first event */
	struct pid_info *hnext;
};

struct tr2_summary {
	int hist, table, per_program;
	struct tr2_dst *json;
	int64_t mono_to_real_ns;
	uint64_t start_ns, interval_ns, next_ns;
	size_t max_keys, live_keys;       /* live_keys: the entries of processes alive */
	uint64_t last_id;
	struct entry **buckets;           /* the entries of processes alive and of programs */
	size_t nbuckets, nhashed;         /* nbuckets: a power of 2 */
	struct pid_info *pids[PID_BUCKETS];
	struct pid_info *last_pid;        /* look-up cache: events come in runs per process */
	struct owner *procs, *programs;
	uint64_t lost[LOST__COUNT];
};

int64_t tr2_hist_percentile(const uint64_t *hist, uint64_t count, int64_t min, int64_t max, double pct)
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
	for (i = 0; i < TR2_HIST_SLOTS - 1 && below + hist[i] < rank; i++)
		below += hist[i];
	if (!hist[i])   /* the slots do not add up to count */
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

void tr2_hist_print(struct tr2_buf *b, const uint64_t *hist, int nslots, const char *unit)
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

static void add_split(struct tr2_split *into, const struct tr2_split *from)
{
	into->count += from->count;
	into->wall += from->wall;
	for (int i = 0; i < TR2_STATE__COUNT; i++)
		into->ns[i] += from->ns[i];
}

void tr2_agg_merge(struct tr2_agg *into, const struct tr2_agg *from)
{
	if (from->count) {
		if (!into->count || from->min < into->min)
			into->min = from->min;
		if (!into->count || from->max > into->max)
			into->max = from->max;
		into->last = from->last;
	}
	into->count += from->count;
	into->sum = (int64_t)((uint64_t)into->sum + (uint64_t)from->sum);
	into->open += from->open;
	into->before += from->before;
	for (int i = 0; i < TR2_HIST_SLOTS; i++)
		into->hist[i] += from->hist[i];
	add_split(&into->split, &from->split);
	add_split(&into->split_before, &from->split_before);
}

struct tr2_summary *tr2_summary_new(int hist, int table, struct tr2_dst *json,
				    int64_t mono_to_real_ns, uint64_t start_ns)
{
	struct tr2_summary *s = xcalloc(1, sizeof(*s));

	s->hist = hist;
	s->table = table;
	s->json = json;
	s->mono_to_real_ns = mono_to_real_ns;
	s->start_ns = start_ns;
	s->max_keys = TR2_SUMMARY_KEYS;
	s->nbuckets = 256;
	s->buckets = xcalloc(s->nbuckets, sizeof(*s->buckets));
	return s;
}

void tr2_summary_set_interval(struct tr2_summary *s, uint64_t interval_ns)
{
	s->interval_ns = interval_ns;
	s->next_ns = interval_ns ? s->start_ns + interval_ns : 0;
}

void tr2_summary_set_keys(struct tr2_summary *s, size_t n)
{
	s->max_keys = n;
}

void tr2_summary_set_per_program(struct tr2_summary *s, int on)
{
	s->per_program = on;
}

/* --- keys: a hash table of entries, chained ------------------------------ */

static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 32;
}

/* Mixes the n bytes at p into h, 8 at a time. */
static inline uint64_t hash_bytes(uint64_t h, const char *p, size_t n)
{
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = mix(h, w);
	}
	w = n;   /* the tail's bytes above its length */
	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)(unsigned char)p[i] << (8 * i + 8);
	return mix(h, w);
}

/* The hash of an entry's key: its strings' hash with its owner mixed in,
 * so that an ended process's entries are added into its program's by the
 * strings' hash alone. */
static inline uint64_t hash_of(uint64_t strings_hash, const struct owner *o)
{
	return mix(strings_hash, o->id);
}

static struct entry *find_entry(struct tr2_summary *s, const struct owner *o, uint32_t kind,
				uint64_t hash, const char *cat, size_t cat_len, const char *label,
				size_t label_len)
{
	struct entry *e;

	for (e = s->buckets[hash & (s->nbuckets - 1)]; e; e = e->hnext)
		if (e->hash == hash && e->owner == o && e->kind == kind && e->cat_len == cat_len &&
		    e->label_len == label_len && !memcmp(e->cat, cat, cat_len) &&
		    !memcmp(e->label, label, label_len))
			return e;
	return NULL;
}

static void hash_entry(struct tr2_summary *s, struct entry *e)
{
	struct entry **b = &s->buckets[e->hash & (s->nbuckets - 1)];

	e->hnext = *b;
	*b = e;
}

/* Doubles the buckets when the entries outnumber them. */
static void grow_buckets(struct tr2_summary *s)
{
	struct entry **old = s->buckets;
	size_t n = s->nbuckets;

	s->nbuckets *= 2;
	s->buckets = xcalloc(s->nbuckets, sizeof(*s->buckets));
	for (size_t i = 0; i < n; i++)
		for (struct entry *e = old[i], *next; e; e = next) {
			next = e->hnext;
			hash_entry(s, e);
		}
	free(old);
}

static struct entry *add_entry(struct tr2_summary *s, struct owner *o, uint32_t kind, uint64_t strings_hash,
			       uint64_t hash, const char *cat, size_t cat_len, const char *label,
			       size_t label_len)
{
	struct entry *e = xcalloc(1, sizeof(*e) + cat_len + label_len + 2);

	e->owner = o;
	e->kind = kind;
	e->strings_hash = strings_hash;
	e->hash = hash;
	e->cat = (char *)(e + 1);
	e->cat_len = (uint32_t)cat_len;
	memcpy(e->cat, cat, cat_len);
	e->label = e->cat + cat_len + 1;
	e->label_len = (uint32_t)label_len;
	memcpy(e->label, label, label_len);
	e->onext = o->entries;
	o->entries = e;
	o->nkeys++;
	hash_entry(s, e);
	if (++s->nhashed > s->nbuckets)
		grow_buckets(s);
	return e;
}

static void unhash_entry(struct tr2_summary *s, struct entry *e)
{
	struct entry **pp;

	for (pp = &s->buckets[e->hash & (s->nbuckets - 1)]; *pp != e; pp = &(*pp)->hnext)
		;
	*pp = e->hnext;
	s->nhashed--;
}

/* The entry of key (o, kind, category, label) of a live process, made when
 * new if there is room; NULL when there is none. */
static struct entry *entry_of(struct tr2_summary *s, struct owner *o, uint32_t kind, const char *cat,
			      const char *label)
{
	size_t cat_len, label_len;
	uint64_t sh, h;
	struct entry *e;

	cat = cat ? cat : "";
	label = label ? label : "";
	cat_len = strlen(cat);
	label_len = strlen(label);
	sh = hash_bytes(hash_bytes(kind, cat, cat_len), label, label_len);
	h = hash_of(sh, o);
	if ((e = find_entry(s, o, kind, h, cat, cat_len, label, label_len)))
		return e;
	if (s->live_keys >= s->max_keys)
		return NULL;
	s->live_keys++;
	return add_entry(s, o, kind, sh, h, cat, cat_len, label, label_len);
}

/* --- processes and programs ------------------------------------------------ */

static struct owner *new_owner(struct tr2_summary *s, struct owner **list, uint32_t pid, const char *sid)
{
	struct owner *o = xcalloc(1, sizeof(*o));

	o->id = ++s->last_id;
	o->pid = pid;
	o->sid = sid ? xstrdup(sid) : NULL;
	o->next = *list;
	if (*list)
		(*list)->prev = o;
	*list = o;
	return o;
}

/* Unlinks o from list and frees it with its entries. */
static void drop_owner(struct tr2_summary *s, struct owner **list, struct owner *o)
{
	for (struct entry *e = o->entries, *next; e; e = next) {
		next = e->onext;
		if (!o->ended)
			unhash_entry(s, e);
		free(e);
	}
	if (o->prev)
		o->prev->next = o->next;
	else
		*list = o->next;
	if (o->next)
		o->next->prev = o->prev;
	free(o->sid);
	free(o->name);
	free(o);
}

static void set_name(struct owner *o, const char *name, int from)
{
	if (from < o->name_from)
		return;
	free(o->name);
	o->name = xstrdup(name);
	o->name_from = from;
}

static const char *name_of(const struct owner *o)
{
	return o->name ? o->name : "?";
}

/* The program named name (made on first sight). */
static struct owner *program_of(struct tr2_summary *s, const char *name)
{
	struct owner *o;

	for (o = s->programs; o; o = o->next)
		if (!strcmp(o->name, name))
			return o;
	o = new_owner(s, &s->programs, 0, NULL);
	set_name(o, name, NAME_CMD);
	return o;
}

/* Process o has ended: its keys leave the key space.  Per program, its
 * entries are added into its program's (one process more when it has any)
 * and it is forgotten; per process its entries stay for the tables, out of
 * the hash (nothing looks them up again), unless it has none. */
static void end_process(struct tr2_summary *s, struct owner *o)
{
	s->live_keys -= o->nkeys;
	if (s->per_program) {
		struct owner *prog = program_of(s, name_of(o));

		prog->procs += o->nkeys != 0;
		for (struct entry *e = o->entries; e; e = e->onext) {
			uint64_t h = hash_of(e->strings_hash, prog);
			struct entry *pe = find_entry(s, prog, e->kind, h, e->cat, e->cat_len, e->label,
						      e->label_len);

			if (!pe)
				pe = add_entry(s, prog, e->kind, e->strings_hash, h, e->cat, e->cat_len,
					       e->label, e->label_len);
			tr2_agg_merge(&pe->v, &e->v);
		}
	} else if (o->nkeys) {
		for (struct entry *e = o->entries; e; e = e->onext)
			unhash_entry(s, e);
		o->ended = 1;
		return;
	}
	drop_owner(s, &s->procs, o);
}

static struct pid_info *pid_info_of(struct tr2_summary *s, uint32_t pid)
{
	struct pid_info *p = s->last_pid;

	if (p && p->pid == pid)
		return p;
	for (p = s->pids[pid % PID_BUCKETS]; p && p->pid != pid; p = p->hnext)
		;
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		p->pid = pid;
		p->hnext = s->pids[pid % PID_BUCKETS];
		s->pids[pid % PID_BUCKETS] = p;
	}
	return s->last_pid = p;
}

/* The process of session sid in pid: the pid's process now, or a new one
 * (exec) that ends it. */
static struct owner *process_of(struct tr2_summary *s, uint32_t pid, const char *sid)
{
	struct pid_info *p = pid_info_of(s, pid);

	sid = sid ? sid : "";
	if (p->cur && !strcmp(p->cur->sid, sid))
		return p->cur;
	if (p->cur)
		end_process(s, p->cur);
	p->cur = new_owner(s, &s->procs, pid, sid);
	if (p->comm[0])
		set_name(p->cur, p->comm, NAME_COMM);
	return p->cur;
}

void tr2_summary_comm(struct tr2_summary *s, uint32_t pid, const char *comm)
{
	struct pid_info *p = pid_info_of(s, pid);

	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	if (p->cur && p->cur->name_from == NAME_NONE && p->comm[0])
		set_name(p->cur, p->comm, NAME_COMM);
}

void tr2_summary_proc_gone(struct tr2_summary *s, uint32_t pid)
{
	struct pid_info **pp, *p;

	for (pp = &s->pids[pid % PID_BUCKETS]; *pp && (*pp)->pid != pid; pp = &(*pp)->hnext)
		;
	if (!(p = *pp))
		return;
	*pp = p->hnext;
	if (s->last_pid == p)
		s->last_pid = NULL;
	if (p->cur)
		end_process(s, p->cur);
	free(p);
}

/* --- events -------------------------------------------------------------- */

/* floor(log2(v)), 0 for v < 2: the histogram slot of a duration. */
static inline int log2_slot(uint64_t v)
{
	return v < 2 ? 0 : 63 - __builtin_clzll(v);
}

/* One more value x: count, sum (wrapping), min, max. */
static inline void add_value(struct tr2_agg *v, int64_t x)
{
	if (!v->count || x < v->min)
		v->min = x;
	if (!v->count || x > v->max)
		v->max = x;
	v->count++;
	v->sum = (int64_t)((uint64_t)v->sum + (uint64_t)x);
}

void tr2_summary_event(struct tr2_summary *s, uint32_t pid, const struct tr2_ev *ev)
{
	struct entry *e;
	int64_t len;

	switch (ev->kind) {
	case TR2_EV_REGION_ENTER:
	case TR2_EV_REGION_LEAVE:
		if (ev->nesting > TR2_SUMMARY_NESTING_MAX) {
			s->lost[LOST_DEEP]++;
			return;
		}
		e = entry_of(s, process_of(s, pid, ev->sid), KIND_REGION, ev->category, ev->label);
		break;
	case TR2_EV_DATA:
		if (!ev->has_intval)
			return;
		e = entry_of(s, process_of(s, pid, ev->sid), KIND_DATA, ev->category, ev->key);
		break;
	case TR2_EV_CMD_NAME:
		set_name(process_of(s, pid, ev->sid), ev->name, NAME_CMD);
		return;
	case TR2_EV_START:
		if (ev->argv && ev->argv[0])
			set_name(process_of(s, pid, ev->sid), ev->argv[0], NAME_ARGV0);
		return;
	default:
		return;
	}
	if (!e) {
		s->lost[LOST_FULL]++;
		return;
	}
	switch (ev->kind) {
	case TR2_EV_REGION_ENTER:
		e->v.open++;
		break;
	case TR2_EV_REGION_LEAVE:
		if (ev->has_split) {
			struct tr2_split one = { .count = 1, .wall = ev->split_wall_ns };

			memcpy(one.ns, ev->split_ns, sizeof(one.ns));
			add_split(ev->split_since_trace ? &e->v.split_before : &e->v.split, &one);
		}
		if (!ev->has_t_rel) {
			e->v.before++;
			break;
		}
		len = ev->t_rel_ns > 0 ? ev->t_rel_ns : 0;
		add_value(&e->v, len);
		e->v.hist[log2_slot((uint64_t)len)]++;
		/* none open: left under other strings than it was entered */
		if (e->v.open)
			e->v.open--;
		break;
	default:
		add_value(&e->v, ev->intval);
		e->v.last = ev->intval;
		break;
	}
}

/* --- tables ---------------------------------------------------------------- */

/* A row of a table: an entry of a process, or per program the entries of
 * one program's processes with the same strings added up. */
struct row {
	uint32_t pid;           /* per program: 0 once added up */
	uint64_t id;            /* the process's owner id (a pid's images in order); per program 0 */
	const char *name;       /* the process's or the program's */
	uint64_t nprocs;        /* per program: the processes its table adds up */
	uint32_t kind;
	const char *cat, *label;
	struct tr2_agg v;
};

static void row_of(struct row *r, const struct owner *o, const struct entry *e)
{
	memset(r, 0, sizeof(*r));
	r->pid = o->pid;
	r->id = o->id;
	r->name = name_of(o);
	r->kind = e->kind;
	r->cat = e->cat;
	r->label = e->label;
	r->v = e->v;
}

/* The order of the rows: per process by (pid, id), per program by name
 * (pid and id 0); then regions by total time, largest first, then by
 * name; data by name. */
static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if ((c = strcmp(x->name, y->name)))
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == KIND_REGION && x->v.sum != y->v.sum)
		return x->v.sum > y->v.sum ? -1 : 1;
	c = strcmp(x->cat, y->cat);
	return c ? c : strcmp(x->label, y->label);
}

/* Per program, the order in which rows of the same strings are added up:
 * the program's (pid 0: its ended processes) first, then the live ones by
 * pid and id, so that a data row's `last` is the last of them. */
static int cmp_strings(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if ((c = strcmp(x->name, y->name)))
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if ((c = strcmp(x->cat, y->cat)) || (c = strcmp(x->label, y->label)))
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Per program: rows r[0..n) added up by (program, kind, strings), each
 * program's rows with its number of processes; returns the rows left. */
static int program_rows(struct tr2_summary *s, struct row *r, int n)
{
	int nr = 0;

	if (n)
		qsort(r, n, sizeof(*r), cmp_strings);
	for (int i = 0; i < n; i++) {
		struct row *last = nr ? &r[nr - 1] : NULL;

		if (last && !strcmp(last->name, r[i].name) && last->kind == r[i].kind &&
		    !strcmp(last->cat, r[i].cat) && !strcmp(last->label, r[i].label)) {
			tr2_agg_merge(&last->v, &r[i].v);
			continue;
		}
		r[nr] = r[i];
		r[nr].pid = 0;
		r[nr].id = 0;
		if (last && !strcmp(last->name, r[i].name)) {
			r[nr++].nprocs = last->nprocs;
			continue;
		}
		/* a program's first row: its ended processes, then its live ones with values */
		for (const struct owner *o = s->programs; o; o = o->next)
			if (!strcmp(o->name, r[nr].name))
				r[nr].nprocs = o->procs;
		for (const struct owner *o = s->procs; o; o = o->next)
			if (o->nkeys && !strcmp(name_of(o), r[nr].name))
				r[nr].nprocs++;
		nr++;
	}
	return nr;
}

/* The rows of a table, sorted. */
static struct row *make_rows(struct tr2_summary *s, int *nrows)
{
	unsigned long n = 0;
	struct row *rows;
	int nr = 0;

	for (const struct owner *o = s->procs; o; o = o->next)
		n += o->nkeys;
	for (const struct owner *o = s->programs; o; o = o->next)
		n += o->nkeys;
	rows = xcalloc(n + 1, sizeof(*rows));
	for (const struct owner *o = s->procs; o; o = o->next)
		for (const struct entry *e = o->entries; e; e = e->onext)
			row_of(&rows[nr++], o, e);
	for (const struct owner *o = s->programs; o; o = o->next)
		for (const struct entry *e = o->entries; e; e = e->onext)
			row_of(&rows[nr++], o, e);
	if (s->per_program)
		nr = program_rows(s, rows, nr);
	if (nr)
		qsort(rows, nr, sizeof(*rows), cmp_row);
	*nrows = nr;
	return rows;
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
	tr2_json_add_string(js, r->cat);
	add_fmt(js, ",\"%s\":", what);
	tr2_json_add_string(js, r->label);
}

/* A row of the split table: sp's count, time and parts, totals then per
 * call, since `since`. */
static void split_row(struct tr2_buf *b, const struct tr2_split *sp, const char *since, int catw,
		      const struct row *r)
{
	add_fmt(b, "%9llu ", (unsigned long long)sp->count);
	add_secs(b, sp->wall, 10);
	for (int i = 0; i < TR2_STATE__COUNT; i++) {
		tr2_buf_putc(b, ' ');
		add_secs(b, sp->ns[i], 10);
	}
	for (int i = 0; i < TR2_STATE__COUNT; i++) {
		tr2_buf_putc(b, ' ');
		add_secs(b, sp->ns[i] / (int64_t)sp->count, 13);
	}
	add_fmt(b, "  %-6s  %-*s %s\n", since, catw, r->cat, r->label);
}

/* Where the regions' time went (tr2_split), after a blank line: a row per
 * region with a split since its enter, and one for those entered before
 * the counting began (since: "attach"); nothing when none has one. */
static void format_splits(struct tr2_buf *b, const struct row *r, int nreg, int catw)
{
	int any = 0;

	for (int i = 0; i < nreg; i++)
		any |= r[i].v.split.count || r[i].v.split_before.count;
	if (!any)
		return;
	add_fmt(b, "\n%9s %10s %10s %10s %10s %10s %13s %13s %13s %13s  %-6s  %-*s %s\n", "count", "total",
		"on_cpu", "runnable", "blocked", "asleep", "on_cpu/call", "runnable/call", "blocked/call",
		"asleep/call", "since", catw, "category", "label");
	for (int i = 0; i < nreg; i++) {
		if (r[i].v.split.count)
			split_row(b, &r[i].v.split, "enter", catw, &r[i]);
		if (r[i].v.split_before.count)
			split_row(b, &r[i].v.split_before, "attach", catw, &r[i]);
	}
}

/* A split as JSON: ,"<name>":{"count":..,"total_ns":..,"<state>_ns":..,
 * "total":s,"<state>":s,"<state>_per_call":s}. */
static void json_split(struct tr2_buf *js, const char *name, const struct tr2_split *sp)
{
	add_fmt(js, ",\"%s\":{\"count\":%llu,\"total_ns\":%lld", name, (unsigned long long)sp->count,
		(long long)sp->wall);
	for (int i = 0; i < TR2_STATE__COUNT; i++)
		add_fmt(js, ",\"%s_ns\":%lld", tr2_state_name(i), (long long)sp->ns[i]);
	add_json_secs(js, "total", sp->wall);
	for (int i = 0; i < TR2_STATE__COUNT; i++)
		add_json_secs(js, tr2_state_name(i), sp->ns[i]);
	for (int i = 0; i < TR2_STATE__COUNT; i++) {
		add_fmt(js, ",\"%s_per_call\":", tr2_state_name(i));
		add_secs(js, sp->count ? sp->ns[i] / (int64_t)sp->count : 0, 0);
	}
	tr2_buf_putc(js, '}');
}

static void format_process(struct tr2_summary *s, struct tr2_buf *b, struct tr2_buf *js,
			   const struct row *r, int n)
{
	int catw = 8, nreg = 0, ndata = 0, first;

	for (int i = 0; i < n; i++) {
		int w = strlen(r[i].cat);

		if (w > catw)
			catw = w;
		if (r[i].kind == KIND_REGION)
			nreg++;
		else
			ndata++;
	}
	if (b && s->per_program)
		add_fmt(b, "\nprogram %s: %llu process%s\n", r[0].name, (unsigned long long)r[0].nprocs,
			r[0].nprocs == 1 ? "" : "es");
	else if (b)
		add_fmt(b, "\npid %u %s\n", r[0].pid, r[0].name);
	if (b) {
		if (nreg)
			add_fmt(b, "%9s %10s %10s %10s %10s %10s %10s %5s %6s  %-*s %s\n", "count", "total",
				"mean", "min", "max", "p50", "p99", "open", "before", catw, "category", "label");
		for (int i = 0; i < nreg; i++) {
			const struct tr2_agg *v = &r[i].v;

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
				(unsigned long long)v->before, catw, r[i].cat, r[i].label);
		}
		if (ndata)
			add_fmt(b, "%9s %10s %10s %10s %10s  %-*s %s\n", "count", "sum", "min", "max", "last",
				catw, "category", "key");
		for (int i = nreg; i < n; i++) {
			const struct tr2_agg *v = &r[i].v;

			add_fmt(b, "%9llu %10lld %10lld %10lld %10lld  %-*s %s\n", (unsigned long long)v->count,
				(long long)v->sum, (long long)v->min, (long long)v->max, (long long)v->last,
				catw, r[i].cat, r[i].label);
		}
		format_splits(b, r, nreg, catw);
		for (int i = 0; s->hist && i < nreg; i++) {
			if (!r[i].v.count)
				continue;
			add_fmt(b, "\n%s %s\n", r[i].cat, r[i].label);
			tr2_hist_print(b, r[i].v.hist, TR2_HIST_SLOTS, "nsecs");
		}
	}
	if (!js)
		return;
	if (s->per_program) {
		tr2_buf_addlit(js, "{\"name\":");
		tr2_json_add_string(js, r[0].name);
		add_fmt(js, ",\"processes\":%llu", (unsigned long long)r[0].nprocs);
	} else {
		add_fmt(js, "{\"pid\":%u,\"name\":", r[0].pid);
		tr2_json_add_string(js, r[0].name);
	}
	tr2_buf_addlit(js, ",\"regions\":[");
	for (int i = 0; i < nreg; i++) {
		const struct tr2_agg *v = &r[i].v;

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
		if (v->split.count)
			json_split(js, "split", &v->split);
		if (v->split_before.count)
			json_split(js, "split_before", &v->split_before);
		tr2_buf_addlit(js, ",\"hist\":[");
		first = 1;
		for (int j = 0; j < TR2_HIST_SLOTS; j++) {
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
		const struct tr2_agg *v = &r[i].v;

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
	uint64_t lost = s->lost[LOST_FULL] + s->lost[LOST_DEEP];

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
		for (j = i + 1; j < nrows && rows[j].pid == rows[i].pid && rows[j].id == rows[i].id &&
				       !strcmp(rows[j].name, rows[i].name); j++)
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
			(unsigned long long)lost, (unsigned long long)s->lost[LOST_FULL], TR2_SUMMARY_NESTING_MAX,
			(unsigned long long)s->lost[LOST_DEEP]);
	if (js)
		add_fmt(js, "],\"not_aggregated\":{\"key_space_full\":%llu,\"too_deep\":%llu}}\n",
			(unsigned long long)s->lost[LOST_FULL],
			(unsigned long long)s->lost[LOST_DEEP]);
	free(rows);
}

void tr2_summary_print(struct tr2_summary *s, uint64_t now_ns, int final)
{
	struct tr2_buf b = { 0 }, js = { 0 };
	char stamp[32];
	struct tm tm;
	time_t t;

	t = (time_t)(((int64_t)now_ns + s->mono_to_real_ns) / 1000000000);
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	tr2_summary_format(s, s->table ? &b : NULL, s->json ? &js : NULL, stamp,
			   (double)(now_ns - s->start_ns) / 1e9, final);
	if (s->table) {
		fwrite(b.p, 1, b.len, stdout);
		fflush(stdout);
	}
	if (s->json && tr2_dst_write(s->json, "tr2-bpf-summary", 0, js.p, js.len))
		s->json = NULL;   /* reported once by tr2_dst_write */
	tr2_buf_free(&b);
	tr2_buf_free(&js);
}

void tr2_summary_poll(struct tr2_summary *s, uint64_t now_ns)
{
	if (!s->interval_ns || now_ns < s->next_ns)
		return;
	/* the next interval's end after now_ns (a recording's tick may be far
	 * ahead: no loop per interval) */
	s->next_ns += ((now_ns - s->next_ns) / s->interval_ns + 1) * s->interval_ns;
	tr2_summary_print(s, now_ns, 0);
}

uint64_t tr2_summary_lost(const struct tr2_summary *s)
{
	return s->lost[LOST_FULL] + s->lost[LOST_DEEP];
}

void tr2_summary_kept(const struct tr2_summary *s, unsigned long *procs, unsigned long *keys)
{
	*procs = *keys = 0;
	for (const struct owner *o = s->procs; o; o = o->next) {
		++*procs;
		*keys += o->nkeys;
	}
	for (const struct owner *o = s->programs; o; o = o->next)
		*keys += o->nkeys;
}

void tr2_summary_free(struct tr2_summary *s)
{
	if (!s)
		return;
	while (s->procs)
		drop_owner(s, &s->procs, s->procs);
	while (s->programs)
		drop_owner(s, &s->programs, s->programs);
	for (int i = 0; i < PID_BUCKETS; i++)
		while (s->pids[i]) {
			struct pid_info *p = s->pids[i];

			s->pids[i] = p->hnext;
			free(p);
		}
	free(s->buckets);
	free(s);
}
