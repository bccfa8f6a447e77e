/* libtr2_plugin.so: the instrumented plugin that `tr2_shapes dlopen` opens,
 * calls and closes again and again. */
#include <trace2.h>

void tr2_plugin_run(long i);

void tr2_plugin_run(long i)
{
	trace2_region_enter("plugin", "run", 0);
	trace2_data_intmax("plugin", 0, "i", i);
	trace2_region_leave("plugin", "run", 0);
}
