/*
 * Memory checkpoints of the gvisor driver (docs/memory-gvisor.md): the
 * capture side (gv_checkpoint.c: `runsc checkpoint` of a generation into an
 * image directory on the driver's tmpfs, read once into an image source of
 * the checkpoint engine), the restore side (gv_restore.c: a fresh image
 * directory whose pages.img the engine serves lazily, gv_pagefile.h, then
 * `runsc restore --background`) and the
 * compatibility fingerprint (gv_fingerprint.c). Used by the files of this
 * folder only.
 *
 * An image of this driver is
 *  - one memory region (pid 1): runsc's pages.img, cut by content into
 *    pieces, one per chunk of the engine (gv_pages.h; deduplicated by
 *    content against the previous capture);
 *  - the state blob: checkpoint.img (the sentry's kernel state),
 *    pages_meta.img, net_slot (the generation's network slot, gv_net.h)
 *    contexts (the contexts table, s0__gv_ctxs_save()), sessions (the
 *    session attempts, s0__gv_ses_save()) and pages_layout (the pieces'
 *    lengths) as named records;
 *  - the tmpfs blob: each runtime-only mount ("/tmp", ephemeral paths) as a
 *    tar stream (the host tmpfs serving it is not in runsc's image).
 */
#ifndef S0_RUNTIME_GVISOR_GV_MEM_H
#define S0_RUNTIME_GVISOR_GV_MEM_H

#include "local/runtime/runtime.h"

struct s0__rt_gen;
struct s0__rt_host;

/** A generation's capture state (gv_checkpoint.c), reference-counted. */
typedef struct s0__gv_ckpt s0__gv_ckpt;

/**
 * Whether memory checkpoints work with this host's runsc: NULL when they
 * do, else the missing piece (static text).
 */
const char *s0__gv_mem_missing(struct s0__rt_host *h);

/**
 * Make the driver's image directory (<dir>/images), after removing what a
 * killed process left there (its tmpfs and image directories). @retval S0_EIO
 */
int s0__gv_images_open(struct s0__rt_host *h, s0_error **err);
/** Remove it (no image is in flight by then). */
void s0__gv_images_close(struct s0__rt_host *h);
/**
 * Hold the image tmpfs: mounted over <dir>/images by the first holder, so
 * runsc reads and writes images at memory speed. Pair with
 * s0__gv_images_release(); the last release unmounts it.
 * @retval S0_EIO the tmpfs cannot be mounted. @threadsafety safe
 */
int s0__gv_images_hold(struct s0__rt_host *h, s0_error **err);
/** Drop a hold taken with s0__gv_images_hold(). @threadsafety safe */
void s0__gv_images_release(struct s0__rt_host *h);

/**
 * The image source of generation @p g (runtime.h capture()): its seal()
 * takes a final checkpoint (the sandbox ends); a lock() without it takes one
 * that leaves the sandbox running (memory forks). Each call takes a
 * reference the engine drops with release().
 */
int s0__gv_capture(struct s0__rt_gen *g, s0__rt_image_src *out, s0_error **err);
/** Drop the generation's own reference (stop()). NULL-safe. */
void s0__gv_ckpt_unref(s0__gv_ckpt *c);

/**
 * Rebuild an image the checkpoint engine read (runtime.h image_restore()):
 * a new image directory with checkpoint.img and pages_meta.img, and
 * pages.img served from the pager as it is read (gv_pagefile.h; the chunk
 * table fetched and verified here, each chunk when read).
 * @retval S0_ECORRUPT the chunk table, the state or the tmpfs blob is damaged.
 * @retval S0_ENOTFOUND a chunk-table object is missing. @retval S0_EIO
 */
int s0__gv_image_restore(struct s0__rt_host *h, const s0__rt_image_data *d,
                         s0__rt_image **out, s0_error **err);
/**
 * The procd binary @p img retained (a file in its directory, borrowed while
 * @p img lives): the one its sandbox ran at capture, which the restore
 * stages (s0__gv_init_stage()) so the restored processes keep it (MEM-11).
 */
const char *s0__gv_image_procd(const s0__rt_image *img);
/** Free a restored image (its directory removed). NULL-safe. */
void s0__gv_image_free(s0__rt_image *img);

/**
 * The network of generation @p g as a restore of @p img needs it before
 * `runsc restore` (runsc takes over the addresses of the namespace's
 * interface): s0__gv_net_prepare() into g->net with the slot recorded at
 * capture (the lowest free slot when it is taken or none was recorded).
 * Call it where start() makes a fresh generation's namespace.
 * @retval S0_EUNAVAILABLE `runtime_unavailable` as s0__gv_net_prepare().
 */
int s0__gv_restore_net(struct s0__rt_gen *g, const s0__rt_image *img, s0_error **err);

/**
 * Continue @p img in generation @p g (start(): bundle, tmpfs, network and
 * root are ready): the tmpfs contents unpacked, `runsc restore` with fresh
 * pipes as procd's stdio, the channel attached (s0__gv_init_run()), the
 * contexts and session attempts of the capture taken over
 * (s0__gv_ctxs_adopt(), s0__gv_ses_restore()).
 * Once runsc holds pages.img its server serves on by itself (gv_pagefile.h).
 * @p img stays the caller's. @retval S0_EUNAVAILABLE `restore_failed`
 * (runsc's error in the message). @retval S0_ECORRUPT a bad tmpfs blob or
 * contexts record, or `chunk_damaged`: a chunk runsc read by then.
 */
int s0__gv_restore_run(struct s0__rt_gen *g, s0__rt_image *img, s0_error **err);

/** The destination fingerprint (runtime.h fingerprint()). */
void s0__gv_fingerprint(struct s0__rt_host *h, s0__rt_fp *out);

#endif
