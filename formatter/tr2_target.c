/* tr2_target.c: a format bound to a destination (see tr2_tgt.h). */
#include <string.h>
#include "tr2_dst.h"
#include "tr2_tgt.h"

int tr2_target_emit(struct tr2_target *t, const struct tr2_ev *ev)
{
	struct tr2_buf *out;
	tr2_tgt_fn fn;
	int rc = 0;

	if ((unsigned)ev->kind >= TR2_EV__COUNT)
		return 0;
	fn = t->tgt->fn[ev->kind];
	out = fn ? tr2_dst_buffer(t->dst) : NULL;
	if (out) {
		/* a buffered file or fd: the line is formatted into the batch
		 * itself, not copied there from t->buf (PERF region lines: 92 -> 76 ns,
		 * EVENT: 142 -> 114 ns) */
		fn(out, ev, &t->opts);
		rc = tr2_dst_commit(t->dst);
	} else if (fn) {
		t->buf.len = 0;
		fn(&t->buf, ev, &t->opts);
		if (t->buf.len)
			rc = tr2_dst_write(t->dst, ev->sid, ev->stream, t->buf.p, t->buf.len);
		t->buf.len = 0;

		/* git writes "too_many_files" right after "version" into the
		 * sentinel file; here it follows the first line that went there,
		 * with that line's time, thread and file:line. */
		if (!rc && tr2_dst_take_too_many_files(t->dst) && t->tgt->fn[TR2_EV_TOO_MANY_FILES]) {
			struct tr2_ev tmf = *ev;

			tmf.kind = TR2_EV_TOO_MANY_FILES;
			t->tgt->fn[TR2_EV_TOO_MANY_FILES](&t->buf, &tmf, &t->opts);
			if (t->buf.len)
				rc = tr2_dst_write(t->dst, ev->sid, ev->stream, t->buf.p, t->buf.len);
			t->buf.len = 0;
		}
	}
	/* The last event of a process: a directory destination closes its
	 * file, a socket destination its connection, unless a process it
	 * forked writes them still. */
	if ((ev->kind == TR2_EV_ATEXIT || ev->kind == TR2_EV_SIGNAL) && !ev->stream_goes_on)
		tr2_dst_end_process(t->dst, ev->sid, ev->stream);
	return rc;
}

void tr2_target_init(struct tr2_target *t, const struct tr2_tgt *tgt,
		     const struct tr2_tgt_opts *opts, struct tr2_dst *dst)
{
	memset(t, 0, sizeof(*t));
	t->tgt = tgt;
	t->opts = *opts;
	t->dst = dst;
	t->opts.per_process = tr2_dst_per_process(dst);
	t->opts.state = tgt->state_new ? tgt->state_new() : NULL;
}

int tr2_target_end_process(struct tr2_target *t, const char *sid, uint64_t stream)
{
	int rc = 0;

	if (t->tgt->end_process)
		rc = t->tgt->end_process(t, sid, stream);
	tr2_dst_end_process(t->dst, sid, stream);
	return rc;
}

int tr2_target_finish(struct tr2_target *t)
{
	int rc = 0;

	if (t->tgt && t->tgt->finish)
		rc = t->tgt->finish(t);
	tr2_dst_report_dropped(t->dst);
	if (t->tgt && t->tgt->state_free)
		t->tgt->state_free(t->opts.state);
	t->opts.state = NULL;
	tr2_buf_free(&t->buf);
	return rc;
}
