/* tr2_replay.c: see tr2_replay.h.  Records are parsed where the caller's
 * bytes are; one cut by the end of a block waits in `part` for the rest. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tr2_decode.h"
#include "tr2_mem.h"
#include "tr2_recording.h"
#include "tr2_replay.h"
#include "tr2_session.h"
#include "tr2_summary.h"

struct tr2_replay {
	struct tr2_replay_cfg cfg;
	char **cats;                  /* cfg's, copied */
	struct tr2_session *session;  /* made at the START record */
	struct tr2_summary *summary;  /* cfg.summary's, or NULL */
	struct tr2_file_start start;
	uint64_t off;                 /* bytes of the file taken so far */
	uint64_t records;
	uint64_t last_ns;             /* the latest time a record carried */
	uint64_t end_lost;            /* the END record's */
	int ended, failed;
	unsigned char part[TR2_REC_FILE_MAGIC_LEN + sizeof(struct tr2_file_rec) + TR2_FILE_SIZE_MAX + 8];
	size_t npart;                 /* bytes in part */
	char error[256];
};

struct tr2_replay *tr2_replay_new(const struct tr2_replay_cfg *cfg)
{
	struct tr2_replay *r = xcalloc(1, sizeof(*r));

	r->cfg = *cfg;
	if (cfg->cats) {
		r->cats = xcalloc((size_t)cfg->ncats + 1, sizeof(*r->cats));
		for (int i = 0; i < cfg->ncats; i++)
			r->cats[i] = xstrdup(cfg->cats[i]);
	}
	return r;
}

int tr2_replay_is_recording(const void *bytes, size_t n)
{
	return n >= TR2_REC_FILE_MAGIC_LEN && !memcmp(bytes, TR2_REC_FILE_MAGIC, TR2_REC_FILE_MAGIC_LEN);
}

static int damaged(struct tr2_replay *r, const char *why)
{
	snprintf(r->error, sizeof(r->error), "byte %" PRIu64 ": %s", r->off, why);
	r->failed = 1;
	return -1;
}

static void saw_time(struct tr2_replay *r, uint64_t ns)
{
	if (ns > r->last_ns)
		r->last_ns = ns;
}

/* The START record: the session, with the recording's clock and categories
 * (cfg's instead, when given). */
static int start(struct tr2_replay *r, const unsigned char *p, size_t size)
{
	char *names[TR2_FILE_CATS_MAX];
	const char *q, *end = (const char *)p + size;

	if (size < sizeof(r->start))
		return damaged(r, "START record too short");
	memcpy(&r->start, p, sizeof(r->start));
	if (r->start.mono_to_real_ns < 0 || r->start.mono_to_real_ns >= (int64_t)TR2_TS_MAX ||
	    r->start.since_ns >= TR2_TS_MAX)
		return damaged(r, "START record's clocks out of range");
	if (!memchr(r->start.host, '\0', sizeof(r->start.host)) || r->start.ncats > TR2_FILE_CATS_MAX)
		return damaged(r, "START record does not parse");
	q = (const char *)p + sizeof(r->start);
	for (uint32_t i = 0; i < r->start.ncats; i++) {
		const char *nul = memchr(q, '\0', (size_t)(end - q));

		if (!nul || nul == q || nul - q >= TR2_FILE_CAT_LEN)
			return damaged(r, "START record's categories do not parse");
		names[i] = (char *)q;
		q = nul + 1;
	}
	if (q != end)
		return damaged(r, "START record too long");
	r->session = tr2_session_new(r->cfg.targets, r->cfg.ntargets, r->start.mono_to_real_ns, r->start.host,
				     r->start.since_ns);
	if (r->cats)
		tr2_session_set_categories(r->session, r->cats, r->cfg.ncats);
	else if (r->start.ncats)
		tr2_session_set_categories(r->session, names, (int)r->start.ncats);
	if (r->cfg.summary)
		r->summary = r->cfg.summary(r->cfg.ctx, r->start.mono_to_real_ns, r->start.since_ns,
					    !!(r->start.flags & TR2_FILE_ALL));
	tr2_session_set_summary(r->session, r->summary);
	saw_time(r, r->start.since_ns);
	return 0;
}

