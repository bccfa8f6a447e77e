/* test_dst.c: destinations (tr2_dst.h) and tr2_target_emit: file
 * descriptors, appended files, directories (names, collisions, git's
 * trace2.maxFiles sentinel), Unix-domain sockets of both types against real
 * sockets (one connection per process, the bound on them, a peer that goes
 * away), and failures reported once. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "unit.h"
#include "tr2_dst.h"

static char tmpdir[64];

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/tr2-test-dst-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *path_in(const char *dir, const char *name)
{
	static char p[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static const char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void spit(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;
}

/* ---- stderr capture, to check that failures are reported once ---- */

static int saved_stderr = -1;
static char capture_path[128];

static void capture_stderr(void)
{
	int fd;

	snprintf(capture_path, sizeof(capture_path), "%s/stderr", tmpdir);
	fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static const char *captured_stderr(void)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	return slurp(capture_path);
}

static int w(struct tr2_dst *d, const char *sid, const char *line)
{
	return tr2_dst_write(d, sid, 0, line, strlen(line));
}

static struct tr2_dst *must_open(const char *value)
{
	char err[256] = "";
	struct tr2_dst *d = tr2_dst_open(value, TR2_DST_MODE_GIT, err, sizeof(err));

	if (!d)
		fail_msg("tr2_dst_open(%s): %s", value, err);
	return d;
}

static void assert_open_error(const char *value, const char *want)
{
	char err[256] = "";

	assert_null(tr2_dst_open(value, TR2_DST_MODE_GIT, err, sizeof(err)));
	assert_string_equal(err, want);
}

static void test_open_errors(void **state)
{
	char longpath[200];

	close(7);
	assert_open_error("7", "file descriptor 7 is not open");
	assert_open_error("", "invalid destination '': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path");
	assert_open_error("1", "invalid destination '1': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path");
	assert_open_error("true", "invalid destination 'true': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path");
	assert_open_error("0", "invalid destination '0': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path");
	assert_open_error("10", "invalid destination '10': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path");
	assert_open_error("trace.log", "invalid destination 'trace.log': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path");
	assert_open_error("/nonexistent-tr2-dir/x", "cannot open '/nonexistent-tr2-dir/x': No such file or directory");
	assert_open_error("af_unix:sock", "invalid socket path in 'af_unix:sock': want an absolute path");
	assert_open_error("af_unix:dgram:", "invalid socket path in 'af_unix:dgram:': want an absolute path");
	assert_open_error("af_unix:stream:/nonexistent-tr2-dir/s",
			  "cannot connect to socket '/nonexistent-tr2-dir/s': No such file or directory");
	memset(longpath, 'x', sizeof(longpath));
	memcpy(longpath, "af_unix:/", 9);
	longpath[sizeof(longpath) - 1] = '\0';
	{
		char err[256];

		assert_null(tr2_dst_open(longpath, TR2_DST_MODE_GIT, err, sizeof(err)));
		assert_non_null(strstr(err, "longer than 107 bytes"));
	}
	/* a NULL or too small err buffer is fine */
	assert_null(tr2_dst_open("x", TR2_DST_MODE_GIT, NULL, 0));
	tr2_dst_close(NULL);
}

static void test_stdout_and_fd(void **state)
{
	int p[2];
	char buf[64] = "";
	struct tr2_dst *d;

	d = must_open(NULL);
	tr2_dst_close(d);

	assert_int_equal(pipe(p), 0);
	assert_int_equal(dup2(p[1], 7), 7);
	close(p[1]);
	d = must_open("7");
	assert_int_equal(w(d, "s", "one\n"), 0);
	assert_int_equal(w(d, "s", "two\n"), 0);
	tr2_dst_close(d);
	assert_true(fcntl(7, F_GETFD) >= 0);  /* not ours to close */
	close(7);
	assert_int_equal(read(p[0], buf, sizeof(buf) - 1), 8);
	assert_string_equal(buf, "one\ntwo\n");
	close(p[0]);
}

/* O_APPEND: lines of two writers never overwrite each other */
static void test_path_append(void **state)
{
	const char *path = path_in(tmpdir, "trace.log");
	struct tr2_dst *a, *b;

	spit(path, "old\n");
	a = must_open(path);
	b = must_open(path);
	assert_int_equal(w(a, "s1", "a1\n"), 0);
	assert_int_equal(w(b, "s2", "b1\n"), 0);
	assert_int_equal(w(a, "s1", "a2\n"), 0);
	tr2_dst_close(a);
	tr2_dst_close(b);
	assert_string_equal(slurp(path), "old\na1\nb1\na2\n");
	/* a new file is created */
	a = must_open(path_in(tmpdir, "new.log"));
	assert_int_equal(w(a, "s", "x\n"), 0);
	tr2_dst_close(a);
	assert_string_equal(slurp(path_in(tmpdir, "new.log")), "x\n");
}

