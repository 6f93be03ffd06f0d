/*
 * The objdir catalog: an SQLite database (WAL, synchronous=FULL) mapping
 * object ids to their place in a pack file, plus per-pack accounting.
 *
 *   packs(id, file_bytes, live_objects, live_bytes)
 *   objects(id BLOB PRIMARY KEY, pack, off, len) WITHOUT ROWID
 *
 * A pack row exists only for committed packs; a pack file without one is an
 * orphan of a crashed batch or compaction and is deleted at open.
 *
 * Thread safety: every function is safe from any thread (one internal
 * mutex around the connection). Errors are S0_EIO (SQLite's message) or
 * S0_ENOMEM unless listed.
 */
#ifndef S0_CATALOG_H
#define S0_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/objects/objid.h"

typedef struct s0__objcat s0__objcat;

/** Where an object's record lies: pack id, record offset, sealed length. */
typedef struct s0__objloc {
	uint64_t pack;
	uint64_t off;
	uint32_t len;
} s0__objloc;

/** One catalog row. */
typedef struct s0__objrow {
	s0__objid id;
	s0__objloc loc;
} s0__objrow;

/** One pack's accounting. */
typedef struct s0__packinfo {
	uint64_t id;
	uint64_t file_bytes;
	uint64_t live_objects;
	uint64_t live_bytes;
} s0__packinfo;

/**
 * Open or create the catalog database at path.
 * @param[out] out  (transfer full) close with s0__objcat_close().
 * @retval S0_EIO  it cannot be opened or is not a catalog.
 */
int s0__objcat_open(const char *path, s0__objcat **out, s0_error **err);

/** Close; NULL is a no-op. */
void s0__objcat_close(s0__objcat *c);

/**
 * Location of id.
 * @retval S0_ENOTFOUND  not in the catalog (err untouched).
 */
int s0__objcat_lookup(s0__objcat *c, const s0__objid *id, s0__objloc *out, s0_error **err);

/**
 * Record a committed pack and its rows in one durable transaction. Rows for
 * ids already catalogued are ignored (that copy is dead space). When no row
 * is new, no pack row is written and *live_out is 0 (the caller deletes the
 * file).
 * @param[out] live_out  rows that were new.
 */
int s0__objcat_add_pack(s0__objcat *c, uint64_t pack, uint64_t file_bytes,
                        const s0__objrow *rows, size_t n, uint64_t *live_out, s0_error **err);

/**
 * Delete ids (absent ones skipped) in one durable transaction. Packs left
 * without live objects lose their row; their ids are returned so the
 * caller can unlink the files.
 * @param[out] empty_out  (transfer full) free() it; *n_empty_out entries.
 */
int s0__objcat_delete(s0__objcat *c, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                      uint64_t *freed_bytes, uint64_t **empty_out, size_t *n_empty_out,
                      s0_error **err);

/**
 * Every row (a snapshot).
 * @param[out] rows_out  (transfer full) free() it.
 */
int s0__objcat_list(s0__objcat *c, s0__objrow **rows_out, size_t *n_out, s0_error **err);

/**
 * Every pack row.
 * @param[out] packs_out  (transfer full) free() it.
 */
int s0__objcat_packs(s0__objcat *c, s0__packinfo **packs_out, size_t *n_out, s0_error **err);

/**
 * Move rows into a new (durable) pack in one transaction: each rows[i]
 * currently at old[i] moves to rows[i].loc unless it changed meanwhile;
 * then the new pack row is written (if anything moved) and the rows of the
 * old packs are deleted.
 * @param[out] moved_out  rows actually moved.
 */
int s0__objcat_move(s0__objcat *c, uint64_t new_pack, uint64_t file_bytes,
                    const s0__objrow *rows, const s0__objloc *old, size_t n,
                    const uint64_t *old_packs, size_t n_old, uint64_t *moved_out,
                    s0_error **err);

/** Whether pack has a row. */
int s0__objcat_has_pack(s0__objcat *c, uint64_t pack, bool *out, s0_error **err);

/** Largest pack id with a row (0 when none). */
int s0__objcat_max_pack(s0__objcat *c, uint64_t *out, s0_error **err);

/** Totals over pack rows. */
int s0__objcat_totals(s0__objcat *c, uint64_t *objects, uint64_t *live_bytes,
                      uint64_t *file_bytes, s0_error **err);

#endif
