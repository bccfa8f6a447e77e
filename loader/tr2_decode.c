/* tr2_decode.c: see tr2_decode.h. */
#include <stdlib.h>
#include <string.h>
#include "tr2_decode.h"

/* Fixed strings per kind, the call site's file first (bpf/tr2.bpf.c). */
static const signed char fixed_strings[TR2_REC__COUNT] = {
	[TR2_REC_VERSION] = 2,
	[TR2_REC_START] = 1,
	[TR2_REC_EXIT] = 1,
	[TR2_REC_ATEXIT] = 1,
	[TR2_REC_SIGNAL] = 1,
	[TR2_REC_ERROR] = 3,
	[TR2_REC_CMD_PATH] = 2,
	[TR2_REC_CMD_ANCESTRY] = 1,
	[TR2_REC_CMD_NAME] = 2,
	[TR2_REC_CMD_MODE] = 2,
	[TR2_REC_ALIAS] = 2,
	[TR2_REC_DEF_PARAM] = 4,
	[TR2_REC_DEF_REPO] = 2,
	[TR2_REC_CHILD_START] = 4,
	[TR2_REC_CHILD_EXIT] = 1,
	[TR2_REC_CHILD_READY] = 2,
	[TR2_REC_EXEC] = 2,
	[TR2_REC_EXEC_RESULT] = 1,
	[TR2_REC_THREAD_START] = 2,
	[TR2_REC_THREAD_EXIT] = 1,
	[TR2_REC_REGION_ENTER] = 4,
	[TR2_REC_REGION_LEAVE] = 4,
	[TR2_REC_DATA] = 4,
	[TR2_REC_DATA_JSON] = 4,
	[TR2_REC_PRINTF] = 2,
	[TR2_REC_TIMER_START] = 3,
	[TR2_REC_TIMER_STOP] = 3,
	[TR2_REC_COUNTER_ADD] = 3,
	[TR2_REC_THREAD_INFO] = 2,
	[TR2_REC_FORK] = 0,
	[TR2_REC_EXECVE] = 0,
	[TR2_REC_NEW_OBJECT] = 0,
	[TR2_REC_THREAD_GONE] = 0,
	[TR2_REC_METRICS] = 0,
	[TR2_REC_PROC_GONE] = 0,
};

/* Interned strings can only be fixed strings of a kind, at most this many. */
#define SITE_STRS 4

/* A call site's interned strings, as one thread sent them. */
struct site {
	unsigned number;           /* 0: a free slot */
	unsigned char interned;    /* the record's `interned` bits */
	const char *str[SITE_STRS];/* at the interned positions: NULL or into blob */
	char *blob;
};

/* One thread's sites: open addressing on the site number. */
struct thread_sites {
	unsigned tid;
	unsigned n, cap;           /* cap: a power of 2, or 0 */
	struct site *slot;
	struct thread_sites *next;
};

#define NBUCKETS 4096

struct tr2_sites {
	struct thread_sites *bucket[NBUCKETS];
	struct thread_sites *last; /* records come in runs per thread */
	unsigned long long refs;
};

struct tr2_sites *tr2_sites_new(void)
{
	struct tr2_sites *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	return t;
}

static void free_thread(struct thread_sites *th)
{
	for (unsigned i = 0; i < th->cap; i++)
		free(th->slot[i].blob);
	free(th->slot);
	free(th);
}

void tr2_sites_free(struct tr2_sites *t)
{
	if (!t)
		return;
	for (int i = 0; i < NBUCKETS; i++)
		while (t->bucket[i]) {
			struct thread_sites *next = t->bucket[i]->next;

			free_thread(t->bucket[i]);
			t->bucket[i] = next;
		}
	free(t);
}

unsigned long long tr2_sites_refs(const struct tr2_sites *t)
{
	return t->refs;
}

static struct thread_sites *find_thread(struct tr2_sites *t, unsigned tid)
{
	struct thread_sites *th;

