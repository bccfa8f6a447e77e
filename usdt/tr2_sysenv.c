/*
 * tr2_sysenv.c: the values of git's GIT_TRACE2* variables, read as git reads
 * them (trace2/tr2_dst.c for the targets, parse.c's git_parse_maybe_bool for
 * the BRIEF switches).  Pure functions: opening is tr2_inproc.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "tr2_inproc.h"

#define PREFIX_AF_UNIX "af_unix:"

enum tr2_sysenv_kind tr2_sysenv_target(const char *value, int *fd, const char **socket_path)
{
	const char *path;

	if (!value || !*value || !strcmp(value, "0") || !strcasecmp(value, "false"))
		return TR2_SYSENV_OFF;
	if (!strcmp(value, "1") || !strcasecmp(value, "true")) {
		*fd = 2;
		return TR2_SYSENV_FD;
	}
	if (!value[1] && isdigit((unsigned char)value[0])) {
		*fd = value[0] - '0';
		return TR2_SYSENV_FD;
	}
	if (value[0] == '/')
		return TR2_SYSENV_PATH;
	if (strncmp(value, PREFIX_AF_UNIX, strlen(PREFIX_AF_UNIX)))
		return TR2_SYSENV_UNKNOWN;
	path = value + strlen(PREFIX_AF_UNIX);
	if (!strncmp(path, "stream:", 7))
		path += 7;
	else if (!strncmp(path, "dgram:", 6))
		path += 6;
	if (socket_path)
		*socket_path = path;
	if (!*path)
		return TR2_SYSENV_BAD_SOCKET;
	if (path[0] != '/' || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return TR2_SYSENV_BAD_SOCKET_PATH;
	return TR2_SYSENV_AF_UNIX;
}

/* git's git_parse_int: an int, in any base strtoimax takes, times an
 * optional k, m or g (any case); 0 when it is none. */
static int parse_int(const char *value, intmax_t *out)
{
	intmax_t v, factor = 1;
	char *end;

	errno = 0;
	v = strtoimax(value, &end, 0);
	if (errno == ERANGE || end == value)
		return 0;
	if (!strcasecmp(end, "k"))
		factor = 1024;
	else if (!strcasecmp(end, "m"))
		factor = 1024 * 1024;
	else if (!strcasecmp(end, "g"))
		factor = 1024 * 1024 * 1024;
	else if (*end)
		return 0;
	if ((v < 0 && (-(intmax_t)INT_MAX - 1) / factor > v) || (v > 0 && INT_MAX / factor < v))
		return 0;
	*out = v * factor;
	return 1;
}

int tr2_sysenv_bool(const char *value)
{
	intmax_t v;

	if (!value)
		return 1;
	if (!*value)
		return 0;
	if (!strcasecmp(value, "true") || !strcasecmp(value, "yes") || !strcasecmp(value, "on"))
		return 1;
	if (!strcasecmp(value, "false") || !strcasecmp(value, "no") || !strcasecmp(value, "off"))
		return 0;
	if (parse_int(value, &v))
		return v != 0;
	return -1;
}
