/* tr2_read_event.c: one EVENT line -> struct tr2_ev, with per-process state
 * for the values EVENT leaves out (see tr2_read_event.h). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr2_json.h"
#include "tr2_mem.h"
#include "tr2_read_event.h"
#include "tr2_read_json.h"

/* The keys git's EVENT target writes (git 2.39 trace2/tr2_tgt_event.c). */
enum key {
	K_EVENT, K_SID, K_THREAD, K_TIME, K_FILE, K_LINE, K_REPO, K_T_ABS, K_T_REL, K_NESTING,
	K_EVT, K_EXE, K_ARGV, K_CODE, K_SIGNO, K_MSG, K_FMT, K_PATH, K_ANCESTRY, K_NAME,
	K_HIERARCHY, K_ALIAS, K_CHILD_ID, K_PID, K_CHILD_CLASS, K_HOOK_NAME, K_CD, K_USE_SHELL,
	K_READY, K_EXEC_ID, K_PARAM, K_VALUE, K_SCOPE, K_WORKTREE, K_CATEGORY, K_LABEL, K_KEY,
	K_INTERVALS, K_T_TOTAL, K_T_MIN, K_T_MAX, K_COUNT,
	K__COUNT
};

static const char *const key_name[K__COUNT] = {
	[K_EVENT] = "event", [K_SID] = "sid", [K_THREAD] = "thread", [K_TIME] = "time",
	[K_FILE] = "file", [K_LINE] = "line", [K_REPO] = "repo", [K_T_ABS] = "t_abs",
	[K_T_REL] = "t_rel", [K_NESTING] = "nesting", [K_EVT] = "evt", [K_EXE] = "exe",
	[K_ARGV] = "argv", [K_CODE] = "code", [K_SIGNO] = "signo", [K_MSG] = "msg",
	[K_FMT] = "fmt", [K_PATH] = "path", [K_ANCESTRY] = "ancestry", [K_NAME] = "name",
	[K_HIERARCHY] = "hierarchy", [K_ALIAS] = "alias", [K_CHILD_ID] = "child_id",
	[K_PID] = "pid", [K_CHILD_CLASS] = "child_class", [K_HOOK_NAME] = "hook_name",
	[K_CD] = "cd", [K_USE_SHELL] = "use_shell", [K_READY] = "ready",
	[K_EXEC_ID] = "exec_id", [K_PARAM] = "param", [K_VALUE] = "value",
	[K_SCOPE] = "scope", [K_WORKTREE] = "worktree", [K_CATEGORY] = "category",
	[K_LABEL] = "label", [K_KEY] = "key", [K_INTERVALS] = "intervals",
	[K_T_TOTAL] = "t_total", [K_T_MIN] = "t_min", [K_T_MAX] = "t_max", [K_COUNT] = "count",
};

#define B(k) (UINT64_C(1) << (k))

/* Keys any event may carry: "time", "file" and "line" are absent in BRIEF
 * lines; t_abs, t_rel and nesting are used when present, else derived. */
#define ANY (B(K_TIME) | B(K_FILE) | B(K_LINE) | B(K_REPO) | B(K_T_ABS) | B(K_T_REL) | B(K_NESTING))
#define COMMON (B(K_EVENT) | B(K_SID) | B(K_THREAD))
#define TIMER (B(K_CATEGORY) | B(K_NAME) | B(K_INTERVALS) | B(K_T_TOTAL) | B(K_T_MIN) | B(K_T_MAX))
#define COUNTER (B(K_CATEGORY) | B(K_NAME) | B(K_COUNT))

