/* fuzz_targets.h: the targets both harnesses write to: each of git's three
 * formats, plain and BRIEF, and the chrome and folded views, every one into
 * /dev/null, so that every formatter runs on what a hostile input makes of
 * an event.  The plain ones and chrome buffer their lines, as tr2-bpf's do
 * (tr2_dst_set_buffered), the BRIEF ones and folded write each at once.
 * Opened and closed (tr2_target_finish: chrome's and folded's ends) once
 * per input, so that a leak in a target or destination shows too. */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr2_dst.h"
#include "tr2_tgt.h"

#define FUZZ_NTARGETS 8

struct fuzz_targets {
	struct tr2_target t[FUZZ_NTARGETS];
	struct tr2_target *ptr[FUZZ_NTARGETS];
};

static inline void fuzz_targets_open(struct fuzz_targets *ft)
{
	static const struct tr2_tgt *const tgt[FUZZ_NTARGETS] = {
		&tr2_tgt_normal, &tr2_tgt_perf, &tr2_tgt_event,
		&tr2_tgt_normal, &tr2_tgt_perf, &tr2_tgt_event,
		&tr2_tgt_chrome, &tr2_tgt_folded,
	};
	char err[256];

	for (int i = 0; i < FUZZ_NTARGETS; i++) {
		/* BRIEF for 3..5; EVENT: no nesting limit (tr2-fmt's default), and git's default 2 */
		struct tr2_tgt_opts opts = { .brief = i >= 3 && i < 6, .event_nesting = i >= 3 ? 2 : INT_MAX };
		struct tr2_dst *dst = tr2_dst_open("/dev/null", TR2_DST_MODE_GIT, err, sizeof(err));

		if (!dst) {
			fprintf(stderr, "fuzz: failed to open /dev/null: %s\n", err);
			abort();
		}
		tr2_target_init(&ft->t[i], tgt[i], &opts, dst);
		tr2_dst_set_buffered(dst, i < 3 || i == 6);
		ft->ptr[i] = &ft->t[i];
	}
}

static inline void fuzz_targets_close(struct fuzz_targets *ft)
{
	for (int i = 0; i < FUZZ_NTARGETS; i++) {
		tr2_target_finish(&ft->t[i]);
		tr2_dst_close(ft->t[i].dst);
	}
}

#endif
