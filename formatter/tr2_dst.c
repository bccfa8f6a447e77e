/* tr2_dst.c: destinations (see tr2_dst.h; the rules follow git's
 * trace2/tr2_dst.c, except that one destination here serves every traced
 * process, so a directory destination keeps one file per sid and a socket
 * destination one connection per sid). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "tr2_buf.h"
#include "tr2_dst.h"
#include "tr2_mem.h"

#define DISCARD_SENTINEL_NAME "git-trace2-discard"  /* git's DISCARD_SENTINEL_NAME */
#define MAX_AUTO_ATTEMPTS 10                          /* git's MAX_AUTO_ATTEMPTS */
#define MAX_OPEN_FILES 128                            /* directory mode, see tr2_dst_end_process */
#define PREFIX_AF_UNIX "af_unix:"

enum dst_kind { DST_FD, DST_FILE, DST_DIR, DST_SOCKET };

/* What a directory or socket destination does with one process's lines. */
enum proc_state {
	PROC_FILE,      /* its own file, path */
	PROC_SENTINEL,  /* the git-trace2-discard file it created, path */
	PROC_DISCARD,   /* dropped: too many files */
	PROC_FAILED,    /* dropped and counted: its file could not be opened or written */
	PROC_CONN,      /* socket: its own connection, fd */
	PROC_DROPPED,   /* socket: dropped and counted: no connection, or it failed */
};

/* One process of a directory destination (its file) or a socket one (its connection). */
struct proc_file {
	char *sid;          /* the key, with stream (tr2_dst_write) */
	uint64_t stream;
	char *path;         /* file written, for PROC_FILE and PROC_SENTINEL */
	int fd;             /* -1 while closed */
	enum proc_state state;
	uint64_t last_use;  /* for closing the least recently used file */
};

struct tr2_dst {
	enum dst_kind kind;
	char *name;         /* for messages: the value, or "standard output" */
	int fd;             /* DST_FD, DST_FILE */
	bool own_fd;        /* close fd in tr2_dst_close */
	bool use_send;      /* a socket: send(MSG_NOSIGNAL) */
	bool reported;      /* a failure was written to stderr */
	bool quiet;         /* failures are not written to stderr (tr2_dst_set_quiet) */
	bool failed;        /* DST_FD, DST_FILE: a write failed: later lines are dropped */
	bool counting;      /* a failure is counted, not returned (tr2_dst_set_counting) */
	mode_t file_mode;   /* of the files it creates (tr2_dst_open) */
	gid_t group;        /* their group; -1: the creator's */

	/* DST_FD, DST_FILE with buffering on: whole lines waiting for
	 * tr2_dst_flush() (one write(2) per batch instead of per line) */
	bool buffered;
	struct tr2_buf out;

	/* DST_DIR */
	char *dir;          /* with a trailing '/' */
	int max_files;
	bool too_many_files;       /* see tr2_dst_take_too_many_files */

	/* DST_DIR and DST_SOCKET: the processes, by sid and stream */
	struct proc_file **slots;  /* open addressing, linear probing, power of 2 */
	size_t nslots, nprocs, nopen;  /* nopen: files or connections open */
	uint64_t tick;
	struct proc_file *last;    /* the process of the previous line */

	/* DST_SOCKET */
	struct sockaddr_un sa;
	int sock_type;             /* SOCK_STREAM or SOCK_DGRAM, as found by tr2_dst_open */
	int spare;                 /* stream: the connection tr2_dst_open made, for the first process; -1 */
	uint64_t dropped, dropped_procs, refused;  /* see tr2_dst_dropped */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static struct tr2_dst *new_dst(enum dst_kind kind, const char *name, int fd, bool own_fd)
{
	struct tr2_dst *d = calloc(1, sizeof(*d));
	struct stat st;

	if (!d)
		abort();
	d->kind = kind;
	d->name = xstrdup(name);
	d->fd = fd;
	d->own_fd = own_fd;
	d->use_send = kind == DST_SOCKET || (fd >= 0 && !fstat(fd, &st) && S_ISSOCK(st.st_mode));
	d->spare = -1;
	d->group = (gid_t)-1;
	return d;
}

/* Reports the destination's first failure on stderr, "<program>: cannot
 * <verb> '<what>': <why>"; the rest are counted by the callers. */
static void report_why(struct tr2_dst *d, const char *verb, const char *what, const char *why)
{
	if (d->reported || d->quiet)
		return;
	d->reported = true;
	fprintf(stderr, "%s: cannot %s '%s': %s\n", program_invocation_short_name, verb, what, why);
}

static void report(struct tr2_dst *d, const char *verb, const char *what, int errnum)
{
	report_why(d, verb, what, strerror(errnum));
}

/* ---- opening ---- */

/* A socket of type connected to sa, close-on-exec; -1 and *err (errno) when
 * either step fails. */
static int dial(const struct sockaddr_un *sa, int type, int *err)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		*err = errno;
		close(fd);
		return -1;
	}
	return fd;
}

