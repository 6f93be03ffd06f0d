/*
 * Packs of the S3 backend: many sealed objects per S3 object, found through
 * an index object per pack and a local catalog of every index this node has
 * read.
 *
 * In the bucket (below the store's prefix):
 *   p/<16 hex>   a pack: pack/pack.h's layout (header, then records "S0R1" |
 *                sealed length | id | sealed bytes | padding to 8 bytes),
 *                written whole by one PUT, never modified
 *   x/<16 hex>   its index: "S0PX" | u32 version (1) | u64 pack id | u64 pack
 *                bytes | u32 count, then per object its 32-byte id, u64
 *                record offset, u32 sealed length (little-endian); written
 *                after its pack, never modified
 * Pack ids are (milliseconds since 1970 << 21) | 21 random bits, so keys
 * sort by creation time and a refresh lists only recent ones.
 *
 * Locally, <store dir>/index.db is a pack/catalog.h catalog of the indexes
 * read so far (a cache of the bucket's indexes: losing it costs a full
 * refresh, never an object) plus the deletions this node made.
 *
 * Reads: the catalog names the pack and offset; one ranged GET reads the
 * record and up to S0__S3PACK_READAHEAD bytes after it (the whole pack when
 * it is at most S0__S3PACK_SMALL), and the records it holds that the
 * catalog places there enter the read cache too. A record
 * whose header does not name the id, or is cut short, reads S0_ECORRUPT;
 * the front verifies the sealed bytes (content address, authentication).
 *
 * Thread safety: every function is safe from any thread.
 */
#ifndef S0_S3PACK_H
#define S0_S3PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/pack/catalog.h"
#include "local/objects/s3/objs3_impl.h"

/** Bytes of "p/<16 hex>" with its NUL. */
#define S0__S3PACK_KEY_BYTES 19
/** A commit closes a pack once its records reach this many bytes. */
#define S0__S3PACK_TARGET ((uint64_t)4 << 20)
/** Bytes a read fetches past the record asked for (read-ahead). */
#define S0__S3PACK_READAHEAD ((uint64_t)128 << 10)
/** A pack this small is read whole at its first read. */
#define S0__S3PACK_SMALL ((uint64_t)256 << 10)
/** Window below the newest pack id a refresh lists again (10 minutes). */
#define S0__S3PACK_WINDOW_MS 600000ull

/** The key of pack id ("p/…") or of its index ("x/…") into out. */
void s0__s3pack_key(char kind, uint64_t pack, char out[S0__S3PACK_KEY_BYTES]);

/** A new pack id (time-ordered, see above). */
uint64_t s0__s3pack_new_id(void);

/**
 * Encode the index of pack (pack_bytes long) with rows[0, n) (their loc.off
 * the record offsets in the pack) into out (replaced).
 * @retval S0_ENOMEM
 */
int s0__s3pack_index_encode(uint64_t pack, uint64_t pack_bytes, const s0__objrow *rows,
                            size_t n, s0__buf *out, s0_error **err);

/**
 * Decode an index object read for pack.
 * @param[out] pack_bytes  the pack's size.
 * @param[out] rows_out    (transfer full) free(); loc.pack is pack.
 * @retval S0_ECORRUPT reason "object_index_corrupt": not the index of pack.
 * @retval S0_ENOMEM
 */
int s0__s3pack_index_decode(const void *data, size_t len, uint64_t pack, uint64_t *pack_bytes,
                            s0__objrow **rows_out, size_t *n_out, s0_error **err);

/**
 * Catalogue rows[0, n) of pack (pack_bytes long); rows naming an id the
 * catalog places in another pack are recorded as copies (s3doom.h).
 */
int s0__s3pack_catalogue(s0__objs3 *s, uint64_t pack, uint64_t pack_bytes,
                         const s0__objrow *rows, size_t n, s0_error **err);

/**
 * After ids[0, n) left the catalog: a recorded copy of each becomes its
 * catalogued place.
 */
int s0__s3pack_promote(s0__objs3 *s, const s0__objid *ids, size_t n, s0_error **err);

/** Bytes of each pack a lookup's refresh reads with its index (s3pack.c). */
#define S0__S3PACK_HEAD ((uint64_t)64 << 10)

/** Indexes a refresh looking for one id reads at once. */
#define S0__S3PACK_REFRESH_FEW 4

/**
 * Read into the catalog the indexes the bucket holds that it lacks: those
 * listed after the newest known pack id less S0__S3PACK_WINDOW_MS, or all
 * when full; newest first, and with want (nullable) only until want is
 * known, each with its pack's first S0__S3PACK_HEAD bytes (their records
 * enter the read cache). Indexes such a listing named but left unread are
 * kept and read first by the next lookup, before listing again. A caller whose lookup missed after it read seen = s->refreshes
 * returns at once when a refresh started after that read every index.
 * @retval S0_EUNAVAILABLE / S0_EAUTH / S0_EIO  the endpoint's answers.
 */
int s0__s3pack_refresh(s0__objs3 *s, uint64_t seen, bool full, const s0__objid *want,
                       s0_error **err);

/**
 * Read id's sealed bytes from its pack into out (replaced), refreshing the
 * catalog once when it does not know id, and enter them in the read cache.
 * @retval S0_ENOTFOUND reason "object_missing": no index names id, or its
 *         pack is gone from the bucket (the message names the pack).
 * @retval S0_ECORRUPT  the pack does not hold id where its index says.
 */
int s0__s3pack_read(s0__objs3 *s, const s0__objid *id, s0__buf *out, s0_error **err);

/**
 * Delete from the bucket the packs (and their indexes) without live
 * objects in the catalog, no recorded copy and older than the GC grace
 * (s3tomb.h), then their catalog rows.
 * @param[out] packs_out  (nullable) how many packs were deleted.
 */
int s0__s3pack_drop_empty(s0__objs3 *s, uint64_t *packs_out, s0_error **err);

#endif
