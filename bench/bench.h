/* bench.h: what the loops of tr2bench share across its translation units
 * (tr2bench.c, nop1.c, lttng_loop.c, sites.c). */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

/* Every loop body ends with this, the empty loop too: the compiler can
 * neither drop nor merge iterations, and every variant pays the same. */
#define BARRIER() __asm__ volatile("" ::: "memory")

/* Git-like region names. */
#define CAT "index"
#define LABEL "do_read_index"

/* Runs n iterations of one variant; noinline so each is timed as it is
 * compiled, not as it might be folded into the caller. */
typedef void loop_fn(uint64_t n);

loop_fn loop_region_nop1;   /* nop1.c: <sys/sdt.h>'s 1-byte nop */
loop_fn loop_lttng;         /* lttng_loop.c */

#endif
