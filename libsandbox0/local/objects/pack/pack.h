/*
 * Pack files of the directory object store: <dir>/packs/<16 hex>.pack.
 *
 *   header  "S0PK" | u32 version (1) | u64 pack id            (16 bytes)
 *   record  "S0R1" | u32 sealed length | 32-byte id | sealed bytes | 0-7
 *           zero bytes to the next multiple of 8
 *
 * Batches append records to the current pack (each reserves its offsets);
 * a commit fdatasyncs it. A pack stops taking batches once it reaches
 * S0__OBJDIR_PACK_TARGET; then it is immutable, and is deleted whole or
 * rewritten by compaction. Records are self-identifying (the sealed bytes
 * authenticate their id), so recovery can scan a pack and resynchronise on
 * 8-byte boundaries past damage.
 *
 * The read side keeps a small cache of open descriptors; a pack unlinked by
 * compaction stays readable through a descriptor already handed out.
 *
 * Thread safety: the fd cache is safe from any thread.
 */
#ifndef S0_PACK_H
#define S0_PACK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/objid.h"

#define S0__PACK_HDR_BYTES 16
#define S0__PACK_REC_BYTES 40
/** Descriptors kept open by the cache. */
#define S0__PACK_FDS 64

/** Bytes a record of len sealed bytes occupies (header, data, padding). */
uint64_t s0__pack_rec_span(uint32_t len);

/**
 * Parse a record header at hdr.
 * @return whether it is one; its id and sealed length in *id, *len.
 */
bool s0__pack_parse_rec(const uint8_t hdr[S0__PACK_REC_BYTES], s0__objid *id, uint32_t *len);

/** File name of pack id in its directory ("%016llx.pack"), into out[32]. */
void s0__pack_name(uint64_t id, char out[32]);

/** Parse a pack file name; false when it is not one. */
bool s0__pack_parse_name(const char *name, uint64_t *id);

/** Pack header bytes for id. */
void s0__pack_header(uint64_t id, uint8_t out[S0__PACK_HDR_BYTES]);

/** Record header bytes for an object. */
void s0__pack_rec_header(const s0__objid *id, uint32_t len, uint8_t out[S0__PACK_REC_BYTES]);

/**
 * Create a new pack file (O_EXCL, mode 0600) with its header written, and
 * fsync the directory so its name is durable.
 * @param dirfd  the packs directory.
 * @param[out] fd_out  read-write descriptor.
 * @retval S0_EIO
 */
int s0__pack_create(int dirfd, uint64_t id, int *fd_out, s0_error **err);

/**
 * Write a record (header, sealed bytes, padding) at off.
 * @return 0 or an errno value.
 */
int s0__pack_write_rec(int fd, uint64_t off, const s0__objid *id, const void *sealed,
                       uint32_t len);

/**
 * Read the sealed bytes of the record at off (len sealed bytes) and check
 * its header names id.
 * @param[out] out  replaced with the sealed bytes.
 * @retval S0_ECORRUPT  short file or header mismatch (message names id).
 * @retval S0_EIO
 */
int s0__pack_read(int fd, uint64_t off, uint32_t len, const s0__objid *id, s0__buf *out,
                  s0_error **err);

typedef struct s0__packfd {
	uint64_t id;
	int fd;
	int refs;
	bool dead;
	uint64_t stamp;
} s0__packfd;

/** Cache of read descriptors of one packs directory. */
typedef struct s0__packcache {
	pthread_mutex_t mu;
	int dirfd;
	uint64_t clock;
	s0__packfd slot[S0__PACK_FDS];
} s0__packcache;

/** Initialise over the packs directory descriptor (borrowed). */
void s0__packcache_init(s0__packcache *pc, int dirfd);

/** Close every descriptor. */
void s0__packcache_fini(s0__packcache *pc);

/**
 * A read descriptor for pack id, held until s0__packcache_put().
 * @retval S0_ENOTFOUND  the file does not exist (err untouched).
 * @retval S0_EIO
 */
int s0__packcache_get(s0__packcache *pc, uint64_t id, s0__packfd **out, s0_error **err);

/** Release a descriptor from s0__packcache_get(). */
void s0__packcache_put(s0__packcache *pc, s0__packfd *f);

/** Forget pack id (it is being deleted); held descriptors stay usable. */
void s0__packcache_forget(s0__packcache *pc, uint64_t id);

#endif
