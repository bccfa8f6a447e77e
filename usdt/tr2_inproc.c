/*
 * In-process targets: git's GIT_TRACE2* variables, read at
 * trace2_initialize(). Not written yet: trace2__state.on bits 16-23 stay 0,
 * so no call reaches this.
 */
#include "tr2_runtime.h"

void tr2_inproc_call(const struct tr2_call *c)
{
	(void)c;
}