/* one file per process, named after the sid's last component */
static void test_dir_naming(void **state)
{
	char dir[256];
	char slash[260];
	struct tr2_dst *d;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "d");
	assert_int_equal(mkdir(dir, 0755), 0);
	spit(path_in(dir, "P4"), "someone else's\n");
	d = must_open(dir);
	assert_int_equal(w(d, "P1/P2", "p2 a\n"), 0);
	assert_int_equal(w(d, "P3", "p3 a\n"), 0);
	assert_int_equal(w(d, "P1/P2", "p2 b\n"), 0);
	assert_int_equal(w(d, "X/P2", "other p2\n"), 0);  /* same name, other process */
	assert_int_equal(w(d, "P4", "p4\n"), 0);           /* name taken by a file */
	assert_int_equal(w(d, NULL, "none\n"), 0);
	assert_string_equal(slurp(path_in(dir, "P2")), "p2 a\np2 b\n");
	assert_string_equal(slurp(path_in(dir, "P2.1")), "other p2\n");
	assert_string_equal(slurp(path_in(dir, "P3")), "p3 a\n");
	assert_string_equal(slurp(path_in(dir, "P4")), "someone else's\n");
	assert_string_equal(slurp(path_in(dir, "P4.1")), "p4\n");
	assert_string_equal(slurp(path_in(dir, "no-sid")), "none\n");

	/* after its end, a process's file is closed and forgotten */
	tr2_dst_end_process(d, "P3", 0);
	tr2_dst_end_process(d, "never-seen", 0);
	assert_int_equal(w(d, "P3", "p3 again\n"), 0);
	assert_string_equal(slurp(path_in(dir, "P3.1")), "p3 again\n");
	assert_int_equal(w(d, "P1/P2", "p2 c\n"), 0);
	assert_string_equal(slurp(path_in(dir, "P2")), "p2 a\np2 b\np2 c\n");
	tr2_dst_close(d);

	/* a trailing slash is fine */
	snprintf(slash, sizeof(slash), "%s/", dir);
	d = must_open(slash);
	assert_int_equal(w(d, "P9", "p9\n"), 0);
	tr2_dst_close(d);
	assert_string_equal(slurp(path_in(dir, "P9")), "p9\n");
}

/* git tries the name and ".1" to ".9"; then the process's lines are lost,
 * which is reported once and counted, and the other processes' files go on */
/* one file per stream: two processes that claim one sid get one each, and
 * the end of one leaves the other's open */
static void test_dir_streams(void **state)
{
	char dir[256];
	struct tr2_dst *d;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "streams");
	assert_int_equal(mkdir(dir, 0755), 0);
	d = must_open(dir);
	assert_int_equal(tr2_dst_write(d, "A/S", 1, "victim a\n", 9), 0);
	assert_int_equal(tr2_dst_write(d, "A/S", 2, "claimant\n", 9), 0);
	assert_int_equal(tr2_dst_write(d, "A/S", 1, "victim b\n", 9), 0);
	tr2_dst_end_process(d, "A/S", 2);
	assert_int_equal(tr2_dst_write(d, "A/S", 1, "victim c\n", 9), 0);
	tr2_dst_close(d);
	assert_string_equal(slurp(path_in(dir, "S")), "victim a\nvictim b\nvictim c\n");
	assert_string_equal(slurp(path_in(dir, "S.1")), "claimant\n");
	assert_int_equal(count_entries(dir), 2);
}

/* a sid whose last part cannot name a file gets a name made from it, and
 * its lines are written */
static void test_dir_unnamable_sids(void **state)
{
	static const char *const sids[] = { "A/", ".", "..", ".hidden", "a\tb", "git-trace2-discard",
					    "x\xc3\xa9" };
	char dir[256], longsid[700];
	struct tr2_dst *d;
	struct dirent *e;
	DIR *dirp;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "unnamable");
	assert_int_equal(mkdir(dir, 0755), 0);
	d = must_open(dir);
	tr2_dst_set_max_files(d, 100);
	memset(longsid, 'L', sizeof(longsid) - 1);
	longsid[sizeof(longsid) - 1] = '\0';
	assert_int_equal(w(d, longsid, "long\n"), 0);
	for (size_t i = 0; i < sizeof(sids) / sizeof(sids[0]); i++)
		assert_int_equal(w(d, sids[i], "odd\n"), 0);
	assert_int_equal(w(d, "ok-P1", "ok\n"), 0);
	assert_int_equal(tr2_dst_dropped(d, NULL, NULL), 0);
	tr2_dst_close(d);
	assert_int_equal(count_entries(dir), 2 + (int)(sizeof(sids) / sizeof(sids[0])));
	assert_string_equal(slurp(path_in(dir, "ok-P1")), "ok\n");
	/* the others: "sid-" and 16 hex digits, none of them the sentinel */
	dirp = opendir(dir);
	while ((e = readdir(dirp)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, "ok-P1")) {
			assert_int_equal(strlen(e->d_name), 20);
			assert_int_equal(strspn(e->d_name + 4, "0123456789abcdef"), 16);
			assert_memory_equal(e->d_name, "sid-", 4);
		}
	closedir(dirp);
}

