// SPDX-License-Identifier: GPL-2.0
/* empty.bpf.c: programs that do nothing, attached by bpf-attach
 * (bench/bpf_attach.c): what a kernel entry costs before a tracer does any
 * work.  probe_batch goes where tr2-bpf attaches its own, the runtime's
 * tr2:batch (usdt/tr2_probe.c); site goes on public trace2 probes that fire
 * per call (trace2:region_enter, region_leave), as bpftrace attaches. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>   /* the spec map that tr2_attach fills */

char LICENSE[] SEC("license") = "GPL";

SEC("usdt")
int probe_batch(void *ctx)
{
	return 0;
}

SEC("usdt")
int site(void *ctx)
{
	return 0;
}
