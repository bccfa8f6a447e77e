/*
 * tr2_sid.c: git's session id (trace2/tr2_sid.c), for the in-process
 * targets: "<parent sid>/<own>", own being "<UTC time>Z-H<hash>-P<pid>",
 * the same values tr2-bpf computes from outside (loader/tr2_session.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tr2_inproc.h"

void tr2_sid_host_hash(const char *host, char *buf, size_t size)
{
	unsigned char md[20];

	if (!host || !*host) {
		snprintf(buf, size, "Localhost");
		return;
	}
	tr2_sha1(host, strlen(host), md);
	snprintf(buf, size, "H%02x%02x%02x%02x", md[0], md[1], md[2], md[3]);
}

void tr2_sid_host(char *buf, size_t size)
{
	char host[256];

	/* gethostname may leave the name unterminated when it is cut */
	if (gethostname(host, sizeof(host) - 1))
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	tr2_sid_host_hash(host, buf, size);
}

size_t tr2_sid_format(char *buf, size_t size, const char *parent, int64_t real_us,
		      const char *host, uint32_t pid)
{
	time_t secs = (time_t)(real_us / 1000000);
	struct tm tm = { 0 };
	int n;

	gmtime_r(&secs, &tm);
	n = snprintf(buf, size, "%s%s%04d%02d%02dT%02d%02d%02d.%06ldZ-%s-P%08" PRIx32,
		     parent && *parent ? parent : "", parent && *parent ? "/" : "",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     (long)(real_us % 1000000), host, pid);
	return n < 0 ? 0 : (size_t)n;
}
