// SPDX-License-Identifier: GPL-2.0
/* empty.bpf.c: a program that does nothing, for the tr2:event site of the
 * runtime (usdt/tr2_probe.c), where tr2-bpf attaches its own probe_event;
 * attached by bpf-attach the way tr2-bpf attaches (a uprobe-multi link, the
 * enable on tr2:enable): what an event costs before a tracer does any work. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>   /* the spec map that tr2_attach fills */

char LICENSE[] SEC("license") = "GPL";

SEC("usdt")
int probe_event(void *ctx)
{
	return 0;
}
