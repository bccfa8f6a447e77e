/* nop1.h: a trace2 region probe as stock <sys/sdt.h> writes it: the same
 * provider, probe, arguments and semaphore as trace2.h's, but STAP_PROBE7 with
 * <sys/sdt.h>'s default 1-byte nop instead of trace2.h's 5-byte nop.
 * Include instead of <trace2.h>. */
#ifndef NOP1_H
#define NOP1_H

#include <trace2.h>    /* the semaphores and trace2__tls */

#undef _SDT_NOP
#define _SDT_NOP nop   /* <sys/sdt.h>'s own default, read where a probe expands */

#define REGION_NOP1(probe, category, label) \
	do { \
		if (TRACE2__ON(probe)) { \
			const char *c = (category), *l = (label), *m = 0; \
			int r = 0; \
			STAP_PROBE7(trace2, probe, &trace2__tls, __FILE__, __LINE__, r, c, l, m); \
		} \
	} while (0)

#endif
