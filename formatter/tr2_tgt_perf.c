/* tr2_tgt_perf.c: the PERF format (GIT_TRACE2_PERF), laid out byte for byte
 * as git's trace2/tr2_tgt_perf.c (git 2.39; timer and counter lines and
 * child_ready from git's newest sources, which 2.39 lacks).
 *
 * A line is
 *
 *   [<time> <file>:<line> | ]d<depth> | <thread> | <event> | <repo> | <t_abs> | <t_rel> | <category> | <dots><message>
 *
 * with, as git writes them:
 *   <time>        local time of day "HH:MM:SS.uuuuuu" of ev->time_us
 *   <file>:<line> padded with spaces to 28 bytes; when longer, "..." and its
 *                 last 25 bytes; blank when the event has no file
 *   the part up to the first bar is left out in the BRIEF variant
 *   <depth>       number of '/' in the sid (the count of parent git processes)
 *   <thread>      padded to 24 bytes (git's TR2_MAX_THREAD_NAME), not cut
 *   <event>       padded to 12 bytes
 *   <repo>        "r<id>" padded to 3 bytes, on def_repo, region_enter,
 *                 region_leave, data and data_json when they name a repo
 *                 (repo > 0, or has_repo for git's "r0")
 *   <t_abs>       "%9.6f" seconds, or 9 spaces; the kinds that carry it are
 *                 start, exit, atexit, signal, child_*, thread_*, exec,
 *                 exec_result, region_*, data, data_json, printf, and it is
 *                 written when ev->has_t_abs
 *   <t_rel>       likewise, on child_exit, child_ready, thread_exit,
 *                 region_leave, data, data_json, when ev->has_t_rel
 *   <category>    cut or padded to 12 bytes; def_param puts "scope:<scope>" here
 *   <dots>        2 * (nesting - 1) dots when nesting > 0, on every line
 * Strings go through tr2_text_add (written as they are, as git does; see tr2_quote.h).
 */
#include <string.h>
#include "tr2_buf.h"
#include "tr2_quote.h"
#include "tr2_tgt.h"
#include "tr2_time.h"

#define PERF_FL_WIDTH 28        /* git's TR2FMT_PERF_FL_WIDTH */
#define PERF_THREAD_WIDTH 24    /* git's TR2_MAX_THREAD_NAME */
#define PERF_EVENT_WIDTH 12     /* git's TR2FMT_PERF_MAX_EVENT_NAME */
#define PERF_REPO_WIDTH 3       /* git's TR2FMT_PERF_REPO_WIDTH */
#define PERF_CATEGORY_WIDTH 12  /* git's TR2FMT_PERF_CATEGORY_WIDTH */
#define PERF_TIME_WIDTH 9       /* git's "%9.6f" */

/* Which optional columns an event kind fills. */
enum {
	COL_REPO = 1,
	COL_T_ABS = 2,
	COL_T_REL = 4,
};

static int sid_depth(const char *sid)
{
	int depth = 0;

	if (sid)
		for (const char *p = sid; (p = strchr(p, '/')); p++)
			depth++;
	return depth;
}

/* Room perf_prefix reserves besides the thread name, the event name and the
 * dots: its columns take at most 183 bytes (time and file:line 44, depth 12,
 * the padding of thread and event 36, repo 13, two times 42, category 12,
 * eight " | " 24). */
#define PERF_PREFIX_ROOM 192

static char *put_sep(char *p)
{
	memcpy(p, " | ", 3);
	return p + 3;
}

/* Writes s[0..n) padded with spaces to width; width is a constant at each
 * call, so the memset is a store or two. */
static char *put_padded(char *p, const char *s, size_t n, size_t width)
{
	memset(p, ' ', width);
	if (n)
		memcpy(p, s, n);
	return p + (n > width ? n : width);
}

/* "<file>:<line>", or "..." and its last bytes when longer than 28, written
 * over the 28 spaces at p. */
