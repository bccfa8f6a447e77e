/* tr2_find_tbuf.h: the calling thread's buffer of calls (struct tr2_tbuf,
 * bpf/tr2_record.h), for the test programs that write over it as a hostile
 * process would (tr2_batch, tr2_hostile).  Included once per program. */
#ifndef TR2_FIND_TBUF_H
#define TR2_FIND_TBUF_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tr2_record.h"

/* The calling thread's buffer: an anonymous mapping that starts with the
 * magic and names this thread as its owner. */
static struct tr2_tbuf *find_buffer(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	struct tr2_tbuf *found = NULL;

	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[0] == 'r' && perms[1] == 'w' &&
		    hi - lo >= sizeof(struct tr2_tbuf) && !strchr(line, '/') && !strchr(line, '[')) {
			struct tr2_tbuf *b = (struct tr2_tbuf *)lo;

			if (b->magic == TR2_TBUF_MAGIC && b->owner == (uint32_t)gettid())
				found = b;
		}
	}
	if (f)
		fclose(f);
	return found;
}

#endif
