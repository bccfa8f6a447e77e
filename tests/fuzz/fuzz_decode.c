/* fuzz_decode.c: libFuzzer harness for tr2-bpf's record path: ring-buffer
 * bytes -> tr2_decode_rec() -> tr2_session_record() -> (tr2_batch_next(),
 * in time order) -> the Trace2 model -> every target, and --summary's
 * aggregates (tr2_session_set_summary: room for 16 keys, per program when
 * the input's length is odd), formatted at the end.
 *
 * An input is a run of records, as the ring buffer hands them over one by
 * one: each record's length is the size word of its own header when that is
 * at least 1 and shorter than what is left, else the rest of the input.  So
 * a single record is an input by itself, records concatenated are a run that
 * drives the session's state (threads, literals, regions, children, metrics,
 * exec), and a header whose size disagrees with the bytes still reaches the
 * decoder's checks.  One session per input, freed at the end, so that leaks
 * show.
 *
 * Around each record the harness makes the calls tr2-bpf's on_record() and
 * main loop make, with values taken from the record where tr2-bpf's come
 * from elsewhere (the clock, BPF maps):
 *   proc_gone            when num[0] != 0, tr2_session_lost(pid, num[0],
 *                        ts_ns - 1) first: tr2-bpf's forget_losses() marks
 *                        the process's last lost calls (BPF map lost_by_pid)
 *                        before its proc_gone; in the real stream num[] of
 *                        proc_gone is 0, here it is the lost count
 *   execve, new_object   when num[0] != 0 (the process was stopped to
 *                        attach): tr2_session_resumed(), 250 µs after ts_ns
 *   every record         whose pad byte (unused by the format) is odd:
 *                        tr2_session_flush() up to ts_ns -
 *                        TR2_SESSION_DELAY_NS, as the poll loop flushes
 *                        what is old enough, so that records wait and are
 *                        put in order
 * then tr2_session_writing(); at the end tr2_session_flush(UINT64_MAX).
 * Bit 1 of the first record's pad byte turns on --category
 * (tr2_session_set_categories). */
#include <stdint.h>
#include <string.h>
#include "fuzz_targets.h"
#include "tr2_decode.h"
#include "tr2_session.h"
#include "tr2_summary.h"

/* CLOCK_REALTIME - CLOCK_MONOTONIC of a machine up for a while in 2024. */
#define MONO_TO_REAL_NS INT64_C(1714000000000000000)
/* When the trace began: calls before it are left out. */
#define SINCE_NS 1000000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const categories[] = { "index", "fsync" };
	struct fuzz_targets ft;
	struct tr2_summary *sum = tr2_summary_new(1, 1, NULL, MONO_TO_REAL_NS, 0);
	struct tr2_buf table = { 0 }, json = { 0 };
	struct tr2_session *s;
	unsigned long procs, threads, waiting;

	fuzz_targets_open(&ft);
	s = tr2_session_new(ft.ptr, FUZZ_NTARGETS, MONO_TO_REAL_NS, "H0123abcd", SINCE_NS);
	tr2_summary_set_keys(sum, 16);
	tr2_summary_set_per_program(sum, size & 1);
	tr2_session_set_summary(s, sum);
	if (size > offsetof(struct tr2_rec, flags) && data[offsetof(struct tr2_rec, flags)] & 2)
		tr2_session_set_categories(s, categories, 2);
	while (size) {
		size_t len = size;
		const char *why = NULL;
		struct tr2_rec h;
		uint16_t word;

		if (size >= 2) {
			memcpy(&word, data, 2);
			if (word >= 1 && word < size)
				len = word;
		}
		if (tr2_decode_rec(data, len, &h, &why) == 0) {
			if (h.kind == TR2_REC_PROC_GONE && h.num[0])
				tr2_session_lost(s, h.pid, (uint64_t)h.num[0], h.ts_ns ? h.ts_ns - 1 : 0);
			tr2_session_record(s, &h, data, len);
			if ((h.kind == TR2_REC_EXECVE || h.kind == TR2_REC_NEW_OBJECT) && h.num[0])
				tr2_session_resumed(s, h.pid, h.ts_ns, h.ts_ns + 250000);
			if (h.flags & 1)
				tr2_session_flush(s, h.ts_ns > TR2_SESSION_DELAY_NS ?
							     h.ts_ns - TR2_SESSION_DELAY_NS : 0);
			(void)tr2_session_writing(s);
		} else if (!why || !why[0]) {
			__builtin_trap();   /* tr2_decode.h: refused with a reason */
		}
		data += len;
		size -= len;
	}
	tr2_session_flush(s, UINT64_MAX);
	tr2_session_kept(s, &procs, &threads, &waiting);
	if (waiting)
		__builtin_trap();   /* a flush of everything leaves nothing waiting */
	(void)tr2_session_events(s);
	(void)tr2_session_lost_calls(s);
	tr2_summary_format(sum, &table, &json, "T", 1, 1);
	tr2_buf_free(&table);
	tr2_buf_free(&json);
	tr2_summary_free(sum);
	tr2_session_free(s);
	fuzz_targets_close(&ft);
	return 0;
}
