/* tr2_sched: four regions of known shape, for the split of region time by
 * scheduler state (tests/e2e/sched.sh):
 *   sched:spin   spins until its thread has had 200 ms on a CPU
 *   sched:sleep  one nanosleep of 200 ms (asleep)
 *   sched:io     O_DIRECT reads and writes with fdatasync of a file in DIR
 *                for 200 ms (blocked, D); left out, with a line that says
 *                why, where DIR's filesystem has no block device
 *   sched:share  in two threads on one CPU, each spinning until it has had
 *                100 ms on it (each runnable about half the time)
 * For each region it ran, one line on standard output, as the kernel's own
 * accounting of the thread saw it from just after the enter to just
 * before the leave (/proc/thread-self/schedstat: time on a CPU and waiting
 * on a run queue; CLOCK_MONOTONIC for the wall time), ns, and the times
 * it left a CPU of its own accord (getrusage's ru_nvcsw: each ends in a
 * wakeup):
 *   region LABEL wall W cpu C runq R wakeups N
 * and for the io region, "io: skipped: REASON" instead when it cannot run.
 *
 *   tr2_sched [--wait-stdin] DIR
 * --wait-stdin: first enters sched:attach, says "waiting" and reads a line
 * from standard input, then leaves it (a region entered before tr2-bpf -p
 * attaches, asleep meanwhile), and prints its line as the others. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "trace2.h"

#define MS 1000000ull

/* What the kernel says of the calling thread, and when. */
struct mark {
	uint64_t wall, cpu, runq, wakeups;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "tr2_sched: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The calling thread's /proc/thread-self/schedstat, opened at its first
 * mark (before its regions): a mark is then one read and a getrusage, as
 * close to the region's own ends as a program gets. */
static __thread int stat_fd = -1;

static struct mark mark_now(void)
{
	struct mark m = { .wall = mono_ns() };
	unsigned long long cpu, runq;
	struct rusage ru;
	char buf[128];
	ssize_t n;

	if (stat_fd < 0)
		stat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	n = stat_fd < 0 ? -1 : pread(stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		die("/proc/thread-self/schedstat");
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &cpu, &runq) != 2)
		die("/proc/thread-self/schedstat");
	m.cpu = cpu;
	m.runq = runq;
	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage");
	m.wakeups = (uint64_t)ru.ru_nvcsw;
	return m;
}

/* Enters region label, and returns the thread's mark just after.  A call
 * first, which sends the thread's batch when one is due (its uprobe costs
 * tens of ms in an emulated guest): none is due at the enter then, and
 * the region holds no more than the program measures. */
static struct mark enter(const char *label)
{
	trace2_data_intmax("sched", 0, label, 0);
	trace2_region_enter("sched", label, 0);
	return mark_now();
}

/* Leaves region label, entered at m, and writes its line: from m to just
 * before the leave. */
static void leave(const char *label, struct mark m)
{
	struct mark now = mark_now();

	trace2_region_leave("sched", label, 0);
	printf("region %s wall %llu cpu %llu runq %llu wakeups %llu\n", label, (unsigned long long)(now.wall - m.wall),
	       (unsigned long long)(now.cpu - m.cpu), (unsigned long long)(now.runq - m.runq),
	       (unsigned long long)(now.wakeups - m.wakeups));
	fflush(stdout);
}

/* Spins until the calling thread has had ns more on a CPU. */
static void spin_cpu(uint64_t ns)
{
	struct timespec ts;
	uint64_t start, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	} while (t - start < ns);
}

static void region_spin(void)
{
	struct mark m = enter("spin");

	spin_cpu(200 * MS);
	leave("spin", m);
}

static void region_sleep(void)
{
	struct timespec ts = { 0, 200 * MS };
	struct mark m = enter("sleep");

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	leave("sleep", m);
}

