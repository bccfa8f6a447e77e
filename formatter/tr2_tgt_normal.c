/* tr2_tgt_normal.c: the NORMAL format (GIT_TRACE2), laid out byte for byte as
 * git's trace2/tr2_tgt_normal.c (git 2.39; timer, counter and child_ready
 * lines from git's newest sources, which 2.39 lacks).
 *
 * A line is
 *
 *   [<time> <file>:<line> <padding>]<message>
 *
 * where <time> is the local time of day "HH:MM:SS.uuuuuu" of ev->time_us and
 * "<time> <file>:<line> " is padded with spaces to 50 bytes (never cut); the
 * file part is left out when the event has no file, and the whole prefix in
 * the BRIEF variant.  NORMAL ignores thread, region and data events (and
 * too_many_files), as git does.  Elapsed times are always written (0 when
 * the producer did not know them).  Strings go through tr2_text_add (written as they are,
 * as git does; see tr2_quote.h).
 */
#include <string.h>
#include "tr2_buf.h"
#include "tr2_quote.h"
#include "tr2_tgt.h"
#include "tr2_time.h"

#define NORMAL_FL_WIDTH 50  /* git's TR2FMT_NORMAL_FL_WIDTH */

/* git's normal_fmt_prepare(), written with a pointer into room reserved
 * once, as PERF's prefix (439 -> 351 instructions per error line). */
static void normal_prefix(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	size_t flen;
	char *start, *p;

	if (opts->brief)
		return;
	flen = ev->file ? strlen(ev->file) : 0;
	/* time, file, line: 15 + 1 + flen + 1 + 11 + 1 bytes at most */
	start = p = tr2_buf_reserve(b, NORMAL_FL_WIDTH + flen);
	p = tr2_time_put_local(p, ev->time_us);
	*p++ = ' ';
	if (flen) {
		memcpy(p, ev->file, flen);
		p += flen;
		*p++ = ':';
		p += tr2_int_digits(p, ev->line);
		*p++ = ' ';
	}
	if (p - start < NORMAL_FL_WIDTH) {
		memset(p, ' ', NORMAL_FL_WIDTH - (size_t)(p - start));
		p = start + NORMAL_FL_WIDTH;
	}
	b->len = (size_t)(p - b->p);
	tr2_buf_terminate(b);
}

static void end_line(struct tr2_buf *b)
{
	tr2_buf_putc(b, '\n');
}

/* "<word> <string>" lines. */
static void normal_word(struct tr2_buf *b, const struct tr2_ev *ev,
			const struct tr2_tgt_opts *opts, const char *s)
{
	normal_prefix(b, ev, opts);
	tr2_buf_adds(b, tr2_ev_kind_name(ev->kind));
	tr2_buf_putc(b, ' ');
	tr2_text_add(b, s);
	end_line(b);
}

static void fn_version(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_word(b, ev, opts, ev->exe);
}

static void fn_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "start ");
	tr2_sq_quote_argv_pretty(b, ev->argv);
	end_line(b);
}

/* exit, atexit, signal: "<event> elapsed:%.6f code:%d" (signal prints signo as code). */
static void fn_code(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_adds(b, tr2_ev_kind_name(ev->kind));
	tr2_buf_addlit(b, " elapsed:");
	tr2_buf_add_secs(b, ev->t_abs_us, 0);
	tr2_buf_addlit(b, " code:");
	tr2_buf_add_int(b, ev->kind == TR2_EV_SIGNAL ? ev->signo : ev->code);
	end_line(b);
}

static void fn_error(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "error");
	if (ev->msg) {
		tr2_buf_putc(b, ' ');
		tr2_text_add(b, ev->msg);
	}
	end_line(b);
}

static void fn_cmd_path(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_word(b, ev, opts, ev->path);
}

/* "cmd_ancestry parent <- grandparent <- ...", names unquoted. */
static void fn_cmd_ancestry(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "cmd_ancestry ");
	if (ev->ancestry) {
		for (int i = 0; ev->ancestry[i]; i++) {
			if (i)
				tr2_buf_addlit(b, " <- ");
			tr2_text_add(b, ev->ancestry[i]);
		}
	}
	end_line(b);
}

static void fn_cmd_name(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "cmd_name ");
	tr2_text_add(b, ev->name);
	if (ev->hierarchy && *ev->hierarchy) {
		tr2_buf_addlit(b, " (");
		tr2_text_add(b, ev->hierarchy);
		tr2_buf_putc(b, ')');
	}
	end_line(b);
}

static void fn_cmd_mode(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_word(b, ev, opts, ev->mode);
}

static void fn_alias(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "alias ");
	tr2_text_add(b, ev->alias);
	tr2_buf_addlit(b, " -> ");
	tr2_sq_quote_argv_pretty(b, ev->argv);
	end_line(b);
}

/*
 * "child_start[<id>][ cd <dir>;] <argv>"; class and hook are not shown.  git
 * writes "git " and then the args of a git command, ev->argv holds "git" and
 * the args: the same line, except that git ends a git command without args
 * in a space.
 */
static void fn_child_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "child_start[");
	tr2_buf_add_int(b, ev->child_id);
	tr2_buf_putc(b, ']');
	if (ev->cd) {
		tr2_buf_addlit(b, " cd ");
		tr2_sq_quote_pretty(b, ev->cd);
		tr2_buf_putc(b, ';');
	}
	tr2_buf_putc(b, ' ');
	tr2_sq_quote_argv_pretty(b, ev->argv);
	end_line(b);
}

