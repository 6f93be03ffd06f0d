/* Object id helpers. */
#include "local/objects/objid.h"

#include <string.h>

bool s0__objid_is_zero(const s0__objid *id)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < S0__OBJID_BYTES; i++)
		acc |= id->b[i];
	return acc == 0;
}

bool s0__objid_eq(const s0__objid *a, const s0__objid *b)
{
	return memcmp(a->b, b->b, S0__OBJID_BYTES) == 0;
}

int s0__objid_cmp(const s0__objid *a, const s0__objid *b)
{
	return memcmp(a->b, b->b, S0__OBJID_BYTES);
}

void s0__objid_hex(const s0__objid *id, char out[S0__OBJID_HEX_BYTES])
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < S0__OBJID_BYTES; i++) {
		out[2 * i] = digits[id->b[i] >> 4];
		out[2 * i + 1] = digits[id->b[i] & 15];
	}
	out[2 * S0__OBJID_BYTES] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int s0__objid_parse(const char *hex, s0__objid *out, s0_error **err)
{
	s0__objid id;
	if (!hex || strlen(hex) != 2 * S0__OBJID_BYTES)
		return s0__error_set(err, S0_EINVAL, "bad_object_id", "object id must be 64 hex digits");
	for (size_t i = 0; i < S0__OBJID_BYTES; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return s0__error_set(err, S0_EINVAL, "bad_object_id",
			                     "object id must be 64 hex digits");
		id.b[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = id;
	return S0_OK;
}

uint64_t s0__objid_hash64(const s0__objid *id)
{
	uint64_t h;
	memcpy(&h, id->b, sizeof h);
	return h;
}
