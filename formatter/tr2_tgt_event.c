/* tr2_tgt_event.c: the EVENT format (GIT_TRACE2_EVENT), one JSON object per
 * line, laid out byte for byte as git's trace2/tr2_tgt_event.c (git 2.39;
 * child_ready, printf, timer, th_timer, counter and th_counter from git's
 * newest sources, which 2.39 does not write).
 *
 * Every object starts with
 *   "event", "sid", "thread",
 *   "time"   UTC "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" of ev->time_us; in the BRIEF
 *            variant only on version and atexit (git's code; its document
 *            says start and atexit, its code says version and atexit),
 *   "file", "line"  when the event has a file, never in the BRIEF variant,
 *   "repo"   on def_repo, region_enter, region_leave, data and data_json when
 *            they name a repository (repo > 0, or has_repo for git's 0),
 * followed by the event's own keys in git's order (see each function).
 * Seconds are "%.6f" numbers; "t_abs" and "t_rel" are written only when
 * ev->has_t_abs / ev->has_t_rel say the producer knows them.
 *
 * region_enter, region_leave, data and data_json are dropped when their
 * nesting exceeds opts->event_nesting (git's GIT_TRACE2_EVENT_NESTING; a
 * value <= 0 means git's default, 2).
 *
 * Strings are escaped by tr2_json_add_string (invalid UTF-8 becomes U+FFFD);
 * data_json values by tr2_json_add_value (invalid JSON becomes a string).
 */
#include <string.h>
#include "tr2_buf.h"
#include "tr2_json.h"
#include "tr2_tgt.h"
#include "tr2_time.h"

#define EVENT_DEFAULT_NESTING 2  /* git's tr2env_event_max_nesting_levels */

/* Appends ,"<key>": */
#define KEY(b, key) tr2_buf_addlit(b, ",\"" key "\":")

static void add_str(struct tr2_buf *b, const char *s)
{
	tr2_json_add_string(b, s);
}

static void add_argv(struct tr2_buf *b, const char *const *argv)
{
	tr2_buf_putc(b, '[');
	if (argv) {
		for (int i = 0; argv[i]; i++) {
			if (i)
				tr2_buf_putc(b, ',');
			tr2_json_add_string(b, argv[i]);
		}
	}
	tr2_buf_putc(b, ']');
}

static bool has_repo_key(enum tr2_ev_kind kind)
{
	return kind == TR2_EV_DEF_REPO || kind == TR2_EV_REGION_ENTER || kind == TR2_EV_REGION_LEAVE ||
	       kind == TR2_EV_DATA || kind == TR2_EV_DATA_JSON;
}

/* git's event_fmt_prepare(): the keys every event starts with. */
static void event_prefix(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	tr2_buf_addlit(b, "{\"event\":\"");
	tr2_buf_adds(b, tr2_ev_kind_name(ev->kind));
	tr2_buf_putc(b, '"');
	KEY(b, "sid");
	add_str(b, ev->sid);
	KEY(b, "thread");
	add_str(b, ev->thread);
	if (!opts->brief || ev->kind == TR2_EV_VERSION || ev->kind == TR2_EV_ATEXIT) {
		KEY(b, "time");
		tr2_buf_putc(b, '"');
		tr2_time_add_utc(b, ev->time_us);
		tr2_buf_putc(b, '"');
	}
	if (!opts->brief && ev->file && *ev->file) {
		KEY(b, "file");
		add_str(b, ev->file);
		KEY(b, "line");
		tr2_buf_add_int(b, ev->line);
	}
	if (has_repo_key(ev->kind) && (ev->repo > 0 || ev->has_repo)) {
		KEY(b, "repo");
		tr2_buf_add_int(b, ev->repo);
	}
}

static void end_line(struct tr2_buf *b)
{
	tr2_buf_addlit(b, "}\n");
}

static void add_t_abs(struct tr2_buf *b, const struct tr2_ev *ev)
{
	if (ev->has_t_abs) {
		KEY(b, "t_abs");
		tr2_buf_add_secs(b, ev->t_abs_us, 0);
	}
}

static void add_t_rel(struct tr2_buf *b, const struct tr2_ev *ev)
{
	if (ev->has_t_rel) {
		KEY(b, "t_rel");
		tr2_buf_add_secs(b, ev->t_rel_us, 0);
	}
}