static struct tr2_dst *open_socket(const char *value, char *err, size_t errlen)
{
	const char *path = value + strlen(PREFIX_AF_UNIX);
	bool try_stream = true, try_dgram = true;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, e = 0;

	if (!strncmp(path, "stream:", 7)) {
		path += 7;
		try_dgram = false;
	} else if (!strncmp(path, "dgram:", 6)) {
		path += 6;
		try_stream = false;
	}
	if (path[0] != '/') {
		set_err(err, errlen, "invalid socket path in '%s': want an absolute path", value);
		return NULL;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		set_err(err, errlen, "invalid socket path in '%s': longer than %zu bytes",
			value, sizeof(sa.sun_path) - 1);
		return NULL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);

	/* A connection now, so that a bad DEST fails at startup; later ones
	 * are made per process (connect_proc). */
	for (int i = 0; i < 2; i++) {
		int type = i == 0 ? SOCK_STREAM : SOCK_DGRAM;
		struct tr2_dst *d;

		if (!(i == 0 ? try_stream : try_dgram))
			continue;
		fd = dial(&sa, type, &e);
		if (fd >= 0) {
			d = new_dst(DST_SOCKET, value, -1, false);
			d->sa = sa;
			d->sock_type = type;
			/* a stream connection is the first process's; a datagram
			 * socket's connect sent nothing and holds nothing */
			if (type == SOCK_STREAM)
				d->spare = fd;
			else
				close(fd);
			return d;
		}
		/* git tries the other type only when this one is the wrong one */
		if (e != EPROTOTYPE)
			break;
	}
	set_err(err, errlen, "cannot connect to socket '%s': %s", path, strerror(e));
	return NULL;
}

/* Sets d's file_mode and group for files made in directory dir
 * (tr2_dst_open's file_mode). */
static void set_file_mode(struct tr2_dst *d, int file_mode, const char *dir)
{
	struct stat st;

	d->file_mode = (mode_t)file_mode;
	if (file_mode != TR2_DST_MODE_PRIVATE)
		return;
	d->file_mode = 0600;
	if (!stat(dir, &st) && st.st_gid != getegid()) {
		d->file_mode = 0640;
		d->group = st.st_gid;
	}
}

/* Opens path to append to, created with d's mode and group if it is not
 * there; flags: O_EXCL (never an existing file, nor a symbolic link),
 * O_NOFOLLOW, or 0.  A descriptor, or -1 with errno set. */
static int create_file(const struct tr2_dst *d, const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | flags, d->file_mode);

	if (fd >= 0 && d->group != (gid_t)-1 && fchown(fd, (uid_t)-1, d->group)) {
		int e = errno;

		close(fd);
		unlink(path);
		errno = e;
		return -1;
	}
	return fd;
}

static struct tr2_dst *open_path(const char *value, int file_mode, char *err, size_t errlen)
{
	struct tr2_dst *d;
	struct stat st;
	char *parent;
	int fd;