/* The mode of the file a path destination with file_mode creates at path. */
static mode_t created_mode(const char *path, int file_mode)
{
	char err[256];
	struct tr2_dst *d = tr2_dst_open(path, file_mode, err, sizeof(err));
	struct stat st;

	assert_non_null(d);
	tr2_dst_close(d);
	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* files are created with the destination's mode: git's (less the umask),
 * or private: 0600, 0640 and the directory's group where it has another */
static void test_file_modes(void **state)
{
	char dir[256], grouped[256], path[300];
	struct tr2_dst *d;
	struct stat st;
	char err[256];
	mode_t old = umask(022);

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "modes");
	assert_int_equal(mkdir(dir, 0755), 0);
	d = tr2_dst_open(dir, TR2_DST_MODE_PRIVATE, err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(w(d, "P1", "x\n"), 0);
	tr2_dst_close(d);
	assert_int_equal(stat(path_in(dir, "P1"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	snprintf(path, sizeof(path), "%s/private.perf", dir);
	assert_int_equal(created_mode(path, TR2_DST_MODE_PRIVATE), 0600);
	snprintf(path, sizeof(path), "%s/git.perf", dir);
	assert_int_equal(created_mode(path, TR2_DST_MODE_GIT), 0644);
	snprintf(path, sizeof(path), "%s/given.perf", dir);
	assert_int_equal(created_mode(path, 0640), 0640);

	/* a directory with a group of its own (root can give it one) */
	snprintf(grouped, sizeof(grouped), "%s/%s", tmpdir, "grouped");
	assert_int_equal(mkdir(grouped, 0750), 0);
	if (geteuid() == 0 && chown(grouped, (uid_t)-1, getegid() + 1) == 0) {
		d = tr2_dst_open(grouped, TR2_DST_MODE_PRIVATE, err, sizeof(err));
		assert_non_null(d);
		assert_int_equal(w(d, "P2", "y\n"), 0);
		tr2_dst_close(d);
		assert_int_equal(stat(path_in(grouped, "P2"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0640);
		assert_int_equal(st.st_gid, getegid() + 1);
	}
	umask(old);
}

static void test_dir_collisions_exhausted(void **state)
{
	char dir[256];
	char name[32], want[512];
	struct tr2_dst *d;
	const char *err;
	uint64_t procs;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "full");
	assert_int_equal(mkdir(dir, 0755), 0);
	spit(path_in(dir, "P5"), "");
	for (int i = 1; i <= 9; i++) {
		snprintf(name, sizeof(name), "P5.%d", i);
		spit(path_in(dir, name), "");
	}
	d = must_open(dir);
	capture_stderr();
	assert_int_equal(w(d, "P5", "lost\n"), -1);
	assert_int_equal(w(d, "P5", "lost again\n"), -1);
	assert_int_equal(w(d, "P6", "fine\n"), 0);
	err = captured_stderr();
	snprintf(want, sizeof(want), "test_dst: cannot open '%s/P5': File exists\n", dir);
	assert_string_equal(err, want);
	assert_int_equal(tr2_dst_dropped(d, &procs, NULL), 2);
	assert_int_equal(procs, 1);
	tr2_dst_close(d);
	assert_string_equal(slurp(path_in(dir, "P6")), "fine\n");
}

static struct tr2_ev version_ev(const char *sid)
{
	struct tr2_ev ev = ev_new(TR2_EV_VERSION, sid, "common-main.c", 50);

	ev.evt = "3";
	ev.exe = "2.39.5";
	ev.time_us = at("2026-11-21T20:40:14.648957Z");
	return ev;
}

/*
 * git's trace2.maxFiles = 4: "." and ".." count, so two trace files are
 * written, the third process goes to the git-trace2-discard sentinel with a
 * "too_many_files" event after its version, and later processes are dropped
 * until the sentinel is removed.
 */
static void test_dir_max_files(void **state)
{
	char dir[256];
	const char *s3 = "20261121T204014.648864Z-H0a7c9cdf-P000035e3";
	struct tr2_target t = { .tgt = &tr2_tgt_event, .opts = { .event_nesting = 2 } };
	struct tr2_target n = { .tgt = &tr2_tgt_normal, .opts = { .brief = 1 } };
	struct tr2_ev ev;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "max");
	assert_int_equal(mkdir(dir, 0755), 0);
	t.dst = must_open(dir);
	tr2_dst_set_max_files(t.dst, 4);
	ev = version_ev("S1");
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	ev = version_ev("S2");
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	assert_int_equal(count_entries(dir), 2);

	ev = version_ev(s3);
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	ev.kind = TR2_EV_CMD_MODE;
	ev.mode = "m";
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	assert_string_equal(slurp(path_in(dir, "git-trace2-discard")),
			    "{\"event\":\"version\",\"sid\":\"20261121T204014.648864Z-H0a7c9cdf-P000035e3\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:14.648957Z\",\"file\":\"common-main.c\",\"line\":50,\"evt\":\"3\",\"exe\":\"2.39.5\"}\n"
			    "{\"event\":\"too_many_files\",\"sid\":\"20261121T204014.648864Z-H0a7c9cdf-P000035e3\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:14.648957Z\",\"file\":\"common-main.c\",\"line\":50}\n"
			    "{\"event\":\"cmd_mode\",\"sid\":\"20261121T204014.648864Z-H0a7c9cdf-P000035e3\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:14.648957Z\",\"file\":\"common-main.c\",\"line\":50,\"name\":\"m\"}\n");

	ev = version_ev("S4");  /* the sentinel exists: dropped, not a failure */
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	assert_int_equal(count_entries(dir), 3);
	ev = version_ev("S1");  /* processes that have a file keep it */
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	assert_non_null(strstr(slurp(path_in(dir, "S1")), "\"sid\":\"S1\""));

	/* another target on the same directory: S5 finds the sentinel too */
	n.dst = must_open(dir);
	tr2_dst_set_max_files(n.dst, 4);
	ev = version_ev("S5");
	assert_int_equal(tr2_target_emit(&n, &ev), 0);
	assert_int_equal(count_entries(dir), 3);

	/* the collector removes the sentinel: the next process gets it again,
	 * and a NORMAL target writes no too_many_files line */
	assert_int_equal(unlink(path_in(dir, "git-trace2-discard")), 0);
	ev = version_ev("S6");
	assert_int_equal(tr2_target_emit(&n, &ev), 0);
	assert_string_equal(slurp(path_in(dir, "git-trace2-discard")), "version 2.39.5\n");

	tr2_dst_close(t.dst);
	tr2_dst_close(n.dst);
	tr2_buf_free(&t.buf);
	tr2_buf_free(&n.buf);
}

static int open_fds(void)
{
	return count_entries("/proc/self/fd");
}

/* at most 128 files open at once; older ones are reopened for appending */
static void test_dir_many_processes(void **state)
{
	char dir[256];
	struct tr2_dst *d;
	char sid[32], line[64], want[128];
	int before = open_fds();

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "many");
	assert_int_equal(mkdir(dir, 0755), 0);
	d = must_open(dir);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 300; i++) {
			snprintf(sid, sizeof(sid), "parent/P%03d", i);
			snprintf(line, sizeof(line), "P%03d line %d\n", i, round);
			assert_int_equal(w(d, sid, line), 0);
		}
		assert_true(open_fds() - before <= 128);
	}
	for (int i = 0; i < 300; i += 37) {
		snprintf(sid, sizeof(sid), "P%03d", i);
		snprintf(want, sizeof(want), "P%03d line 0\nP%03d line 1\n", i, i);
		assert_string_equal(slurp(path_in(dir, sid)), want);
	}
	/* ending processes frees their slots; the table survives removals */
	for (int i = 0; i < 300; i += 2) {
		snprintf(sid, sizeof(sid), "parent/P%03d", i);
		tr2_dst_end_process(d, sid, 0);
	}
	for (int i = 1; i < 300; i += 2) {
		snprintf(sid, sizeof(sid), "parent/P%03d", i);
		assert_int_equal(w(d, sid, "last\n"), 0);
	}
	assert_int_equal(count_entries(dir), 300);
	tr2_dst_close(d);
	assert_int_equal(open_fds(), before);
	assert_string_equal(slurp(path_in(dir, "P299")), "P299 line 0\nP299 line 1\nlast\n");
}

static int listen_unix(const char *path, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type, 0);

	assert_true(fd >= 0);
	strcpy(sa.sun_path, path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void test_af_unix_stream(void **state)
{
	const char *path = path_in(tmpdir, "stream.sock");
	char value[256], buf[256] = "";
	int lfd = listen_unix(path, SOCK_STREAM);

	for (int i = 0; i < 2; i++) {
		struct tr2_dst *d;
		int cfd;
		size_t got = 0;
		ssize_t n;

		/* explicit type, then git's default: stream first */
		snprintf(value, sizeof(value), i ? "af_unix:%s" : "af_unix:stream:%s", path);
		d = must_open(value);
		cfd = accept(lfd, NULL, NULL);
		assert_true(cfd >= 0);
		assert_int_equal(w(d, "s", "line one\n"), 0);
		assert_int_equal(w(d, "s", "line two\n"), 0);
		tr2_dst_close(d);
		while ((n = read(cfd, buf + got, sizeof(buf) - 1 - got)) > 0)
			got += (size_t)n;
		buf[got] = '\0';
		assert_string_equal(buf, "line one\nline two\n");
		close(cfd);
	}
	close(lfd);
}

/* each line one datagram; "af_unix:" falls back to dgram on EPROTOTYPE */
static void test_af_unix_dgram(void **state)
{
	const char *path = path_in(tmpdir, "dgram.sock");
	char value[256], buf[256];
	int sfd = listen_unix(path, SOCK_DGRAM);

	for (int i = 0; i < 2; i++) {
		struct tr2_dst *d;
		ssize_t n;

		snprintf(value, sizeof(value), i ? "af_unix:%s" : "af_unix:dgram:%s", path);
		d = must_open(value);
		assert_int_equal(w(d, "s", "first line\n"), 0);
		assert_int_equal(w(d, "s", "second\n"), 0);
		n = recv(sfd, buf, sizeof(buf), 0);
		assert_int_equal(n, 11);
		assert_memory_equal(buf, "first line\n", 11);
		n = recv(sfd, buf, sizeof(buf), 0);
		assert_int_equal(n, 7);
		assert_memory_equal(buf, "second\n", 7);
		tr2_dst_close(d);
	}
	/* a stream-only request against a dgram socket fails at open */
	snprintf(value, sizeof(value), "af_unix:stream:%s", path);
	{
		char err[256];

		assert_null(tr2_dst_open(value, TR2_DST_MODE_GIT, err, sizeof(err)));
		assert_non_null(strstr(err, "Protocol wrong type for socket"));
	}
	close(sfd);
}

/* ---- sockets: one connection per process ---- */

/* What a connection carried, up to its end (the peer's close): fails when
 * it is still open after 5 s. */
static const char *read_conn(int fd)
{
	static char buf[8192];
	size_t got = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 5000) != 1)
			fail_msg("connection still open: %.*s", (int)got, buf);
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		assert_true(n >= 0);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return buf;
}

