/* The object store front: sealing, dedupe, counters over a backend vtable. */
#include "local/objects/objstore.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct s0__objstore {
	const s0__objstore_ops *ops;
	void *ctx;
	s0__objkeys keys;
	int level;
	atomic_uint_fast64_t c[8]; /* s0__objstore_counters, in field order */
};

struct s0__objbatch {
	void *inner;
	atomic_uint_fast64_t objects, bytes, plain;
};

enum { C_OBJW, C_BYTESW, C_PLAINW, C_DEDUP, C_OBJR, C_BYTESR, C_DEL, C_BATCH };

/* Recovery check with the store's keys (vctx: struct verify_ctx). */
typedef struct verify_ctx {
	const s0__objkeys *keys;
	s0__objctx *cx;
} verify_ctx;

static bool verify(void *vctx, const s0__objid *id, const void *sealed, size_t len)
{
	verify_ctx *v = vctx;
	size_t plain, n;
	if (s0__obj_plain_len(sealed, len, &plain, id, NULL) < 0 || plain > S0__OBJ_MAX_PLAIN)
		return false;
	void *buf = malloc(plain ? plain : 1);
	bool ok = buf && s0__obj_open(v->cx, v->keys, id, sealed, len, buf, plain, &n, NULL) == S0_OK;
	free(buf);
	return ok;
}

int s0__objstore_new(const s0__objstore_ops *ops, void *ctx, const uint8_t key[S0__OBJKEY_BYTES],
                     const s0__objstore_options *opts, s0__objstore **out, s0_error **err)
{
	if (s0__global_ensure() < 0) {
		ops->close(ctx);
		return s0__error_set(err, S0_ERROR, "sodium_init", "libsodium failed to initialise");
	}
	s0__objstore *os = calloc(1, sizeof *os);
	if (!os) {
		ops->close(ctx);
		return s0__error_nomem(err);
	}
	os->ops = ops;
	os->ctx = ctx;
	os->level = opts && opts->zstd_level ? opts->zstd_level : 1;
	s0__objkeys_derive(key, &os->keys);
	if (ops->recover) {
		verify_ctx v = {&os->keys, NULL};
		int rc = s0__objctx_new(os->level, &v.cx, err);
		if (rc == S0_OK)
			rc = ops->recover(ctx, verify, &v, err);
		s0__objctx_free(v.cx);
		if (rc < 0) {
			s0__objstore_free(os);
			return rc;
		}
	}
	*out = os;
	return S0_OK;
}

void s0__objstore_free(s0__objstore *os)
{
	if (!os)
		return;
	os->ops->close(os->ctx);
	s0__objkeys_wipe(&os->keys);
	free(os);
}

void *s0__objstore_backend(s0__objstore *os)
{
	return os->ctx;
}

void s0__objstore_hash(const s0__objstore *os, const void *data, size_t len, s0__objid *out)
{
	s0__obj_hash(&os->keys, data, len, out);
}

int s0__objstore_ctx_new(const s0__objstore *os, s0__objctx **out, s0_error **err)
{
	return s0__objctx_new(os->level, out, err);
}

int s0__objstore_begin(s0__objstore *os, s0__objbatch **out, s0_error **err)
{
	s0__objbatch *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	int rc = os->ops->batch_begin(os->ctx, &b->inner, err);
	if (rc < 0) {
		free(b);
		return rc;
	}
	*out = b;
	return S0_OK;
}

int s0__objstore_put_hashed(s0__objstore *os, s0__objctx *cx, s0__objbatch *b,
                            const s0__objid *id, const void *data, size_t len, bool *stored_out,
                            s0_error **err)
{
	bool have = false;
	int rc = os->ops->has(os->ctx, b->inner, id, &have, err);
	if (rc < 0)
		return rc;
	if (have) {
		atomic_fetch_add(&os->c[C_DEDUP], 1);
		if (stored_out)
			*stored_out = false;
		return S0_OK;
	}
	s0__buf *io = s0__objctx_io(cx);
	rc = s0__obj_seal(cx, &os->keys, id, data, len, io, err);
	if (rc < 0)
		return rc;
	bool stored = false;
	rc = os->ops->put(os->ctx, b->inner, id, io->data, io->len, &stored, err);
	if (rc < 0)
		return rc;
	if (stored) {
		atomic_fetch_add(&b->objects, 1);
		atomic_fetch_add(&b->bytes, io->len);
		atomic_fetch_add(&b->plain, len);
	} else {
		atomic_fetch_add(&os->c[C_DEDUP], 1);
	}
	if (stored_out)
		*stored_out = stored;
	return S0_OK;
}

int s0__objstore_put(s0__objstore *os, s0__objctx *cx, s0__objbatch *b, const void *data,
                     size_t len, s0__objid *id_out, s0_error **err)
{
	s0__objid id;
	s0__objstore_hash(os, data, len, &id);
	int rc = s0__objstore_put_hashed(os, cx, b, &id, data, len, NULL, err);
	if (rc == S0_OK && id_out)
		*id_out = id;
	return rc;
}