	if (!stat(value, &st) && S_ISDIR(st.st_mode)) {
		size_t n = strlen(value);

		if (access(value, W_OK | X_OK)) {
			set_err(err, errlen, "cannot write to directory '%s': %s", value, strerror(errno));
			return NULL;
		}
		d = new_dst(DST_DIR, value, -1, false);
		d->dir = malloc(n + 2);
		if (!d->dir)
			abort();
		memcpy(d->dir, value, n + 1);
		if (value[n - 1] != '/')
			memcpy(d->dir + n, "/", 2);
		set_file_mode(d, file_mode, value);
		return d;
	}
	d = new_dst(DST_FILE, value, -1, true);
	parent = xstrdup(value);
	*strrchr(parent, '/') = '\0';
	set_file_mode(d, file_mode, *parent ? parent : "/");
	free(parent);
	/* created with its mode (and group: never an existing file's), or
	 * else an existing file as it is */
	fd = create_file(d, value, d->group == (gid_t)-1 ? 0 : O_EXCL);
	if (fd < 0 && errno == EEXIST)
		fd = open(value, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		set_err(err, errlen, "cannot open '%s': %s", value, strerror(errno));
		tr2_dst_close(d);
		return NULL;
	}
	d->fd = fd;
	d->use_send = !fstat(fd, &st) && S_ISSOCK(st.st_mode);
	return d;
}

int tr2_dst_create_file(const char *path, int file_mode, int flags)
{
	struct tr2_dst d = { .group = (gid_t)-1 };
	char *parent = xstrdup(path), *slash = strrchr(parent, '/');
	int fd;

	if (slash)
		*slash = '\0';
	set_file_mode(&d, file_mode, !slash ? "." : *parent ? parent : "/");
	free(parent);
	/* as open_path: a group is given to a file made here, never to an
	 * existing one */
	fd = create_file(&d, path, flags | (d.group == (gid_t)-1 ? 0 : O_EXCL));
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | flags);
	return fd;
}

struct tr2_dst *tr2_dst_open(const char *value, int file_mode, char *err, size_t errlen)
{
	if (!value) {
		if (fcntl(STDOUT_FILENO, F_GETFD) < 0) {
			set_err(err, errlen, "standard output is not open");
			return NULL;
		}
		return new_dst(DST_FD, "standard output", STDOUT_FILENO, false);
	}
	if (value[0] >= '2' && value[0] <= '9' && !value[1]) {
		int fd = value[0] - '0';

		if (fcntl(fd, F_GETFD) < 0) {
			set_err(err, errlen, "file descriptor %d is not open", fd);
			return NULL;
		}
		return new_dst(DST_FD, value, fd, false);
	}
	if (!strncmp(value, PREFIX_AF_UNIX, strlen(PREFIX_AF_UNIX)))
		return open_socket(value, err, errlen);
	if (value[0] == '/')
		return open_path(value, file_mode, err, errlen);
	set_err(err, errlen,
		"invalid destination '%s': want a file descriptor 2-9, an absolute path, "
		"or af_unix:[stream:|dgram:]/absolute/path", value);
	return NULL;
}

void tr2_dst_set_quiet(struct tr2_dst *d, bool quiet)
{
	d->quiet = quiet;
}

void tr2_dst_set_max_files(struct tr2_dst *d, int max_files)
{
	if (d)
		d->max_files = max_files > 0 ? max_files : 0;
}

bool tr2_dst_take_too_many_files(struct tr2_dst *d)
{
	bool r = d && d->too_many_files;

	if (r)
		d->too_many_files = false;
	return r;
}

/* ---- directory and socket destinations: one file or connection per sid ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;  /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* The slot of process (sid, stream) in the table. */
static size_t home_of(const struct tr2_dst *d, const char *sid, uint64_t stream)
{
	return (size_t)(hash_str(sid) ^ stream * 0x9e3779b97f4a7c15ull) & (d->nslots - 1);
}

/* The slot holding process (sid, stream), or the empty slot where it would go. */
static size_t find_slot(const struct tr2_dst *d, const char *sid, uint64_t stream)
{
	size_t mask = d->nslots - 1, i = home_of(d, sid, stream);

	while (d->slots[i] && (d->slots[i]->stream != stream || strcmp(d->slots[i]->sid, sid)))
		i = (i + 1) & mask;
	return i;
}

