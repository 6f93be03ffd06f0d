/* Generation descriptors: encoding, validation, loading. */
#include "local/blocks/bstore_impl.h"

#include <string.h>

#include "common/le.h"

/*
 * Layout (little endian, 128 bytes):
 *   0 "S0G1"  4 u32 version  8 u64 size  16 u32 chunk  20 u32 fanout
 *   24 u32 depth  28 u32 0  32 u64 seq  40 u64 nonzero chunks
 *   48 root id  80 parent id  112 zero
 */

static bool zero_tail(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

uint32_t s0__map_depth(uint64_t nchunks)
{
	/* At least S0__MAP_MIN_DEPTH levels: every volume up to 128^3 chunks
	 * (128 TiB at 64 KiB) walks the same number of pages per lookup. */
	uint32_t d = S0__MAP_MIN_DEPTH;
	uint64_t span = (uint64_t)S0__MAP_FANOUT * S0__MAP_FANOUT * S0__MAP_FANOUT;
	while (span < nchunks) {
		span *= S0__MAP_FANOUT;
		d++;
	}
	return d;
}

void s0__gen_encode(const s0__gen_info *g, uint8_t out[S0__GEN_BYTES])
{
	memset(out, 0, S0__GEN_BYTES);
	memcpy(out, "S0G1", 4);
	s0__le_put32(out + 4, 1);
	s0__le_put64(out + 8, g->size_bytes);
	s0__le_put32(out + 16, g->chunk_bytes);
	s0__le_put32(out + 20, S0__MAP_FANOUT);
	s0__le_put32(out + 24, g->depth);
	s0__le_put64(out + 32, g->seq);
	s0__le_put64(out + 40, g->nonzero_chunks);
	memcpy(out + 48, g->root.b, S0__OBJID_BYTES);
	memcpy(out + 80, g->parent.b, S0__OBJID_BYTES);
}

int s0__gen_decode(const s0__genid *id, const uint8_t *buf, size_t len, s0__gen_info *out,
                   s0_error **err)
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	if (len != S0__GEN_BYTES || memcmp(buf, "S0G1", 4) != 0)
		return s0__error_set(err, S0_ENOTFOUND, "generation_not_found",
		                     "object %s is not a generation", hex);
	s0__gen_info g;
	g.size_bytes = s0__le_get64(buf + 8);
	g.chunk_bytes = s0__le_get32(buf + 16);
	g.depth = s0__le_get32(buf + 24);
	g.seq = s0__le_get64(buf + 32);
	g.nonzero_chunks = s0__le_get64(buf + 40);
	memcpy(g.root.b, buf + 48, S0__OBJID_BYTES);
	memcpy(g.parent.b, buf + 80, S0__OBJID_BYTES);
	/* Only the canonical encoding is a descriptor: the reserved word at 28
	 * and the tail from 112 are zero, as s0__gen_encode writes them. */
	bool ok = s0__le_get32(buf + 4) == 1 && s0__le_get32(buf + 20) == S0__MAP_FANOUT && s0__le_get32(buf + 28) == 0 &&
	          zero_tail(buf + 112, S0__GEN_BYTES - 112) && g.size_bytes &&
	          g.size_bytes <= S0__BSTORE_SIZE_MAX && g.chunk_bytes >= S0__BSTORE_CHUNK_MIN &&
	          g.chunk_bytes <= S0__BSTORE_CHUNK_MAX && !(g.chunk_bytes & (g.chunk_bytes - 1));
	if (ok) {
		uint64_t nchunks = (g.size_bytes + g.chunk_bytes - 1) / g.chunk_bytes;
		ok = g.depth == s0__map_depth(nchunks) && g.nonzero_chunks <= nchunks;
	}
	if (!ok)
		return s0__error_set(err, S0_ECORRUPT, "object_corrupt",
		                     "generation %s has an invalid descriptor", hex);
	*out = g;
	return S0_OK;
}

int s0__gen_load(s0__bstore *bs, const s0__genid *id, s0__gen_info *out, s0_error **err)
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__centry *e;
	s0_error *e0 = NULL;
	if (s0__objid_is_zero(id))
		return s0__error_set(err, S0_ENOTFOUND, "generation_not_found",
		                     "the zero id is not a generation");
	int rc = s0__bstore_page_get(bs, id, S0__GEN_BYTES, &e, &e0);
	if (rc == S0_ENOTFOUND) {
		s0__objid_hex(id, hex);
		s0_error_free(e0);
		return s0__error_set(err, S0_ENOTFOUND, "generation_not_found",
		                     "generation %s not found", hex);
	}
	if (rc < 0)
		return e0 ? s0__error_put(err, e0) : rc;
	rc = s0__gen_decode(id, s0__centry_data(e), s0__centry_size(e), out, err);
	s0__cache_release(bs->pages, e);
	return rc;
}