/* "child_exit[<id>] pid:<pid> code:<code> elapsed:%.6f" and the child_ready twin. */
static void fn_child_end(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_adds(b, tr2_ev_kind_name(ev->kind));
	tr2_buf_putc(b, '[');
	tr2_buf_add_int(b, ev->child_id);
	tr2_buf_addlit(b, "] pid:");
	tr2_buf_add_int(b, ev->pid);
	if (ev->kind == TR2_EV_CHILD_READY) {
		tr2_buf_addlit(b, " ready:");
		tr2_text_add(b, ev->ready);
	} else {
		tr2_buf_addlit(b, " code:");
		tr2_buf_add_int(b, ev->code);
	}
	tr2_buf_addlit(b, " elapsed:");
	tr2_buf_add_secs(b, ev->t_rel_us, 0);
	end_line(b);
}

/* "exec[<id>] <exe> <argv>", exe unquoted and followed by a space. */
static void fn_exec(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "exec[");
	tr2_buf_add_int(b, ev->exec_id);
	tr2_buf_addlit(b, "] ");
	if (ev->exe) {
		tr2_text_add(b, ev->exe);
		tr2_buf_putc(b, ' ');
	}
	tr2_sq_quote_argv_pretty(b, ev->argv);
	end_line(b);
}

static void fn_exec_result(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "exec_result[");
	tr2_buf_add_int(b, ev->exec_id);
	tr2_buf_addlit(b, "] code:");
	tr2_buf_add_int(b, ev->code);
	if (ev->code > 0) {
		tr2_buf_addlit(b, " err:");
		tr2_text_add(b, strerror(ev->code));
	}
	end_line(b);
}

/*
 * git 2.38 and later: "def_param scope:<scope> <param>=<value>" ("=<value>"
 * left out when there is no value, as newer git does).  Without a scope:
 * "def_param <param>=<value>", as git before 2.38 wrote it.
 */
static void fn_def_param(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "def_param ");
	if (ev->scope) {
		tr2_buf_addlit(b, "scope:");
		tr2_text_add(b, ev->scope);
		tr2_buf_putc(b, ' ');
	}
	tr2_text_add(b, ev->param);
	if (ev->value) {
		tr2_buf_putc(b, '=');
		tr2_text_add(b, ev->value);
	}
	end_line(b);
}

static void fn_def_repo(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_addlit(b, "worktree ");
	tr2_sq_quote_pretty(b, ev->worktree);
	end_line(b);
}

static void fn_printf(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_text_add(b, ev->msg);
	end_line(b);
}

/* git (newest): "<event> <category>/<name> intervals:<n> total:%8.6f min:%8.6f max:%8.6f". */
static void fn_timer(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_adds(b, tr2_ev_kind_name(ev->kind));
	tr2_buf_putc(b, ' ');
	tr2_text_add(b, ev->category);
	tr2_buf_putc(b, '/');
	tr2_text_add(b, ev->name);
	tr2_buf_addlit(b, " intervals:");
	tr2_buf_add_uint(b, ev->intervals);
	tr2_buf_addlit(b, " total:");
	tr2_buf_add_secs(b, ev->t_total_us, 8);
	tr2_buf_addlit(b, " min:");
	tr2_buf_add_secs(b, ev->t_min_us, 8);
	tr2_buf_addlit(b, " max:");
	tr2_buf_add_secs(b, ev->t_max_us, 8);
	end_line(b);
}

/* git (newest): "<event> <category>/<name> value:<count>", count as git's uint64_t. */
static void fn_counter(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	normal_prefix(b, ev, opts);
	tr2_buf_adds(b, tr2_ev_kind_name(ev->kind));
	tr2_buf_putc(b, ' ');
	tr2_text_add(b, ev->category);
	tr2_buf_putc(b, '/');
	tr2_text_add(b, ev->name);
	tr2_buf_addlit(b, " value:");
	tr2_buf_add_uint(b, (uint64_t)ev->count);
	end_line(b);
}

const struct tr2_tgt tr2_tgt_normal = {
	.name = "normal",
	.fn = {
		[TR2_EV_VERSION] = fn_version,
		[TR2_EV_START] = fn_start,
		[TR2_EV_EXIT] = fn_code,
		[TR2_EV_ATEXIT] = fn_code,
		[TR2_EV_SIGNAL] = fn_code,
		[TR2_EV_ERROR] = fn_error,
		[TR2_EV_CMD_PATH] = fn_cmd_path,
		[TR2_EV_CMD_ANCESTRY] = fn_cmd_ancestry,
		[TR2_EV_CMD_NAME] = fn_cmd_name,
		[TR2_EV_CMD_MODE] = fn_cmd_mode,
		[TR2_EV_ALIAS] = fn_alias,
		[TR2_EV_CHILD_START] = fn_child_start,
		[TR2_EV_CHILD_EXIT] = fn_child_end,
		[TR2_EV_CHILD_READY] = fn_child_end,
		[TR2_EV_EXEC] = fn_exec,
		[TR2_EV_EXEC_RESULT] = fn_exec_result,
		[TR2_EV_DEF_PARAM] = fn_def_param,
		[TR2_EV_DEF_REPO] = fn_def_repo,
		[TR2_EV_PRINTF] = fn_printf,
		[TR2_EV_TIMER] = fn_timer,
		[TR2_EV_TH_TIMER] = fn_timer,
		[TR2_EV_COUNTER] = fn_counter,
		[TR2_EV_TH_COUNTER] = fn_counter,
	},
};
