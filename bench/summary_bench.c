/*
 * summary-bench: what tr2-bpf --summary costs per event in tr2-bpf
 * (loader/tr2_summary.c, tr2_summary_event), without the kernel.
 *
 *   summary-bench [-p] PROCS KEYS EVENTS
 *
 * Feeds EVENTS synthetic events as the session emits them: PROCS processes
 * (git-like sids), each with KEYS region keys (category, label), in runs of
 * 16 events per process (tracer batches come per thread): per key an
 * enter, a leave with a duration, and an integer data value of its own key
 * every 8th region; -p: per program, where a process ends after 16 of its
 * runs (added into its program) and a new one of its pid starts.  Prints
 *   summary-bench procs=P keys=K events=E ns_per_event=N kept_procs=.. kept_keys=.. lost=..
 * N: the CPU time of the loop (CLOCK_PROCESS_CPUTIME_ID) over the events
 * (cmd_name events and process ends included in the time, not counted).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tr2_summary.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int per_program = argc > 1 && !strcmp(argv[1], "-p");
	int procs, keys;
	uint64_t events, done = 0, t0, t1;
	char (*sids)[64], (*labels)[32], (*dkeys)[32];
	unsigned *gen;
	struct tr2_summary *s;
	unsigned long kept_procs, kept_keys;

	argv += per_program;
	argc -= per_program;
	if (argc != 4 || (procs = atoi(argv[1])) < 1 || (keys = atoi(argv[2])) < 1 ||
	    !(events = strtoull(argv[3], NULL, 10))) {
		fprintf(stderr, "usage: summary-bench [-p] PROCS KEYS EVENTS\n");
		return 2;
	}
	sids = calloc(procs, sizeof(*sids));
	gen = calloc(procs, sizeof(*gen));
	labels = calloc(keys, sizeof(*labels));
	dkeys = calloc(keys, sizeof(*dkeys));
	if (!sids || !gen || !labels || !dkeys)
		abort();
	for (int p = 0; p < procs; p++)
		snprintf(sids[p], sizeof(sids[p]), "20260101T120000.%06dZ-H0a7c9cdf-P%08x", p, 1000 + p);
	for (int k = 0; k < keys; k++) {
		snprintf(labels[k], sizeof(labels[k]), "do_read_index_%d", k);
		snprintf(dkeys[k], sizeof(dkeys[k]), "entries_%d", k);
	}
	s = tr2_summary_new(0, 1, NULL, 0, 0);
	tr2_summary_set_per_program(s, per_program);
	{
		struct tr2_ev name = { .kind = TR2_EV_CMD_NAME, .thread = "main", .name = "git" };

		for (int p = 0; p < procs; p++) {
			name.sid = sids[p];
			tr2_summary_event(s, 1000 + p, &name);
		}
	}
	t0 = cpu_ns();
	for (uint64_t run = 0; done < events; run++) {
		int p = (int)(run % procs);
		uint32_t pid = 1000 + p;
		struct tr2_ev ev = { .thread = "main", .sid = sids[p], .category = "index", .nesting = 1 };

		if (per_program && (run / procs) % 16 == 15) {
			/* after 16 runs the process ends, a new one of its pid starts */
			struct tr2_ev name = { .kind = TR2_EV_CMD_NAME, .thread = "main", .name = "git" };

			tr2_summary_proc_gone(s, pid);
			snprintf(sids[p], sizeof(sids[p]), "20260101T12%04u.%06dZ-H0a7c9cdf-P%08x", ++gen[p] % 10000,
				 p, pid);
			ev.sid = name.sid = sids[p];
			tr2_summary_event(s, pid, &name);
		}
		for (int i = 0; i < 16; i += 2, done += 2) {
			int k = (int)((run * 8 + i / 2) % keys);

			ev.kind = TR2_EV_REGION_ENTER;
			ev.label = labels[k];
			ev.has_t_rel = 0;
			tr2_summary_event(s, pid, &ev);
			ev.kind = TR2_EV_REGION_LEAVE;
			ev.has_t_rel = 1;
			ev.t_rel_ns = 1000 + (int64_t)(done % 100000);
			tr2_summary_event(s, pid, &ev);
			if (i == 14) {
				struct tr2_ev d = { .kind = TR2_EV_DATA, .thread = "main", .sid = ev.sid,
						    .category = "index", .key = dkeys[k], .has_intval = 1,
						    .intval = (int64_t)done, .nesting = 1 };

				tr2_summary_event(s, pid, &d);
				done++;
			}
		}
	}
	t1 = cpu_ns();
	tr2_summary_kept(s, &kept_procs, &kept_keys);
	printf("summary-bench procs=%d keys=%d events=%llu ns_per_event=%.1f kept_procs=%lu kept_keys=%lu lost=%llu\n",
	       procs, keys, (unsigned long long)done, (double)(t1 - t0) / (double)done, kept_procs, kept_keys,
	       (unsigned long long)tr2_summary_lost(s));
	tr2_summary_free(s);
	free(sids);
	free(gen);
	free(labels);
	free(dkeys);
	return 0;
}
