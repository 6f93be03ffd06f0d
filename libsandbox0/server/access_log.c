/* One access-log line per request, to the options' callback only. */
#include <stdio.h>

#include "server/server_internal.h"

/* Copy printable ASCII only (no quotes), so a hostile path or header cannot
 * forge a log line. */
static const char *clean(const char *s, char *buf, size_t n)
{
	size_t j = 0;
	for (; s && *s && j + 1 < n; s++)
		buf[j++] = (unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e || *s == '"' ? '?' : *s;
	buf[j] = '\0';
	return j ? buf : "-";
}

void s0__server_log_line(const s0_server_options *o, const char *client, const char *rid,
                         const char *team, const char *method, const char *path, int status,
                         size_t bytes, int64_t ms)
{
	if (!o || !o->log_cb)
		return;
	char c[64], r[160], t[100], m[20], p[520], line[960];
	snprintf(line, sizeof line, "%s %s %s \"%s %s\" %d %zu %lldms", clean(client, c, sizeof c),
	         clean(rid, r, sizeof r), clean(team, t, sizeof t), clean(method, m, sizeof m),
	         clean(path, p, sizeof p), status, bytes, (long long)ms);
	o->log_cb(line, o->log_payload);
}