/* Writes out what arrived before now_ns, as tr2-bpf's tick does. */
static void tick(struct tr2_replay *r, uint64_t now_ns)
{
	tr2_session_flush(r->session, now_ns > TR2_SESSION_DELAY_NS ? now_ns - TR2_SESSION_DELAY_NS : 0);
	if (r->summary)
		tr2_summary_poll(r->summary, now_ns);
}

/* One whole record of `size` bytes at p (its header first). */
static int record(struct tr2_replay *r, const struct tr2_file_rec *h, const unsigned char *p)
{
	const char *why;
	struct tr2_rec rec;
	struct tr2_file_lost lost;
	struct tr2_file_held held;
	struct tr2_file_time t;
	struct tr2_file_end end;
	static const uint32_t sizes[TR2_FILE__COUNT] = {
		[TR2_FILE_LOST] = sizeof(lost), [TR2_FILE_HELD] = sizeof(held), [TR2_FILE_TICK] = sizeof(t),
		[TR2_FILE_PAUSE] = sizeof(t), [TR2_FILE_RESUME] = sizeof(t), [TR2_FILE_END] = sizeof(end),
	};

	if (h->kind == 0 || h->kind >= TR2_FILE__COUNT)
		return damaged(r, "a record of no known kind");
	if (r->ended)
		return damaged(r, "a record after the END record");
	if ((h->kind == TR2_FILE_START) != !r->session)
		return damaged(r, r->session ? "a second START record" : "no START record first");
	if (sizes[h->kind] && h->size != sizes[h->kind])
		return damaged(r, "a record whose size is wrong for its kind");
	switch (h->kind) {
	case TR2_FILE_START:
		return start(r, p, h->size);
	case TR2_FILE_RING:
		if (tr2_decode_rec(p, h->size, &rec, &why))
			return damaged(r, why);
		saw_time(r, rec.ts_ns);
		tr2_session_record(r->session, &rec, p, h->size);
		return 0;
	case TR2_FILE_LOST:
		memcpy(&lost, p, sizeof(lost));
		if (lost.ts_ns >= TR2_TS_MAX)
			return damaged(r, "a LOST record's time out of range");
		tr2_session_lost(r->session, lost.pid, lost.count, lost.ts_ns);
		return 0;
	case TR2_FILE_HELD:
		memcpy(&held, p, sizeof(held));
		if (held.from_ns > held.to_ns || held.to_ns >= TR2_TS_MAX)
			return damaged(r, "a HELD record's times out of range");
		tr2_session_resumed(r->session, held.pid, held.from_ns, held.to_ns);
		return 0;
	case TR2_FILE_TICK:
	case TR2_FILE_PAUSE:
	case TR2_FILE_RESUME:
		memcpy(&t, p, sizeof(t));
		if (t.now_ns >= TR2_TS_MAX)
			return damaged(r, "a record's time out of range");
		saw_time(r, t.now_ns);
		if (h->kind == TR2_FILE_TICK)
			tick(r, t.now_ns);
		else if (h->kind == TR2_FILE_PAUSE)
			tr2_session_pause(r->session, t.now_ns);
		else
			tr2_session_resume(r->session, t.now_ns);
		return 0;
	case TR2_FILE_END:
		memcpy(&end, p, sizeof(end));
		if (end.now_ns >= TR2_TS_MAX)
			return damaged(r, "the END record's time out of range");
		saw_time(r, end.now_ns);
		r->end_lost = end.lost;
		r->ended = 1;
		return 0;
	}
	return 0;
}

/* Bytes of the record whose header is at p (with n bytes there), padding
 * included; 0 when n does not hold all of it yet; -1 when damaged. */
static long whole(struct tr2_replay *r, const unsigned char *p, size_t n, struct tr2_file_rec *h)
{
	size_t total;

	if (n < sizeof(*h))
		return 0;
	memcpy(h, p, sizeof(*h));
	if (h->size > TR2_FILE_SIZE_MAX)
		return damaged(r, "a record longer than any tr2-bpf writes");
	total = (sizeof(*h) + h->size + 7) & ~(size_t)7;
	return n >= total ? (long)total : 0;
}

/* Takes what it can of the n bytes at p: the magic, then whole records.
 * Returns the bytes taken, or -1. */