/* Whether dir's filesystem sits on a block device; else why not in why. */
static int on_block_device(const char *dir, char *why, size_t n)
{
	struct stat st;
	char path[64];

	if (stat(dir, &st)) {
		snprintf(why, n, "%s: %s", dir, strerror(errno));
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
	if (major(st.st_dev) == 0 || access(path, F_OK)) {
		snprintf(why, n, "%s is on no block device (dev %u:%u)", dir, major(st.st_dev), minor(st.st_dev));
		return 0;
	}
	return 1;
}

#define IO_BLOCK 4096
#define IO_FILE (4 << 20)

static void region_io(const char *dir)
{
	char path[4096], why[512];
	struct mark m;
	void *buf;
	int fd;

	if (!on_block_device(dir, why, sizeof(why))) {
		printf("io: skipped: %s\n", why);
		return;
	}
	snprintf(path, sizeof(path), "%s/tr2_sched.%d", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0) {
		printf("io: skipped: %s: O_DIRECT: %s\n", dir, strerror(errno));
		return;
	}
	unlink(path);
	if (posix_memalign(&buf, IO_BLOCK, IO_BLOCK))
		die("posix_memalign");
	memset(buf, 'x', IO_BLOCK);
	for (off_t off = 0; off < IO_FILE; off += IO_BLOCK)
		if (pwrite(fd, buf, IO_BLOCK, off) != IO_BLOCK)
			die("pwrite");
	if (fsync(fd))
		die("fsync");
	m = enter("io");
	for (unsigned i = 0; mono_ns() - m.wall < 200 * MS; i++) {
		off_t off = (off_t)(i * 7919u % (IO_FILE / IO_BLOCK)) * IO_BLOCK;

		if (pread(fd, buf, IO_BLOCK, off) != IO_BLOCK || pwrite(fd, buf, IO_BLOCK, off) != IO_BLOCK)
			die("O_DIRECT I/O");
		if (fdatasync(fd))
			die("fdatasync");
	}
	leave("io", m);
	close(fd);
	free(buf);
}

static pthread_barrier_t both;   /* the share threads start spinning together */

static void *share_thread(void *arg)
{
	struct mark m;

	trace2_thread_start("share");
	mark_now();   /* its schedstat opened */
	pthread_barrier_wait(&both);
	m = enter("share");
	spin_cpu(100 * MS);
	leave("share", m);
	trace2_thread_exit();
	return arg;
}

static void region_share(void)
{
	pthread_attr_t attr;
	pthread_t th[2];
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	pthread_attr_init(&attr);
	if (pthread_attr_setaffinity_np(&attr, sizeof(one), &one))
		die("pthread_attr_setaffinity_np");
	pthread_barrier_init(&both, NULL, 2);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], &attr, share_thread, NULL))
			die("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&both);
	pthread_attr_destroy(&attr);
}

static void *warm_thread(void *arg)
{
	spin_cpu(5 * MS);
	return arg;
}

/* Runs each region's code once, briefly and untraced, before the regions:
 * the first run of a code path faults its pages in, and under tr2-bpf -p
 * may stop the process while tr2-bpf looks at an object (a stop counts as
 * asleep), which the regions must not measure. */
static void warm_up(void)
{
	struct timespec ts = { 0, MS };
	pthread_t th;

	spin_cpu(5 * MS);
	nanosleep(&ts, NULL);
	if (pthread_create(&th, NULL, warm_thread, NULL))
		die("pthread_create");
	pthread_join(th, NULL);
	mark_now();
}

/* A region open while the program waits for a line (tr2-bpf -p attaches). */
static void region_attach(void)
{
	struct mark m = enter("attach");
	char line[64];

	printf("waiting\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		die("stdin");
	leave("attach", m);
}

int main(int argc, const char **argv)
{
	int wait_stdin = argc == 3 && !strcmp(argv[1], "--wait-stdin");

	if (argc != 2 + wait_stdin) {
		fprintf(stderr, "usage: tr2_sched [--wait-stdin] DIR\n");
		return 2;
	}
	trace2_initialize();
	trace2_cmd_start(argv);
	if (wait_stdin)
		region_attach();
	warm_up();
	region_spin();
	region_sleep();
	region_io(argv[argc - 1]);
	region_share();
	return trace2_cmd_exit(0);
}
