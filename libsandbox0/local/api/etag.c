/*
 * Entity tags of `GET /sandboxes/{id}` and its conditional form (docs/wire.md
 * "Long-poll"): the tag names the engine's version of the sandbox
 * (lifecycle/watch.h), If-None-Match is compared weakly (RFC 9110 §8.8.3.2).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "local/api/api_internal.h"
#include "local/lifecycle/watch.h"

void s0__etag_of(s0__engine *e, const char *sandbox_id, char *out, size_t n)
{
	s0__engine_watch *w = s0__engine_watch_of(e);
	snprintf(out, n, "W/\"%s-%" PRIu64 "\"", s0__engine_watch_epoch(w),
	         s0__engine_watch_version(w, sandbox_id));
}

/* The opaque tag of one entity-tag at *p (W/ dropped); advances *p past it. */
static bool next_tag(const char **p, const char **tag, size_t *len)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t' || *s == ',')
		s++;
	if (!*s)
		return false;
	if (!strncmp(s, "W/", 2))
		s += 2;
	const char *end;
	if (*s == '"' && (end = strchr(s + 1, '"')))
		end++;
	else /* not a quoted tag: the rest of this list member, never a match */
		end = s + strcspn(s, ",");
	*tag = s;
	*len = (size_t)(end - s);
	*p = end;
	return true;
}

bool s0__etag_none_match(const char *if_none_match, const char *etag)
{
	if (!if_none_match)
		return true;
	const char *mine = strncmp(etag, "W/", 2) ? etag : etag + 2;
	size_t mine_len = strlen(mine);
	const char *p = if_none_match, *tag;
	size_t len;
	while (next_tag(&p, &tag, &len)) {
		if (len == 1 && *tag == '*')
			return false;
		if (len == mine_len && len >= 2 && *tag == '"' && !memcmp(tag, mine, len))
			return false;
	}
	return true;
}
