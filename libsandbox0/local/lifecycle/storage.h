/*
 * What the lifecycle needs from storage: generations of RootFS volumes in
 * the copy-on-write block store, and a writable volume (branch + ext4
 * handle + runtime-only routing) for a running sandbox. storage.c adapts
 * local/objects, local/blocks and local/rootfs to this.
 *
 * Generation ids are printable strings (< 128 bytes). A generation id is
 * returned only once every object it needs is durable; it becomes live
 * when the caller records it in the metadata store (until then it is
 * pinned in memory so GC keeps it).
 */
#ifndef S0_STORAGE_H
#define S0_STORAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

#define S0__GEN_MAX 128

typedef struct s0__storage s0__storage;
typedef struct s0__volume s0__volume;
struct s0__faults;

/* Open the stores under dir (objects/, blocks/) with the installation key
 * (key_file, or <dir>/installation.key when NULL; created when missing);
 * object_store names the object store backend or its URL
 * (objects/backends.h; NULL = the one dir records). S0_EINVAL when dir was
 * made with another one. */
int s0__storage_open(const char *dir, const char *object_store, const char *key_file,
                     struct s0__faults *faults, s0__storage **out, s0_error **err);
void s0__storage_close(s0__storage *st);
/* The 32-byte key of the node-to-node channel, derived from the
 * installation key (nodes sharing a key file share it); borrowed, valid
 * until s0__storage_close. */
const uint8_t *s0__storage_node_key(const s0__storage *st);
/* Check, reading only, that s0__storage_open(dir, object_store) would not
 * refuse the object store backend (the same S0_EINVAL): the engine checks
 * before it migrates its metadata, so a refused open changes nothing. */
int s0__storage_check(const char *dir, const char *object_store, s0_error **err);

/*
 * Build a template generation from a directory (NULL = the standard empty
 * tree) of size_bytes, through mke2fs -d, with the template's runtime-only
 * mount points as empty directories, and publish it (pinned).
 */
int s0__storage_template(s0__storage *st, const char *dir, uint64_t size_bytes,
                         const char *const *ephemeral, size_t n_ephemeral,
                         char gen_out[S0__GEN_MAX], s0_error **err);

/*
 * Attach a writable volume on generation gen: a new branch (blocks are
 * fetched lazily) and a read-write ext4 handle.
 */
int s0__volume_attach(s0__storage *st, const char *gen, s0__volume **out, s0_error **err);
/*
 * Commit: flush ext4, fence the branch (no more writes), seal and publish
 * it; gen_out gets the new generation (durable, pinned until unpinned).
 * On failure (object store down: fault `object_store@after-seal`…) the
 * volume stays fenced and the call may be repeated; the parent generation
 * is untouched.
 */
int s0__volume_commit(s0__volume *v, char gen_out[S0__GEN_MAX], s0_error **err);
/*
 * Checkpoint a running volume (snapshot or fork of a running sandbox):
 * flush ext4, publish the branch as a generation (durable, pinned) and keep
 * writing on the branch rebased onto it. The head does not move.
 */
int s0__volume_checkpoint(s0__volume *v, char gen_out[S0__GEN_MAX], s0_error **err);
/* Whether a commit has fenced the volume (its ext4 handle is closed). */
bool s0__volume_sealed(const s0__volume *v);
/* Drop the volume without publishing (crash, delete, after commit). NULL-safe. */
void s0__volume_free(s0__volume *v);
/* The branch of a volume as a block device (valid until s0__volume_free). */
const struct s0__blockdev *s0__volume_dev(s0__volume *v);
/*
 * Lend the branch to the kernel (a S0__RT_CAP_KERNEL_FS runtime mounts it):
 * flush and close the ext4 handle; the volume is not fenced. A later
 * s0__volume_commit publishes what the kernel left on it (the runtime
 * stopped first); s0__volume_checkpoint publishes the branch as it is (the runtime's cut
 * made it consistent).
 */
int s0__volume_lend(s0__volume *v, s0_error **err);
/* The ext4 handle of a volume (NULL once fenced or lent). */
struct s0__rootfs *s0__volume_rootfs(s0__volume *v);
/* Chunks written to the branch and bytes published (inspection). */
void s0__volume_stats(s0__volume *v, int64_t *dirty_chunks, int64_t *fetched_chunks);

/* Unpin a generation recorded in metadata (or abandoned). */
void s0__storage_unpin(s0__storage *st, const char *gen);
/*
 * The live generations (heads, snapshots, templates, operations), read
 * fresh by GC after it has taken the in-memory pins. *ids: malloc'd array
 * of malloc'd strings.
 */
typedef int (*s0__live_gens_fn)(void *payload, char ***ids, size_t *n, s0_error **err);
void s0__storage_set_roots(s0__storage *st, s0__live_gens_fn fn, void *payload);
/* Object roots (retained memory images): emit(emit_ctx, S0__GC_ROOT_OBJECT, id)
 * for each object kept as is. */
struct s0__objid;
typedef int (*s0__object_roots_fn)(void *payload,
                                   int (*emit)(void *emit_ctx, int kind,
                                               const struct s0__objid *id),
                                   void *emit_ctx, s0_error **err);
void s0__storage_set_object_roots(s0__storage *st, s0__object_roots_fn fn, void *payload);
/* The object store under the block store (memory images live there too). */
struct s0__objstore;
struct s0__objstore *s0__storage_objstore(s0__storage *st);
/* Garbage-collect everything not reachable from live (and pinned) generations. */
int s0__storage_gc(s0__storage *st, s0_error **err);
/* Sealed bytes of the objects generation `gen` reaches (shared ones too; UC-16). */
int s0__storage_gen_bytes(s0__storage *st, const char *gen, uint64_t *bytes, s0_error **err);
/* Export a generation as a raw ext4 image file. */
int s0__storage_export(s0__storage *st, const char *gen, const char *path, s0_error **err);
/* Counters for inspection, as a JSON object text (malloc'd). */
char *s0__storage_stats_json(s0__storage *st);

#endif
