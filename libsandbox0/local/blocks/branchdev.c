/* A branch seen through the s0__blockdev vtable. */
#include "local/blocks/bstore_impl.h"

static int bd_read(void *ctx, uint64_t off, void *buf, size_t len, s0_error **err)
{
	return s0__branch_read(ctx, off, buf, len, err);
}

static int bd_write(void *ctx, uint64_t off, const void *buf, size_t len, s0_error **err)
{
	return s0__branch_write(ctx, off, buf, len, err);
}

static int bd_flush(void *ctx, s0_error **err)
{
	return S0_OK; /* writes are visible to seal at once; publish is durability */
}

static uint64_t bd_size(void *ctx)
{
	return s0__branch_size(ctx);
}

static const s0__blockdev_ops branch_ops = {bd_read, bd_write, bd_flush, bd_size};

void s0__branch_blockdev(s0__branch *b, s0__blockdev *out)
{
	out->ops = &branch_ops;
	out->ctx = b;
}
