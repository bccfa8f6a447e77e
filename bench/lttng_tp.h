/* lttng_tp.h: the LTTng-UST tracepoint provider tr2bench compares against:
 * the fields of a trace2 region probe (file, line, repo, category, label). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tr2bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT_CLASS(tr2bench, region,
	LTTNG_UST_TP_ARGS(const char *, file, int, line, int, repo,
			  const char *, category, const char *, label),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(file, file)
		lttng_ust_field_integer(int, line, line)
		lttng_ust_field_integer(int, repo, repo)
		lttng_ust_field_string(category, category)
		lttng_ust_field_string(label, label)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(tr2bench, region, tr2bench, region_enter,
	LTTNG_UST_TP_ARGS(const char *, file, int, line, int, repo,
			  const char *, category, const char *, label))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(tr2bench, region, tr2bench, region_leave,
	LTTNG_UST_TP_ARGS(const char *, file, int, line, int, repo,
			  const char *, category, const char *, label))

#endif

#include <lttng/tracepoint-event.h>