static void grow_table(struct tr2_dst *d)
{
	struct proc_file **old = d->slots;
	size_t nold = d->nslots;

	d->nslots = nold ? nold * 2 : 64;
	d->slots = calloc(d->nslots, sizeof(*d->slots));
	if (!d->slots)
		abort();
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			d->slots[find_slot(d, old[i]->sid, old[i]->stream)] = old[i];
	free(old);
}

/* Removes the entry at slot i, shifting later entries of its cluster back
 * (deletion without tombstones for linear probing). */
static void remove_slot(struct tr2_dst *d, size_t i)
{
	size_t mask = d->nslots - 1, j = i;

	d->slots[i] = NULL;
	d->nprocs--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!d->slots[j])
			return;
		home = home_of(d, d->slots[j]->sid, d->slots[j]->stream);
		/* move slots[j] into the hole at i unless its home lies in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			d->slots[i] = d->slots[j];
			d->slots[j] = NULL;
			i = j;
		}
	}
}

static void close_proc_fd(struct tr2_dst *d, struct proc_file *pf)
{
	if (pf->fd >= 0) {
		close(pf->fd);
		pf->fd = -1;
		d->nopen--;
	}
}

static void free_proc(struct tr2_dst *d, struct proc_file *pf)
{
	close_proc_fd(d, pf);
	free(pf->sid);
	free(pf->path);
	free(pf);
}

/* Keeps the number of open files below MAX_OPEN_FILES. */
static void make_room_for_fd(struct tr2_dst *d)
{
	struct proc_file *lru = NULL;

	if (d->nopen < MAX_OPEN_FILES)
		return;
	for (size_t i = 0; i < d->nslots; i++) {
		struct proc_file *pf = d->slots[i];

		if (pf && pf->fd >= 0 && (!lru || pf->last_use < lru->last_use))
			lru = pf;
	}
	if (lru)
		close_proc_fd(d, lru);
}

static char *join(const char *a, const char *b, const char *c)
{
	size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
	char *p = malloc(na + nb + nc + 1);

	if (!p)
		abort();
	memcpy(p, a, na);
	memcpy(p + na, b, nb);
	memcpy(p + na + nb, c, nc + 1);
	return p;
}

/*
 * git's tr2_dst_too_many_files(): 0 to go on, 1 when the sentinel exists
 * (discard), -1 when there are too many files and pf now writes the sentinel
 * (or, if creating it failed, is discarded).
 */
static int check_too_many_files(struct tr2_dst *d, struct proc_file *pf)
{
	char *sentinel;
	struct stat st;
	DIR *dirp;
	int count = 0;

	if (!d->max_files)
		return 0;
	sentinel = join(d->dir, DISCARD_SENTINEL_NAME, "");
	if (!stat(sentinel, &st)) {
		free(sentinel);
		pf->state = PROC_DISCARD;
		return 1;
	}
	dirp = opendir(d->dir);
	while (count < d->max_files && dirp && readdir(dirp))
		count++;
	if (dirp)
		closedir(dirp);
	if (count < d->max_files) {
		free(sentinel);
		return 0;
	}
	make_room_for_fd(d);
	pf->fd = create_file(d, sentinel, O_EXCL);
	if (pf->fd < 0) {
		free(sentinel);
		pf->state = PROC_DISCARD;  /* another writer created it first */
		return -1;
	}
	d->nopen++;
	pf->path = sentinel;
	pf->state = PROC_SENTINEL;
	d->too_many_files = true;
	return -1;
}

/* The longest name made from a sid, bytes: room for git's ".N" suffixes. */
#define NAME_MAX_SID 200

/* The file name of a process with session id sid (tr2_dst_open): its last
 * component, or where that cannot name a file, "sid-" and a hash of sid;
 * into name (NAME_MAX_SID + 1 bytes). */
static void file_name(const char *sid, char *name)
{
	const char *last = strrchr(sid, '/');
	size_t n;
	bool fits;

	last = last ? last + 1 : sid;
	n = strlen(last);
	fits = n && n <= NAME_MAX_SID && last[0] != '.' && strcmp(last, DISCARD_SENTINEL_NAME);
	for (size_t i = 0; fits && i < n; i++)
		fits = last[i] > ' ' && last[i] < 0x7f;
	if (fits)
		memcpy(name, last, n + 1);
	else
		snprintf(name, NAME_MAX_SID + 1, "sid-%016llx", (unsigned long long)hash_str(sid));
}