/* The next connection the listener has, without waiting: -1 when none. */
static int accept_now(int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 ? accept(lfd, NULL, NULL) : -1;
}

/*
 * Each process (sid) gets its own connection at its first line, as each git
 * process opens its own; the connection made at open is the first
 * process's, so the listener sees no empty one; a process's connection
 * closes at its end; one whose end never came closes with the destination.
 */
static void test_af_unix_per_process(void **state)
{
	const char *path = path_in(tmpdir, "procs.sock");
	char value[256];
	int lfd = listen_unix(path, SOCK_STREAM), ca, cb, cc, before = open_fds();
	struct tr2_dst *d;
	uint64_t procs, refused;

	snprintf(value, sizeof(value), "af_unix:stream:%s", path);
	d = must_open(value);
	assert_true(tr2_dst_per_process(d));
	ca = accept_now(lfd);                  /* made at open: A's */
	assert_true(ca >= 0);
	assert_int_equal(accept_now(lfd), -1);
	assert_int_equal(w(d, "A", "a1\n"), 0);
	assert_int_equal(accept_now(lfd), -1);  /* A took the one made at open */
	assert_int_equal(w(d, "A/B", "b1\n"), 0);
	cb = accept_now(lfd);
	assert_true(cb >= 0);
	assert_int_equal(w(d, "A", "a2\n"), 0);
	assert_int_equal(w(d, "A/B", "b2\n"), 0);
	assert_int_equal(w(d, "A/C", "c1\n"), 0);
	cc = accept_now(lfd);
	assert_true(cc >= 0);
	assert_int_equal(open_fds() - before, 3 + 3);  /* and the 3 accepted */

	/* B ends: its connection closes now, the others stay */
	tr2_dst_end_process(d, "A/B", 0);
	assert_string_equal(read_conn(cb), "b1\nb2\n");
	assert_int_equal(open_fds() - before, 2 + 2);
	assert_int_equal(w(d, "A", "a3\n"), 0);
	tr2_dst_end_process(d, "A", 0);
	assert_string_equal(read_conn(ca), "a1\na2\na3\n");
	tr2_dst_end_process(d, "never-seen", 0);

	/* a line after a process's end: a new connection, as a new file */
	assert_int_equal(w(d, "A", "late\n"), 0);
	ca = accept_now(lfd);
	assert_true(ca >= 0);
	/* C never ended: closed with the destination, as is A's new one */
	tr2_dst_close(d);
	assert_string_equal(read_conn(cc), "c1\n");
	assert_string_equal(read_conn(ca), "late\n");
	assert_int_equal(accept_now(lfd), -1);
	assert_int_equal(open_fds(), before);
	assert_int_equal(tr2_dst_dropped(NULL, &procs, &refused), 0);

	/* the collector went away and came back after the open: the first
	 * process does not get the dead connection made at open */
	d = must_open(value);
	close(accept(lfd, NULL, NULL));
	capture_stderr();
	assert_int_equal(w(d, "S", "s1\n"), 0);
	assert_string_equal(captured_stderr(), "");
	tr2_dst_close(d);
	assert_string_equal(read_conn(accept(lfd, NULL, NULL)), "s1\n");
	close(lfd);
}

