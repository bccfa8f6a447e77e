/* tr2_decode.h: checks one ring-buffer record (bpf/tr2_record.h) and turns
 * its strings into NUL-terminated C strings.  Never trusts the bytes: any
 * record that does not parse is rejected with a reason, and counted as lost
 * by the caller. */
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
	char arena[TR2_REC_MAX * 2];        /* backing store of str[] */
};

/*
 * Decodes `size` bytes at `data` into *out.  Returns 0, or -1 with *why set
 * to a static one-line reason ("record shorter than its header", ...).
 * Strings that a kind expects but that were cut off (TR2_RECF_CUT) decode
 * as TR2_TRUNC_MARK.
 */
int tr2_decode(const void *data, size_t size, struct tr2_decoded *out, const char **why);

#endif