/* git's tr2_dst_try_auto_path(): "<dir>/<name>[.N]", O_EXCL. */
static void open_proc_file(struct tr2_dst *d, struct proc_file *pf)
{
	char name[NAME_MAX_SID + 1], *base;
	int e = 0;

	file_name(pf->sid, name);
	if (check_too_many_files(d, pf))
		return;
	base = join(d->dir, name, "");
	make_room_for_fd(d);
	for (int attempt = 0; attempt < MAX_AUTO_ATTEMPTS; attempt++) {
		char suffix[16] = "";
		char *path;

		if (attempt)
			snprintf(suffix, sizeof(suffix), ".%d", attempt);
		path = join(base, suffix, "");
		pf->fd = create_file(d, path, O_EXCL);
		if (pf->fd >= 0) {
			d->nopen++;
			pf->path = path;
			pf->state = PROC_FILE;
			free(base);
			return;
		}
		e = errno;
		free(path);
		if (e != EEXIST)
			break;
	}
	report(d, "open", base, e);
	free(base);
	pf->state = PROC_FAILED;
	d->dropped_procs++;
}

/* A process lost its connection, or never had one: its lines are dropped. */
static void drop_proc(struct tr2_dst *d, struct proc_file *pf)
{
	close_proc_fd(d, pf);
	pf->state = PROC_DROPPED;
	d->dropped_procs++;
}

/* The spare connection, unless its peer has hung up since tr2_dst_open
 * (the collector went away or was restarted); -1 when there is none. */
