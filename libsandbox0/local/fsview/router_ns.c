/* Building the namespace of a sandbox runtime (see router.h). */
#include "local/fsview/router.h"

#include <string.h>

/* Add a mount to the tmpfs unless it is there already. */
static int ensure_mount(s0__tmpfs *t, const char *p, uint32_t mode, unsigned flags,
                        s0_error **err)
{
	s0_error *e = NULL;
	int rc = s0__tmpfs_add_mount(t, p, strlen(p), mode, flags, 0, &e);
	if (rc == S0_ECONFLICT) {
		s0_error_free(e);
		return S0_OK;
	}
	if (rc < 0)
		s0__error_put(err, e);
	return rc;
}

void s0__files_ns_init_ops(s0__files_ns *ns, const s0__files_ops *ops, void *ctx)
{
	memset(ns, 0, sizeof *ns);
	ns->ops = ops;
	ns->ops_ctx = ctx;
}

int s0__files_ns_init(s0__files_ns *ns, s0__rootfs *rootfs, s0__tmpfs *tmpfs,
                      const char *const *ephemeral, size_t n_ephemeral, s0_error **err)
{
	static const struct {
		const char *p;
		uint32_t mode;
		unsigned flags;
	} builtin[] = {{"/tmp", 01777, 0},
	               {"/proc", 0555, S0__TMPFS_RDONLY},
	               {"/dev", 0755, S0__TMPFS_RDONLY},
	               {"/sys", 0555, S0__TMPFS_RDONLY}};
	memset(ns, 0, sizeof *ns);
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < sizeof builtin / sizeof builtin[0]; i++)
		rc = ensure_mount(tmpfs, builtin[i].p, builtin[i].mode, builtin[i].flags, err);
	for (size_t i = 0; rc == S0_OK && i < n_ephemeral; i++)
		rc = ensure_mount(tmpfs, ephemeral[i], 0777, 0, err);
	if (rc == S0_OK)
		rc = s0__tmpfs_mounts(tmpfs, &ns->mounts, err);
	if (rc < 0)
		return rc;
	ns->rootfs = rootfs;
	ns->tmpfs = tmpfs;
	return S0_OK;
}

void s0__files_ns_clear(s0__files_ns *ns)
{
	if (ns)
		s0__mountset_clear(&ns->mounts);
}
