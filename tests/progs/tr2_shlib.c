/*
 * libtr2_shlib.so: probes that live in a shared object, with their own
 * semaphores, so that a tracer must find them through the process's mappings.
 */
#include <trace2.h>

#include "tr2_shlib.h"

TRACE2_DEFINE_TIMER(shlib_timer, "shlib", "work_timer", 0);
TRACE2_DEFINE_COUNTER(shlib_counter, "shlib", "work_counter", 0);

int tr2_shlib_work(int n)
{
	trace2_region_enter("shlib", "work", 0);
	trace2_timer_start(shlib_timer);
	trace2_data_intmax("shlib", 0, "n", n);
	trace2_printf("shlib works on %d", n);
	trace2_counter_add(shlib_counter, n);
	trace2_timer_stop(shlib_timer);
	trace2_region_leave("shlib", "work", 0);
	return 2 * n;
}

int tr2_shlib_is_enabled(void)
{
	return trace2_is_enabled();
}
