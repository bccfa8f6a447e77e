/* libtr2_plugin.so: the instrumented plugin that `tr2_shapes dlopen` opens,
 * calls and closes again and again.  libtr2_plugix.so is the same with
 * category "plugix": the same bytes but one, at the same addresses
 * (tests/e2e/shapes.sh loads the two in turn at one address). */
#include <trace2.h>

#ifndef TR2_PLUGIN_CATEGORY
#define TR2_PLUGIN_CATEGORY "plugin"
#endif

void tr2_plugin_run(long i);

void tr2_plugin_run(long i)
{
	trace2_region_enter(TR2_PLUGIN_CATEGORY, "run", 0);
	trace2_data_intmax(TR2_PLUGIN_CATEGORY, 0, "i", i);
	trace2_region_leave(TR2_PLUGIN_CATEGORY, "run", 0);
}
