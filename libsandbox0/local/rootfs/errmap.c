/* libext2fs errcode_t → s0 errors with the files API's wire reasons. */
#include "local/rootfs/rfs_int.h"

#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>

static bool is_no_space(errcode_t ec)
{
	return ec == EXT2_ET_BLOCK_ALLOC_FAIL || ec == EXT2_ET_INODE_ALLOC_FAIL ||
	       ec == EXT2_ET_DIR_NO_SPACE || ec == EXT2_ET_TOOSMALL || ec == ENOSPC ||
	       ec == EXT2_ET_EA_NO_SPACE || ec == EXT2_ET_INLINE_DATA_NO_SPACE;
}

int s0__rfs_fail(s0__rootfs *r, errcode_t ec, const char *what, s0_error **err)
{
	if (ec == EXT2_ET_NO_MEMORY || ec == ENOMEM)
		return s0__error_nomem(err);
	s0_error *cause = r && r->io ? s0__ext4io_take_error(r->io) : NULL;
	const char *msg = is_no_space(ec) ? "no space left on device" : error_message(ec);
	char *text = s0__asprintf("%s: %s", what, msg);
	s0_error *e = s0__error_make(S0_EINTERNAL, S0__R_FAILED, text);
	free(text);
	if (cause)
		s0__error_set_cause(e, cause);
	return s0__error_put(err, e);
}

int s0__rfs_need_rw(s0__rootfs *r, s0_error **err)
{
	if (r->rw)
		return S0_OK;
	return s0__error_set(err, S0_EFORBIDDEN, S0__R_DENIED, "filesystem is read-only");
}
