// SPDX-License-Identifier: GPL-2.0
/* empty.bpf.c: programs that do nothing, for the probes tr2bench fires,
 * attached by bpf-attach the way tr2-bpf attaches its own (uprobe-multi
 * links, the 5-byte nop): what a probe hit costs before a tracer does any
 * work. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>   /* the spec map that tr2_attach fills */

char LICENSE[] SEC("license") = "GPL";

SEC("usdt")
int probe_region_enter(void *ctx)
{
	return 0;
}

SEC("usdt")
int probe_region_leave(void *ctx)
{
	return 0;
}

SEC("usdt")
int probe_data(void *ctx)
{
	return 0;
}