/*
 * At most TR2_DST_MAX_CONNECTIONS at once: a connection cannot be reopened as
 * the same process, so a process that finds them all open is refused
 * whole (its lines dropped and counted, reported once) rather than an older
 * one closed; once a process ends, the next one connects.
 */
static void test_af_unix_bound(void **state)
{
	const char *path = path_in(tmpdir, "bound.sock");
	char value[256], sid[32], want[512];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), n = 0, cfd, before = open_fds();
	struct tr2_dst *d;
	uint64_t procs, refused;

	/* room for every connection in the listener's backlog, unaccepted */
	strcpy(sa.sun_path, path);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, TR2_DST_MAX_CONNECTIONS + 8), 0);
	snprintf(value, sizeof(value), "af_unix:%s", path);
	d = must_open(value);
	for (int i = 0; i < TR2_DST_MAX_CONNECTIONS; i++) {
		snprintf(sid, sizeof(sid), "P%d", i);
		assert_int_equal(w(d, sid, "first\n"), 0);
	}
	assert_int_equal(open_fds() - before, TR2_DST_MAX_CONNECTIONS);
	capture_stderr();
	assert_int_equal(w(d, "late", "one\n"), 0);
	assert_int_equal(w(d, "late", "two\n"), 0);
	assert_int_equal(w(d, "later", "one\n"), 0);
	snprintf(want, sizeof(want), "test_dst: cannot connect to socket '%s': %d connections open, one per process\n",
		 path, TR2_DST_MAX_CONNECTIONS);
	assert_string_equal(captured_stderr(), want);
	assert_int_equal(open_fds() - before, TR2_DST_MAX_CONNECTIONS);
	assert_int_equal(tr2_dst_dropped(d, &procs, &refused), 3);
	assert_int_equal(procs, 2);
	assert_int_equal(refused, 2);
	/* the refused stay refused; a process that comes after an end connects */
	tr2_dst_end_process(d, "P7", 0);
	assert_int_equal(w(d, "late", "three\n"), 0);
	assert_int_equal(w(d, "new", "n1\n"), 0);
	assert_int_equal(tr2_dst_dropped(d, NULL, NULL), 4);
	capture_stderr();
	tr2_dst_report_dropped(d);
	snprintf(want, sizeof(want), "test_dst: '%s': 4 lines of 2 processes dropped (2 refused: %d connections open)\n",
		 value, TR2_DST_MAX_CONNECTIONS);
	assert_string_equal(captured_stderr(), want);
	tr2_dst_close(d);
	assert_int_equal(open_fds(), before);
	while ((cfd = accept_now(lfd)) >= 0) {
		const char *got = read_conn(cfd);

		assert_true(!strcmp(got, "first\n") || !strcmp(got, "n1\n"));
		n++;
	}
	assert_int_equal(n, TR2_DST_MAX_CONNECTIONS + 1);
	close(lfd);
}

