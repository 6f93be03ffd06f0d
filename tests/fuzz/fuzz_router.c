/*
 * Fuzz target: the router entry (s0__router_handle_raw, local/api/router.h)
 * over a real local backend (fz_engine.h; reset every 200 requests so its
 * state stays bounded).
 *
 * Input: "METHOD\nRAWPATH\nQUERY\nName: value\n...\n\nBODY" — the method, the
 * percent-encoded path, the raw query (empty line: none), header lines up to
 * an empty line, and the rest as the body (present only when that empty
 * line is). A leading '!' sends the request without a team (401 paths).
 * @0, @1 and @S stand for a running sandbox, a paused one and a snapshot.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fz_engine.h"

static fz_engine eng;
static int ready;

static void at_exit(void)
{
	fz_engine_close(&eng);
}

/* Next line of [*p, end): NUL-terminates it in place; NULL when none left. */
static char *next_line(char **p, char *end)
{
	if (*p >= end)
		return NULL;
	char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl) {
		*p = end;
		return s; /* the buffer has a spare NUL byte at end */
	}
	*nl = 0;
	*p = nl + 1;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		fz_engine_open(&eng, 200);
		atexit(at_exit);
		ready = 1;
	}
	if (size > (2u << 20))
		return 0;
	size_t n;
	char *buf = fz_substitute(&eng, (const char *)data, size, &n);
	char *p = buf, *end = buf + n;
	const char *team = "team_a";
	if (n && *p == '!') {
		team = "";
		p++;
	}
	char *method = next_line(&p, end);
	char *path = next_line(&p, end);
	char *query = next_line(&p, end);
	if (!method || !path) {
		free(buf);
		return 0;
	}
	s0__http_request req = {.method = method, .path = path,
	                        .query = query && *query ? query : NULL};
	char *h;
	while ((h = next_line(&p, end)) && *h) {
		char *colon = strchr(h, ':');
		if (!colon)
			continue;
		*colon = 0;
		const char *v = colon + 1;
		while (*v == ' ')
			v++;
		s0__headers_add(&req.headers, h, v);
	}
	if (h) { /* an empty line ended the headers: the rest is the body */
		req.body = p;
		req.body_len = (size_t)(end - p);
		req.has_body = true;
	}
	fz_route(&eng, team, &req);
	s0__headers_free(&req.headers);
	free(buf);
	return 0;
}
