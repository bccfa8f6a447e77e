/* fuzz_record.c: libFuzzer harness for tr2-fmt's reader of recordings
 * (tr2-bpf --record): file bytes -> tr2_replay_feed() -> the framing and
 * the tracer's records (loader/tr2_replay.c) -> tr2_session_*() -> the
 * Trace2 model -> every target, and --summary's tables (room for 16 keys).
 *
 * An input is a whole file, handed over in pieces as read(2) would: their
 * lengths come from a small generator seeded by the input's length, from 1
 * byte to 4 KiB, so that a record, the magic and a record's header are cut
 * anywhere.  Whatever the bytes, the replay must end in one of its three
 * states (ended, stopped short, damaged) with a reason for the last two;
 * one replay per input, freed at the end, so that leaks show. */
#include <stdint.h>
#include <string.h>
#include "fuzz_targets.h"
#include "tr2_replay.h"
#include "tr2_summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The summary a recording's START asks for: made here, freed below. */
static struct tr2_summary *summary;

static struct tr2_summary *make_summary(void *ctx, int64_t mono_to_real_ns, uint64_t start_ns, int all)
{
	summary = tr2_summary_new(1, 0, NULL, mono_to_real_ns, start_ns);
	tr2_summary_set_keys(summary, 16);
	tr2_summary_set_per_program(summary, all);
	tr2_summary_set_interval(summary, 100000000);
	return summary;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_targets ft;
	struct tr2_replay_cfg cfg = { .ntargets = FUZZ_NTARGETS, .summary = make_summary };
	struct tr2_replay *r;
	uint32_t seed = (uint32_t)size * 2654435761u;
	int rc;

	fuzz_targets_open(&ft);
	cfg.targets = ft.ptr;
	r = tr2_replay_new(&cfg);
	while (size) {
		size_t n;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 8) % (seed & 0x100 ? 4096 : 16);
		if (n > size)
			n = size;
		if (tr2_replay_feed(r, data, n))
			break;
		data += n;
		size -= n;
	}
	rc = tr2_replay_finish(r);
	if ((rc != 0) != (tr2_replay_error(r) != NULL))
		__builtin_trap();   /* tr2_replay.h: a reason exactly when it did not end */
	(void)tr2_replay_events(r);
	(void)tr2_replay_lost(r);
	tr2_replay_free(r);
	tr2_summary_free(summary);
	summary = NULL;
	fuzz_targets_close(&ft);
	return 0;
}
