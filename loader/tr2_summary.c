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

/* A row of a table: the entries of one process with the same strings. */
struct row {
	uint32_t pid;
	uint64_t exec_id;
	uint32_t kind;
	const char *cat, *label;
	struct tr2_agg_val v;
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

void tr2_summary_record(struct tr2_summary *s, const struct tr2_decoded *d)
{
	switch (d->hdr.kind) {
	case TR2_REC_CMD_NAME:
		if (d->nstr >= 2 && d->str[1])
			set_name(s, d->hdr.pid, d->str[1], NAME_CMD);
		break;
	case TR2_REC_START:
		if (d->vec[0])
			set_name(s, d->hdr.pid, d->vec[0], NAME_ARGV0);
		break;
	case TR2_REC_THREAD_INFO:
		if (d->nstr >= 2 && d->str[1] && d->hdr.tid == d->hdr.pid)
			set_name(s, d->hdr.pid, d->str[1], NAME_COMM);
		break;
	case TR2_REC_EXECVE:   /* a new program: its names are yet to come */
		set_name(s, d->hdr.pid, NULL, NAME_CMD);
		break;
	}
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
		 * read: then that value is its last, and the entry can go. */
		gone = key.pid == gone_pid || (key.pid != live_pid && pid_gone(key.pid));
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

/* Regions by total time, largest first, then by name; data by name. */
static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->exec_id != y->exec_id)
		return x->exec_id < y->exec_id ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == TR2_AGGK_REGION && x->v.sum != y->v.sum)
		return x->v.sum > y->v.sum ? -1 : 1;
	c = strcmp(x->cat, y->cat);
	return c ? c : strcmp(x->label, y->label);
}

/* The rows: entries merged by (process, program, kind, strings), sorted. */
static struct row *make_rows(struct tr2_summary *s, int *nrows)
{
	struct entry **e = malloc((s->n + 1) * sizeof(*e));
	struct row *rows = malloc((s->n + 1) * sizeof(*rows));
	size_t n = 0;
	int nr = 0;

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
		rows[nr].pid = e[i]->k.pid;
		rows[nr].exec_id = e[i]->k.exec_id;
		rows[nr].kind = e[i]->k.flags & 3;
		rows[nr].cat = e[i]->v.cat;
		rows[nr].label = e[i]->v.label;
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
	tr2_json_add_string(js, r->cat);
	add_fmt(js, ",\"%s\":", what);
	tr2_json_add_string(js, r->label);
}

static void format_process(struct tr2_summary *s, struct tr2_buf *b, struct tr2_buf *js,
			   const struct row *r, int n)
{
	int catw = 8, nreg = 0, ndata = 0, first;

	for (int i = 0; i < n; i++) {
		int w = strlen(r[i].cat);

		if (w > catw)
			catw = w;
		if (r[i].kind == TR2_AGGK_REGION)
			nreg++;
		else
			ndata++;
	}
	if (b) {
		add_fmt(b, "\npid %u %s\n", r[0].pid, name_of(s, r[0].pid));
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
				(unsigned long long)v->before, catw, r[i].cat, r[i].label);
		}
		if (ndata)
			add_fmt(b, "%9s %10s %10s %10s %10s  %-*s %s\n", "count", "sum", "min", "max", "last",
				catw, "category", "key");
		for (int i = nreg; i < n; i++) {
			const struct tr2_agg_val *v = &r[i].v;

			add_fmt(b, "%9llu %10lld %10lld %10lld %10lld  %-*s %s\n", (unsigned long long)v->count,
				(long long)v->sum, (long long)v->min, (long long)v->max, (long long)v->last,
				catw, r[i].cat, r[i].label);
		}
		for (int i = 0; s->hist && i < nreg; i++) {
			if (!r[i].v.count)
				continue;
			add_fmt(b, "\n%s %s\n", r[i].cat, r[i].label);
			tr2_hist_print(b, r[i].v.hist, TR2_AGG_SLOTS, "nsecs");
		}
	}
	if (!js)
		return;
	add_fmt(js, "{\"pid\":%u,\"name\":", r[0].pid);
	tr2_json_add_string(js, name_of(s, r[0].pid));
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
		add_fmt(js, ",\"elapsed\":%.3f,\"final\":%s,\"processes\":[", elapsed_s, final ? "true" : "false");
	}
	for (int i = 0, j; i < nrows; i = j) {
		for (j = i + 1; j < nrows && rows[j].pid == rows[i].pid && rows[j].exec_id == rows[i].exec_id; j++)
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

uint64_t tr2_summary_events(const struct tr2_summary *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->cap; i++) {
		const struct entry *e = &s->tab[i];

		if (!e->used)
			continue;
		if (e->k.flags & TR2_AGGK_REGION)
			n += 2 * e->v.count + e->v.open + e->v.before;
		else
			n += e->v.count;
	}
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
	free(s->names);
	free(s->tab);
	free(s);
}
