/* tr2_decode.c: see tr2_decode.h. */
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
	[TR2_REC_DL_UPDATE] = 0,
};

int tr2_decode(const void *data, size_t size, struct tr2_decoded *out, const char **why)
{
	const unsigned char *p = data, *end = p + size;
	char *a = out->arena;
	unsigned want, i;

	if (size > TR2_REC_MAX) {
		*why = "record larger than TR2_REC_MAX";
		return -1;
	}
	if (size < sizeof(out->hdr)) {
		*why = "record shorter than its header";
		return -1;
	}
	memcpy(&out->hdr, p, sizeof(out->hdr));
	if (out->hdr.size != size) {
		*why = "record size does not match its header";
		return -1;
	}
	if (out->hdr.kind >= TR2_REC__COUNT) {
		*why = "unknown record kind";
		return -1;
	}
	/* CLOCK_MONOTONIC ns: 2^62 is 146 years of uptime; above it, arithmetic
	 * on times could overflow. */
	if (out->hdr.ts_ns >= TR2_TS_MAX || out->hdr.region_ns >= TR2_TS_MAX) {
		*why = "record time out of range";
		return -1;
	}
	want = fixed_strings[out->hdr.kind];
	if (out->hdr.nstr > TR2_DEC_MAX_STR || out->hdr.nvec > TR2_ARGV_MAX ||
	    out->hdr.nvec > out->hdr.nstr) {
		*why = "record has too many strings";
		return -1;
	}
	if ((out->hdr.nstr != want + out->hdr.nvec && !(out->hdr.flags & TR2_RECF_CUT)) ||
	    (out->hdr.nvec && out->hdr.nstr != want + out->hdr.nvec)) {
		*why = "record has the wrong number of strings for its kind";
		return -1;
	}
	p += sizeof(out->hdr);
	out->nstr = 0;
	for (i = 0; i < out->hdr.nstr; i++) {
		unsigned short word;
		unsigned len;

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
	/* A cut record: strings the kind expects but that did not fit. */
	while (out->nstr < want)
		out->str[out->nstr++] = TR2_TRUNC_MARK;
	for (i = 0; i < out->hdr.nvec; i++)
		out->vec[i] = out->str[want + i] ? out->str[want + i] : "";
	out->vec[out->hdr.nvec] = NULL;
	return 0;
}
