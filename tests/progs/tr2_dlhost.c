/* tr2_dlhost N PLUGIN: a program without the trace2 runtime that N times
 * dlopens PLUGIN, calls its tr2_plugin_run(i) and dlcloses it, as a host
 * program loads an instrumented plugin built against libtr2.so: libtr2.so
 * is first mapped by the dlopen (tests/e2e/shapes.sh).  Prints
 * "tr2_dlhost: N cycles" at the end. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc == 3 ? atol(argv[1]) : -1;

	if (n < 0) {
		fprintf(stderr, "usage: tr2_dlhost N PLUGIN\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		void (*run)(long);

		if (!h) {
			fprintf(stderr, "tr2_dlhost: %s\n", dlerror());
			return 1;
		}
		*(void **)&run = dlsym(h, "tr2_plugin_run");
		if (!run) {
			fprintf(stderr, "tr2_dlhost: %s\n", dlerror());
			return 1;
		}
		run(i);
		dlclose(h);
	}
	printf("tr2_dlhost: %ld cycles\n", n);
	return 0;
}
