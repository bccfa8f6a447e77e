/* tr2_dst.h: where a target's lines go, separate from what they look like
 * (git's trace2/tr2_dst.c).  Values are those of seeds/000 "Enabling a Target":
 *   NULL          standard output
 *   "2".."9"      an open file descriptor
 *   "/abs/path"   a file, opened O_APPEND; each line is one write(2), so
 *                 concurrent writers never interleave inside a line
 *   "/abs/dir/"   an existing directory: one file per traced process, named
 *                 after the last component of its sid (".1", ".2" on collision),
 *                 at most max_files files, else git's "git-trace2-discard" sentinel
 *   "af_unix:[stream:|dgram:]/abs/path"  a Unix-domain socket
 */
#ifndef TR2_DST_H
#define TR2_DST_H

#include <stddef.h>

struct tr2_dst;

/*
 * Opens a destination.  On error returns NULL and writes a one-line reason
 * ("cannot open '/x/y': Permission denied") into err.
 */
struct tr2_dst *tr2_dst_open(const char *value, char *err, size_t errlen);

/*
 * Writes one whole line (ending in '\n') for the process with session id sid.
 * Returns 0, or -1 on failure; the first failure is reported on stderr once
 * ("tr2: cannot write to '<value>': <strerror>"), later ones silently count.
 */
int tr2_dst_write(struct tr2_dst *d, const char *sid, const char *line, size_t len);

/* Closes and frees; NULL is allowed. */
void tr2_dst_close(struct tr2_dst *d);

#endif
