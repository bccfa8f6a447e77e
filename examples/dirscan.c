/*
 * dirscan: a multi-threaded directory scanner instrumented with trace2.h.
 *
 * For each DIR it walks the tree (main thread), reads every regular file with
 * N worker threads (counting bytes and a checksum), then runs `du -sk DIR` as
 * a child process to cross-check the size. The trace shows which phase is
 * slow (walk, read or check), how reading is spread over the workers, and
 * which directories could not be opened. Detached, the instrumentation costs
 * a not-taken branch per call.
 *
 * With --loop a worker reports every 0.1 s (its read:files region ends, with
 * its counts, and the next begins), however long its files take to read, so
 * that a tracer attached mid-scan sees events at once; run once or --repeat,
 * a worker's one region spans all its files.
 *
 * EXAMPLES
 *   dirscan /usr/include                      scan once
 *   tr2-bpf --perf -- dirscan -j 4 /usr/lib   trace a run from its start
 *   dirscan --loop /etc &                     keep scanning; then, as root:
 *   tr2-bpf -p $! --normal                    attach to the running scanner
 */
#define TRACE2_EXE_VERSION "dirscan-1.0"
#include <trace2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

TRACE2_DEFINE_TIMER(read_timer, "read", "read_file", 1);
TRACE2_DEFINE_COUNTER(bytes_counter, "read", "bytes", 1);

#define LOOP_REPORT_NS 100000000LL  /* --loop: a worker reports every 0.1 s */

/* One scan of one tree: the walk fills paths, the workers consume them. */
struct scan {
	int repo_id;
	char **paths;
	size_t nr_paths, alloc_paths;
	size_t next_path;       /* index of the next file to read, shared by workers */
	intmax_t nr_dirs;
	intmax_t nr_errors;
	intmax_t total_bytes;   /* summed by the workers */
	uint64_t checksum;      /* xor of the files' checksums */
	int64_t report_ns;      /* --loop: a worker's read:files region ends this often; else 0 */
};

/* One worker's open read:files region: what it has read in it. */
struct batch {
	struct scan *scan;
	intmax_t files;         /* read to their end in this region */
	intmax_t bytes;         /* read in this region */
	int64_t start_ns;       /* CLOCK_MONOTONIC when it was entered */
};

static void add_path(struct scan *scan, const char *path)
{
	if (scan->nr_paths == scan->alloc_paths) {
		scan->alloc_paths = scan->alloc_paths ? 2 * scan->alloc_paths : 256;
		scan->paths = realloc(scan->paths, scan->alloc_paths * sizeof(*scan->paths));
		if (!scan->paths) {
			perror("dirscan: realloc");
			exit(trace2_cmd_exit(1));
		}
	}
	scan->paths[scan->nr_paths++] = strdup(path);
}

/* Collects the regular files under path; one nested region per directory. */
static void walk_dir(struct scan *scan, const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	char child[4096];

	if (!dir) {
		trace2_cmd_error("cannot open directory '%s': %s", path, strerror(errno));
		fprintf(stderr, "dirscan: cannot open directory '%s': %s\n", path, strerror(errno));
		scan->nr_errors++;
		return;
	}
	trace2_region_enter_printf("walk", "read_dir", scan->repo_id, "%s", path);
	scan->nr_dirs++;
	while ((entry = readdir(dir))) {
		struct stat st;

		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
		if (entry->d_type == DT_UNKNOWN && lstat(child, &st) == 0)
			entry->d_type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		if (entry->d_type == DT_DIR)
			walk_dir(scan, child);
		else if (entry->d_type == DT_REG)
			add_path(scan, child);
	}
	closedir(dir);
	trace2_region_leave("walk", "read_dir", scan->repo_id);
}

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void batch_enter(struct batch *batch)
{
	batch->files = batch->bytes = 0;
	if (batch->scan->report_ns)
		batch->start_ns = monotonic_ns();
	trace2_region_enter("read", "files", batch->scan->repo_id);
}

