/* lttng_tp.c: instantiates the LTTng-UST provider of lttng_tp.h (its probes
 * and the tracepoint definitions) inside tr2bench. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
