/*
 * tr2_sid.h: git's session id (trace2/tr2_sid.c), made the same way by
 * tr2-bpf for the processes it traces (loader/tr2_session.c) and by the
 * runtime's in-process targets (usdt/tr2_inproc.c).
 */
#ifndef TR2_SID_H
#define TR2_SID_H

#include <stddef.h>
#include <stdint.h>

/* SHA-1 (FIPS 180-4) of the len bytes at data, into out (20 bytes).  Only
 * for the sid's hostname hash, so that neither the runtime nor tr2-bpf
 * needs a crypto library. */
void tr2_sha1(const void *data, size_t len, unsigned char out[20]);

/* Writes "H" and the first 8 lowercase hex digits of SHA-1(host) into buf
 * (at least 16 bytes; cut and NUL-terminated to size); "Localhost" when host
 * is NULL (no hostname could be read).  An empty name is hashed, as git
 * hashes what gethostname() gave. */
void tr2_sid_host_hash(const char *host, char *buf, size_t size);

/* The same for this machine's gethostname(), NULL when that fails, as git's
 * tr2_sid.c does. */
void tr2_sid_host(char *buf, size_t size);

/*
 * Writes a session id into buf (size bytes, NUL-terminated; returns the
 * length it needs, as snprintf): "<parent>/" when parent is neither NULL nor
 * empty, then this process's component
 *   "<yyyymmdd>T<hhmmss>.<uuuuuu>Z-<host>-P<pid as 8 lowercase hex digits>"
 * with the UTC time real_us (µs since the Unix epoch) and host as
 * tr2_sid_host() writes it.
 */
size_t tr2_sid_format(char *buf, size_t size, const char *parent, int64_t real_us,
		      const char *host, uint32_t pid);

#endif
