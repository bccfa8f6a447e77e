/* nop1.c: tr2bench's region loop with stock <sys/sdt.h> probe sites (nop1.h),
 * and their semaphores. */
#include "nop1.h"
#include "bench.h"

/* In .probes: the kernel finds a semaphore by its file offset, which a
 * variable in .bss does not have. */
__attribute__((section(".probes"))) volatile unsigned short tr2bench_region_enter_semaphore;
__attribute__((section(".probes"))) volatile unsigned short tr2bench_region_leave_semaphore;
__thread int nop1_tls;

__attribute__((noinline)) void loop_region_nop1(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		REGION_NOP1(region_enter, CAT, LABEL);
		REGION_NOP1(region_leave, CAT, LABEL);
		BARRIER();
	}
}
