/*
 * tr2_hostile: what a traced process of another user may do to tr2-bpf -a
 * (tests/e2e/hostile.sh), and the victim beside it.  Every mode calls
 * trace2_initialize() and trace2_cmd_start() first, and ends with
 * trace2_cmd_exit(0) (exit and atexit events) unless said.
 *
 *   tr2_hostile victim N MS
 *       N rounds MS milliseconds apart, each region_enter "victim"/"round",
 *       data_intmax "victim"/"i" = I, region_leave: 3 N + 4 events.
 *   tr2_hostile claim SID N
 *       its sid is SID (trace2__set_sid, before its first call), then N
 *       data_intmax "claim"/"i" 20 ms apart.
 *   tr2_hostile dropped HOW
 *       a data call, then sets its buffer's `dropped` count and makes
 *       another, twice, 30 ms apart (so that tr2-bpf copies in between):
 *         huge  2^63 - 1, then 2
 *         back  the count less 1 000
 *   tr2_hostile time
 *       three data_intmax "time"/"i" 30 ms apart, the last two dated a
 *       year and 76 years ahead in its buffer right after they are written.
 *   tr2_hostile flood S
 *       data_intmax "flood"/"i" in a loop for S seconds; prints "calls N".
 *   tr2_hostile big
 *       strings that together exceed a thread's 16 KiB buffer: data_string
 *       with a 3 500-byte value, then one with a key of that size,
 *       data_json and printf of that size, cmd_error, cmd_exit; then a
 *       start with ten 4 000-byte arguments (cut to fit the buffer).
 *
 *   tr2_hostile --wait-stdin MODE ...
 *       after cmd_start, prints "waiting" and reads a line first, so that
 *       a test can attach with -p.
 */
#define TRACE2_EXE_VERSION "hostile-1.0"
#include <trace2.h>

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "tr2_find_tbuf.h"

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int victim(int n, int ms)
{
	for (int i = 0; i < n; i++) {
		trace2_region_enter("victim", "round", 0);
		trace2_data_intmax("victim", 0, "i", i);
		trace2_region_leave("victim", "round", 0);
		sleep_ms(ms);
	}
	return 0;
}

static int claim(int n)
{
	for (int i = 0; i < n; i++) {
		trace2_data_intmax("claim", 0, "i", i);
		sleep_ms(20);
	}
	return 0;
}

/* The thread's buffer, or exits 1 saying so. */
static struct tr2_tbuf *buffer(void)
{
	struct tr2_tbuf *b = find_buffer();

	if (!b) {
		printf("no buffer\n");
		exit(1);
	}
	return b;
}

static int dropped(const char *how)
{
	struct tr2_tbuf *b;

	trace2_data_intmax("dropped", 0, "i", 0);
	b = buffer();
	for (int i = 1; i <= 2; i++) {
		sleep_ms(30);
		if (!strcmp(how, "huge"))
			b->dropped = i == 1 ? INT64_MAX : 2;
		else
			b->dropped -= 1000;
		trace2_data_intmax("dropped", 0, "i", i);
	}
	sleep_ms(30);
	return 0;
}

static int forge_time(void)
{
	static const uint64_t ahead_s[] = { 0, 365ull * 86400, 76ull * 365 * 86400 };
	struct tr2_tbuf *b;

	for (int i = 0; i < 3; i++) {
		uint64_t pos;

		sleep_ms(30);
		b = buffer();
		pos = b->pos;
		trace2_data_intmax("time", 0, "i", i);
		if (ahead_s[i]) {
			struct tr2_wire *w = (struct tr2_wire *)(b->data + (TR2_POS_BYTES(pos) & (TR2_TBUF_DATA - 1)));

			w->ts_ns = now_ns() + ahead_s[i] * 1000000000u;
		}
	}
	sleep_ms(30);
	return 0;
}

static int flood(int seconds)
{
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000u;
	long calls = 0;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++, calls++)
			trace2_data_intmax("flood", 0, "i", calls);
	printf("calls %ld\n", calls);
	return 0;
}

static int big(void)
{
	static char v[3501], json[3600], arg[10][4001];
	const char *argv[11] = { NULL };

	memset(v, 'v', 3500);
	snprintf(json, sizeof(json), "{\"k\":\"%.3400s\"}", v);
	trace2_data_string("big", 0, "value", v);
	trace2_data_string("big", 0, v, "key");
	trace2_data_json("big", 0, "json", json);
	trace2_printf("%s", v);
	trace2_cmd_error("%s", v);
	for (int i = 0; i < 10; i++) {
		memset(arg[i], 'a' + i, 4000);
		argv[i] = arg[i];
	}
	trace2_cmd_start(argv);
	return 0;
}

int main(int argc, const char **argv)
{
	int wait_stdin = argc > 1 && !strcmp(argv[1], "--wait-stdin");
	const char *mode;
	char line[64];
	int r = 2;

	if (wait_stdin)
		argc--, argv++;
	mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "claim") && argc == 4)
		trace2__set_sid(argv[2]);
	trace2_initialize();
	trace2_cmd_start(argv - wait_stdin);
	if (wait_stdin) {
		printf("waiting\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
	}
	if (!strcmp(mode, "victim") && argc == 4)
		r = victim(atoi(argv[2]), atoi(argv[3]));
	else if (!strcmp(mode, "claim") && argc == 4)
		r = claim(atoi(argv[3]));
	else if (!strcmp(mode, "dropped") && argc == 3)
		r = dropped(argv[2]);
	else if (!strcmp(mode, "time") && argc == 2)
		r = forge_time();
	else if (!strcmp(mode, "flood") && argc == 3)
		r = flood(atoi(argv[2]));
	else if (!strcmp(mode, "big") && argc == 2)
		r = big();
	if (r == 2)
		fprintf(stderr, "usage: tr2_hostile victim N MS | claim SID N | dropped huge|back | time | "
			"flood S | big\n");
	return r ? r : trace2_cmd_exit(0);
}
