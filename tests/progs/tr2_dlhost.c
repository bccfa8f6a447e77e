/* tr2_dlhost [--copy=PATH] N PLUGIN...: a program without the trace2
 * runtime that N times dlopens a plugin, calls its tr2_plugin_run(i) and
 * dlcloses it, as a host program loads an instrumented plugin built against
 * libtr2.so: libtr2.so is first mapped by the dlopen (tests/e2e/shapes.sh).
 * Cycle i loads the (i mod count)th PLUGIN; with --copy, that plugin's
 * bytes are first written over PATH in place (same inode) and PATH is
 * loaded.  Prints "tr2_dlhost: N cycles, K addresses" at the end: K is
 * how many addresses tr2_plugin_run was loaded at. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what, const char *why)
{
	fprintf(stderr, "tr2_dlhost: %s: %s\n", what, why);
	exit(1);
}

/* Writes the bytes of file from over file to, keeping to's inode. */
static void copy_over(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	if (in < 0 || out < 0)
		die(in < 0 ? from : to, "cannot open");
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			die(to, "short write");
	close(in);
	if (n < 0 || close(out))
		die(to, "cannot copy");
}

int main(int argc, char **argv)
{
	const char *copy = NULL;
	void *addr[64];
	long n, nplugins, naddr = 0;
	int a = 1;

	if (a < argc && !strncmp(argv[a], "--copy=", 7))
		copy = argv[a++] + 7;
	n = a + 1 < argc ? atol(argv[a]) : -1;
	nplugins = argc - a - 1;
	if (n < 0) {
		fprintf(stderr, "usage: tr2_dlhost [--copy=PATH] N PLUGIN...\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		const char *plugin = argv[a + 1 + i % nplugins];
		void (*run)(long);
		void *h;
		long k;

		if (copy) {
			copy_over(plugin, copy);
			plugin = copy;
		}
		h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			die("dlopen", dlerror());
		*(void **)&run = dlsym(h, "tr2_plugin_run");
		if (!run)
			die("dlsym", dlerror());
		for (k = 0; k < naddr && addr[k] != *(void **)&run; k++)
			;
		if (k == naddr && naddr < 64)
			addr[naddr++] = *(void **)&run;
		run(i);
		dlclose(h);
	}
	printf("tr2_dlhost: %ld cycles, %ld addresses\n", n, naddr);
	return 0;
}
