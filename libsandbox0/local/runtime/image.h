/*
 * Execution images at the runtime seam (runtime.h): what a driver hands
 * the checkpoint engine to capture, and what the checkpoint engine hands
 * back to a driver to restore. An image is
 *  - memory regions (heap.h): chunked, dirty-tracked, restored lazily —
 *    the chunks the checkpoint engine stores, deduplicates and pages in;
 *  - a small state blob (everything else of the processes: the driver's
 *    own format, opaque to the checkpoint engine);
 *  - optionally the runtime tmpfs as a blob;
 * plus a compatibility fingerprint (runtime.h s0__rt_fp) the engine
 * stores beside it and checks at restore.
 *
 * @threadsafety a source is used by one capture at a time, between its
 * lock() and unlock() (the engine fenced the generation before).
 */
#ifndef S0_RUNTIME_IMAGE_H
#define S0_RUNTIME_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/runtime/heap.h"

/** One memory region of a source (a reference: drop with s0__heap_unref()). */
typedef struct s0__rt_region {
	int32_t pid;    /**< the owner (a process id), unique in the image */
	s0__heap *heap;
} s0__rt_region;

/** The capture side of an image, made by a driver (every entry set). */
typedef struct s0__rt_image_src {
	void *self; /**< passed to each entry */
	/** Hold the image still (no process runs) until unlock(). */
	void (*lock)(void *self);
	void (*unlock)(void *self);
	/**
	 * Every region, by owner. @param[out] out (transfer full) array;
	 * unref each heap, then free().
	 */
	int (*regions_locked)(void *self, s0__rt_region **out, size_t *n_out, s0_error **err);
	/**
	 * The small state blob. @param[out] buf_out (transfer full) free().
	 * @param[out] dropped_out what an image cannot carry and left out
	 *             (listening sockets, MEM-10).
	 */
	int (*state_locked)(void *self, void **buf_out, size_t *len_out, uint64_t *dropped_out,
	                    s0_error **err);
	/**
	 * The runtime tmpfs as a blob (*buf_out NULL: none to carry).
	 * @param[out] buf_out (transfer full) free().
	 */
	int (*tmpfs_blob)(void *self, void **buf_out, size_t *len_out, s0_error **err);
	/** Bytes the tmpfs blob will take, about (admission estimate). */
	uint64_t (*tmpfs_bytes)(void *self);
	/**
	 * (nullable) A pause is about to stop the generation (a driver whose
	 * stop() ends what the image is taken from, e.g. S0__RT_CAP_KERNEL_FS):
	 * take the image now and let the generation end; later lock() and
	 * *_locked() calls read what was taken, also after stop().
	 * @retval S0_EMEMCAPTURE `capture_failed` (cause attached): no image.
	 */
	int (*seal)(void *self, s0_error **err);
	/**
	 * (nullable) The engine is done with this source (drop what it holds);
	 * called once per capture() that succeeded, when the driver set it.
	 */
	void (*release)(void *self);
} s0__rt_image_src;

/** One region of a restored image: its chunk table, read lazily. */
typedef struct s0__heap_image {
	int32_t pid;
	uint64_t size_bytes;
	uint32_t chunk_bytes;
	const s0__objid *pages; /**< chunk-table pages (s0__heap_new_lazy) */
	size_t npages;
} s0__heap_image;

/** What the checkpoint engine read from an image, for a driver to rebuild. */
typedef struct s0__rt_image_data {
	const void *state;      /**< the state blob */
	size_t state_len;
	const void *tmpfs;      /**< (nullable) the tmpfs blob */
	size_t tmpfs_len;
	const s0__heap_image *regions;
	size_t nregions;
	s0__pager *pager;       /**< where the regions' chunks come from (borrowed; ref it) */
} s0__rt_image_data;

/**
 * Damage found in a lazily restored chunk after the generation was
 * reported running: the process @p pid (0: only a prefetch saw it) has
 * crashed. A driver whose damage ends the whole generation (gvisor:
 * runsc's loader kills the sandbox) reports that through runtime.h
 * `exited` instead, which starts the engine's runtime failure recovery
 * (docs/decisions.md).
 */
typedef void (*s0__rt_damage_fn)(void *payload, int32_t pid, const s0_error *err);

/** Options of a driver's image_restore(). */
typedef struct s0__rt_restore_opts {
	bool prefetch;              /**< page every chunk in behind the running generation */
	s0__rt_damage_fn on_damage; /**< (nullable) */
	void *damage_payload;
} s0__rt_restore_opts;

#endif
