/* tr2_recording.c: see tr2_recording.h.  Records are copied into one
 * buffer and written with one write(2) when it is full or at a flush: at
 * full speed a batch of 16 KiB costs a copy, the calls' own bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tr2_dst.h"
#include "tr2_mem.h"
#include "tr2_recording.h"

#define BUF_BYTES (1u << 20)

struct tr2_recording {
	int fd;
	char *path;
	uint64_t max_bytes;     /* 0: no limit */
	uint64_t bytes;         /* in the file, buffered ones included */
	unsigned char *buf;
	size_t used;
	int full;               /* stopped at the limit */
	int err;                /* stopped by a write error (errno) */
	char why[512];
};

/* Writes the buffer out; on an error the recording stops. */
static int write_out(struct tr2_recording *r)
{
	size_t done = 0;

	while (done < r->used && !r->err) {
		ssize_t n = write(r->fd, r->buf + done, r->used - done);

		if (n > 0)
			done += (size_t)n;
		else if (n < 0 && errno != EINTR)
			r->err = errno;
		else if (n == 0)
			r->err = EIO;
	}
	r->used = 0;
	if (r->err && !r->why[0])
		snprintf(r->why, sizeof(r->why), "failed to write the recording '%s': %s", r->path, strerror(r->err));
	return r->err ? -1 : 0;
}

/* Appends one record whatever the limit. */
static int append(struct tr2_recording *r, int kind, const void *data, size_t size)
{
	struct tr2_file_rec h = { .size = (uint32_t)size, .kind = (uint16_t)kind };
	size_t total = (sizeof(h) + size + 7) & ~(size_t)7;

	if (r->err)
		return -1;
	if (r->used + total > BUF_BYTES && write_out(r))
		return -1;
	memcpy(r->buf + r->used, &h, sizeof(h));
	memcpy(r->buf + r->used + sizeof(h), data, size);
	memset(r->buf + r->used + sizeof(h) + size, 0, total - sizeof(h) - size);
	r->used += total;
	r->bytes += total;
	return 0;
}

int tr2_recording_put(struct tr2_recording *r, int kind, const void *data, size_t size)
{
	size_t total = (sizeof(struct tr2_file_rec) + size + 7) & ~(size_t)7;

	if (r->full || r->err)
		return -1;
	if (r->max_bytes && r->bytes + total > r->max_bytes) {
		r->full = 1;
		snprintf(r->why, sizeof(r->why), "the recording '%s' reached --record-size=%llu bytes", r->path,
			 (unsigned long long)r->max_bytes);
		return -1;
	}
	return append(r, kind, data, size);
}

struct tr2_recording *tr2_recording_open(const char *path, int file_mode, uint64_t max_bytes,
					 const struct tr2_file_start *start, char *const *cats, char *err,
					 size_t errlen)
{
	struct tr2_recording *r = xcalloc(1, sizeof(*r));
	unsigned char rec[sizeof(*start) + TR2_FILE_CATS_MAX * TR2_FILE_CAT_LEN];
	size_t len = sizeof(*start);

	r->fd = tr2_dst_create_file(path, file_mode, O_TRUNC);
	if (r->fd < 0) {
		snprintf(err, errlen, "cannot open the recording '%s': %s", path, strerror(errno));
		free(r);
		return NULL;
	}
	r->path = xstrdup(path);
	r->max_bytes = max_bytes;
	r->buf = xcalloc(1, BUF_BYTES);
	memcpy(rec, start, sizeof(*start));
	for (uint32_t i = 0; i < start->ncats && i < TR2_FILE_CATS_MAX; i++) {
		size_t n = strnlen(cats[i], TR2_FILE_CAT_LEN - 1);

		memcpy(rec + len, cats[i], n);
		rec[len + n] = '\0';
		len += n + 1;
	}
	memcpy(r->buf, TR2_REC_FILE_MAGIC, TR2_REC_FILE_MAGIC_LEN);
	r->used = r->bytes = TR2_REC_FILE_MAGIC_LEN;
	if (append(r, TR2_FILE_START, rec, len) || write_out(r)) {
		snprintf(err, errlen, "%s", r->why);
		tr2_recording_close(r, NULL, NULL, 0);
		return NULL;
	}
	return r;
}

int tr2_recording_flush(struct tr2_recording *r)
{
	return r->used ? write_out(r) : r->err ? -1 : 0;
}

const char *tr2_recording_stopped(const struct tr2_recording *r, int *full)
{
	*full = r->full && !r->err;
	return r->full || r->err ? r->why : NULL;
}

int tr2_recording_close(struct tr2_recording *r, const struct tr2_file_end *end, char *err, size_t errlen)
{
	int rc = 0;

	if (!r)
		return 0;
	if (end)
		append(r, TR2_FILE_END, end, sizeof(*end));
	write_out(r);
	if (close(r->fd) && !r->err) {
		r->err = errno;
		snprintf(r->why, sizeof(r->why), "failed to write the recording '%s': %s", r->path, strerror(r->err));
	}
	if (r->err || r->full) {
		if (err)
			snprintf(err, errlen, "%s", r->why);
		rc = -1;
	}
	free(r->buf);
	free(r->path);
	free(r);
	return rc;
}