static void put_file_line(char *p, const char *file, int line)
{
	char digits[20];
	size_t dlen = tr2_int_digits(digits, line), flen = strlen(file);

	if (flen + 1 + dlen <= PERF_FL_WIDTH) {
		memcpy(p, file, flen);
		p += flen;
	} else {
		size_t keep = PERF_FL_WIDTH - 3 - 1 - dlen;  /* bytes of file kept */

		memcpy(p, "...", 3);
		memcpy(p + 3, file + flen - keep, keep);
		p += 3 + keep;
	}
	*p++ = ':';
	memcpy(p, digits, dlen);
}

static char *put_time_col(char *p, bool present, int64_t us)
{
	if (present) {
		p = tr2_put_secs(p, us, PERF_TIME_WIDTH);
	} else {
		memset(p, ' ', PERF_TIME_WIDTH);
		p += PERF_TIME_WIDTH;
	}
	return put_sep(p);
}

/*
 * Everything up to the message: git's perf_fmt_prepare().  Every line has
 * these columns, so they are written with a pointer into room reserved once
 * rather than appended piece by piece, each with a capacity check and a NUL
 * (measured: 1567 -> 995 instructions per region_enter line).
 */
static void perf_prefix(struct tr2_buf *b, const struct tr2_ev *ev,
			const struct tr2_tgt_opts *opts, const char *event_name,
			int cols, const char *category)
{
	const char *thread = ev->thread ? ev->thread : "";
	size_t tlen = strlen(thread), elen = strlen(event_name);
	size_t dots = ev->nesting > 0 ? 2 * (size_t)(ev->nesting - 1) : 0;
	char *p = tr2_buf_reserve(b, PERF_PREFIX_ROOM + tlen + elen + dots), *q;

	if (!opts->brief) {
		p = tr2_time_put_local(p, ev->time_us);
		*p++ = ' ';
		memset(p, ' ', PERF_FL_WIDTH);
		if (ev->file && *ev->file)
			put_file_line(p, ev->file, ev->line);
		p = put_sep(p + PERF_FL_WIDTH);
	}

	*p++ = 'd';
	p += tr2_int_digits(p, sid_depth(ev->sid));
	p = put_sep(p);
	p = put_sep(put_padded(p, thread, tlen, PERF_THREAD_WIDTH));
	p = put_sep(put_padded(p, event_name, elen, PERF_EVENT_WIDTH));

	memset(p, ' ', PERF_REPO_WIDTH);
	q = p;
	if ((cols & COL_REPO) && (ev->repo > 0 || ev->has_repo)) {
		*q++ = 'r';
		q += tr2_int_digits(q, ev->repo);
		*q++ = ' ';
	}
	p = put_sep(q > p + PERF_REPO_WIDTH ? q : p + PERF_REPO_WIDTH);

	p = put_time_col(p, (cols & COL_T_ABS) && ev->has_t_abs, ev->t_abs_us);
	p = put_time_col(p, (cols & COL_T_REL) && ev->has_t_rel, ev->t_rel_us);

	/* "%-12.12s": cut, then padded */
	p = put_padded(p, category, category ? strnlen(category, PERF_CATEGORY_WIDTH) : 0,
		       PERF_CATEGORY_WIDTH);
	p = put_sep(p);

	memset(p, '.', dots);
	b->len = (size_t)(p + dots - b->p);
	tr2_buf_terminate(b);
}

static void end_line(struct tr2_buf *b)
{
	tr2_buf_putc(b, '\n');
}

/* Lines whose message is one string (or nothing). */
static void perf_simple(struct tr2_buf *b, const struct tr2_ev *ev,
			const struct tr2_tgt_opts *opts, int cols, const char *msg)
{
	perf_prefix(b, ev, opts, tr2_ev_kind_name(ev->kind), cols, NULL);
	tr2_text_add(b, msg);
	end_line(b);
}

static void fn_version(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_simple(b, ev, opts, 0, ev->exe);
}

static void fn_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "start", COL_T_ABS, NULL);
	tr2_sq_quote_argv_pretty(b, ev->argv);
	end_line(b);
}

/* exit, atexit: "code:%d"; signal: "signo:%d" */
static void fn_code(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, tr2_ev_kind_name(ev->kind), COL_T_ABS, NULL);
	if (ev->kind == TR2_EV_SIGNAL) {
		tr2_buf_addlit(b, "signo:");
		tr2_buf_add_int(b, ev->signo);
	} else {
		tr2_buf_addlit(b, "code:");
		tr2_buf_add_int(b, ev->code);
	}
	end_line(b);
}

