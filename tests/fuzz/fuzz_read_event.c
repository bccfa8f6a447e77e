/* fuzz_read_event.c: libFuzzer harness for tr2-fmt's path: bytes -> lines
 * -> tr2_reader_parse() -> every target.
 *
 * The input is cut at '\n' as tr2-fmt's getline loop cuts it, and each line
 * is handed over in place, without a NUL after it, so that a read past its
 * end is caught.  One reader per input, so that the lines of an input share
 * per-process state (origins, threads, regions, children) and a leak of
 * that state shows when the reader is freed. */
#include <stdint.h>
#include <string.h>
#include "fuzz_targets.h"
#include "tr2_read_event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct fuzz_targets ft;
	struct tr2_reader *rd;

	fuzz_targets_open(&ft);
	rd = tr2_reader_new();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct tr2_ev ev;

		if (tr2_reader_parse(rd, p, len, &ev) == 0) {
			for (int i = 0; i < FUZZ_NTARGETS; i++)
				tr2_target_emit(&ft.t[i], &ev);
		} else {
			const char *why = tr2_reader_error(rd);

			/* tr2_read_event.h: a one-line reason, always */
			if (!why[0] || strchr(why, '\n'))
				__builtin_trap();
		}
		p += len + (nl != NULL);
	}
	for (int i = 0; i < FUZZ_NTARGETS; i++)
		tr2_dst_flush(ft.t[i].dst);
	tr2_reader_free(rd);
	fuzz_targets_close(&ft);
	return 0;
}