/*
 * The peer of one process's connection goes away: that process's later lines
 * are dropped and counted, reported once; the other processes' connections
 * are not affected, and a process that comes later connects.
 */
static void test_af_unix_peer_gone(void **state)
{
	const char *path = path_in(tmpdir, "gone.sock");
	char value[256], want[512];
	int lfd = listen_unix(path, SOCK_STREAM), ca, cb;
	struct tr2_dst *d;
	uint64_t procs;

	snprintf(value, sizeof(value), "af_unix:stream:%s", path);
	d = must_open(value);
	assert_int_equal(w(d, "A", "a1\n"), 0);
	assert_int_equal(w(d, "B", "b1\n"), 0);
	ca = accept(lfd, NULL, NULL);
	cb = accept(lfd, NULL, NULL);
	close(ca);
	capture_stderr();
	assert_int_equal(w(d, "A", "a2\n"), 0);
	assert_int_equal(w(d, "B", "b2\n"), 0);
	assert_int_equal(w(d, "A", "a3\n"), 0);
	assert_int_equal(w(d, "C", "c1\n"), 0);
	snprintf(want, sizeof(want), "test_dst: cannot write to '%s': Broken pipe\n", value);
	assert_string_equal(captured_stderr(), want);
	assert_int_equal(tr2_dst_dropped(d, &procs, NULL), 2);
	assert_int_equal(procs, 1);
	tr2_dst_end_process(d, "B", 0);
	assert_string_equal(read_conn(cb), "b1\nb2\n");

	/* the listener is gone: new processes cannot connect; counted */
	close(lfd);
	unlink(path);
	assert_int_equal(w(d, "D", "d1\n"), 0);
	assert_int_equal(tr2_dst_dropped(d, &procs, NULL), 3);
	assert_int_equal(procs, 2);
	tr2_dst_close(d);
}

