/* tr2_mem.h: memory helpers shared by tr2-bpf's files.  tr2-bpf cannot do
 * its job without memory, so running out aborts. */
#ifndef TR2_MEM_H
#define TR2_MEM_H

#include <stdlib.h>

/*
 * Makes room for one more element in the array p of *cap elements of size
 * bytes: returns p, or p moved to twice the capacity (16 at first) when
 * n == *cap.  Call as  a = tr2_grow(a, n, &cap, sizeof(*a));
 */
static inline void *tr2_grow(void *p, int n, int *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 16;
	p = realloc(p, (size_t)*cap * size);
	if (!p)
		abort();
	return p;
}

#endif