static bool nesting_ok(const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	int max = opts->event_nesting > 0 ? opts->event_nesting : EVENT_DEFAULT_NESTING;

	return ev->nesting <= max;
}

/* version: "evt", "exe" */
static void fn_version(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "evt");
	add_str(b, ev->evt);
	KEY(b, "exe");
	add_str(b, ev->exe);
	end_line(b);
}

/* too_many_files: the common keys only */
static void fn_too_many_files(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	end_line(b);
}

/* start: "t_abs", "argv" */
static void fn_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	add_t_abs(b, ev);
	KEY(b, "argv");
	add_argv(b, ev->argv);
	end_line(b);
}

/* exit, atexit: "t_abs", "code"; signal: "t_abs", "signo" */
static void fn_code(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	add_t_abs(b, ev);
	if (ev->kind == TR2_EV_SIGNAL) {
		KEY(b, "signo");
		tr2_buf_add_int(b, ev->signo);
	} else {
		KEY(b, "code");
		tr2_buf_add_int(b, ev->code);
	}
	end_line(b);
}

/* error: "msg", "fmt", each when present */
static void fn_error(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	if (ev->msg) {
		KEY(b, "msg");
		add_str(b, ev->msg);
	}
	if (ev->fmt) {
		KEY(b, "fmt");
		add_str(b, ev->fmt);
	}
	end_line(b);
}

/* cmd_path: "path" */
static void fn_cmd_path(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "path");
	add_str(b, ev->path);
	end_line(b);
}

/* cmd_ancestry: "ancestry" */
static void fn_cmd_ancestry(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "ancestry");
	add_argv(b, ev->ancestry);
	end_line(b);
}

/* cmd_name: "name", "hierarchy" when not empty */
static void fn_cmd_name(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "name");
	add_str(b, ev->name);
	if (ev->hierarchy && *ev->hierarchy) {
		KEY(b, "hierarchy");
		add_str(b, ev->hierarchy);
	}
	end_line(b);
}

/* cmd_mode: "name" (the mode) */
static void fn_cmd_mode(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "name");
	add_str(b, ev->mode);
	end_line(b);
}

/* alias: "alias", "argv" */
static void fn_alias(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "alias");
	add_str(b, ev->alias);
	KEY(b, "argv");
	add_argv(b, ev->argv);
	end_line(b);
}

/* child_start: "child_id", "child_class" ("hook" and "hook_name" for hooks),
 * "cd" when set, "use_shell", "argv" */
static void fn_child_start(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "child_id");
	tr2_buf_add_int(b, ev->child_id);
	KEY(b, "child_class");
	if (ev->hook_name) {
		tr2_buf_addlit(b, "\"hook\"");
		KEY(b, "hook_name");
		add_str(b, ev->hook_name);
	} else {
		add_str(b, ev->child_class ? ev->child_class : "?");
	}
	if (ev->cd) {
		KEY(b, "cd");
		add_str(b, ev->cd);
	}
	KEY(b, "use_shell");
	if (ev->use_shell)
		tr2_buf_addlit(b, "true");
	else
		tr2_buf_addlit(b, "false");
	KEY(b, "argv");
	add_argv(b, ev->argv);
	end_line(b);
}

/* child_exit: "child_id", "pid", "code", "t_rel";
 * child_ready: "child_id", "pid", "ready", "t_rel" */
static void fn_child_end(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "child_id");
	tr2_buf_add_int(b, ev->child_id);
	KEY(b, "pid");
	tr2_buf_add_int(b, ev->pid);
	if (ev->kind == TR2_EV_CHILD_READY) {
		KEY(b, "ready");
		add_str(b, ev->ready);
	} else {
		KEY(b, "code");
		tr2_buf_add_int(b, ev->code);
	}
	add_t_rel(b, ev);
	end_line(b);
}

/* thread_start: the common keys only; thread_exit: "t_rel" */
static void fn_thread(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	if (ev->kind == TR2_EV_THREAD_EXIT)
		add_t_rel(b, ev);
	end_line(b);
}

/* exec: "exec_id", "exe" when set, "argv" */
static void fn_exec(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "exec_id");
	tr2_buf_add_int(b, ev->exec_id);
	if (ev->exe) {
		KEY(b, "exe");
		add_str(b, ev->exe);
	}
	KEY(b, "argv");
	add_argv(b, ev->argv);
	end_line(b);
}

