/* tr2_wire.h: a runtime call as it sits in a thread's buffer (struct
 * tr2_wire and its strings, bpf/tr2_record.h), written by the runtime's
 * batch path (tr2_batch.c) and by the tests that make records. */
#ifndef TR2_WIRE_H
#define TR2_WIRE_H

#include <stdint.h>
#include "tr2_call.h"
#include "tr2_record.h"

/* A call's strings: the file, s[0..nstr), the vector. */
#define TR2_WIRE_STRINGS (1 + 4 + TR2_ARGV_MAX)

/* A call measured for writing (tr2_wire_measure). */
struct tr2_wire_enc {
	uint8_t nums, nnum, nstr, nvec, flags;
	int64_t num[8];
	uint32_t size;                    /* bytes it takes, padding included: at most TR2_TBUF_DATA */
	int n;
	const char *str[TR2_WIRE_STRINGS];
	uint16_t word[TR2_WIRE_STRINGS];  /* their words (bpf/tr2_record.h) */
	uint8_t id[TR2_WIRE_STRINGS];     /* TR2_STR_DEF's and TR2_STR_REF's ids */
};

/*
 * Measures call c: its numbers, its strings and its size.  With lits, its
 * literals (the file; s[0], s[1], s[2] where c->literals says so) are
 * named by id when lits has them in its epoch, else defined and entered
 * (direct-mapped by address and c->module: a literal takes another's slot);
 * NULL: every string sent whole.  Strings of 4095 bytes or more are cut
 * there, and strings are cut further so that the call fits a thread's
 * buffer.
 */
void tr2_wire_measure(const struct tr2_call *c, struct tr2_interned *lits, struct tr2_wire_enc *e);

/* Writes call c as measured into e at p (e->size bytes; the padding is
 * left as it was), stamped ts_ns (CLOCK_MONOTONIC), with the thread's
 * region depth before it and flags (TR2_WIRE_EPOCH) added. */
void tr2_wire_write(char *p, const struct tr2_call *c, const struct tr2_wire_enc *e, int32_t depth,
		    uint64_t ts_ns, uint8_t flags);

#endif
