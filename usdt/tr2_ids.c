/*
 * Ids the program sees: assigned on every call, attached or not, so that a
 * tracer attaching later agrees with them. Numbering follows git: repo ids
 * start at 1 (0 means no repository), child and exec ids at 0.
 */
#include "trace2.h"

static int last_repo_id;
static int next_child_id;
static int next_exec_id;

int trace2__new_repo_id(void)
{
	return __atomic_add_fetch(&last_repo_id, 1, __ATOMIC_RELAXED);
}

int trace2__new_child_id(void)
{
	return __atomic_fetch_add(&next_child_id, 1, __ATOMIC_RELAXED);
}

int trace2__new_exec_id(void)
{
	return __atomic_fetch_add(&next_exec_id, 1, __ATOMIC_RELAXED);
}
