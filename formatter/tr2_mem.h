/* tr2_mem.h: memory helpers shared by tr2-bpf, tr2-fmt and libtr2's
 * in-process targets.  None can do its job without memory, so running out
 * aborts (as the formatter's buffers, tr2_buf, do). */
#ifndef TR2_MEM_H
#define TR2_MEM_H

#include <stdlib.h>
#include <string.h>

static inline void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		abort();
	return p;
}

static inline void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		abort();
	return p;
}

/* A copy of s; NULL is copied as "". */
static inline char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p)
		abort();
	return p;
}

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
