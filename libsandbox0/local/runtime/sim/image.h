/*
 * Execution images of the simulated runtime (runtime/image.h): a guest's
 * heaps are the memory regions, its small state (guest.h
 * s0__guest_state_locked) the state blob, and the runtime tmpfs its blob.
 * The driver uses these; the checkpoint tests and benchmarks use them to
 * capture and rebuild a bare guest.
 */
#ifndef S0_RUNTIME_SIM_IMAGE_H
#define S0_RUNTIME_SIM_IMAGE_H

#include "local/fsview/tmpfs.h"
#include "local/runtime/image.h"
#include "local/runtime/sim/guest.h"

/** What a source reads: a guest and (nullable) its tmpfs, borrowed. */
typedef struct s0__sim_image_ref {
	s0__guest *guest;
	s0__tmpfs *tmpfs;
} s0__sim_image_ref;

/** The image source over @p ref (which must outlive @p out's use). */
void s0__sim_image_src(s0__sim_image_ref *ref, s0__rt_image_src *out);

/**
 * Rebuild a guest (and the tmpfs, when the image carries one) from what
 * the checkpoint engine read: same PIDs, variables, cwd, fds, contexts;
 * heaps lazy on data->pager; the damage callback and prefetch of @p o.
 * @param go clock and limits of the new guest (procd_version ignored).
 * @param[out] guest_out (transfer full) @param[out] tmpfs_out (transfer
 *             full, NULL when none was captured).
 * @retval S0_ECORRUPT a damaged blob (nothing built). @retval S0_ENOMEM
 */
int s0__sim_image_build(const s0__rt_image_data *data, const s0__guest_opts *go,
                        const s0__rt_restore_opts *o, s0__guest **guest_out,
                        s0__tmpfs **tmpfs_out, s0_error **err);

#endif
