/*
 * The objdir catalog: an SQLite database (WAL) mapping object ids to their
 * place in a pack file, plus per-pack accounting.
 *
 *   packs(id, file_bytes, indexed_bytes, live_objects, live_bytes)
 *   objects(id BLOB PRIMARY KEY, pack, off, len) WITHOUT ROWID
 *
 * indexed_bytes: every record of the pack below this offset is catalogued
 * (or dead). Additions are committed without a sync: the pack bytes they
 * index were fdatasync'ed first, and objdir's recovery re-indexes any
 * record past indexed_bytes after a crash. Deletions and moves are
 * committed durably (they precede unlinking pack files).
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
	uint64_t indexed_bytes;
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
 * Catalogue rows of pack in one transaction (not synced; see above). Rows
 * for ids already catalogued are ignored (that copy is dead space). The
 * pack row is created or updated: file_bytes and indexed_bytes grow to the
 * values given, live counts grow by the new rows.
 * @param[out] live_out  (nullable) rows that were new.
 */
int s0__objcat_add(s0__objcat *c, uint64_t pack, uint64_t file_bytes, uint64_t indexed_bytes,
                   const s0__objrow *rows, size_t n, uint64_t *live_out, s0_error **err);

/** Make every earlier commit durable (one WAL sync). */
int s0__objcat_sync(s0__objcat *c, s0_error **err);

/**
 * Delete ids (absent ones skipped) in one durable transaction.
 * @param[out] freed_objects  rows deleted.
 * @param[out] freed_bytes    their sealed bytes.
 */
int s0__objcat_delete(s0__objcat *c, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                      uint64_t *freed_bytes, s0_error **err);

/**
 * Ids of packs without live objects.
 * @param[out] out  (transfer full) free() it.
 */
int s0__objcat_empty_packs(s0__objcat *c, uint64_t **out, size_t *n_out, s0_error **err);

/** Delete the rows of packs without live objects, durably. */
int s0__objcat_drop_packs(s0__objcat *c, const uint64_t *packs, size_t n, s0_error **err);

/**
 * Every row (a snapshot).
 * @param[out] rows_out  (transfer full) free() it.
 */
int s0__objcat_list(s0__objcat *c, s0__objrow **rows_out, size_t *n_out, s0_error **err);

/**
 * Every pack row, by id.
 * @param[out] packs_out  (transfer full) free() it.
 */
int s0__objcat_packs(s0__objcat *c, s0__packinfo **packs_out, size_t *n_out, s0_error **err);

/**
 * One pack's row.
 * @retval S0_ENOTFOUND  no row (err untouched).
 */
int s0__objcat_pack(s0__objcat *c, uint64_t pack, s0__packinfo *out, s0_error **err);

/**
 * Move rows into a new (durable) pack in one durable transaction: each
 * rows[i] currently at old[i] moves to rows[i].loc unless it changed
 * meanwhile; then the new pack row is written (if anything moved) and the
 * rows of the old packs are deleted.
 * @param[out] moved_out  rows actually moved.
 */
int s0__objcat_move(s0__objcat *c, uint64_t new_pack, uint64_t file_bytes,
                    const s0__objrow *rows, const s0__objloc *old, size_t n,
                    const uint64_t *old_packs, size_t n_old, uint64_t *moved_out,
                    s0_error **err);

/** Largest pack id with a row (0 when none). */
int s0__objcat_max_pack(s0__objcat *c, uint64_t *out, s0_error **err);

/** Totals over pack rows. */
int s0__objcat_totals(s0__objcat *c, uint64_t *objects, uint64_t *live_bytes,
                      uint64_t *file_bytes, s0_error **err);

#endif
