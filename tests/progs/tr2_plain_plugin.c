/* libtr2_plain.so: tr2_plugin.c's entry point without probes, so that the
 * benchmarks can tell what the loader hook costs a dlopen/dlclose cycle from
 * what the kernel's installing a plugin's uprobes costs. */
void tr2_plugin_run(long i);

void tr2_plugin_run(long i)
{
	(void)i;
}
