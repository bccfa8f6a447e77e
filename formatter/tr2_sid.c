/*
 * tr2_sid.c: see tr2_sid.h.  "<parent sid>/<own>", own being
 * "<UTC time>Z-H<hash>-P<pid>".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tr2_sid.h"
#include "tr2_time.h"

void tr2_sid_host_hash(const char *host, char *buf, size_t size)
{
	unsigned char md[20];

	if (!host) {
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
	if (gethostname(host, sizeof(host) - 1)) {
		tr2_sid_host_hash(NULL, buf, size);
		return;
	}
	host[sizeof(host) - 1] = '\0';
	tr2_sid_host_hash(host, buf, size);
}

size_t tr2_sid_format(char *buf, size_t size, const char *parent, int64_t real_us,
		      const char *host, uint32_t pid)
{
	/* the EVENT format's "time", "YYYY-MM-DDTHH:MM:SS.uuuuuuZ", without
	 * its '-' and ':' (the formatter's arithmetic: gmtime_r would load the
	 * time zone's rules, a file and memory the sid does not need) */
	char iso[64], when[64];
	struct tr2_buf b = { iso, 0, sizeof(iso) };
	size_t n = 0;
	int len;

	tr2_time_add_utc(&b, real_us);
	for (size_t i = 0; i < b.len && n < sizeof(when) - 1; i++)
		if (iso[i] != '-' && iso[i] != ':')
			when[n++] = iso[i];
	when[n] = '\0';
	len = snprintf(buf, size, "%s%s%s-%s-P%08" PRIx32, parent && *parent ? parent : "",
		       parent && *parent ? "/" : "", when, host, pid);
	return len < 0 ? 0 : (size_t)len;
}