static void fn_error(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_simple(b, ev, opts, 0, ev->msg);
}

static void fn_cmd_path(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_simple(b, ev, opts, 0, ev->path);
}

static void fn_cmd_ancestry(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "cmd_ancestry", 0, NULL);
	tr2_buf_addlit(b, "ancestry:[");
	tr2_sq_quote_argv_pretty(b, ev->ancestry);
	tr2_buf_putc(b, ']');
	end_line(b);
}

static void fn_cmd_name(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "cmd_name", 0, NULL);
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
	perf_simple(b, ev, opts, 0, ev->mode);
}

static void fn_alias(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "alias", 0, NULL);
	tr2_buf_addlit(b, "alias:");
	tr2_text_add(b, ev->alias);
	tr2_buf_addlit(b, " argv:[");
	tr2_sq_quote_argv_pretty(b, ev->argv);
	tr2_buf_putc(b, ']');
	end_line(b);
}

static void add_child_id(struct tr2_buf *b, int id)
{
	tr2_buf_addlit(b, "[ch");
	tr2_buf_add_int(b, id);
	tr2_buf_putc(b, ']');
}

/*
 * git: "[ch<id>] class:hook hook:<name>" for hooks, else "[ch<id>] class:<class>",
 * then " cd:<dir>" and " argv:[<argv>]".  git's argv there is "git" plus the
 * child's args for git commands; ev->argv is that whole vector already.
 */
static void fn_child_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "child_start", COL_T_ABS, NULL);
	add_child_id(b, ev->child_id);
	if (ev->hook_name) {
		tr2_buf_addlit(b, " class:hook hook:");
		tr2_text_add(b, ev->hook_name);
	} else {
		tr2_buf_addlit(b, " class:");
		tr2_text_add(b, ev->child_class ? ev->child_class : "?");
	}
	if (ev->cd) {
		tr2_buf_addlit(b, " cd:");
		tr2_sq_quote_pretty(b, ev->cd);
	}
	tr2_buf_addlit(b, " argv:[");
	tr2_sq_quote_argv_pretty(b, ev->argv);
	tr2_buf_putc(b, ']');
	end_line(b);
}

/* child_exit "[<id>] pid:<pid> code:<code>" and its child_ready twin "... ready:<ready>". */
static void fn_child_end(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, tr2_ev_kind_name(ev->kind), COL_T_ABS | COL_T_REL, NULL);
	add_child_id(b, ev->child_id);
	tr2_buf_addlit(b, " pid:");
	tr2_buf_add_int(b, ev->pid);
	if (ev->kind == TR2_EV_CHILD_READY) {
		tr2_buf_addlit(b, " ready:");
		tr2_text_add(b, ev->ready);
	} else {
		tr2_buf_addlit(b, " code:");
		tr2_buf_add_int(b, ev->code);
	}
	end_line(b);
}

static void fn_thread_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_simple(b, ev, opts, COL_T_ABS, NULL);
}

static void fn_thread_exit(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_simple(b, ev, opts, COL_T_ABS | COL_T_REL, NULL);
}

/* git: "id:<id> argv:[<exe> <argv>]", exe unquoted. */
static void fn_exec(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "exec", COL_T_ABS, NULL);
	tr2_buf_addlit(b, "id:");
	tr2_buf_add_int(b, ev->exec_id);
	tr2_buf_addlit(b, " argv:[");
	if (ev->exe) {
		tr2_text_add(b, ev->exe);
		if (ev->argv && ev->argv[0])
			tr2_buf_putc(b, ' ');
	}
	tr2_sq_quote_argv_pretty(b, ev->argv);
	tr2_buf_putc(b, ']');
	end_line(b);
}

/* git: "id:<id> code:<code>", and " err:<strerror(code)>" when code > 0. */
static void fn_exec_result(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "exec_result", COL_T_ABS, NULL);
	tr2_buf_addlit(b, "id:");
	tr2_buf_add_int(b, ev->exec_id);
	tr2_buf_addlit(b, " code:");
	tr2_buf_add_int(b, ev->code);
	if (ev->code > 0) {
		tr2_buf_addlit(b, " err:");
		tr2_text_add(b, strerror(ev->code));
	}
	end_line(b);
}

