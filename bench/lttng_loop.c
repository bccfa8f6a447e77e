/* lttng_loop.c: the region loop with LTTng-UST tracepoints instead of trace2
 * probes (kept apart from trace2.h's <sys/sdt.h> settings). */
#include "bench.h"
#include "lttng_tp.h"

__attribute__((noinline)) void loop_lttng(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		lttng_ust_tracepoint(tr2bench, region_enter, __FILE__, __LINE__, 0, CAT, LABEL);
		lttng_ust_tracepoint(tr2bench, region_leave, __FILE__, __LINE__, 0, CAT, LABEL);
		BARRIER();
	}
}
