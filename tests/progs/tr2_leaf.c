/*
 * tr2_leaf: does a trace2 call leave what the program computes as it is?
 * For tests/e2e/harm.sh, built with gcc and clang at -O2 and -O3.
 *
 *   tr2_leaf [--wait-stdin] N
 *   tr2_leaf [--wait-stdin] --fork
 *
 * For each event kind a function that fills a local array before the call
 * and sums it after (written the way a leaf function keeps data in its red
 * zone, below %rsp, where a uprobe that the kernel turned into a call would
 * push its return address), each kind in turn, N times; then N calls of the
 * runtime from
 * assembly with the callee-saved registers loaded with known values, which
 * must come back unchanged.  Prints one line per check,
 *   <kind>: <calls> calls, <wrong> wrong
 * and exits 0 when nothing was wrong, 1 otherwise.  --wait-stdin: prints
 * "waiting" after trace2_initialize() and reads a line first (for -p).
 * --fork: forks a child that makes one trace2 call and prints whether
 * tr2-bpf's semaphore is raised in it ("child: tr2:enable semaphore N"),
 * then the same for the parent once the child has exited.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace2.h"

TRACE2_DEFINE_TIMER(leaf_timer, "leaf", "timer", 0);
TRACE2_DEFINE_COUNTER(leaf_counter, "leaf", "counter", 0);

/* The expected sum of buf after the call: filled with i + k for k < 15. */
#define FILL(buf, i) for (int k = 0; k < 15; k++) buf[k] = (i) + k
#define SUM(buf, s) for (int k = 0; k < 15; k++) s += buf[k]
#define WANT(i) (15 * (long)(i) + 105)

#define LEAF(name, call) \
	static __attribute__((noinline)) long leaf_##name(long i) \
	{ \
		volatile long buf[15]; \
		long s = 0; \
		FILL(buf, i); \
		call; \
		SUM(buf, s); \
		return s; \
	}

LEAF(counter_add, trace2_counter_add(leaf_counter, 1))
LEAF(data_intmax, trace2_data_intmax("leaf", 0, "i", i))
LEAF(data_string, trace2_data_string("leaf", 0, "s", "v"))
LEAF(data_json, trace2_data_json("leaf", 0, "j", "[1]"))
LEAF(region_enter, trace2_region_enter("leaf", "r", 0))
LEAF(region_leave, trace2_region_leave("leaf", "r", 0))
LEAF(timer_start, trace2_timer_start(leaf_timer))
LEAF(timer_stop, trace2_timer_stop(leaf_timer))
LEAF(printf, trace2_printf("leaf %ld", i))

static const struct {
	const char *name;
	long (*fn)(long);
} leaves[] = {
	{ "counter_add", leaf_counter_add }, { "data_intmax", leaf_data_intmax },
	{ "data_string", leaf_data_string }, { "data_json", leaf_data_json },
	{ "region_enter", leaf_region_enter }, { "region_leave", leaf_region_leave },
	{ "timer_start", leaf_timer_start }, { "timer_stop", leaf_timer_stop },
	{ "printf", leaf_printf },
};
#define NLEAVES (sizeof(leaves) / sizeof(leaves[0]))

/* Calls trace2__counter_add directly, with rbx, rbp and r12-r15 holding
 * known values across the call; returns how many came back changed.  The
 * call leaves the stack 16-byte aligned (six pushes and the return
 * address). */
static __attribute__((noinline)) int callee_saved_changed(void)
{
	static uint32_t module;
	long changed;

	__asm__ __volatile__(
		"push %%rbx\n push %%rbp\n push %%r12\n push %%r13\n push %%r14\n push %%r15\n"
		"mov $0x1111111111111111, %%rbx\n mov $0x2222222222222222, %%rbp\n"
		"mov $0x3333333333333333, %%r12\n mov $0x4444444444444444, %%r13\n"
		"mov $0x5555555555555555, %%r14\n mov $0x6666666666666666, %%r15\n"
		"sub $8, %%rsp\n"
		"lea %[module], %%rdi\n lea %[file], %%rsi\n mov $1, %%edx\n"
		"lea %[counter], %%rcx\n mov $1, %%r8d\n"
		"call trace2__counter_add@PLT\n"
		"add $8, %%rsp\n"
		"xor %%eax, %%eax\n"
		"mov $0x1111111111111111, %%rcx\n cmp %%rcx, %%rbx\n setne %%cl\n movzbl %%cl, %%ecx\n add %%rcx, %%rax\n"
		"mov $0x2222222222222222, %%rcx\n cmp %%rcx, %%rbp\n setne %%cl\n movzbl %%cl, %%ecx\n add %%rcx, %%rax\n"
		"mov $0x3333333333333333, %%rcx\n cmp %%rcx, %%r12\n setne %%cl\n movzbl %%cl, %%ecx\n add %%rcx, %%rax\n"
		"mov $0x4444444444444444, %%rcx\n cmp %%rcx, %%r13\n setne %%cl\n movzbl %%cl, %%ecx\n add %%rcx, %%rax\n"
		"mov $0x5555555555555555, %%rcx\n cmp %%rcx, %%r14\n setne %%cl\n movzbl %%cl, %%ecx\n add %%rcx, %%rax\n"
		"mov $0x6666666666666666, %%rcx\n cmp %%rcx, %%r15\n setne %%cl\n movzbl %%cl, %%ecx\n add %%rcx, %%rax\n"
		"pop %%r15\n pop %%r14\n pop %%r13\n pop %%r12\n pop %%rbp\n pop %%rbx\n"
		: "=a"(changed)
		: [module] "m"(module), [file] "m"(*(const char (*)[7])"leaf.S"),
		  [counter] "m"(leaf_counter)
		: "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
	return (int)changed;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "--wait-stdin");
	long n = argc > 1 + wait ? atol(argv[1 + wait]) : 100000, wrong, bad = 0, wrongs[NLEAVES] = { 0 };
	char line[16];

	trace2_initialize();
	trace2_cmd_start(argv);
	if (wait) {
		printf("waiting\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 2;
	}
	if (argc > 1 + wait && !strcmp(argv[1 + wait], "--fork")) {
		pid_t child = fork();

		if (child == 0) {
			trace2_data_intmax("leaf", 0, "child", 1);
			printf("child: tr2:enable semaphore %u\n", trace2__state.on & 0xffff);
			exit(0);
		}
		waitpid(child, NULL, 0);
		trace2_data_intmax("leaf", 0, "parent", 1);
		printf("parent: tr2:enable semaphore %u\n", trace2__state.on & 0xffff);
		return trace2_cmd_exit(0);
	}
	/* All kinds in turn at each i: regions and timers stay balanced. */
	for (long i = 0; i < n; i++)
		for (size_t j = 0; j < NLEAVES; j++)
			wrongs[j] += leaves[j].fn(i) != WANT(i);
	for (size_t j = 0; j < NLEAVES; j++) {
		printf("%s: %ld calls, %ld wrong\n", leaves[j].name, n, wrongs[j]);
		bad += wrongs[j];
	}
	wrong = 0;
	for (long i = 0; i < n; i++)
		wrong += callee_saved_changed() != 0;
	printf("callee-saved registers across trace2__counter_add: %ld calls, %ld wrong\n", n, wrong);
	bad += wrong;
	return trace2_cmd_exit(bad != 0);
}