static long take(struct tr2_replay *r, const unsigned char *p, size_t n)
{
	size_t done = 0;
	struct tr2_file_rec h;
	long len;

	if (r->off == 0) {
		if (n < TR2_REC_FILE_MAGIC_LEN)
			return 0;
		if (!tr2_replay_is_recording(p, n))
			return damaged(r, "not a tr2-bpf recording (no magic)");
		done = TR2_REC_FILE_MAGIC_LEN;
		r->off = done;
	}
	while ((len = whole(r, p + done, n - done, &h)) > 0) {
		if (record(r, &h, p + done + sizeof(h)))
			return -1;
		done += (size_t)len;
		r->off += (uint64_t)len;
		r->records++;
	}
	return len < 0 ? -1 : (long)done;
}

/* Bytes the unit that starts in part needs in all: the magic, a record's
 * header, then the whole record; -1 when damaged. */
static long needed(struct tr2_replay *r)
{
	struct tr2_file_rec h;
	long len;

	if (r->off == 0)
		return TR2_REC_FILE_MAGIC_LEN;
	if (r->npart < sizeof(h))
		return sizeof(h);
	len = whole(r, r->part, r->npart, &h);
	return len ? len : (long)((sizeof(h) + h.size + 7) & ~(size_t)7);
}

int tr2_replay_feed(struct tr2_replay *r, const void *bytes, size_t n)
{
	const unsigned char *p = bytes;
	long took, want;

	if (r->failed)
		return -1;
	/* A unit cut by the last block: completed from these bytes first. */
	while (r->npart && n) {
		size_t add;

		if ((want = needed(r)) < 0)
			return -1;
		add = (size_t)want - r->npart < n ? (size_t)want - r->npart : n;
		memcpy(r->part + r->npart, p, add);
		r->npart += add;
		p += add;
		n -= add;
		if (r->npart == (size_t)want && needed(r) == want) {
			if (take(r, r->part, r->npart) < 0)
				return -1;
			r->npart = 0;
		}
	}
	if (r->npart)
		return 0;   /* all n bytes went to the unit still cut */
	took = take(r, p, n);
	if (took < 0)
		return -1;
	memcpy(r->part, p + took, n - (size_t)took);
	r->npart = n - (size_t)took;
	return 0;
}

int tr2_replay_finish(struct tr2_replay *r)
{
	char when[64] = "";
	int64_t real;
	time_t secs;
	struct tm tm;

	if (r->session)
		tr2_session_flush(r->session, UINT64_MAX);
	if (r->summary)
		tr2_summary_print(r->summary, r->last_ns, 1);
	if (r->failed)
		return -1;
	if (r->ended)
		return 0;
	if (r->session) {
		real = (int64_t)r->last_ns + r->start.mono_to_real_ns;
		secs = (time_t)(real / 1000000000);
		localtime_r(&secs, &tm);
		snprintf(when, sizeof(when), ", %.6f s into the trace (%02d:%02d:%02d.%06d)",
			 (r->last_ns - r->start.since_ns) / 1e9, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (int)(real % 1000000000 / 1000));
	}
	snprintf(r->error, sizeof(r->error), "the recording stops at byte %" PRIu64 "%s after %" PRIu64
		 " records%s: tr2-bpf did not end it (killed?)", r->off,
		 r->npart ? " (and a record cut short)" : "", r->records, when);
	return 1;
}

const char *tr2_replay_error(const struct tr2_replay *r)
{
	return r->error[0] ? r->error : NULL;
}

/* --summary alone: the events it did not aggregate count as lost, as in
 * tr2_tracer_report. */
static uint64_t not_aggregated(const struct tr2_replay *r)
{
	return r->summary && !r->cfg.ntargets ? tr2_summary_lost(r->summary) : 0;
}

uint64_t tr2_replay_events(const struct tr2_replay *r)
{
	return r->session ? tr2_session_events(r->session) - not_aggregated(r) : 0;
}

uint64_t tr2_replay_lost(const struct tr2_replay *r)
{
	return r->end_lost + (r->session ? tr2_session_lost_calls(r->session) : 0) + not_aggregated(r);
}

void tr2_replay_free(struct tr2_replay *r)
{
	if (!r)
		return;
	if (r->cats)
		for (int i = 0; i < r->cfg.ncats; i++)
			free(r->cats[i]);
	free(r->cats);
	tr2_session_free(r->session);
	free(r);
}
