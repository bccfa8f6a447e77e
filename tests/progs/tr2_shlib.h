/* tr2_shlib: a shared library instrumented with trace2.h, for tr2_shared. */
#ifndef TR2_SHLIB_H
#define TR2_SHLIB_H

/* Emits a region with data, a printf, a timer and a counter from inside the
 * shared object; returns 2 * n. */
int tr2_shlib_work(int n);

/* trace2_is_enabled() as seen from the shared object's own semaphores. */
int tr2_shlib_is_enabled(void);

#endif