/* Per event kind: the keys git 2.39 always writes (besides time/file/line). */
static const uint64_t required[TR2_EV__COUNT] = {
	[TR2_EV_VERSION] = COMMON | B(K_EVT) | B(K_EXE),
	[TR2_EV_START] = COMMON | B(K_T_ABS) | B(K_ARGV),
	[TR2_EV_EXIT] = COMMON | B(K_T_ABS) | B(K_CODE),
	[TR2_EV_ATEXIT] = COMMON | B(K_T_ABS) | B(K_CODE),
	[TR2_EV_SIGNAL] = COMMON | B(K_T_ABS) | B(K_SIGNO),
	[TR2_EV_ERROR] = COMMON,
	[TR2_EV_CMD_PATH] = COMMON | B(K_PATH),
	[TR2_EV_CMD_ANCESTRY] = COMMON | B(K_ANCESTRY),
	[TR2_EV_CMD_NAME] = COMMON | B(K_NAME),
	[TR2_EV_CMD_MODE] = COMMON | B(K_NAME),
	[TR2_EV_ALIAS] = COMMON | B(K_ALIAS) | B(K_ARGV),
	[TR2_EV_CHILD_START] = COMMON | B(K_CHILD_ID) | B(K_CHILD_CLASS) | B(K_USE_SHELL) | B(K_ARGV),
	[TR2_EV_CHILD_EXIT] = COMMON | B(K_CHILD_ID) | B(K_PID) | B(K_CODE) | B(K_T_REL),
	[TR2_EV_CHILD_READY] = COMMON | B(K_CHILD_ID) | B(K_PID) | B(K_READY) | B(K_T_REL),
	[TR2_EV_EXEC] = COMMON | B(K_EXEC_ID) | B(K_ARGV),
	[TR2_EV_EXEC_RESULT] = COMMON | B(K_EXEC_ID) | B(K_CODE),
	[TR2_EV_THREAD_START] = COMMON,
	[TR2_EV_THREAD_EXIT] = COMMON | B(K_T_REL),
	[TR2_EV_DEF_PARAM] = COMMON | B(K_PARAM),
	[TR2_EV_DEF_REPO] = COMMON | B(K_REPO) | B(K_WORKTREE),
	[TR2_EV_REGION_ENTER] = COMMON | B(K_NESTING),
	[TR2_EV_REGION_LEAVE] = COMMON | B(K_T_REL) | B(K_NESTING),
	[TR2_EV_DATA] = COMMON | B(K_T_ABS) | B(K_T_REL) | B(K_NESTING) | B(K_CATEGORY) | B(K_KEY) | B(K_VALUE),
	[TR2_EV_DATA_JSON] = COMMON | B(K_T_ABS) | B(K_T_REL) | B(K_NESTING) | B(K_CATEGORY) | B(K_KEY) | B(K_VALUE),
	[TR2_EV_PRINTF] = COMMON,
	[TR2_EV_TIMER] = COMMON | TIMER,
	[TR2_EV_TH_TIMER] = COMMON | TIMER,
	[TR2_EV_COUNTER] = COMMON | COUNTER,
	[TR2_EV_TH_COUNTER] = COMMON | COUNTER,
	[TR2_EV_TOO_MANY_FILES] = COMMON,
};

/* Per event kind: the keys git writes only sometimes. */
static const uint64_t optional[TR2_EV__COUNT] = {
	[TR2_EV_ERROR] = B(K_MSG) | B(K_FMT),
	[TR2_EV_CMD_NAME] = B(K_HIERARCHY),
	[TR2_EV_CHILD_START] = B(K_HOOK_NAME) | B(K_CD),
	[TR2_EV_EXEC] = B(K_EXE),
	[TR2_EV_DEF_PARAM] = B(K_SCOPE) | B(K_VALUE),   /* newer git leaves a NULL value out */
	[TR2_EV_REGION_ENTER] = B(K_CATEGORY) | B(K_LABEL) | B(K_MSG),
	[TR2_EV_REGION_LEAVE] = B(K_CATEGORY) | B(K_LABEL) | B(K_MSG),
	[TR2_EV_PRINTF] = B(K_MSG),
};

/* Kinds whose t_abs PERF prints but EVENT does not write: derived (tr2_read_event.h). */
#define DERIVE_T_ABS (B(TR2_EV_CHILD_START) | B(TR2_EV_CHILD_EXIT) | B(TR2_EV_CHILD_READY) | \
	B(TR2_EV_EXEC) | B(TR2_EV_EXEC_RESULT) | B(TR2_EV_THREAD_START) | B(TR2_EV_THREAD_EXIT) | \
	B(TR2_EV_REGION_ENTER) | B(TR2_EV_REGION_LEAVE) | B(TR2_EV_PRINTF))

/* Kinds git emits after unwinding the thread's open regions (trace2.c). */
#define UNWOUND (B(TR2_EV_THREAD_EXIT) | B(TR2_EV_ATEXIT) | B(TR2_EV_TIMER) | \
	B(TR2_EV_TH_TIMER) | B(TR2_EV_COUNTER) | B(TR2_EV_TH_COUNTER))

