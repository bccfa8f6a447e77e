/* tr2_event.c: the "event" names of the Trace2 event kinds (git's EVENT
 * format, seeds/000 "Event-Specific Key/Value Pairs"). */
#include <string.h>
#include "tr2_event.h"

static const char *const kind_names[TR2_EV__COUNT] = {
	[TR2_EV_VERSION] = "version",
	[TR2_EV_START] = "start",
	[TR2_EV_EXIT] = "exit",
	[TR2_EV_ATEXIT] = "atexit",
	[TR2_EV_SIGNAL] = "signal",
	[TR2_EV_ERROR] = "error",
	[TR2_EV_CMD_PATH] = "cmd_path",
	[TR2_EV_CMD_ANCESTRY] = "cmd_ancestry",
	[TR2_EV_CMD_NAME] = "cmd_name",
	[TR2_EV_CMD_MODE] = "cmd_mode",
	[TR2_EV_ALIAS] = "alias",
	[TR2_EV_CHILD_START] = "child_start",
	[TR2_EV_CHILD_EXIT] = "child_exit",
	[TR2_EV_CHILD_READY] = "child_ready",
	[TR2_EV_EXEC] = "exec",
	[TR2_EV_EXEC_RESULT] = "exec_result",
	[TR2_EV_THREAD_START] = "thread_start",
	[TR2_EV_THREAD_EXIT] = "thread_exit",
	[TR2_EV_DEF_PARAM] = "def_param",
	[TR2_EV_DEF_REPO] = "def_repo",
	[TR2_EV_REGION_ENTER] = "region_enter",
	[TR2_EV_REGION_LEAVE] = "region_leave",
	[TR2_EV_DATA] = "data",
	[TR2_EV_DATA_JSON] = "data_json",
	[TR2_EV_PRINTF] = "printf",
	[TR2_EV_TIMER] = "timer",
	[TR2_EV_TH_TIMER] = "th_timer",
	[TR2_EV_COUNTER] = "counter",
	[TR2_EV_TH_COUNTER] = "th_counter",
	[TR2_EV_TOO_MANY_FILES] = "too_many_files",
	[TR2_EV_THREAD_STATE] = "thread_state",
};

const char *tr2_state_name(int state)
{
	static const char *const names[TR2_STATE__COUNT] = { "on_cpu", "runnable", "blocked", "asleep" };

	return state >= 0 && state < TR2_STATE__COUNT ? names[state] : NULL;
}

const char *tr2_ev_kind_name(enum tr2_ev_kind kind)
{
	if ((unsigned)kind >= TR2_EV__COUNT)
		return NULL;
	return kind_names[kind];
}

int tr2_ev_kind_from_name(const char *name)
{
	/* Comparing the first byte first keeps this to one or two strcmp()
	 * calls per line for tr2-fmt, which looks up every line's kind. */
	for (int k = 0; k < TR2_EV__COUNT; k++)
		if (kind_names[k][0] == name[0] && !strcmp(kind_names[k], name))
			return k;
	return -1;
}
