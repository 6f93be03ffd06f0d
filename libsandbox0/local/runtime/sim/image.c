/* Execution images of the simulated runtime (image.h). */
#include "local/runtime/sim/image.h"

#include <stdlib.h>

static void src_lock(void *self)
{
	s0__guest_lock(((s0__sim_image_ref *)self)->guest);
}

static void src_unlock(void *self)
{
	s0__guest_unlock(((s0__sim_image_ref *)self)->guest);
}

static int src_regions(void *self, s0__rt_region **out, size_t *n_out, s0_error **err)
{
	return s0__guest_heaps_locked(((s0__sim_image_ref *)self)->guest, out, n_out, err);
}

static int src_state(void *self, void **buf_out, size_t *len_out, uint64_t *dropped_out,
                     s0_error **err)
{
	return s0__guest_state_locked(((s0__sim_image_ref *)self)->guest, buf_out, len_out,
	                              dropped_out, err);
}

static int src_tmpfs(void *self, void **buf_out, size_t *len_out, s0_error **err)
{
	s0__tmpfs *t = ((s0__sim_image_ref *)self)->tmpfs;
	*buf_out = NULL;
	*len_out = 0;
	return t ? s0__tmpfs_serialize(t, buf_out, len_out, err) : S0_OK;
}

static uint64_t src_tmpfs_bytes(void *self)
{
	s0__tmpfs *t = ((s0__sim_image_ref *)self)->tmpfs;
	return t ? s0__tmpfs_used_bytes(t) : 0;
}

void s0__sim_image_src(s0__sim_image_ref *ref, s0__rt_image_src *out)
{
	*out = (s0__rt_image_src){
		.self = ref,
		.lock = src_lock,
		.unlock = src_unlock,
		.regions_locked = src_regions,
		.state_locked = src_state,
		.tmpfs_blob = src_tmpfs,
		.tmpfs_bytes = src_tmpfs_bytes,
	};
}

int s0__sim_image_build(const s0__rt_image_data *d, const s0__guest_opts *go,
                        const s0__rt_restore_opts *o, s0__guest **guest_out,
                        s0__tmpfs **tmpfs_out, s0_error **err)
{
	s0__tmpfs *t = NULL;
	s0__guest *g = NULL;
	int rc = d->tmpfs ? s0__tmpfs_deserialize(d->tmpfs, d->tmpfs_len, &t, err) : S0_OK;
	if (rc == S0_OK)
		rc = s0__guest_restore(d->state, d->state_len, go, d->regions, d->nregions, d->pager,
		                       &g, err);
	if (rc == S0_OK && o) {
		s0__guest_set_damage_cb(g, o->on_damage, o->damage_payload);
		if (o->prefetch)
			rc = s0__guest_prefetch_start(g, err);
	}
	if (rc < 0) {
		s0__guest_free(g);
		s0__tmpfs_free(t);
		return rc;
	}
	*guest_out = g;
	*tmpfs_out = t;
	return S0_OK;
}
