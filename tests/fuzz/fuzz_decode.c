/* fuzz_decode.c: libFuzzer harness for tr2-bpf's record path: ring-buffer
 * bytes -> tr2_decode() -> tr2_session_record() -> every target, and
 * --summary's aggregates (tr2_session_set_summary: room for 16 keys, per
 * program when the input's length is odd), formatted at the end.
 *
 * An input is a run of records, as the ring buffer hands them over one by
 * one: each record's length is the size word of its own header when that is
 * at least 1 and shorter than what is left, else the rest of the input.  So
 * a single record is an input by itself, records concatenated are a run that
 * drives the session's state (threads, regions, children, metrics, exec),
 * and a header whose size disagrees with the bytes still reaches the
 * decoder's checks.  One session per input, freed at the end, so that leaks
 * show.
 *
 * Timer and counter sums arrive as records (TR2_REC_METRICS), so the
 * session gets them from the input like everything else.  Around each
 * decoded record the harness makes the other calls tr2-bpf's on_record()
 * makes, with values taken from the record where tr2-bpf's come from
 * elsewhere (the clock, BPF maps):
 *   execve, new_object   when num[0] != 0 (the process was stopped to attach):
 *                        tr2_session_resumed() after, 250 µs after ts_ns,
 *                        then tr2_session_flush()
 *   proc_gone            when num[0] != 0, tr2_session_lost(pid, num[0],
 *                        ts_ns) first: tr2-bpf's forget_losses() marks the
 *                        process's last lost events (BPF map lost_by_pid)
 *                        before its proc_gone; in the real stream num[] of
 *                        proc_gone is 0, here it is the lost count
 * and tr2_session_writing() after every record.
 */
#include <stdint.h>
#include <string.h>
#include "fuzz_targets.h"
#include "tr2_decode.h"
#include "tr2_session.h"
#include "tr2_summary.h"

/* CLOCK_REALTIME - CLOCK_MONOTONIC of a machine up for a while in 2024. */
#define MONO_TO_REAL_NS INT64_C(1714000000000000000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tr2_decoded dec;   /* 64 KiB: not on the stack */
	const struct tr2_rec *h = &dec.hdr;
	struct fuzz_targets ft;
	struct tr2_sites *sites = tr2_sites_new();
	struct tr2_summary *sum = tr2_summary_new(1, 1, NULL, MONO_TO_REAL_NS, 0);
	struct tr2_buf table = { 0 }, json = { 0 };
	struct tr2_session *s;

	fuzz_targets_open(&ft);
	s = tr2_session_new(ft.ptr, FUZZ_NTARGETS, MONO_TO_REAL_NS, "H0123abcd");
	tr2_summary_set_keys(sum, 16);
	tr2_summary_set_per_program(sum, size & 1);
	tr2_session_set_summary(s, sum);
	while (size) {
		size_t len = size;
		const char *why = NULL;
		uint16_t word;

		if (size >= 2) {
			memcpy(&word, data, 2);
			if (word >= 1 && word < size)
				len = word;
		}
		if (tr2_decode(data, len, sites, &dec, &why) == 0) {
			if (h->kind == TR2_REC_PROC_GONE && h->num[0])
				tr2_session_lost(s, h->pid, (uint64_t)h->num[0], h->ts_ns);
			tr2_session_record(s, &dec);
			if ((h->kind == TR2_REC_EXECVE || h->kind == TR2_REC_NEW_OBJECT) && h->num[0]) {
				tr2_session_resumed(s, h->pid, h->ts_ns, h->ts_ns + 250000);
				tr2_session_flush(s);
			}
			(void)tr2_session_writing(s);
		} else if (!why || !why[0]) {
			__builtin_trap();   /* tr2_decode.h: rejected with a reason */
		}
		data += len;
		size -= len;
	}
	tr2_session_flush(s);
	(void)tr2_session_events(s);
	tr2_summary_format(sum, &table, &json, "T", 1, 1);
	tr2_buf_free(&table);
	tr2_buf_free(&json);
	tr2_summary_free(sum);
	tr2_session_free(s);
	tr2_sites_free(sites);
	fuzz_targets_close(&ft);
	return 0;
}
