/* tr2_wire.c: see tr2_wire.h. */
#include <stdint.h>
#include <string.h>

#include "tr2_wire.h"

/* A call's probe is a byte of its header, and TR2_WIRE_PAD is none. */
_Static_assert(TRACE2__NPROBES < TR2_WIRE_PAD, "every trace2 probe fits struct tr2_wire's probe byte");

/* String i of call c's encoding: the file, then s[0..], then the vector. */
static int is_literal(const struct tr2_call *c, int i)
{
	return i == 0 || (i <= 3 && (c->literals & (1 << i)));
}

/* Literal s of the calling object: its id in this epoch, defined now (1)
 * or before (0).  Direct-mapped: another literal in its slot takes it. */
static int intern(struct tr2_interned *t, const char *s, uint32_t module, uint8_t *id)
{
	uint64_t h = ((uintptr_t)s ^ (uint64_t)module << 32) * 0x9e3779b97f4a7c15ull;
	unsigned slot = (unsigned)(h >> 58) & (TR2_INTERNED - 1);

	*id = (uint8_t)slot;
	if (t->slot[slot].ptr == s && t->slot[slot].module == module && t->slot[slot].epoch == t->epoch)
		return 0;
	t->slot[slot].ptr = s;
	t->slot[slot].module = module;
	t->slot[slot].epoch = t->epoch;
	return 1;
}

void tr2_wire_measure(const struct tr2_call *c, struct tr2_interned *lits, struct tr2_wire_enc *e)
{
	const int64_t v[8] = { c->repo_id, c->id, c->code, c->pid_arg, c->use_shell, c->per_thread,
			       c->value, (int64_t)c->metric };
	uint32_t budget;

	e->nums = e->nnum = e->flags = e->nvec = 0;
	for (int i = 0; i < 8; i++)
		if (v[i]) {
			e->nums |= 1 << i;
			e->num[e->nnum++] = v[i];
		}
	for (e->nstr = 4; e->nstr && !c->s[e->nstr - 1]; e->nstr--)
		;
	e->n = 0;
	e->str[e->n++] = c->file;
	for (int i = 0; i < e->nstr; i++)
		e->str[e->n++] = c->s[i];
	if (!c->vec)
		e->flags |= TR2_WIRE_NOVEC;
	for (const char *const *v2 = c->vec; v2 && *v2; v2++) {
		if (e->nvec == TR2_ARGV_MAX) {
			e->flags |= TR2_WIRE_CUT;
			break;
		}
		e->str[e->n++] = *v2;
		e->nvec++;
	}
	e->size = sizeof(struct tr2_wire) + 8 * e->nnum + 2 * e->n;
	budget = TR2_TBUF_DATA - 8 - e->size;
	for (int i = 0; i < e->n; i++) {
		uint32_t len;

		if (!e->str[i]) {
			e->word[i] = TR2_STR_NULL;
			continue;
		}
		if (lits && is_literal(c, i)) {
			if (!intern(lits, e->str[i], c->module, &e->id[i])) {
				e->word[i] = TR2_STR_REF | e->id[i];
				continue;
			}
			len = strnlen(e->str[i], TR2_STR_MAX);
			if (len < TR2_STR_MAX - 1 && len + 1 <= budget) {
				e->word[i] = TR2_STR_DEF | len;
				budget -= len + 1;
				e->size += len + 1;
				continue;
			}
			lits->slot[e->id[i]].ptr = NULL;   /* too long: sent whole each time */
		}
		/* 4095 bytes or more: cut, as a 4095-byte message is the
		 * formatted one cut at TRACE2_MSG_MAX - 1 */
		len = strnlen(e->str[i], TR2_STR_MAX);
		e->word[i] = 0;
		if (len >= TR2_STR_MAX - 1 || len > budget) {
			len = len > budget ? budget : TR2_STR_MAX - 1;
			e->word[i] = TR2_STR_TRUNC;
		}
		e->word[i] |= len;
		budget -= len;
		e->size += len;
	}
	e->size = (e->size + 7) & ~7u;
}

void tr2_wire_write(char *p, const struct tr2_call *c, const struct tr2_wire_enc *e, int32_t depth,
		    uint64_t ts_ns, uint8_t flags)
{
	struct tr2_wire w = { .size = (uint16_t)e->size, .probe = (uint8_t)c->probe, .nums = e->nums,
			      .nstr = e->nstr, .nvec = e->nvec, .flags = e->flags | flags, .line = c->line,
			      .depth = depth, .ts_ns = ts_ns };

	memcpy(p, &w, sizeof(w));
	p += sizeof(w);
	memcpy(p, e->num, 8 * e->nnum);
	p += 8 * e->nnum;
	for (int i = 0; i < e->n; i++) {
		uint16_t word = e->word[i];
		uint32_t len = word == TR2_STR_NULL || (word & TR2_STR_REF) == TR2_STR_REF ? 0 :
			       word & TR2_STR_LEN;

		memcpy(p, &word, 2);
		p += 2;
		if ((word & TR2_STR_REF) == TR2_STR_DEF)
			*p++ = (char)e->id[i];
		if (len)   /* a NULL string is no pointer memcpy may take */
			memcpy(p, e->str[i], len);
		p += len;
	}
}