/*
 * Datagrams: each line one datagram (a write of several lines too), from a
 * socket per process, as git sends them, closed at the process's end; a
 * receiver that has gone: the lines are dropped and counted.
 */
static void test_af_unix_dgram_per_process(void **state)
{
	const char *path = path_in(tmpdir, "dgrams.sock");
	char value[256], buf[64];
	int sfd = listen_unix(path, SOCK_DGRAM), before = open_fds();
	struct tr2_dst *d;
	uint64_t procs;

	snprintf(value, sizeof(value), "af_unix:dgram:%s", path);
	d = must_open(value);
	assert_int_equal(open_fds(), before);  /* the open's socket is not kept */
	assert_true(tr2_dst_per_process(d));
	assert_int_equal(w(d, "A", "a1\na2\n"), 0);
	assert_int_equal(w(d, "B", "b1\n"), 0);
	assert_int_equal(open_fds() - before, 2);
	assert_int_equal(recv(sfd, buf, sizeof(buf), 0), 3);
	assert_memory_equal(buf, "a1\n", 3);
	assert_int_equal(recv(sfd, buf, sizeof(buf), 0), 3);
	assert_memory_equal(buf, "a2\n", 3);
	assert_int_equal(recv(sfd, buf, sizeof(buf), 0), 3);
	assert_memory_equal(buf, "b1\n", 3);
	tr2_dst_end_process(d, "A", 0);
	assert_int_equal(open_fds() - before, 1);

	close(sfd);
	capture_stderr();
	assert_int_equal(w(d, "B", "b2\n"), 0);
	assert_int_equal(w(d, "C", "c1\n"), 0);
	assert_non_null(strstr(captured_stderr(), "test_dst: cannot "));
	assert_int_equal(tr2_dst_dropped(d, &procs, NULL), 2);
	assert_int_equal(procs, 2);
	tr2_dst_close(d);
	assert_int_equal(open_fds(), before - 1);
}

/* a failing destination is reported once, on one line, not per line */
static void test_write_failures_reported_once(void **state)
{
	const char *path = path_in(tmpdir, "peer.sock");
	void (*old)(int) = signal(SIGPIPE, SIG_DFL);
	char value[256];
	int lfd = listen_unix(path, SOCK_STREAM), cfd, p[2];
	struct tr2_dst *d;

	/* a socket whose peer has gone: EPIPE, and no SIGPIPE (MSG_NOSIGNAL);
	 * the process's lines are dropped and counted, the destination goes on */
	snprintf(value, sizeof(value), "af_unix:%s", path);
	d = must_open(value);
	cfd = accept(lfd, NULL, NULL);
	assert_int_equal(w(d, "s", "w\n"), 0);
	close(cfd);
	capture_stderr();
	assert_int_equal(w(d, "s", "x\n"), 0);
	assert_int_equal(w(d, "s", "y\n"), 0);
	assert_int_equal(w(d, "s", "z\n"), 0);
	snprintf(value, sizeof(value), "test_dst: cannot write to 'af_unix:%s': Broken pipe\n", path);
	assert_string_equal(captured_stderr(), value);
	assert_int_equal(tr2_dst_dropped(d, NULL, NULL), 3);
	assert_int_equal(tr2_dst_flush(d), 0);
	tr2_dst_close(d);
	close(lfd);

	/* a pipe without reader (the caller ignores SIGPIPE, as documented) */
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(dup2(p[1], 8), 8);
	close(p[1]);
	close(p[0]);
	d = must_open("8");
	capture_stderr();
	assert_int_equal(w(d, "s", "x\n"), -1);
	assert_int_equal(w(d, "s", "y\n"), -1);
	assert_string_equal(captured_stderr(), "test_dst: cannot write to '8': Broken pipe\n");
	tr2_dst_close(d);
	close(8);
	signal(SIGPIPE, old);
}

