/* tr2_decode.h: checks one ring-buffer record (bpf/tr2_record.h) and turns
 * its strings into NUL-terminated C strings, putting back the interned
 * strings that the record left out.  Never trusts the bytes: any record that
 * does not parse is rejected with a reason, and counted as lost by the
 * caller. */
#ifndef TR2_DECODE_H
#define TR2_DECODE_H

#include <stddef.h>
#include "tr2_record.h"

#define TR2_DEC_MAX_STR (8 + TR2_ARGV_MAX)

/* Times (ns) at or above this are refused: record times, and start times
 * that the session then ignores. */
#define TR2_TS_MAX (1ull << 62)

/* Appended to a string that the eBPF side cut at TR2_STR_MAX - 1 bytes. */
#define TR2_TRUNC_MARK "...(truncated)"
/* Stands for a string pointer the kernel could not read (bad address). */
#define TR2_FAULT_MARK "(unreadable)"

struct tr2_decoded {
	struct tr2_rec hdr;                 /* copied out, so aligned */
	unsigned nstr;
	const char *str[TR2_DEC_MAX_STR];   /* NULL where the program passed NULL */
	const char *vec[TR2_ARGV_MAX + 1];  /* the kind's vector, NULL-terminated */
	unsigned nmetrics;                  /* TR2_REC_METRICS: the sums, copied out */
	struct tr2_metric metrics[TR2_THREAD_METRICS];
	char arena[TR2_REC_MAX * 2];        /* backing store of str[] */
};

/* The interned strings of one stream of records: per (thread, call site),
 * the literal strings of the site's first record from that thread
 * (bpf/tr2_record.h). */
struct tr2_sites;

/* An empty table.  Aborts on allocation failure. */
struct tr2_sites *tr2_sites_new(void);

/* Frees the table; NULL is allowed. */
void tr2_sites_free(struct tr2_sites *sites);

/* Records decoded so far that left their interned strings out (TR2_RECF_REF). */
unsigned long long tr2_sites_refs(const struct tr2_sites *sites);

/*
 * Decodes `size` bytes at `data`, the next record of the stream whose
 * interned strings `sites` holds, into *out, and updates `sites`: a
 * record that carries a site's strings whole is remembered, one that refers
 * to them gets them back, TR2_REC_THREAD_INFO and TR2_REC_THREAD_GONE make
 * the thread's copies go.  Returns 0, or -1 with *why set to a static
 * one-line reason ("record shorter than its header", ...); a rejected
 * record leaves `sites` as it was.  Strings that a kind expects but that
 * were cut off (TR2_RECF_CUT) decode as TR2_TRUNC_MARK.  out->str[] may
 * point into `sites`: valid until the next call.
 */
int tr2_decode(const void *data, size_t size, struct tr2_sites *sites, struct tr2_decoded *out,
	       const char **why);

#endif