static int take_spare(struct tr2_dst *d)
{
	struct pollfd p = { .fd = d->spare };
	int fd = d->spare;

	if (fd < 0)
		return -1;
	d->spare = -1;
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A new process of a socket destination: its own connection, as each git
 * process opens its own, or its lines dropped (refused, or no listener). */
static void connect_proc(struct tr2_dst *d, struct proc_file *pf)
{
	int fd, e = 0;

	if (d->nopen >= TR2_DST_MAX_CONNECTIONS) {
		char why[64];

		snprintf(why, sizeof(why), "%d connections open, one per process", TR2_DST_MAX_CONNECTIONS);
		report_why(d, "connect to socket", d->sa.sun_path, why);
		d->refused++;
		drop_proc(d, pf);
		return;
	}
	fd = take_spare(d);
	if (fd < 0)
		fd = dial(&d->sa, d->sock_type, &e);
	if (fd < 0) {
		report(d, "connect to socket", d->sa.sun_path, e);
		drop_proc(d, pf);
		return;
	}
	pf->fd = fd;
	pf->state = PROC_CONN;
	d->nopen++;
}

static struct proc_file *lookup_proc(struct tr2_dst *d, const char *sid, uint64_t stream)
{
	struct proc_file *pf;
	size_t i;

	if (!sid || !*sid)
		sid = "no-sid";
	if (d->last && d->last->stream == stream && !strcmp(d->last->sid, sid))
		return d->last;
	if (2 * (d->nprocs + 1) > d->nslots)
		grow_table(d);
	i = find_slot(d, sid, stream);
	pf = d->slots[i];
	if (!pf) {
		pf = calloc(1, sizeof(*pf));
		if (!pf)
			abort();
		pf->sid = xstrdup(sid);
		pf->stream = stream;
		pf->fd = -1;
		d->slots[i] = pf;
		d->nprocs++;
		if (d->kind == DST_DIR)
			open_proc_file(d, pf);
		else
			connect_proc(d, pf);
	}
	d->last = pf;
	return pf;
}

/* The descriptor to write pf's line to, reopening a file closed for room;
 * -1 when the line is to be dropped. */
static int proc_fd(struct tr2_dst *d, struct proc_file *pf)
{
	if (pf->state == PROC_DISCARD || pf->state == PROC_FAILED)
		return -1;
	pf->last_use = ++d->tick;
	if (pf->fd < 0) {
		make_room_for_fd(d);
		pf->fd = create_file(d, pf->path, O_NOFOLLOW);
		if (pf->fd < 0) {
			report(d, "open", pf->path, errno);
			pf->state = PROC_FAILED;
			d->dropped_procs++;
			return -1;
		}
		d->nopen++;
	}
	return pf->fd;
}

void tr2_dst_end_process(struct tr2_dst *d, const char *sid, uint64_t stream)
{
	size_t i;

	if (!d || (d->kind != DST_DIR && d->kind != DST_SOCKET) || !d->nslots)
		return;
	if (!sid || !*sid)
		sid = "no-sid";
	i = find_slot(d, sid, stream);
	if (!d->slots[i])
		return;
	if (d->last == d->slots[i])
		d->last = NULL;
	free_proc(d, d->slots[i]);
	remove_slot(d, i);
}

/* ---- writing ---- */

/* Writes all of line[0..len) to fd, with send(MSG_NOSIGNAL) when use_send;
 * returns 0 or an errno, with the bytes written before it in *done. */
static int put_all(int fd, bool use_send, const char *line, size_t len, size_t *done)
{
	*done = 0;
	while (len) {
		ssize_t n = use_send ? send(fd, line, len, MSG_NOSIGNAL) : write(fd, line, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		line += n;
		len -= (size_t)n;
		*done += (size_t)n;
	}
	return 0;
}

/* Sends each line of line[0..len) as one datagram; returns 0 or an errno. */
static int put_datagrams(int fd, const char *line, size_t len)
{
	while (len) {
		const char *nl = memchr(line, '\n', len);
		size_t n = nl ? (size_t)(nl - line) + 1 : len;

		if (send(fd, line, n, MSG_NOSIGNAL) < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		line += n;
		len -= n;
	}
	return 0;
}

/* The lines in text[0..len): its newlines (a line cut short counts too). */
static uint64_t count_lines(const char *text, size_t len)
{
	uint64_t n = 0;
	const char *p = text, *end = text + len;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		n++;
		p++;
	}
	return n + (len && text[len - 1] != '\n');
}

/* The result of a write to a destination that has failed as a whole: -1,
 * or 0 where the caller has asked to learn of it from tr2_dst_failed(). */
static int failure(const struct tr2_dst *d)
{
	return d->counting ? 0 : -1;
}

/* Writes all of line[0..len) to the file or descriptor; when that fails,
 * reports it once, and the lines not written whole and every later line
 * are dropped and counted. */
static int write_all(struct tr2_dst *d, const char *line, size_t len)
{
	size_t done = 0;
	int e = d->failed ? 0 : put_all(d->fd, d->use_send, line, len, &done);

	if (d->failed || e) {
		if (e)
			report(d, "write to", d->name, e);
		d->failed = true;
		/* a line cut short counts as dropped */
		while (done && line[done - 1] != '\n')
			done--;
		d->dropped += count_lines(line + done, len - done);
		return failure(d);
	}
	return 0;
}

/* A line of process pf into its connection; when that fails, the process's
 * lines are dropped from then on, and counted; never fails as a whole. */
static int write_socket(struct tr2_dst *d, struct proc_file *pf, const char *line, size_t len)
{
	size_t done;

	if (pf->state == PROC_CONN) {
		int e = d->sock_type == SOCK_DGRAM ? put_datagrams(pf->fd, line, len) :
			put_all(pf->fd, true, line, len, &done);

		if (!e)
			return 0;
		report(d, "write to", d->name, e);
		drop_proc(d, pf);
	}
	d->dropped += count_lines(line, len);
	return 0;
}

void tr2_dst_set_buffered(struct tr2_dst *d, bool on)
{
	if (d->kind == DST_FD || d->kind == DST_FILE)
		d->buffered = on;
}

int tr2_dst_flush(struct tr2_dst *d)
{
	int r = 0;

	if (d->out.len)
		r = write_all(d, d->out.p, d->out.len);
	d->out.len = 0;
	return d->failed ? failure(d) : r;
}

/* Lines wait in the buffer up to this size. */
#define FLUSH_BYTES (64 * 1024)

struct tr2_buf *tr2_dst_buffer(struct tr2_dst *d)
{
	return d->buffered && !d->failed ? &d->out : NULL;
}

int tr2_dst_commit(struct tr2_dst *d)
{
	return d->out.len >= FLUSH_BYTES ? tr2_dst_flush(d) : 0;
}

/* A line of process pf into its own file.  A process whose file cannot be
 * opened or written has its lines dropped from then on, counted, and
 * failed (-1) for that process alone: the other processes' files go on. */
static int write_proc_file(struct tr2_dst *d, struct proc_file *pf, const char *line, size_t len)
{
	int fd = proc_fd(d, pf), e;
	size_t done;

	if (fd < 0) {
		if (pf->state != PROC_FAILED)
			return 0;   /* discarded (too many files), as git */
		d->dropped += count_lines(line, len);
		return -1;
	}
	e = put_all(fd, false, line, len, &done);
	if (!e)
		return 0;
	report(d, "write to", pf->path, e);
	close_proc_fd(d, pf);
	pf->state = PROC_FAILED;
	d->dropped_procs++;
	d->dropped += count_lines(line, len);
	return -1;
}

int tr2_dst_write(struct tr2_dst *d, const char *sid, uint64_t stream, const char *line, size_t len)
{
	if (d->buffered && !d->failed) {
		tr2_buf_put(&d->out, line, len);
		return tr2_dst_commit(d);
	}

	if (d->kind == DST_SOCKET)
		return write_socket(d, lookup_proc(d, sid, stream), line, len);
	if (d->kind == DST_DIR)
		return write_proc_file(d, lookup_proc(d, sid, stream), line, len);
	return write_all(d, line, len);
}

void tr2_dst_close(struct tr2_dst *d)
{
	if (!d)
		return;
	tr2_dst_flush(d);
	tr2_buf_free(&d->out);
	if (d->own_fd && d->fd >= 0)
		close(d->fd);
	if (d->spare >= 0)
		close(d->spare);
	for (size_t i = 0; i < d->nslots; i++)
		if (d->slots[i])
			free_proc(d, d->slots[i]);
	free(d->slots);
	free(d->dir);
	free(d->name);
	free(d);
}

bool tr2_dst_per_process(const struct tr2_dst *d)
{
	return d && (d->kind == DST_DIR || d->kind == DST_SOCKET);
}

void tr2_dst_set_counting(struct tr2_dst *d, bool on)
{
	d->counting = on;
}

bool tr2_dst_failed(const struct tr2_dst *d)
{
	return d->failed;
}

int tr2_dst_truncate(struct tr2_dst *d)
{
	struct stat st;

	if (d->kind != DST_FILE || fstat(d->fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	return ftruncate(d->fd, 0);
}

const char *tr2_dst_name(const struct tr2_dst *d)
{
	return d->name;
}

uint64_t tr2_dst_dropped(const struct tr2_dst *d, uint64_t *procs, uint64_t *refused)
{
	if (procs)
		*procs = d ? d->dropped_procs : 0;
	if (refused)
		*refused = d ? d->refused : 0;
	return d ? d->dropped : 0;
}

void tr2_dst_report_dropped(const struct tr2_dst *d)
{
	char refused[64] = "";

	if (!d || !d->dropped)
		return;
	if (!tr2_dst_per_process(d)) {
		fprintf(stderr, "%s: '%s': %llu line%s dropped\n", program_invocation_short_name, d->name,
			(unsigned long long)d->dropped, d->dropped == 1 ? "" : "s");
		return;
	}
	if (d->refused)
		snprintf(refused, sizeof(refused), " (%llu refused: %d connections open)",
			 (unsigned long long)d->refused, TR2_DST_MAX_CONNECTIONS);
	fprintf(stderr, "%s: '%s': %llu line%s of %llu process%s dropped%s\n", program_invocation_short_name,
		d->name, (unsigned long long)d->dropped, d->dropped == 1 ? "" : "s",
		(unsigned long long)d->dropped_procs, d->dropped_procs == 1 ? "" : "es", refused);
}
