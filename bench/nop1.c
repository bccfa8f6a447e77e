/* nop1.c: tr2bench's region loop with stock <sys/sdt.h> probe sites (nop1.h). */
#include "nop1.h"
#include "bench.h"

__attribute__((noinline)) void loop_region_nop1(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		REGION_NOP1(region_enter, CAT, LABEL);
		REGION_NOP1(region_leave, CAT, LABEL);
		BARRIER();
	}
}
