/* nop1.h: a region probe as stock <sys/sdt.h> writes it, for comparison with
 * trace2.h's calls: its own provider "tr2bench" and a USDT semaphore of its
 * own per probe (defined in nop1.c, in .probes as dtrace -G would put it),
 * the probe site inline at the call with <sys/sdt.h>'s default 1-byte nop,
 * and the same seven arguments as the old trace2 region probe (thread
 * record, file, line, repo, category, label, message).  Nothing of
 * trace2.h's internals. */
#ifndef NOP1_H
#define NOP1_H

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

extern volatile unsigned short tr2bench_region_enter_semaphore;
extern volatile unsigned short tr2bench_region_leave_semaphore;
/* arg0 of the probes: stands for the thread's record */
extern __thread int nop1_tls;

#define REGION_NOP1(probe, category, label) \
	do { \
		if (__builtin_expect(tr2bench_##probe##_semaphore, 0)) { \
			const char *c = (category), *l = (label), *m = 0; \
			int r = 0; \
			STAP_PROBE7(tr2bench, probe, &nop1_tls, __FILE__, __LINE__, r, c, l, m); \
		} \
	} while (0)

#endif
