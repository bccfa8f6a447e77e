/* tr2_decode.c: see tr2_decode.h. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_decode.h"

int tr2_decode_rec(const void *data, size_t size, struct tr2_rec *hdr, const char **why)
{
	if (size < sizeof(*hdr)) {
		*why = "record shorter than its header";
		return -1;
	}
	memcpy(hdr, data, sizeof(*hdr));
	if (hdr->size != size) {
		*why = "record size does not match its header";
		return -1;
	}
	if (hdr->kind >= TR2_REC__COUNT) {
		*why = "unknown record kind";
		return -1;
	}
	if (hdr->ts_ns >= TR2_TS_MAX) {
		*why = "record time out of range";
		return -1;
	}
	if (hdr->kind == TR2_REC_THREAD_INFO ? size != sizeof(struct tr2_rec_thread_info) :
	    hdr->kind != TR2_REC_BATCH && size != sizeof(*hdr)) {
		*why = "record size wrong for its kind";
		return -1;
	}
	if (hdr->kind == TR2_REC_BATCH && (hdr->num[0] < 0 || hdr->num[0] > TR2_TBUF_DATA / 8 || hdr->num[1] < 0)) {
		*why = "batch counts out of range";
		return -1;
	}
	if (hdr->kind == TR2_REC_SCHED && (hdr->state >= TR2_SCHED__COUNT || hdr->num[0] < 0 ||
					   hdr->num[0] > hdr->num[1] || hdr->num[1] > hdr->num[2] ||
					   (uint64_t)hdr->num[2] > hdr->ts_ns)) {
		*why = "thread-state times out of order";
		return -1;
	}
	return 0;
}

void tr2_literals_clear(struct tr2_literals *l)
{
	for (int i = 0; i < TR2_INTERNED; i++) {
		free(l->str[i]);
		l->str[i] = NULL;
	}
}

/* Reads the string whose word is at *p (within end): *s gets it, in the
 * arena at *a (up to aend), NUL-terminated, TR2_TRUNC_MARK appended where
 * it was cut (a copy of a literal too: another string of the call may take
 * its id), or NULL.  Returns -1 when it runs past end or aend (a call that
 * names a long literal in many strings: the runtime's literals are short),
 * -2 when it names a literal lits does not hold. */
static int take_str(const unsigned char **p, const unsigned char *end, char **a, const char *aend,
		    struct tr2_literals *lits, const char **s)
{
	uint16_t word;
	size_t len;
	int id = -1;

	if (end - *p < 2)
		return -1;
	memcpy(&word, *p, 2);
	*p += 2;
	if (word == TR2_STR_NULL) {
		*s = NULL;
		return 0;
	}
	if ((word & TR2_STR_REF) == TR2_STR_REF) {
		id = word & ~TR2_STR_REF;
		if (id >= TR2_INTERNED || !lits->whole || !lits->str[id])
			return id >= TR2_INTERNED ? -1 : -2;
		len = strlen(lits->str[id]);
		if ((size_t)(aend - *a) < len + 1)
			return -1;
		memcpy(*a, lits->str[id], len + 1);
		*s = *a;
		*a += len + 1;
		return 0;
	}
	if ((word & TR2_STR_REF) == TR2_STR_DEF) {
		if (end == *p || (id = **p) >= TR2_INTERNED)
			return -1;
		(*p)++;
	}
	len = word & TR2_STR_LEN;
	if ((size_t)(end - *p) < len || (size_t)(aend - *a) < len + sizeof(TR2_TRUNC_MARK))
		return -1;
	if (id >= 0) {
		char *copy = malloc(len + 1);

		if (!copy)
			abort();
		memcpy(copy, *p, len);
		copy[len] = '\0';
		free(lits->str[id]);
		lits->str[id] = copy;
	}
	memcpy(*a, *p, len);
	*p += len;
	*s = *a;
	*a += len;
	if (word & TR2_STR_TRUNC) {
		memcpy(*a, TR2_TRUNC_MARK, sizeof(TR2_TRUNC_MARK) - 1);
		*a += sizeof(TR2_TRUNC_MARK) - 1;
	}
	*(*a)++ = '\0';
	return 0;
}

