/* libtr2_plain.so: tr2_plugin.c's entry point without probes, so that the
 * benchmarks can tell what finding new objects costs a dlopen/dlclose cycle
 * from what the plugin's events cost. */
void tr2_plugin_run(long i);

void tr2_plugin_run(long i)
{
	(void)i;
}
