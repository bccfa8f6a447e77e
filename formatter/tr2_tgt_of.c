/* tr2_tgt_of.c: the target of each format (see tr2_tgt.h).  A file of its
 * own, so that a program that names its targets itself (libtr2's in-process
 * targets: NORMAL, PERF and EVENT) links tr2_target.c without the chrome and
 * folded views. */
#include "tr2_tgt.h"

const struct tr2_tgt *tr2_tgt_of(enum tr2_format fmt)
{
	switch (fmt) {
	case TR2_FMT_NORMAL: return &tr2_tgt_normal;
	case TR2_FMT_PERF: return &tr2_tgt_perf;
	case TR2_FMT_EVENT: return &tr2_tgt_event;
	case TR2_FMT_CHROME: return &tr2_tgt_chrome;
	case TR2_FMT_FOLDED: return &tr2_tgt_folded;
	}
	return NULL;
}