int tr2_batch_next(const struct tr2_rec *hdr, const unsigned char *data, size_t len, size_t *off,
		   struct tr2_literals *lits, struct tr2_decoded_call *out, const char **why)
{
	int r = 0, missing = 0;
	const unsigned char *p, *end;
	struct tr2_call *c = &out->call;
	int64_t num[8] = { 0 };
	const char *str[5] = { NULL };
	struct tr2_wire w;
	char *a = out->arena;
	uint16_t size;

	for (;;) {
		if (*off == len)
			return 0;
		if (len - *off < 4)
			goto bad;
		memcpy(&size, data + *off, 2);
		if (size < 4 || size > len - *off) {
			*why = "call size out of range";
			return -1;
		}
		if (data[*off + 2] != TR2_WIRE_PAD)
			break;
		*off += size;
	}
	if (size < sizeof(w) || size % 8)
		goto bad;
	p = data + *off;
	end = p + size;
	memcpy(&w, p, sizeof(w));
	p += sizeof(w);
	if (w.probe >= TRACE2__NPROBES || w.nstr > 4 || w.nvec > TR2_ARGV_MAX || w.ts_ns >= TR2_TS_MAX)
		goto bad;
	for (int i = 0; i < 8; i++)
		if (w.nums & (1 << i)) {
			if (end - p < 8)
				goto bad;
			memcpy(&num[i], p, 8);
			p += 8;
		}
	if (w.flags & TR2_WIRE_EPOCH) {
		tr2_literals_clear(lits);
		lits->whole = 1;
	}
	/* every string read, so that the call's definitions count */
	for (int i = 0; i < 1 + w.nstr + w.nvec; i++) {
		r = take_str(&p, end, &a, out->arena + sizeof(out->arena), lits,
			     i <= w.nstr ? &str[i] : &out->vec[i - 1 - w.nstr]);
		if (r == -1)
			goto bad;
		missing |= r == -2;
	}
	if (missing) {
		*off += size;
		*why = "a call that names a literal string of lost calls";
		return -2;
	}
	out->vec[w.nvec] = NULL;
	memset(c, 0, sizeof(*c));
	c->probe = w.probe;
	c->pid = hdr->pid;
	c->tid = hdr->tid;
	c->ts_ns = w.ts_ns;
	c->file = str[0];
	c->line = w.line;
	c->repo_id = (int)num[0];
	c->id = (int)num[1];
	c->code = (int)num[2];
	c->pid_arg = (int)num[3];
	c->use_shell = (int)num[4];
	c->per_thread = (int)num[5];
	c->value = num[6];
	c->metric = (uint64_t)num[7];
	memcpy(c->s, &str[1], sizeof(c->s));
	/* entries past TR2_ARGV_MAX (TR2_WIRE_CUT) are left out */
	c->vec = w.flags & TR2_WIRE_NOVEC ? NULL : out->vec;
	out->depth = w.depth;
	*off += size;
	return 1;
bad:
	*why = "a call that does not parse";
	return -1;
}

int tr2_batch_peek(const unsigned char *data, size_t len, size_t off, uint64_t *ts_ns)
{
	uint16_t size;

	while (len - off >= 4) {
		memcpy(&size, data + off, 2);
		if (size < 4 || size > len - off)
			return -1;
		if (data[off + 2] != TR2_WIRE_PAD) {
			uint64_t ts;

			if (size < sizeof(struct tr2_wire))
				return -1;
			memcpy(&ts, data + off + offsetof(struct tr2_wire, ts_ns), 8);
			if (ts >= TR2_TS_MAX)
				return -1;
			*ts_ns = ts;
			return 1;
		}
		off += size;
	}
	return off == len ? 0 : -1;
}