/* tr2_target_emit: format, write, reset; skipped kinds write nothing */
static void test_target_emit(void **state)
{
	const char *path = path_in(tmpdir, "emit.log");
	struct tr2_target t = { .tgt = &tr2_tgt_normal, .opts = { .brief = 1 } };
	struct tr2_ev ev = version_ev("S");
	size_t cap;

	t.dst = must_open(path);
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	cap = t.buf.cap;
	assert_int_equal(t.buf.len, 0);
	ev.kind = TR2_EV_REGION_ENTER;  /* NORMAL ignores regions */
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	ev.kind = TR2_EV__COUNT;        /* out of range: ignored */
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	ev.kind = TR2_EV_CMD_MODE;
	ev.mode = "m";
	for (int i = 0; i < 1000; i++)
		assert_int_equal(tr2_target_emit(&t, &ev), 0);
	assert_int_equal(t.buf.cap, cap);  /* the buffer is reused, not regrown */
	tr2_dst_close(t.dst);
	tr2_buf_free(&t.buf);
	{
		const char *s = slurp(path);

		assert_int_equal(strncmp(s, "version 2.39.5\ncmd_mode m\ncmd_mode m\n", 36), 0);
		assert_int_equal(strlen(s), 15 + 1000 * 11);
	}
}

/* atexit ends a process's connection; so does tr2_target_end_process (a
 * process gone without its last event); tr2_target_finish counts what a
 * socket destination dropped */
static void test_target_ends_connection(void **state)
{
	const char *path = path_in(tmpdir, "target.sock");
	struct tr2_target t = { .tgt = &tr2_tgt_normal, .opts = { .brief = 1 } };
	struct tr2_ev ev = version_ev("T1");
	char value[256], want[640];
	int lfd = listen_unix(path, SOCK_STREAM), c1, c2;

	snprintf(value, sizeof(value), "af_unix:%s", path);
	t.dst = must_open(value);
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	ev.kind = TR2_EV_ATEXIT;
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	c1 = accept(lfd, NULL, NULL);
	assert_string_equal(read_conn(c1), "version 2.39.5\natexit elapsed:0.000000 code:0\n");
	ev = version_ev("T2");
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	c2 = accept(lfd, NULL, NULL);
	assert_int_equal(tr2_target_end_process(&t, "T2", 0), 0);
	assert_string_equal(read_conn(c2), "version 2.39.5\n");
	assert_int_equal(tr2_target_end_process(&t, "T2", 0), 0);  /* again: nothing */

	close(lfd);
	unlink(path);
	ev = version_ev("T3");
	capture_stderr();
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	assert_int_equal(tr2_target_finish(&t), 0);
	snprintf(want, sizeof(want), "test_dst: cannot connect to socket '%s': No such file or directory\n"
		 "test_dst: '%s': 1 line of 1 process dropped\n", path, value);
	assert_string_equal(captured_stderr(), want);
	tr2_dst_close(t.dst);
}

/* atexit ends a process's file in a directory destination */
static void test_target_atexit_closes(void **state)
{
	char dir[256];
	struct tr2_target t = { .tgt = &tr2_tgt_normal, .opts = { .brief = 1 } };
	struct tr2_ev ev = version_ev("E1");

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, "ends");
	assert_int_equal(mkdir(dir, 0755), 0);
	t.dst = must_open(dir);
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	ev.kind = TR2_EV_ATEXIT;
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	ev.kind = TR2_EV_VERSION;  /* a reused sid after the end: a new file */
	assert_int_equal(tr2_target_emit(&t, &ev), 0);
	tr2_dst_close(t.dst);
	tr2_buf_free(&t.buf);
	assert_string_equal(slurp(path_in(dir, "E1")), "version 2.39.5\natexit elapsed:0.000000 code:0\n");
	assert_string_equal(slurp(path_in(dir, "E1.1")), "version 2.39.5\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_stdout_and_fd),
		cmocka_unit_test(test_path_append),
		cmocka_unit_test(test_dir_naming),
		cmocka_unit_test(test_dir_collisions_exhausted),
		cmocka_unit_test(test_dir_max_files),
		cmocka_unit_test(test_dir_many_processes),
		cmocka_unit_test(test_af_unix_stream),
		cmocka_unit_test(test_af_unix_dgram),
		cmocka_unit_test(test_af_unix_per_process),
		cmocka_unit_test(test_af_unix_bound),
		cmocka_unit_test(test_af_unix_peer_gone),
		cmocka_unit_test(test_af_unix_dgram_per_process),
		cmocka_unit_test(test_write_failures_reported_once),
		cmocka_unit_test(test_dir_streams),
		cmocka_unit_test(test_dir_unnamable_sids),
		cmocka_unit_test(test_file_modes),
		cmocka_unit_test(test_target_emit),
		cmocka_unit_test(test_target_atexit_closes),
		cmocka_unit_test(test_target_ends_connection),
	};

	return cmocka_run_group_tests_name("destinations", tests, setup, teardown);
}