	if (t->last && t->last->tid == tid)
		return t->last;
	for (th = t->bucket[tid % NBUCKETS]; th; th = th->next)
		if (th->tid == tid)
			return t->last = th;
	return NULL;
}

static void forget_thread(struct tr2_sites *t, unsigned tid)
{
	for (struct thread_sites **pp = &t->bucket[tid % NBUCKETS]; *pp; pp = &(*pp)->next)
		if ((*pp)->tid == tid) {
			struct thread_sites *th = *pp;

			*pp = th->next;
			if (t->last == th)
				t->last = NULL;
			free_thread(th);
			return;
		}
}

/* The slot of site `number` in th: its entry, or the free slot for it. */
static struct site *slot_of(struct thread_sites *th, unsigned number)
{
	unsigned i = number * 2654435761u;

	for (;; i++) {
		struct site *s = &th->slot[i & (th->cap - 1)];

		if (s->number == number || !s->number)
			return s;
	}
}

static const struct site *find_site(struct tr2_sites *t, unsigned tid, unsigned number)
{
	struct thread_sites *th = find_thread(t, tid);
	const struct site *s;

	if (!th || !th->cap)
		return NULL;
	s = slot_of(th, number);
	return s->number ? s : NULL;
}

/* Remembers the interned strings of a record that carried them whole. */
static void define_site(struct tr2_sites *t, const struct tr2_decoded *d)
{
	struct thread_sites *th = find_thread(t, d->hdr.tid);
	size_t len = 0;
	struct site *s;
	char *p;

	if (!th) {
		th = calloc(1, sizeof(*th));
		if (!th)
			abort();
		th->tid = d->hdr.tid;
		th->next = t->bucket[th->tid % NBUCKETS];
		t->bucket[th->tid % NBUCKETS] = t->last = th;
	}
	if (2 * (th->n + 1) > th->cap) {   /* keep half the slots free */
		struct site *old = th->slot;
		unsigned oldcap = th->cap;

		th->cap = oldcap ? 2 * oldcap : 16;
		th->slot = calloc(th->cap, sizeof(*th->slot));
		if (!th->slot)
			abort();
		for (unsigned i = 0; i < oldcap; i++)
			if (old[i].number)
				*slot_of(th, old[i].number) = old[i];
		free(old);
	}
	s = slot_of(th, d->hdr.site);
	if (s->number)
		free(s->blob);    /* the site lost its slot on the eBPF side: sent again */
	else
		th->n++;
	for (int i = 0; i < SITE_STRS; i++)
		if (d->hdr.interned >> i & 1 && d->str[i])
			len += strlen(d->str[i]) + 1;
	s->number = d->hdr.site;
	s->interned = d->hdr.interned;
	s->blob = p = malloc(len ? len : 1);
	if (!p)
		abort();
	for (int i = 0; i < SITE_STRS; i++) {
		s->str[i] = NULL;
		if (d->hdr.interned >> i & 1 && d->str[i]) {
			size_t n = strlen(d->str[i]) + 1;

			s->str[i] = memcpy(p, d->str[i], n);
			p += n;
		}
	}
}

/* Bits set in 0..15: __builtin_popcount is a libgcc call without -mpopcnt. */
static const unsigned char bits_in[16] = { 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4 };

