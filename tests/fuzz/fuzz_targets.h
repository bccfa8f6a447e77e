/* fuzz_targets.h: the targets both harnesses write to: each format, plain
 * and BRIEF, every one into /dev/null, so that every formatter runs on what
 * a hostile input makes of an event.  The plain ones buffer their lines, as
 * tr2-bpf's do (tr2_dst_set_buffered), the BRIEF ones write each at once.
 * Opened and closed once per input, so that a leak in a target or
 * destination shows too. */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_dst.h"
#include "tr2_tgt.h"

#define FUZZ_NTARGETS 6

struct fuzz_targets {
	struct tr2_target t[FUZZ_NTARGETS];
	struct tr2_target *ptr[FUZZ_NTARGETS];
};

static inline void fuzz_targets_open(struct fuzz_targets *ft)
{
	static const struct tr2_tgt *const tgt[3] = { &tr2_tgt_normal, &tr2_tgt_perf, &tr2_tgt_event };
	char err[256];

	for (int i = 0; i < FUZZ_NTARGETS; i++) {
		struct tr2_target *t = &ft->t[i];

		memset(t, 0, sizeof(*t));
		t->tgt = tgt[i % 3];
		t->opts.brief = i >= 3;
		/* EVENT: no nesting limit (tr2-fmt's default), and git's default 2 */
		t->opts.event_nesting = i >= 3 ? 2 : INT_MAX;
		t->dst = tr2_dst_open("/dev/null", err, sizeof(err));
		if (!t->dst) {
			fprintf(stderr, "fuzz: failed to open /dev/null: %s\n", err);
			abort();
		}
		tr2_dst_set_buffered(t->dst, i < 3);
		ft->ptr[i] = t;
	}
}

static inline void fuzz_targets_close(struct fuzz_targets *ft)
{
	for (int i = 0; i < FUZZ_NTARGETS; i++) {
		tr2_dst_close(ft->t[i].dst);
		tr2_buf_free(&ft->t[i].buf);
	}
}

#endif
