/*
 * Stand-ins for the runtime entry points that git's patch calls and that
 * libtr2 does not have yet (trace2__atexit, trace2__signal,
 * trace2__version_evt, trace2__set_sid, trace2__cmd_name_hierarchy):
 * build.sh links them into git only when libtr2.a lacks them, so that the
 * series builds and runs against today's runtime.  They fire no "atexit"
 * or "signal" event and keep no sid; "version" goes out with the runtime's
 * own EVENT version, "cmd_name" without git's hierarchy.
 * Delete this file once usdt/ implements them.
 */
#include <trace2.h>

void trace2__atexit(TRACE2__SITE_ARGS, int code)
{
}

void trace2__signal(TRACE2__SITE_ARGS, int signo)
{
}

void trace2__version_evt(TRACE2__SITE_ARGS, const char *exe, const char *evt)
{
	trace2__version(module, file, line, exe);
}

void trace2__set_sid(const char *sid)
{
}

void trace2__cmd_name_hierarchy(TRACE2__SITE_ARGS, const char *name, const char *hierarchy)
{
	trace2__cmd_name(module, file, line, name);
}