int s0__objstore_commit(s0__objstore *os, s0__objbatch *b, s0_error **err)
{
	int rc = os->ops->batch_commit(os->ctx, b->inner, err);
	if (rc == S0_OK && atomic_load(&b->objects)) {
		atomic_fetch_add(&os->c[C_OBJW], atomic_load(&b->objects));
		atomic_fetch_add(&os->c[C_BYTESW], atomic_load(&b->bytes));
		atomic_fetch_add(&os->c[C_PLAINW], atomic_load(&b->plain));
		atomic_fetch_add(&os->c[C_BATCH], 1);
	}
	free(b);
	return rc;
}

void s0__objstore_abort(s0__objstore *os, s0__objbatch *b)
{
	if (!b)
		return;
	os->ops->batch_abort(os->ctx, b->inner);
	free(b);
}

int s0__objstore_has(s0__objstore *os, s0__objbatch *b, const s0__objid *id, bool *out,
                     s0_error **err)
{
	return os->ops->has(os->ctx, b ? b->inner : NULL, id, out, err);
}

int s0__objstore_get(s0__objstore *os, s0__objctx *cx, const s0__objid *id, void *buf,
                     size_t cap, size_t *len_out, s0_error **err)
{
	s0__buf *io = s0__objctx_io(cx);
	int rc = os->ops->get(os->ctx, id, io, err);
	if (rc < 0)
		return rc;
	rc = s0__obj_open(cx, &os->keys, id, io->data, io->len, buf, cap, len_out, err);
	if (rc < 0)
		return rc;
	atomic_fetch_add(&os->c[C_OBJR], 1);
	atomic_fetch_add(&os->c[C_BYTESR], io->len);
	return S0_OK;
}

int s0__objstore_get_alloc(s0__objstore *os, s0__objctx *cx, const s0__objid *id,
                           void **data_out, size_t *len_out, s0_error **err)
{
	s0__buf *io = s0__objctx_io(cx);
	int rc = os->ops->get(os->ctx, id, io, err);
	if (rc < 0)
		return rc;
	size_t plain;
	rc = s0__obj_plain_len(io->data, io->len, &plain, id, err);
	if (rc < 0)
		return rc;
	if (plain > S0__OBJ_MAX_PLAIN) {
		char hex[S0__OBJID_HEX_BYTES];
		s0__objid_hex(id, hex);
		return s0__error_set(err, S0_ECORRUPT, "object_corrupt",
		                     "object %s failed verification: bad header", hex);
	}
	void *buf = malloc(plain ? plain : 1);
	if (!buf)
		return s0__error_nomem(err);
	rc = s0__obj_open(cx, &os->keys, id, io->data, io->len, buf, plain, len_out, err);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	atomic_fetch_add(&os->c[C_OBJR], 1);
	atomic_fetch_add(&os->c[C_BYTESR], io->len);
	*data_out = buf;
	return S0_OK;
}

int s0__objstore_delete(s0__objstore *os, const s0__objid *ids, size_t n, uint64_t *deleted_out,
                        uint64_t *freed_bytes, s0_error **err)
{
	uint64_t freed = 0, nobj = 0;
	if (n) {
		int rc = os->ops->del(os->ctx, ids, n, &nobj, &freed, err);
		if (rc < 0)
			return rc;
		atomic_fetch_add(&os->c[C_DEL], nobj);
	}
	if (deleted_out)
		*deleted_out = nobj;
	if (freed_bytes)
		*freed_bytes = freed;
	return S0_OK;
}

int s0__objstore_list(s0__objstore *os, s0__objlist_cb cb, void *payload, s0_error **err)
{
	return os->ops->list(os->ctx, cb, payload, err);
}

int s0__objstore_maintain(s0__objstore *os, s0_error **err)
{
	return os->ops->maintain ? os->ops->maintain(os->ctx, err) : S0_OK;
}

int s0__objstore_usage(s0__objstore *os, s0__objstore_usage_info *out, s0_error **err)
{
	return os->ops->usage(os->ctx, out, err);
}

void s0__objstore_counters_get(const s0__objstore *os, s0__objstore_counters *out)
{
	s0__objstore *m = (s0__objstore *)os;
	out->objects_written = atomic_load(&m->c[C_OBJW]);
	out->bytes_written = atomic_load(&m->c[C_BYTESW]);
	out->plain_bytes_written = atomic_load(&m->c[C_PLAINW]);
	out->puts_deduped = atomic_load(&m->c[C_DEDUP]);
	out->objects_read = atomic_load(&m->c[C_OBJR]);
	out->bytes_read = atomic_load(&m->c[C_BYTESR]);
	out->objects_deleted = atomic_load(&m->c[C_DEL]);
	out->batches_committed = atomic_load(&m->c[C_BATCH]);
}