/* exec_result: "exec_id", "code" */
static void fn_exec_result(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "exec_id");
	tr2_buf_add_int(b, ev->exec_id);
	KEY(b, "code");
	tr2_buf_add_int(b, ev->code);
	end_line(b);
}

/* def_param: "scope" (git 2.38 and later; left out when unknown), "param",
 * "value" (left out when there is none, as newer git does) */
static void fn_def_param(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	if (ev->scope) {
		KEY(b, "scope");
		add_str(b, ev->scope);
	}
	KEY(b, "param");
	add_str(b, ev->param);
	if (ev->value) {
		KEY(b, "value");
		add_str(b, ev->value);
	}
	end_line(b);
}

/* def_repo: ("repo"), "worktree" */
static void fn_def_repo(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "worktree");
	add_str(b, ev->worktree);
	end_line(b);
}

/* region_enter: ("repo"), "nesting", "category", "label", "msg";
 * region_leave: ("repo"), "t_rel", "nesting", "category", "label", "msg";
 * category, label and msg each when present */
static void fn_region(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	if (!nesting_ok(ev, opts))
		return;
	event_prefix(b, ev, opts);
	if (ev->kind == TR2_EV_REGION_LEAVE)
		add_t_rel(b, ev);
	KEY(b, "nesting");
	tr2_buf_add_int(b, ev->nesting);
	if (ev->category) {
		KEY(b, "category");
		add_str(b, ev->category);
	}
	if (ev->label) {
		KEY(b, "label");
		add_str(b, ev->label);
	}
	if (ev->msg) {
		KEY(b, "msg");
		add_str(b, ev->msg);
	}
	end_line(b);
}

/* data, data_json: ("repo"), "t_abs", "t_rel", "nesting", "category", "key",
 * "value" (a string for data, even for git's intmax values; the JSON value
 * itself for data_json) */
static void fn_data(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	if (!nesting_ok(ev, opts))
		return;
	event_prefix(b, ev, opts);
	add_t_abs(b, ev);
	add_t_rel(b, ev);
	KEY(b, "nesting");
	tr2_buf_add_int(b, ev->nesting);
	KEY(b, "category");
	add_str(b, ev->category);
	KEY(b, "key");
	add_str(b, ev->key);
	KEY(b, "value");
	if (ev->kind == TR2_EV_DATA_JSON)
		tr2_json_add_value(b, ev->value);
	else
		add_str(b, ev->value);
	end_line(b);
}

/* printf (git 2.47 and later, format version 4): "t_abs", "msg" when
 * present; none for a program that writes an earlier version */
static void fn_printf(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	if (ev->evt && ev->evt[0] >= '1' && ev->evt[0] <= '3' && !ev->evt[1])
		return;   /* git's versions 1 to 3 */
	event_prefix(b, ev, opts);
	add_t_abs(b, ev);
	if (ev->msg) {
		KEY(b, "msg");
		add_str(b, ev->msg);
	}
	end_line(b);
}

/* timer, th_timer: "category", "name", "intervals", "t_total", "t_min", "t_max" */
static void fn_timer(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "category");
	add_str(b, ev->category);
	KEY(b, "name");
	add_str(b, ev->name);
	KEY(b, "intervals");
	/* git writes the uint64_t count through jw_object_intmax */
	tr2_buf_add_int(b, (int64_t)ev->intervals);
	KEY(b, "t_total");
	tr2_buf_add_secs(b, ev->t_total_us, 0);
	KEY(b, "t_min");
	tr2_buf_add_secs(b, ev->t_min_us, 0);
	KEY(b, "t_max");
	tr2_buf_add_secs(b, ev->t_max_us, 0);
	end_line(b);
}

/* counter, th_counter: "category", "name", "count" */
static void fn_counter(struct tr2_buf *b, const struct tr2_ev *ev, const struct tr2_tgt_opts *opts)
{
	event_prefix(b, ev, opts);
	KEY(b, "category");
	add_str(b, ev->category);
	KEY(b, "name");
	add_str(b, ev->name);
	KEY(b, "count");
	tr2_buf_add_int(b, ev->count);
	end_line(b);
}

const struct tr2_tgt tr2_tgt_event = {
	.name = "event",
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
		[TR2_EV_THREAD_START] = fn_thread,
		[TR2_EV_THREAD_EXIT] = fn_thread,
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
		[TR2_EV_TOO_MANY_FILES] = fn_too_many_files,
	},
};
