/*
 * inproc_init.c: linked into tr2bench by bench/inproc.sh (not by make bench).
 * tr2bench never calls trace2_initialize(), so that a tracer sees only its
 * loops' events; this calls it at load, before main(), so that the
 * GIT_TRACE2* variables open their in-process targets and tr2bench's own
 * region loop is timed writing to them. It also stands in for the loops of
 * nop1.c and lttng_loop.c, which inproc.sh does not run.
 */
#include <stdio.h>
#include <stdlib.h>

#include <trace2.h>

#include "bench.h"

static void __attribute__((constructor)) initialize(void)
{
	trace2_initialize();
}

static void not_built(void)
{
	fprintf(stderr, "tr2bench: this kind is not built by bench/inproc.sh\n");
	exit(2);
}

void loop_region_nop1(uint64_t n)
{
	(void)n;
	not_built();
}

void loop_lttng(uint64_t n)
{
	(void)n;
	not_built();
}
