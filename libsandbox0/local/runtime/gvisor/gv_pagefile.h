/*
 * The lazy pages file of a memory restore (docs/memory-gvisor.md "Restore"):
 * runsc's pages.img served by a FUSE file system of this process, mounted
 * over an empty regular file of the image directory, whose bytes come from
 * the checkpoint engine on demand. Each read fetches the chunks it covers
 * (each chunk is a piece of the file: gv_pages.h) through the image's
 * pager (which verifies each: keyed BLAKE2b of the plaintext) and keeps
 * them until their bytes were served; a worker
 * fetches ahead sequentially behind the reads (runsc's background loader
 * reads the file front to back, with the pages a task waits for first).
 * A chunk that fails verification answers EIO: runsc's loader then kills
 * the sandbox ("Killing the sandbox after MemoryFile page loading failed"),
 * never a page of garbage.
 *
 * Lifetime: made by image_restore() (the chunk table read and verified
 * first), handed to runsc by `runsc restore --background` (the sandbox
 * holds the file open until every page is loaded), then the server serves
 * on its own: when the last open of the file is closed it unmounts, aborts
 * its connection and frees itself. Used by the files of this folder only.
 */
#ifndef S0_RUNTIME_GVISOR_GV_PAGEFILE_H
#define S0_RUNTIME_GVISOR_GV_PAGEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "local/runtime/gvisor/gv_pages.h"
#include "local/runtime/image.h"

/** A lazy pages file being served. */
typedef struct s0__gv_pagefile s0__gv_pagefile;

/**
 * Serve pages.img as the file @p path (created empty, then a FUSE mount in
 * the calling thread's mount namespace covers it; mount namespaces made
 * afterwards, e.g. a carrier's, copy the mount): chunk k of region @p r is
 * the file's bytes [slots[k].off, + slots[k].len) (s0__gv_pages_slots()).
 * Reads the region's chunk table through @p pager first (each page
 * verified) so a damaged or missing index fails here, before anything runs.
 * @param r      the region (its chunk-table ids are copied).
 * @param slots  @p nslots slots, one per chunk of @p r, in file order, back
 *               to back from 0 to @p file_bytes (copied).
 * @param pager  a reference is taken.
 * @param[out] out (transfer full) end with s0__gv_pagefile_hand() or
 *             s0__gv_pagefile_drop().
 * @retval S0_ECORRUPT / S0_ENOTFOUND the chunk table is damaged or gone,
 *         or the slots do not match the region.
 * @retval S0_EIO the file or the mount cannot be made (message names it).
 * @retval S0_ENOMEM
 * Nothing is left behind on failure. Blocks for the chunk table's fetch.
 * @threadsafety safe
 */
int s0__gv_pagefile_start(const char *path, const s0__heap_image *r, const s0__gv_slot *slots,
                          size_t nslots, uint64_t file_bytes, s0__pager *pager,
                          s0__gv_pagefile **out, s0_error **err);

/**
 * runsc holds the file now (`runsc restore` returned): detach the mount
 * from the calling thread's namespace (the open file and copies of the
 * mount in other namespaces keep being served) and let the server end by
 * itself once no open of the file is left. @p pf must not be used after.
 * NULL-safe. @threadsafety safe
 */
void s0__gv_pagefile_hand(s0__gv_pagefile *pf);

/**
 * End the server now (nothing restored from it: a failed restore): every
 * pending and later read of the file fails. Blocks until its threads are
 * joined. NULL-safe.
 */
void s0__gv_pagefile_drop(s0__gv_pagefile *pf);

/**
 * The first damaged chunk the server found, copied into @p buf (@p len
 * bytes, "" when none). @return whether one was found. @threadsafety safe
 */
bool s0__gv_pagefile_damaged(s0__gv_pagefile *pf, char *buf, size_t len);

/**
 * Wait up to @p timeout_ms milliseconds for every served pages file of
 * this process to end (a driver's close: their sandboxes are stopped, so
 * their files are closed). @return whether none is left.
 */
bool s0__gv_pagefile_wait_all(int timeout_ms);

#endif
