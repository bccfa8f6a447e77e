/*
 * tr2_shared: a program whose events come from three ELF modules: itself,
 * libtr2_shlib.so (region, data, printf, timer, counter) and libtr2.so
 * (atexit). Exits 0 through trace2_cmd_exit(0).
 *
 *   tr2_shared [--wait-stdin]   --wait-stdin: after cmd_name, prints
 *                               "waiting\n" and blocks until a line (or EOF)
 *                               arrives on stdin, so a test can attach with -p.
 */
#define TRACE2_EXE_VERSION "shared-1.0"
#include <trace2.h>

#include <stdio.h>
#include <string.h>

#include "tr2_shlib.h"

int main(int argc, char **argv)
{
	char line[64];
	int result;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--wait-stdin"))) {
		fprintf(stderr, "usage: tr2_shared [--wait-stdin]\n");
		return 2;
	}
	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	trace2_cmd_name("shared");
	if (argc == 2) {
		printf("waiting\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
	}
	trace2_region_enter("main", "call_shlib", 0);
	result = tr2_shlib_work(21);
	trace2_data_intmax("main", 0, "result", result);
	trace2_data_intmax("main", 0, "shlib_is_enabled", tr2_shlib_is_enabled());
	trace2_region_leave("main", "call_shlib", 0);
	return trace2_cmd_exit(0);
}
