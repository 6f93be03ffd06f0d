/* Shared helpers of the block store suites. */
#include "blktest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "objenv.h"

int blk_roots(void *payload, s0__gc_emit_fn emit, void *emit_ctx, s0_error **err)
{
	blk_env *e = payload;
	for (int i = 0; i < e->n_roots; i++) {
		int rc = emit(emit_ctx, S0__GC_ROOT_GENERATION, &e->roots[i]);
		if (rc < 0)
			return rc;
	}
	return S0_OK;
}

static void open_stores(blk_env *e)
{
	uint8_t key[32];
	memset(key, 0x5a, sizeof key);
	s0_error *err = NULL;
	int rc = objenv_open(e->objdir, key, &e->os, &err);
	ck_assert_msg(rc == S0_OK, "objstore: %s", err ? s0_error_message(err) : "?");
	rc = s0__bstore_open(e->os, &e->opts, &e->bs, &err);
	ck_assert_msg(rc == S0_OK, "bstore: %s", err ? s0_error_message(err) : "?");
}

void blk_open(blk_env *e, uint32_t cs)
{
	memset(e, 0, sizeof *e);
	e->dir = s0_test_tmpdir("blocks");
	ck_assert_ptr_nonnull(e->dir);
	ck_assert_int_ge(asprintf(&e->objdir, "%s/objects", e->dir), 0);
	e->opts.chunk_bytes = cs;
	e->opts.scratch_dir = e->dir;
	e->opts.roots = blk_roots;
	e->opts.roots_payload = e;
	open_stores(e);
}

void blk_reopen(blk_env *e)
{
	s0__bstore_close(e->bs);
	s0__objstore_free(e->os);
	open_stores(e);
}

void blk_close(blk_env *e)
{
	s0__bstore_close(e->bs);
	s0__objstore_free(e->os);
	s0_test_rmrf(e->dir);
	free(e->dir);
	free(e->objdir);
}

void blk_fill(void *buf, size_t len, uint64_t seed)
{
	static const char *words[] = {"inode ", "extent ", "bitmap ", "journal ", "superblock ",
	                              "dirent ", "group ", "block ", "xattr ", "symlink "};
	uint8_t *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x1234567;
	size_t i = 0;
	while (i < len) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		const char *w = words[x % 10];
		for (size_t j = 0; w[j] && i < len; j++)
			p[i++] = (uint8_t)w[j];
		if (i < len)
			p[i++] = (uint8_t)('A' + (x >> 24) % 26);
	}
}