static void batch_leave(struct batch *batch)
{
	struct scan *scan = batch->scan;

	trace2_data_intmax("read", scan->repo_id, "files", batch->files);
	trace2_data_intmax("read", scan->repo_id, "bytes", batch->bytes);
	trace2_region_leave("read", "files", scan->repo_id);
	__atomic_add_fetch(&scan->total_bytes, batch->bytes, __ATOMIC_RELAXED);
}

/* --loop: ends the region once report_ns have passed, and begins the next. */
static void batch_tick(struct batch *batch)
{
	if (batch->scan->report_ns && monotonic_ns() - batch->start_ns >= batch->scan->report_ns) {
		batch_leave(batch);
		batch_enter(batch);
	}
}

/* Reads one file into the batch (ticking it as it goes), adding its bytes to *checksum. */
static void read_file(struct batch *batch, const char *path, uint64_t *checksum)
{
	unsigned char buf[65536];
	intmax_t size = 0;
	ssize_t n;
	int fd;

	trace2_timer_start(read_timer);
	fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd >= 0) {
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < n; i++)
				*checksum = *checksum * 31 + buf[i];
			size += n;
			batch->bytes += n;
			batch_tick(batch);
		}
		close(fd);
	}
	trace2_timer_stop(read_timer);
	trace2_counter_add(bytes_counter, size);
	batch->files++;
	batch_tick(batch);
}

static void *reader_thread(void *arg)
{
	struct scan *scan = arg;
	struct batch batch = { .scan = scan };
	uint64_t checksum = 0;
	size_t i;

	trace2_thread_start("reader");
	batch_enter(&batch);
	while ((i = __atomic_fetch_add(&scan->next_path, 1, __ATOMIC_RELAXED)) < scan->nr_paths) {
		uint64_t file_checksum = 0;

		read_file(&batch, scan->paths[i], &file_checksum);
		checksum ^= file_checksum;
	}
	batch_leave(&batch);
	__atomic_xor_fetch(&scan->checksum, checksum, __ATOMIC_RELAXED);
	trace2_thread_exit();
	return NULL;
}