/* Largest accepted seconds value: beyond any real trace, and sums of two stay in int64 µs. */
#define MAX_SECONDS 1e12

/* t_abs values (µs) indexed by a small number, -1 where unknown. */
struct starts {
	int64_t *v;
	size_t n;
};

/* Indexes beyond this (absurd nestings, child ids) are not tracked. */
#define MAX_TRACKED 65536

struct thr {
	char *name;
	int nesting;            /* the thread's current nr_open_regions */
	struct starts region;   /* [i]: t_abs of git's array_us_start[i]: the
				   start of the region entered at nesting i,
				   or of the thread for i = 0 */
};

/* One traced process, identified by its sid. */
struct proc {
	char *sid;
	uint64_t hash;
	/*
	 * The process's start instant on the wall clock, estimated from each
	 * line with both time and t_abs as time - t_abs (see origin_update).
	 */
	bool has_origin, has_prev;
	int64_t origin_us;
	int64_t win_start_us, cur_min_us, prev_min_us;
	struct thr *thr;
	size_t nr_thr, alloc_thr, last_thr;
	struct starts child;    /* [child_id]: t_abs of that child_start */
};

struct tr2_reader {
	struct tr2_jline *json;     /* the last line's values; ev's strings point into it */
	const struct tr2_jval *val[K__COUNT];
	struct tr2_buf json_text;   /* a data_json value that is a string, as JSON */
	char err[256];

	/* open addressing, linear probing; cap is a power of two */
	struct proc **slot;
	size_t cap, nr;
	struct proc *last;          /* the process of the previous line */

	/* cache for parse_time: the last date seen and its day number */
	char day_text[10];
	int64_t day_num;

	size_t kind_len[TR2_EV__COUNT];   /* strlen(tr2_ev_kind_name(k)) */
};

struct tr2_reader *tr2_reader_new(void)
{
	struct tr2_reader *r = calloc(1, sizeof(*r));

	if (!r)
		abort();
	r->json = tr2_jline_new();
	for (int k = 0; k < TR2_EV__COUNT; k++)
		r->kind_len[k] = strlen(tr2_ev_kind_name(k));
	r->cap = 64;
	r->slot = calloc(r->cap, sizeof(*r->slot));
	if (!r->slot)
		abort();
	return r;
}

static int64_t starts_get(const struct starts *s, int64_t i)
{
	return i >= 0 && (uint64_t)i < s->n ? s->v[i] : -1;
}

static void starts_set(struct starts *s, int64_t i, int64_t t_abs_us)
{
	if (i < 0 || i >= MAX_TRACKED)
		return;
	if ((size_t)i >= s->n) {
		size_t n = (size_t)i + 8;

		s->v = xrealloc(s->v, n * sizeof(*s->v));
		while (s->n < n)
			s->v[s->n++] = -1;
	}
	s->v[i] = t_abs_us;
}

static void proc_free(struct proc *p)
{
	for (size_t i = 0; i < p->nr_thr; i++) {
		free(p->thr[i].name);
		free(p->thr[i].region.v);
	}
	free(p->child.v);
	free(p->thr);
	free(p->sid);
	free(p);
}

void tr2_reader_free(struct tr2_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->cap; i++)
		if (r->slot[i])
			proc_free(r->slot[i]);
	free(r->slot);
	tr2_jline_free(r->json);
	tr2_buf_free(&r->json_text);
	free(r);
}

const char *tr2_reader_error(const struct tr2_reader *r)
{
	return r->err;
}

static int fail(struct tr2_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct tr2_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the per-process table ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);   /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

static void table_insert(struct proc **slot, size_t cap, struct proc *p)
{
	size_t i = p->hash & (cap - 1);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = p;
}

static struct proc *proc_get(struct tr2_reader *r, const char *sid)
{
	uint64_t h;
	size_t i;
	struct proc *p;

	if (r->last && !strcmp(r->last->sid, sid))
		return r->last;
	h = hash_str(sid);
	for (i = h & (r->cap - 1); (p = r->slot[i]); i = (i + 1) & (r->cap - 1))
		if (p->hash == h && !strcmp(p->sid, sid))
			return r->last = p;

