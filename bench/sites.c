/* sites.c: 100 call sites of one kind in one function, to measure the code a
 * call site adds (bench/run.sh compares the symbol sizes with SITES_NONE).
 * Compiled to an object once per variant: -DSITES_NONE, -DSITES_TR2,
 * -DSITES_NOP1 or -DSITES_LTTNG. */
#if defined(SITES_NOP1)
# include "nop1.h"
# define SITE REGION_NOP1(region_enter, CAT, LABEL)
#elif defined(SITES_LTTNG)
# include "lttng_tp.h"
# define SITE lttng_ust_tracepoint(tr2bench, region_enter, __FILE__, __LINE__, 0, CAT, LABEL)
#elif defined(SITES_TR2)
# include <trace2.h>
# define SITE trace2_region_enter(CAT, LABEL, 0)
#else
# define SITE do { } while (0)
#endif
#include "bench.h"

void sites(void);

#define S1 SITE; BARRIER();
#define S10 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1
#define S100 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10

void sites(void)
{
	S100
}