/* Runs `du -sk dir` as a traced child; stores its first output word. */
static void run_du(struct scan *scan, const char *dir, char *out, size_t out_size)
{
	const char *argv[] = { "du", "-sk", dir, NULL };
	struct trace2_child child = { .child_class = "check", .argv = argv };
	int pipe_fds[2], status = -1;
	ssize_t len;

	snprintf(out, out_size, "?");
	if (pipe(pipe_fds) != 0)
		return;
	trace2_child_start(&child);
	child.pid = fork();
	if (child.pid == 0) {
		dup2(pipe_fds[1], STDOUT_FILENO);
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		execvp(argv[0], (char **)argv);
		_exit(127);
	}
	close(pipe_fds[1]);
	len = child.pid > 0 ? read(pipe_fds[0], out, out_size - 1) : -1;
	close(pipe_fds[0]);
	if (child.pid > 0 && waitpid(child.pid, &status, 0) == child.pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	trace2_child_exit(&child, status);
	if (len > 0) {
		out[len] = '\0';
		out[strcspn(out, " \t\n")] = '\0';
	}
	trace2_data_string("check", scan->repo_id, "du_kib", out);
}

/* One full scan of dir; returns the number of unreadable directories. */
static intmax_t scan_tree(const char *dir, int repo_id, int jobs, int64_t report_ns)
{
	struct scan scan = { .repo_id = repo_id, .report_ns = report_ns };
	pthread_t threads[64];
	char du_kib[64], summary[256];
	int i;

	trace2_region_enter("scan", "walk", repo_id);
	walk_dir(&scan, dir);
	trace2_data_intmax("walk", repo_id, "dirs", scan.nr_dirs);
	trace2_data_intmax("walk", repo_id, "files", (intmax_t)scan.nr_paths);
	trace2_region_leave("scan", "walk", repo_id);

	trace2_region_enter("scan", "read", repo_id);
	for (i = 0; i < jobs; i++)
		if (pthread_create(&threads[i], NULL, reader_thread, &scan) != 0)
			break;
	while (i-- > 0)
		pthread_join(threads[i], NULL);
	trace2_region_leave("scan", "read", repo_id);

	trace2_region_enter("scan", "check", repo_id);
	run_du(&scan, dir, du_kib, sizeof(du_kib));
	trace2_region_leave("scan", "check", repo_id);

	printf("%s: %jd dirs, %zu files, %jd bytes (du: %s KiB), checksum %016" PRIx64 ", %jd errors\n",
	       dir, scan.nr_dirs, scan.nr_paths, scan.total_bytes, du_kib, scan.checksum,
	       scan.nr_errors);
	fflush(stdout);
	/* Building the JSON costs something: only while a tracer listens. */
	if (trace2_is_enabled()) {
		snprintf(summary, sizeof(summary),
			 "{\"dirs\":%jd,\"files\":%zu,\"bytes\":%jd,\"errors\":%jd}",
			 scan.nr_dirs, scan.nr_paths, scan.total_bytes, scan.nr_errors);
		trace2_data_json("scan", repo_id, "summary", summary);
	}
	for (size_t p = 0; p < scan.nr_paths; p++)
		free(scan.paths[p]);
	free(scan.paths);
	return scan.nr_errors;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dirscan [-j N] [--repeat N | --loop] [--interval MS] DIR...\n"
		"  -j, --jobs N       reader threads (1-64, default 4)\n"
		"  -r, --repeat N     scan N times (default 1)\n"
		"  -l, --loop         scan until killed\n"
		"  -i, --interval MS  pause between scans (default 100 with --loop, else 0)\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "loop", no_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int jobs = 4, repeat = 1, loop = 0, interval_ms = -1, opt;
	intmax_t errors = 0;
	char value[32];

	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	while ((opt = getopt_long(argc, argv, "j:r:li:h", options, NULL)) != -1) {
		switch (opt) {
		case 'j': jobs = atoi(optarg); break;
		case 'r': repeat = atoi(optarg); break;
		case 'l': loop = 1; break;
		case 'i': interval_ms = atoi(optarg); break;
		case 'h': usage(stdout); return trace2_cmd_exit(0);
		default: usage(stderr); return trace2_cmd_exit(2);
		}
	}
	if (optind == argc || jobs < 1 || jobs > 64 || repeat < 1) {
		usage(stderr);
		return trace2_cmd_exit(2);
	}
	if (interval_ms < 0)
		interval_ms = loop ? 100 : 0;

	trace2_cmd_name("dirscan");
	trace2_cmd_mode(loop ? "loop" : "repeat");
	snprintf(value, sizeof(value), "%d", jobs);
	trace2_def_param("dirscan.jobs", value);
	snprintf(value, sizeof(value), "%d", interval_ms);
	trace2_def_param("dirscan.interval_ms", value);

	int repo_ids[argc];
	for (int d = optind; d < argc; d++)
		repo_ids[d] = trace2_def_repo(argv[d]);

	for (int pass = 1; loop || pass <= repeat; pass++) {
		trace2_region_enter_printf("scan", "pass", 0, "pass %d", pass);
		for (int d = optind; d < argc; d++)
			errors += scan_tree(argv[d], repo_ids[d], jobs, loop ? LOOP_REPORT_NS : 0);
		trace2_region_leave_printf("scan", "pass", 0, "pass %d", pass);
		if (interval_ms > 0 && (loop || pass < repeat)) {
			struct timespec pause = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
			nanosleep(&pause, NULL);
		}
	}
	return trace2_cmd_exit(errors ? 1 : 0);
}
