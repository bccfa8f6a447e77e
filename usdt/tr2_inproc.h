/*
 * tr2_inproc.h: the pieces of the in-process targets (trace2(3), IN-PROCESS
 * TARGETS) that are pure functions, shared by tr2_inproc.c and the unit
 * tests (tests/unit/test_inproc.c).  Not installed.
 */
#ifndef TR2_INPROC_H
#define TR2_INPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- tr2_sysenv.c: the values of git's GIT_TRACE2* variables ---- */

/* What a target variable (GIT_TRACE2, GIT_TRACE2_PERF, GIT_TRACE2_EVENT)
 * asks for, in git's order of tests (trace2/tr2_dst.c, tr2_dst_get_trace_fd). */
enum tr2_sysenv_kind {
	TR2_SYSENV_OFF,        /* unset, "", "0", "false" (any case) */
	TR2_SYSENV_FD,         /* "1" or "true" (any case): fd 2; one digit "2".."9": that fd */
	TR2_SYSENV_PATH,       /* starts with '/': a file, or an existing directory */
	TR2_SYSENV_AF_UNIX,    /* "af_unix:[stream:|dgram:]/abs/path", path shorter than sun_path */
	TR2_SYSENV_BAD_SOCKET, /* "af_unix:" with no path: git's "invalid AF_UNIX value" */
	TR2_SYSENV_BAD_SOCKET_PATH, /* a relative or too long socket path: "invalid AF_UNIX path" */
	TR2_SYSENV_UNKNOWN,    /* anything else (other numbers, relative paths): git's
				  "unknown value" warning, always printed */
};

/* Classifies a target variable's value (NULL: unset).  *fd gets the file
 * descriptor for TR2_SYSENV_FD; *socket_path (may be NULL) the path after the
 * "af_unix:[type:]" prefix for the socket kinds. */
enum tr2_sysenv_kind tr2_sysenv_target(const char *value, int *fd, const char **socket_path);

/* git's git_parse_maybe_bool(), used for GIT_TRACE2_*BRIEF: 1 for "true",
 * "yes", "on" (any case) and non-zero integers (with an optional k, m or g
 * suffix: "1k"); 0 for "", "false", "no", "off" and zero; -1 for anything
 * else (git then ignores the variable).  NULL counts as true, as in git. */
int tr2_sysenv_bool(const char *value);

/* ---- tr2_json_check.c ---- */

/*
 * True when text is exactly one JSON value with optional surrounding
 * whitespace, accepting and refusing exactly what the formatter's
 * tr2_json_is_valid() (simdjson) does: RFC 8259 in valid UTF-8, refusing
 * also nesting deeper than 255 arrays and objects, numbers whose magnitude
 * rounds beyond DBL_MAX, exponents of more than 19 digits and \u escapes of
 * unpaired surrogates.  NULL: false.  Allocates nothing; thread-safe.
 */
bool tr2_json_check(const char *text);

#endif