	if (2 * (r->nr + 1) > r->cap) {
		size_t cap = 2 * r->cap;
		struct proc **slot = calloc(cap, sizeof(*slot));

		if (!slot)
			abort();
		for (size_t j = 0; j < r->cap; j++)
			if (r->slot[j])
				table_insert(slot, cap, r->slot[j]);
		free(r->slot);
		r->slot = slot;
		r->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	p->sid = xstrdup(sid);
	p->hash = h;
	table_insert(r->slot, r->cap, p);
	r->nr++;
	return r->last = p;
}

/* Removes p from the table (backward-shift deletion) and frees it. */
static void proc_drop(struct tr2_reader *r, struct proc *p)
{
	size_t mask = r->cap - 1, i = p->hash & mask, j;

	while (r->slot[i] != p)
		i = (i + 1) & mask;
	r->slot[i] = NULL;
	for (j = (i + 1) & mask; r->slot[j]; j = (j + 1) & mask) {
		size_t home = r->slot[j]->hash & mask;

		/* move slot[j] into the hole at i unless its home lies in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			r->slot[i] = r->slot[j];
			r->slot[j] = NULL;
			i = j;
		}
	}
	r->nr--;
	if (r->last == p)
		r->last = NULL;
	proc_free(p);
}

static struct thr *thr_get(struct proc *p, const char *name)
{
	if (p->last_thr < p->nr_thr && !strcmp(p->thr[p->last_thr].name, name))
		return &p->thr[p->last_thr];
	for (size_t i = 0; i < p->nr_thr; i++)
		if (!strcmp(p->thr[i].name, name))
			return &p->thr[p->last_thr = i];
	if (p->nr_thr == p->alloc_thr) {
		p->alloc_thr = p->alloc_thr ? 2 * p->alloc_thr : 4;
		p->thr = xrealloc(p->thr, p->alloc_thr * sizeof(*p->thr));
	}
	p->thr[p->nr_thr] = (struct thr){ .name = xstrdup(name), .nesting = 1 };
	/* git's main thread counts from the process start, t_abs 0 */
	if (!strcmp(name, "main"))
		starts_set(&p->thr[p->nr_thr].region, 0, 0);
	p->last_thr = p->nr_thr;
	return &p->thr[p->nr_thr++];
}

static void thr_drop(struct proc *p, struct thr *t)
{
	free(t->name);
	free(t->region.v);
	*t = p->thr[--p->nr_thr];
	p->last_thr = 0;
}

/* ---- deriving t_abs ---- */

/* The span of one bucket of the windowed minimum below. */
#define ORIGIN_WINDOW_US 1000000

/*
 * Takes one estimate of the start instant, time - t_abs.  git computes t_abs
 * once per event and the EVENT target stamps time after the other targets
 * have written, so each estimate is late by that delay (>= 0): usually a few
 * µs, milliseconds when the process was preempted in between.  The smallest
 * estimate is the best one; it is taken over the current and the previous
 * one-second bucket of the process's time, so that a slow drift between
 * git's monotonic clock (t_abs) and the wall clock (time) is followed too.
 */
static void origin_update(struct proc *p, int64_t time_us, int64_t t_abs_us)
{
	int64_t est = time_us - t_abs_us;

	if (!p->has_origin || time_us - p->win_start_us >= 2 * ORIGIN_WINDOW_US ||
	    time_us < p->win_start_us) {
		p->has_prev = false;
		p->cur_min_us = est;
		p->win_start_us = time_us;
	} else if (time_us - p->win_start_us >= ORIGIN_WINDOW_US) {
		p->has_prev = true;
		p->prev_min_us = p->cur_min_us;
		p->cur_min_us = est;
		p->win_start_us = time_us;
	} else if (est < p->cur_min_us) {
		p->cur_min_us = est;
	}
	p->origin_us = p->cur_min_us;
	if (p->has_prev && p->prev_min_us < p->origin_us)
		p->origin_us = p->prev_min_us;
	p->has_origin = true;
}

/* ---- values ---- */

/* The key of n bytes (not NUL-terminated) -> K_*, or -1. */
static int key_lookup(const char *k, size_t n)
{
	/* memcmp of a length known here compiles to a compare or two */
#define IS(s, id) if (n == sizeof(s) - 1 && !memcmp(k, s, sizeof(s) - 1)) return id
	if (!n)
		return -1;
	switch (k[0]) {
	case 'a': IS("argv", K_ARGV); IS("alias", K_ALIAS); IS("ancestry", K_ANCESTRY); break;
	case 'c': IS("code", K_CODE); IS("category", K_CATEGORY); IS("child_id", K_CHILD_ID);
		IS("child_class", K_CHILD_CLASS); IS("cd", K_CD); IS("count", K_COUNT); break;
	case 'e': IS("event", K_EVENT); IS("evt", K_EVT); IS("exe", K_EXE); IS("exec_id", K_EXEC_ID); break;
	case 'f': IS("file", K_FILE); IS("fmt", K_FMT); break;
	case 'h': IS("hierarchy", K_HIERARCHY); IS("hook_name", K_HOOK_NAME); break;
	case 'i': IS("intervals", K_INTERVALS); break;
	case 'k': IS("key", K_KEY); break;
	case 'l': IS("line", K_LINE); IS("label", K_LABEL); break;
	case 'm': IS("msg", K_MSG); break;
	case 'n': IS("nesting", K_NESTING); IS("name", K_NAME); break;
	case 'p': IS("pid", K_PID); IS("path", K_PATH); IS("param", K_PARAM); break;
	case 'r': IS("repo", K_REPO); IS("ready", K_READY); break;
	case 's': IS("sid", K_SID); IS("signo", K_SIGNO); IS("scope", K_SCOPE); break;
	case 't': IS("thread", K_THREAD); IS("time", K_TIME); IS("t_abs", K_T_ABS);
		IS("t_rel", K_T_REL); IS("t_total", K_T_TOTAL); IS("t_min", K_T_MIN);
		IS("t_max", K_T_MAX); break;
	case 'u': IS("use_shell", K_USE_SHELL); break;
	case 'v': IS("value", K_VALUE); break;
	case 'w': IS("worktree", K_WORKTREE); break;
	}
	return -1;
#undef IS
}

/* A JSON string without NUL bytes; 0, or -1 (not a string) or -2 (NUL). */
static int to_str(const struct tr2_jval *v, const char **out)
{
	if (v->type != TR2_J_STRING)
		return -1;
	if (v->nul)
		return -2;
	*out = v->text;
	return 0;
}

static int get_str(struct tr2_reader *r, const char *ev, enum key k, const char **out)
{
	int rc = to_str(r->val[k], out);

	if (rc == -1)
		return fail(r, "%s: \"%s\" is not a string", ev, key_name[k]);
	if (rc == -2)
		return fail(r, "%s: \"%s\" contains a NUL character", ev, key_name[k]);
	return 0;
}

static int get_int64(struct tr2_reader *r, const char *ev, enum key k, int64_t min, int64_t max, int64_t *out)
{
	const struct tr2_jval *o = r->val[k];

	if (o->type != TR2_J_INT)
		return fail(r, "%s: \"%s\" is not an integer", ev, key_name[k]);
	if (o->big || o->i < min || o->i > max)
		return fail(r, "%s: \"%s\" is out of range", ev, key_name[k]);
	*out = o->i;
	return 0;
}

static int get_int(struct tr2_reader *r, const char *ev, enum key k, int min, int *out)
{
	int64_t v = 0;

	if (get_int64(r, ev, k, min, INT_MAX, &v))
		return -1;
	*out = (int)v;
	return 0;
}

/* Seconds as git writes them ("%.6f") -> µs. */
static int get_us(struct tr2_reader *r, const char *ev, enum key k, int64_t *out)
{
	const struct tr2_jval *o = r->val[k];
	double d = o->type == TR2_J_INT ? (double)o->i : o->d;

	if (o->type != TR2_J_DOUBLE && o->type != TR2_J_INT)
		return fail(r, "%s: \"%s\" is not a number", ev, key_name[k]);
	if (o->big || !isfinite(d) || d < 0 || d > MAX_SECONDS)
		return fail(r, "%s: \"%s\" is out of range", ev, key_name[k]);
	*out = llround(d * 1e6);
	return 0;
}

static int get_strv(struct tr2_reader *r, const char *ev, enum key k, const char *const **out)
{
	const struct tr2_jval *o = r->val[k];

	if (o->type != TR2_J_ARRAY)
		return fail(r, "%s: \"%s\" is not an array", ev, key_name[k]);
	if (!o->strv)
		return fail(r, "%s: \"%s\" has an element that is not a string", ev, key_name[k]);
	if (o->nul)
		return fail(r, "%s: \"%s\" has an element with a NUL character", ev, key_name[k]);
	*out = (const char *const *)o->strv;
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/*
 * git's "%4d-%02d-%02dT%02d:%02d:%02d.%06ldZ" (tr2_tbuf_utc_datetime_extended)
 * -> µs since the epoch; -1 for anything else, including dates before 1970.
 */
static int parse_time(struct tr2_reader *r, const char *s, int64_t *us)
{
	int hh, mm, ss, frac;

	if (strlen(s) != 27 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':' || s[19] != '.' || s[26] != 'Z')
		return -1;
	if (memcmp(s, r->day_text, 10)) {
		static const char mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
		int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
		bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

		/* only dates that come back unchanged when written again */
		if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
		    (mo == 2 && d == 29 && !leap))
			return -1;
		r->day_num = days_from_civil(y, mo, d);
		memcpy(r->day_text, s, 10);
	}
	hh = digits(s + 11, 2);
	mm = digits(s + 14, 2);
	ss = digits(s + 17, 2);
	frac = digits(s + 20, 6);
	if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59 || frac < 0)
		return -1;
	*us = ((r->day_num * 86400 + hh * 3600 + mm * 60 + ss) * 1000000) + frac;
	return 0;
}

/*
 * Copies s for an error message: at most 40 bytes of it, each control byte
 * as \xHH, so that the message stays on one line.  out holds 4 * 40 + 1.
 */
static const char *visible(const char *s, char *out, size_t size)
{
	size_t o = 0;

	for (int i = 0; s[i] && i < 40 && o + 5 <= size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

/* ---- one line ---- */

/* tr2_ev_kind_from_name() for a name of n bytes, comparing lengths first. */
static int kind_lookup(const struct tr2_reader *r, const char *name, size_t n)
{
	for (int k = 0; k < TR2_EV__COUNT; k++)
		if (k != TR2_EV_THREAD_STATE && r->kind_len[k] == n && !memcmp(tr2_ev_kind_name(k), name, n))
			return k;
	return -1;
}

/* Offset of the first byte below 0x20 in s, or n. */
static size_t find_control(const char *s, size_t n)
{
	size_t i = 0;

	/* 32 bytes at a time: a loop of known length without exit, which
	 * compilers turn into a few vector minimums */
	for (; i + 32 <= n; i += 32) {
		unsigned char min = 0xff;

		for (int k = 0; k < 32; k++)
			min = (unsigned char)s[i + k] < min ? (unsigned char)s[i + k] : min;
		if (min < 0x20)
			break;
	}
	for (; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			return i;
	return n;
}

/* Fills ev's kind-specific fields from r->val; returns 0 or -1 (reason in r->err). */
static int extract(struct tr2_reader *r, struct tr2_ev *ev, const char *name, uint64_t keys)
{
	int64_t v = 0;

	while (keys) {
		int k = __builtin_ctzll(keys), rc = 0;

		keys &= keys - 1;
		switch (k) {
		case K_TIME: {
			const char *s;

			rc = get_str(r, name, k, &s);
			if (!rc && parse_time(r, s, &ev->time_us))
				rc = fail(r, "%s: \"time\" is not a UTC time YYYY-MM-DDTHH:MM:SS.ffffffZ", name);
			break;
		}
		case K_FILE: rc = get_str(r, name, k, &ev->file); break;
		case K_LINE: rc = get_int(r, name, k, 0, &ev->line); break;
		case K_REPO:
			/* "repo":0 is git's repository whose id is still 0 */
			rc = get_int(r, name, k, 0, &ev->repo);
			ev->has_repo = true;
			break;
		case K_T_ABS: rc = get_us(r, name, k, &ev->t_abs_us); ev->has_t_abs = true; break;
		case K_T_REL: rc = get_us(r, name, k, &ev->t_rel_us); ev->has_t_rel = true; break;
		case K_NESTING:
			rc = get_int64(r, name, k, 1, TR2_NESTING_MAX, &v);
			ev->nesting = (int)v;
			break;
		case K_EVT: rc = get_str(r, name, k, &ev->evt); break;
		case K_EXE: rc = get_str(r, name, k, &ev->exe); break;
		case K_ARGV: rc = get_strv(r, name, k, &ev->argv); break;
		case K_CODE: rc = get_int(r, name, k, INT_MIN, &ev->code); break;
		case K_SIGNO: rc = get_int(r, name, k, INT_MIN, &ev->signo); break;
		case K_MSG: rc = get_str(r, name, k, &ev->msg); break;
		case K_FMT: rc = get_str(r, name, k, &ev->fmt); break;
		case K_PATH: rc = get_str(r, name, k, &ev->path); break;
		case K_ANCESTRY: rc = get_strv(r, name, k, &ev->ancestry); break;
		case K_NAME:
			/* cmd_mode writes its mode under "name" */
			rc = get_str(r, name, k, ev->kind == TR2_EV_CMD_MODE ? &ev->mode : &ev->name);
			break;
		case K_HIERARCHY: rc = get_str(r, name, k, &ev->hierarchy); break;
		case K_ALIAS: rc = get_str(r, name, k, &ev->alias); break;
		case K_CHILD_ID: rc = get_int(r, name, k, INT_MIN, &ev->child_id); break;
		case K_PID: rc = get_int(r, name, k, INT_MIN, &ev->pid); break;
		case K_CHILD_CLASS: rc = get_str(r, name, k, &ev->child_class); break;
		case K_HOOK_NAME: rc = get_str(r, name, k, &ev->hook_name); break;
		case K_CD: rc = get_str(r, name, k, &ev->cd); break;
		case K_USE_SHELL:
			if (r->val[k]->type != TR2_J_BOOL)
				rc = fail(r, "%s: \"use_shell\" is not a boolean", name);
			else
				ev->use_shell = r->val[k]->b;
			break;
		case K_READY: rc = get_str(r, name, k, &ev->ready); break;
		case K_EXEC_ID: rc = get_int(r, name, k, INT_MIN, &ev->exec_id); break;
		case K_PARAM: rc = get_str(r, name, k, &ev->param); break;
		case K_VALUE:
			if (ev->kind == TR2_EV_DATA_JSON && r->val[k]->type == TR2_J_STRING) {
				/* a string (git writes none), as JSON text again */
				r->json_text.len = 0;
				tr2_json_add_string(&r->json_text, r->val[k]->text);
				ev->value = r->json_text.p;
			} else if (ev->kind == TR2_EV_DATA_JSON) {
				/* the JSON text as the line has it: git's json-writer output */
				ev->value = r->val[k]->text;
			} else if (ev->kind == TR2_EV_DATA && r->val[k]->type == TR2_J_INT) {
				/* older documents show integer data values; git writes strings */
				ev->value = r->val[k]->text;
			} else {
				rc = get_str(r, name, k, &ev->value);
			}
			break;
		case K_SCOPE: rc = get_str(r, name, k, &ev->scope); break;
		case K_WORKTREE: rc = get_str(r, name, k, &ev->worktree); break;
		case K_CATEGORY: rc = get_str(r, name, k, &ev->category); break;
		case K_LABEL: rc = get_str(r, name, k, &ev->label); break;
		case K_KEY: rc = get_str(r, name, k, &ev->key); break;
		case K_INTERVALS:
			rc = get_int64(r, name, k, 0, INT64_MAX, &v);
			ev->intervals = (uint64_t)v;
			break;
		case K_T_TOTAL: rc = get_us(r, name, k, &ev->t_total_us); break;
		case K_T_MIN: rc = get_us(r, name, k, &ev->t_min_us); break;
		case K_T_MAX: rc = get_us(r, name, k, &ev->t_max_us); break;
		case K_COUNT: rc = get_int64(r, name, k, INT64_MIN, INT64_MAX, &ev->count); break;
		}
		if (rc)
			return -1;
	}
	return 0;
}

/*
 * t_abs for a kind that EVENT writes without it: time - origin, or, for an
 * event that ends something, the t_abs of its start plus its t_rel (which
 * git measures from that very start) when that is smaller; -1 when unknown.
 */
static int64_t derive_t_abs(struct proc *p, struct thr *t, const struct tr2_ev *ev, bool has_time)
{
	int64_t v = -1, begun = -1;

	if (has_time && p->has_origin)
		v = ev->time_us > p->origin_us ? ev->time_us - p->origin_us : 0;
	switch (ev->kind) {
	case TR2_EV_REGION_LEAVE: begun = starts_get(&t->region, ev->nesting); break;
	case TR2_EV_THREAD_EXIT: begun = starts_get(&t->region, 0); break;
	case TR2_EV_CHILD_EXIT:
	case TR2_EV_CHILD_READY: begun = starts_get(&p->child, ev->child_id); break;
	default: break;
	}
	if (begun >= 0 && ev->has_t_rel && (v < 0 || begun + ev->t_rel_us < v))
		v = begun + ev->t_rel_us;
	return v;
}

/* Fills in t_abs and nesting from the process's state, then updates it. */
static void derive(struct tr2_reader *r, struct tr2_ev *ev, uint64_t present)
{
	struct proc *p = proc_get(r, ev->sid);
	struct thr *t = thr_get(p, ev->thread);
	bool has_time = present & B(K_TIME);
	uint64_t kind = B(ev->kind);
	int64_t t_abs = ev->has_t_abs ? ev->t_abs_us : -1;

	if (!(present & B(K_NESTING)))
		ev->nesting = (kind & UNWOUND) ? 1 : t->nesting;

	if (ev->has_t_abs && has_time) {
		origin_update(p, ev->time_us, ev->t_abs_us);
	} else if (!ev->has_t_abs && (kind & DERIVE_T_ABS)) {
		t_abs = derive_t_abs(p, t, ev, has_time);
		ev->has_t_abs = t_abs >= 0;
		ev->t_abs_us = ev->has_t_abs ? t_abs : 0;
	}

	/* the starts that later lines' t_rel count from */
	switch (ev->kind) {
	case TR2_EV_REGION_ENTER: starts_set(&t->region, ev->nesting, t_abs); break;
	case TR2_EV_THREAD_START: starts_set(&t->region, 0, t_abs); break;
	case TR2_EV_CHILD_START: starts_set(&p->child, ev->child_id, t_abs); break;
	case TR2_EV_DATA:
	case TR2_EV_DATA_JSON:
		/* exact: t_rel counts from the innermost open region's start */
		if (ev->t_abs_us >= ev->t_rel_us)
			starts_set(&t->region, ev->nesting - 1, ev->t_abs_us - ev->t_rel_us);
		break;
	default: break;
	}
	t->nesting = ev->kind == TR2_EV_REGION_ENTER ? ev->nesting + 1 : ev->nesting;

	if (ev->kind == TR2_EV_ATEXIT || ev->kind == TR2_EV_SIGNAL)
		proc_drop(r, p);
	else if (ev->kind == TR2_EV_THREAD_EXIT)
		thr_drop(p, t);
}

int tr2_reader_parse(struct tr2_reader *r, const char *line, size_t len, struct tr2_ev *ev)
{
	struct tr2_jfield *field;
	uint64_t present = 0, missing;
	size_t ctl;
	const char *name;
	long n;
	int kind;

	memset(ev, 0, sizeof(*ev));
	r->err[0] = '\0';

	if (!len)
		return fail(r, "empty line");
	if (len > INT_MAX)
		return fail(r, "line too long");
	ctl = find_control(line, len);
	if (ctl < len)
		return fail(r, "control character 0x%02x at column %zu", (unsigned char)line[ctl], ctl + 1);

	n = tr2_jline_parse(r->json, line, len, &field);
	if (n == TR2_J_ENOTOBJ)
		return fail(r, "not a JSON object");
	if (n < 0)
		return fail(r, "%s", tr2_jline_error(r->json));
	for (long i = 0; i < n; i++) {
		int id = key_lookup(field[i].key, field[i].key_len);

		if (id >= 0) {
			r->val[id] = &field[i].v;
			present |= B(id);
		}
	}

	if (!(present & B(K_EVENT)))
		return fail(r, "missing \"event\"");
	if (to_str(r->val[K_EVENT], &name))
		return fail(r, "\"event\" is not a string");
	kind = kind_lookup(r, name, r->val[K_EVENT]->len);
	if (kind < 0) {
		char shown[4 * 40 + 1];

		return fail(r, "unknown event \"%s\"", visible(name, shown, sizeof(shown)));
	}
	ev->kind = kind;

	missing = required[kind] & ~present;
	if (missing) {
		int k = __builtin_ctzll(missing);

		return fail(r, "%s: missing \"%s\"", name, key_name[k]);
	}
	if (get_str(r, name, K_SID, &ev->sid) || get_str(r, name, K_THREAD, &ev->thread))
		return -1;
	if (!ev->sid[0])
		return fail(r, "%s: \"sid\" is empty", name);
	if (extract(r, ev, name, present & (required[kind] | optional[kind] | ANY) &
		    ~(B(K_EVENT) | B(K_SID) | B(K_THREAD))))
		return -1;
	derive(r, ev, present);
	return 0;
}