int tr2_decode(const void *data, size_t size, struct tr2_sites *sites, struct tr2_decoded *out,
	       const char **why)
{
	const unsigned char *p = data, *end = p + size;
	const struct tr2_rec *h = &out->hdr;
	const struct site *site = NULL;
	unsigned want, total, given, ref, i;
	char *a = out->arena;

	if (size > TR2_REC_MAX) {
		*why = "record larger than TR2_REC_MAX";
		return -1;
	}
	if (size < sizeof(out->hdr)) {
		*why = "record shorter than its header";
		return -1;
	}
	memcpy(&out->hdr, p, sizeof(out->hdr));
	if (h->size != size) {
		*why = "record size does not match its header";
		return -1;
	}
	if (h->kind >= TR2_REC__COUNT) {
		*why = "unknown record kind";
		return -1;
	}
	/* CLOCK_MONOTONIC ns: 2^62 is 146 years of uptime; above it, arithmetic
	 * on times could overflow. */
	if (h->ts_ns >= TR2_TS_MAX || h->region_ns >= TR2_TS_MAX) {
		*why = "record time out of range";
		return -1;
	}
	want = fixed_strings[h->kind];
	if ((h->interned && !h->site) || h->interned >> want || ((h->flags & TR2_RECF_REF) && !h->interned)) {
		*why = "record has interned strings that are not its call site's";
		return -1;
	}
	/* Strings in the record, and in all once the interned ones are back. */
	ref = h->flags & TR2_RECF_REF;
	given = h->nstr;
	total = given + (ref ? bits_in[h->interned] : 0);   /* interned < 16 here */
	if (total > TR2_DEC_MAX_STR || h->nvec > TR2_ARGV_MAX || h->nvec > total) {
		*why = "record has too many strings";
		return -1;
	}
	if ((total != want + h->nvec && !(h->flags & TR2_RECF_CUT)) ||
	    (h->nvec && total != want + h->nvec)) {
		*why = "record has the wrong number of strings for its kind";
		return -1;
	}
	if (ref) {
		site = find_site(sites, h->tid, h->site);
		if (!site || site->interned != h->interned) {
			*why = "record refers to call-site strings that were never sent";
			return -1;
		}
	}
	p += sizeof(out->hdr);
	out->nstr = 0;
	out->nmetrics = 0;
	if (h->kind == TR2_REC_METRICS) {
		/* No strings: num[0] sums, each a struct tr2_metric. */
		if (h->num[0] < 1 || h->num[0] > TR2_THREAD_METRICS ||
		    (size_t)(end - p) != (size_t)h->num[0] * sizeof(out->metrics[0])) {
			*why = "timer and counter sums of the wrong size";
			return -1;
		}
		out->nmetrics = (unsigned)h->num[0];
		memcpy(out->metrics, p, end - p);
		p = end;
	}
	for (i = 0; i < total; i++) {
		unsigned short word;
		unsigned len;

		if (ref && i < SITE_STRS && h->interned >> i & 1) {
			out->str[out->nstr++] = site->str[i];
			continue;
		}
		if (end - p < 2) {
			*why = "string runs past the end of the record";
			return -1;
		}
		memcpy(&word, p, 2);
		p += 2;
		if (word == TR2_STR_NULL) {
			out->str[out->nstr++] = NULL;
			continue;
		}
		if (word == TR2_STR_FAULT) {
			out->str[out->nstr++] = TR2_FAULT_MARK;
			continue;
		}
		len = word & ~TR2_STR_TRUNC;
		if ((size_t)(end - p) < len) {
			*why = "string runs past the end of the record";
			return -1;
		}
		/* The arena holds twice the largest record: every byte plus marks fit. */
		out->str[out->nstr++] = a;
		memcpy(a, p, len);
		a += len;
		if (word & TR2_STR_TRUNC) {
			memcpy(a, TR2_TRUNC_MARK, sizeof(TR2_TRUNC_MARK) - 1);
			a += sizeof(TR2_TRUNC_MARK) - 1;
		}
		*a++ = '\0';
		p += len;
	}
	if (p != end) {
		*why = "bytes left over after the record's strings";
		return -1;
	}
	/* Accepted: now the table may change. */
	if (ref)
		sites->refs++;
	else if (h->interned && out->nstr >= want)
		define_site(sites, out);
	if (h->kind == TR2_REC_THREAD_INFO || h->kind == TR2_REC_THREAD_GONE)
		forget_thread(sites, h->tid);
	/* A cut record: strings the kind expects but that did not fit. */
	while (out->nstr < want)
		out->str[out->nstr++] = TR2_TRUNC_MARK;
	for (i = 0; i < h->nvec; i++)
		out->vec[i] = out->str[want + i] ? out->str[want + i] : "";
	out->vec[h->nvec] = NULL;
	return 0;
}
