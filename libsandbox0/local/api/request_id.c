/* X-Request-ID: echo a well-formed inbound id, else make a UUIDv4 (docs/wire.md §1.3). */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "local/api/router.h"

static bool well_formed(const char *v)
{
	size_t n = v ? strlen(v) : 0;
	if (!n || n >= S0__REQUEST_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e)
			return false;
	return true;
}

void s0__router_request_id(const s0__headers *h, char out[S0__REQUEST_ID_MAX])
{
	const char *v = h ? s0__headers_get(h, "X-Request-ID") : NULL;
	if (well_formed(v)) {
		memcpy(out, v, strlen(v) + 1);
		return;
	}
	unsigned char b[16];
	s0__global_ensure();
	randombytes_buf(b, sizeof b);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, S0__REQUEST_ID_MAX,
	         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
	         b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
	         b[15]);
}
