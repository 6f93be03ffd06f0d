/*
 * runsc's pages.img as the memory region of an image (gv_mem.h), cut by
 * content so that a recapture deduplicates what did not change.
 *
 * pages.img holds the sandbox's committed memory pages back to back in the
 * memory file's order; a few pages allocated or freed between two captures
 * (procd's, the sentry's own) shift everything after them by some pages, so
 * chunks at fixed 1 MiB offsets all change after such a point (measured:
 * docs/memory-gvisor.md "Recapture"). Instead pages.img is cut into pieces
 * of whole 4 KiB pages whose ends are chosen by the pages' content (a page
 * whose sampled hash has its low bits clear ends a piece of between half a
 * chunk and a whole one), and each piece is one chunk of the region,
 * padded with zeros: a piece whose pages did not change keeps its content
 * wherever it moved, so its chunk is deduplicated. The pieces' lengths are
 * the `pages_layout` record of the state blob; the restore writes each
 * chunk's piece back at its offset (s0__gv_pages_slots()).
 *
 * @threadsafety every function is reentrant (no shared state).
 */
#ifndef S0_RUNTIME_GVISOR_GV_PAGES_H
#define S0_RUNTIME_GVISOR_GV_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "local/runtime/heap.h"

/** Name of the state blob's record holding the pieces' lengths. */
#define S0__GV_PAGES_LAYOUT "pages_layout"

/** Where a chunk of the region goes in pages.img. */
typedef struct s0__gv_slot {
	uint64_t off; /**< byte offset in pages.img */
	uint32_t len; /**< bytes of the chunk that are pages.img's (the rest is padding) */
} s0__gv_slot;

/**
 * Cut @p len bytes of pages.img into pieces of whole pages (the last may
 * end in a partial page) of at most @p chunk_bytes, ends chosen by content.
 * @param data        the bytes (read only; every page is sampled).
 * @param chunk_bytes the region's chunk size (a power of two, >= 64 KiB).
 * @param[out] lens   (transfer full) the pieces' lengths in bytes, free();
 *                    NULL with *n 0 when @p len is 0.
 * @retval S0_EINVAL a bad chunk size. @retval S0_ENOMEM
 */
int s0__gv_pages_cut(const uint8_t *data, uint64_t len, uint32_t chunk_bytes, uint32_t **lens,
                     size_t *n, s0_error **err);

/**
 * Append the `pages_layout` record's bytes for @p n pieces (u32 chunk
 * size, u32 count, the lengths; little-endian) to @p out.
 * @return 0, or -1 when out of memory.
 */
int s0__gv_pages_layout(const uint32_t *lens, size_t n, uint32_t chunk_bytes, s0__buf *out);

/**
 * The region as a heap over pages.img mapped from its file, each piece at
 * the start of its chunk, zeros after it: no copy (the file's pages are
 * the heap's bytes until the heap goes; @p fd may be closed after).
 * @retval S0_EIO the mappings could not be made (too many: the caller copies).
 * @retval S0_EINVAL lengths that do not add up to @p len.
 */
int s0__gv_pages_map(int fd, uint64_t len, const uint32_t *lens, size_t n, uint32_t chunk_bytes,
                     s0__heap **out, s0_error **err);

/**
 * The same heap as a copy of @p data (the heap owns its memory, the file
 * may go at once).
 * @retval S0_ENOMEM
 */
int s0__gv_pages_copy(const uint8_t *data, const uint32_t *lens, size_t n, uint32_t chunk_bytes,
                      s0__heap **out, s0_error **err);

/**
 * Where each chunk of a stored region goes in pages.img.
 * @param rec        the `pages_layout` record, or NULL for an image that
 *                   has none (chunk i is bytes i * chunk_bytes.. of pages.img).
 * @param heap_bytes the region's size (a whole number of chunks with a record).
 * @param[out] out   (transfer full) one slot per chunk, free().
 * @param[out] file_bytes pages.img's size.
 * @retval S0_ECORRUPT a record that does not match the region.
 * @retval S0_ENOMEM
 */
int s0__gv_pages_slots(const void *rec, size_t rec_len, uint64_t heap_bytes, uint32_t chunk_bytes,
                       s0__gv_slot **out, size_t *n, uint64_t *file_bytes, s0_error **err);

#endif
