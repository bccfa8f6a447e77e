/* tr2_replay.h: a recording (tr2-bpf --record, loader/tr2_recording.h) fed
 * to a session (loader/tr2_session.h) as tr2-bpf fed its own: tr2-fmt's
 * reader of recordings.  The same records, losses, holds, pauses and ticks
 * in the same order make the same lines as tr2-bpf wrote live.
 *
 * The bytes are never trusted: a record whose framing, kind, size or times
 * make no sense stops the replay with one reason; what came before it is
 * written.  A batch's calls are checked as tr2-bpf checks them live
 * (tr2_decode.h): those that do not parse are lost and counted.
 */
#ifndef TR2_REPLAY_H
#define TR2_REPLAY_H

#include <stddef.h>
#include <stdint.h>

struct tr2_summary;
struct tr2_target;
struct tr2_replay;

struct tr2_replay_cfg {
	struct tr2_target **targets;   /* written to (not owned; kept, not copied) */
	int ntargets;
	char *const *cats;             /* --category names (copied); NULL: the recording's own */
	int ncats;
	/* --summary: called at the START record with its clock reference,
	 * returns the summary to feed (owned by the caller); NULL: none */
	struct tr2_summary *(*summary)(void *ctx, int64_t mono_to_real_ns, uint64_t start_ns, int all);
	void *ctx;
};

struct tr2_replay *tr2_replay_new(const struct tr2_replay_cfg *cfg);

/* Takes the next n bytes of the file.  Returns 0, or -1 when they show
 * that the file is no recording or is damaged (tr2_replay_error: where and
 * why); from then on nothing more is read. */
int tr2_replay_feed(struct tr2_replay *r, const void *bytes, size_t n);

/* At the end of the file: writes what is waiting, and --summary's final
 * table.  Returns 0 when tr2-bpf ended the recording; 1 when it stops
 * short (tr2-bpf was killed, or the file was cut): tr2_replay_error() says
 * where; -1 after a damaged record. */
int tr2_replay_finish(struct tr2_replay *r);

/* Where and why the replay stopped ("byte N: ..."), or NULL. */
const char *tr2_replay_error(const struct tr2_replay *r);

/* The summary line's numbers, as tr2-bpf counts them (tr2_tracer_report):
 * events written (less those --summary alone did not aggregate) and lost. */
uint64_t tr2_replay_events(const struct tr2_replay *r);
uint64_t tr2_replay_lost(const struct tr2_replay *r);

/* Whether bytes start with a recording's magic (n >= TR2_REC_FILE_MAGIC_LEN). */
int tr2_replay_is_recording(const void *bytes, size_t n);

void tr2_replay_free(struct tr2_replay *r);

#endif