/*
 * git (2.38 and later): category "scope:<scope>", message "<param>:<value>"
 * (":<value>" left out when there is no value, as newer git does).  Without a
 * scope the category stays blank, as git before 2.38 wrote it.
 */
static void fn_def_param(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	char scope[PERF_CATEGORY_WIDTH + 1];

	if (ev->scope) {
		/* only its first 12 bytes can show */
		size_t n = strnlen(ev->scope, PERF_CATEGORY_WIDTH - 6);

		memcpy(scope, "scope:", 6);
		memcpy(scope + 6, ev->scope, n);
		scope[6 + n] = '\0';
	}
	perf_prefix(b, ev, opts, "def_param", 0, ev->scope ? scope : NULL);
	tr2_text_add(b, ev->param);
	if (ev->value) {
		tr2_buf_putc(b, ':');
		tr2_text_add(b, ev->value);
	}
	end_line(b);
}

static void fn_def_repo(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, "def_repo", COL_REPO, NULL);
	tr2_buf_addlit(b, "worktree:");
	tr2_sq_quote_pretty(b, ev->worktree);
	end_line(b);
}

/* git: "label:<label>", then " <msg>" for the printf forms. */
static void fn_region(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	int cols = COL_REPO | COL_T_ABS | (ev->kind == TR2_EV_REGION_LEAVE ? COL_T_REL : 0);

	perf_prefix(b, ev, opts, tr2_ev_kind_name(ev->kind), cols, ev->category);
	if (ev->label) {
		tr2_buf_addlit(b, "label:");
		tr2_text_add(b, ev->label);
	}
	if (ev->msg) {
		tr2_buf_putc(b, ' ');
		tr2_text_add(b, ev->msg);
	}
	end_line(b);
}

/* data and data_json: "<key>:<value>", the JSON text as it is. */
static void fn_data(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, tr2_ev_kind_name(ev->kind), COL_REPO | COL_T_ABS | COL_T_REL,
		    ev->category);
	tr2_text_add(b, ev->key);
	tr2_buf_putc(b, ':');
	tr2_text_add(b, ev->value);
	end_line(b);
}

static void fn_printf(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_simple(b, ev, opts, COL_T_ABS, ev->msg);
}

/* git (newest): "name:<name> intervals:<n> total:%8.6f min:%8.6f max:%8.6f". */
static void fn_timer(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, tr2_ev_kind_name(ev->kind), 0, ev->category);
	tr2_buf_addlit(b, "name:");
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

/* git (newest): "name:<name> value:<count>", count printed as git's uint64_t. */
static void fn_counter(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	perf_prefix(b, ev, opts, tr2_ev_kind_name(ev->kind), 0, ev->category);
	tr2_buf_addlit(b, "name:");
	tr2_text_add(b, ev->name);
	tr2_buf_addlit(b, " value:");
	tr2_buf_add_uint(b, (uint64_t)ev->count);
	end_line(b);
}

const struct tr2_tgt tr2_tgt_perf = {
	.name = "perf",
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
		[TR2_EV_THREAD_START] = fn_thread_start,
		[TR2_EV_THREAD_EXIT] = fn_thread_exit,
		[TR2_EV_DEF_PARAM] = fn_def_param,
		[TR2_EV_DEF_REPO] = fn_def_repo,
		[TR2_EV_REGION_ENTER] = fn_region,
		[TR2_EV_REGION_LEAVE] = fn_region,
		[TR2_EV_DATA] = fn_data,
		[TR2_EV_DATA_JSON] = fn_data,
		[TR2_EV_PRINTF] = fn_printf,
		[TR2_EV_TIMER] = fn_timer,
		[TR2_EV_TH_TIMER] = fn_timer,
		[TR2_EV_COUNTER] = fn_counter,
		[TR2_EV_TH_COUNTER] = fn_counter,
		/* TR2_EV_TOO_MANY_FILES: EVENT only, as in git */
	},
};
