/*
 * The lifecycle's storage adapter over the object store (objects/), the
 * copy-on-write block store (blocks/) and ext4 (rootfs/): generations are
 * hex ids of block-store generations; a volume is a branch plus its ext4
 * handle.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>

#include "common/json.h"
#include "local/blocks/bstore.h"
#include "local/lifecycle/faults.h"
#include "local/lifecycle/storage.h"
#include "local/objects/backends.h"
#include "local/objects/objkey.h"
#include "local/rootfs/rootfs.h"
#include "local/rootfs/template.h"

struct s0__storage {
	s0__objstore *os;
	s0__bstore *bs;
	s0__faults *faults;
	char *dir;
	s0__live_gens_fn live_fn; /* GC roots from the metadata store */
	void *live_payload;
	s0__object_roots_fn obj_fn; /* object roots (retained memory images) */
	void *obj_payload;
	/* the node channel's key: crypto_kdf of the installation key (subkey 3,
	 * context "s0nodech"; docs/scaling.md "Node channel") */
	uint8_t node_key[32];
};

struct s0__volume {
	s0__storage *st;
	s0__branch *br;
	s0__blockdev dev;
	s0__rootfs *fs;
	bool lent; /* the kernel owns the branch (s0__volume_lend) */
};

static int parse_gen(const char *gen, s0__genid *out, s0_error **err)
{
	if (!gen || s0__objid_parse(gen, out, NULL) < 0)
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "unknown generation \"%s\"",
		                     gen ? gen : "");
	return S0_OK;
}

static void gen_hex(const s0__genid *g, char out[S0__GEN_MAX])
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(g, hex);
	s0__strlcpy(out, hex, S0__GEN_MAX);
}

static int roots(void *payload, s0__gc_emit_fn emit, void *emit_ctx, s0_error **err)
{
	s0__storage *st = payload;
	char **ids = NULL;
	size_t n = 0;
	int rc = st->live_fn ? st->live_fn(st->live_payload, &ids, &n, err) : S0_OK;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		s0__genid g;
		if (parse_gen(ids[i], &g, NULL) == S0_OK && emit(emit_ctx, S0__GC_ROOT_GENERATION, &g) < 0)
			rc = s0__error_nomem(err);
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	if (rc == S0_OK && st->obj_fn)
		rc = st->obj_fn(st->obj_payload, emit, emit_ctx, err);
	return rc;
}

void s0__storage_set_object_roots(s0__storage *st, s0__object_roots_fn fn, void *payload)
{
	st->obj_fn = fn;
	st->obj_payload = payload;
}

s0__objstore *s0__storage_objstore(s0__storage *st)
{
	return st->os;
}

void s0__storage_set_roots(s0__storage *st, s0__live_gens_fn fn, void *payload)
{
	st->live_fn = fn;
	st->live_payload = payload;
}

int s0__storage_open(const char *dir, const char *object_store, const char *key_file,
                     struct s0__faults *faults,
                     s0__storage **out, s0_error **err)
{
	s0__storage *st = calloc(1, sizeof *st);
	if (!st)
		return s0__error_nomem(err);
	st->faults = faults;
	st->dir = s0__strdup(dir);
	uint8_t key[S0__OBJKEY_BYTES];
	char *keypath = key_file ? s0__strdup(key_file) : s0__asprintf("%s/installation.key", dir);
	char *objdir = s0__asprintf("%s/objects", dir);
	int rc = keypath && objdir && st->dir ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = s0__objkey_load_or_create(keypath, key, NULL, err);
	if (rc == S0_OK)
		crypto_kdf_derive_from_key(st->node_key, sizeof st->node_key, 3, "s0nodech", key);
	if (rc == S0_OK)
		rc = s0__objstore_open_backend(object_store, objdir, key, NULL, &st->os, err);
	if (rc == S0_OK) {
		s0__bstore_options bo = {0};
		bo.roots = roots;
		bo.roots_payload = st;
		rc = s0__bstore_open(st->os, &bo, &st->bs, err);
	}
	sodium_memzero(key, sizeof key);
	free(keypath);
	free(objdir);
	if (rc < 0) {
		s0__storage_close(st);
		return rc;
	}
	*out = st;
	return S0_OK;
}

int s0__storage_check(const char *dir, const char *object_store, s0_error **err)
{
	char *objdir = s0__asprintf("%s/objects", dir);
	int rc = objdir ? s0__objstore_check_backend(object_store, objdir, err) : s0__error_nomem(err);
	free(objdir);
	return rc;
}

const uint8_t *s0__storage_node_key(const s0__storage *st)
{
	return st->node_key;
}

void s0__storage_close(s0__storage *st)
{
	if (!st)
		return;
	sodium_memzero(st->node_key, sizeof st->node_key);
	s0__bstore_close(st->bs);
	s0__objstore_free(st->os);
	free(st->dir);
	free(st);
}

int s0__storage_template(s0__storage *st, const char *dir, uint64_t size_bytes,
                         const char *const *ephemeral, size_t n_ephemeral,
                         char gen_out[S0__GEN_MAX], s0_error **err)
{
	size_bytes = (size_bytes + S0__ROOTFS_BLOCK_BYTES - 1) / S0__ROOTFS_BLOCK_BYTES *
	             S0__ROOTFS_BLOCK_BYTES;
	if (size_bytes < S0__ROOTFS_MIN_BYTES)
		size_bytes = S0__ROOTFS_MIN_BYTES;
	s0__genid empty, g;
	s0__branch *br = NULL;
	int rc = s0__bstore_create(st->bs, size_bytes, &empty, err);
	if (rc < 0)
		return rc;
	rc = s0__bstore_attach(st->bs, &empty, &br, err);
	s0__bstore_unref(st->bs, &empty);
	if (rc < 0)
		return rc;
	s0__blockdev dev;
	s0__branch_blockdev(br, &dev);
	s0__rootfs_image_opts io = {0};
	io.source_dir = dir;
	io.size_bytes = size_bytes;
	io.ephemeral_mounts = ephemeral;
	io.n_ephemeral_mounts = n_ephemeral;
	rc = s0__rootfs_template_build(&io, st->dir, &dev, NULL, err);
	if (rc == S0_OK)
		rc = s0__branch_publish(br, 0, &g, err);
	s0__branch_free(br);
	if (rc == S0_OK)
		gen_hex(&g, gen_out);
	return rc;
}

int s0__volume_attach(s0__storage *st, const char *gen, s0__volume **out, s0_error **err)
{
	s0__genid g;
	int rc = parse_gen(gen, &g, err);
	if (rc < 0)
		return rc;
	s0__volume *v = calloc(1, sizeof *v);
	if (!v)
		return s0__error_nomem(err);
	v->st = st;
	rc = s0__bstore_attach(st->bs, &g, &v->br, err);
	if (rc == S0_OK) {
		s0__branch_blockdev(v->br, &v->dev);
		rc = s0__rootfs_open(&v->dev, 0, &v->fs, err);
	}
	if (rc < 0) {
		s0__volume_free(v);
		return rc;
	}
	*out = v;
	return S0_OK;
}

int s0__volume_commit(s0__volume *v, char gen_out[S0__GEN_MAX], s0_error **err)
{
	v->lent = false; /* fenced from here on */
	if (v->fs) {
		int rc = s0__rootfs_close(v->fs, err);
		v->fs = NULL;
		if (rc < 0)
			return rc;
	}
	/* guest writes are fenced and synced; the upload needs the object store */
	if (s0__fault_hit(v->st->faults, "object_store", "after-seal") != S0__FAULT_NONE)
		return s0__error_set(err, S0_EUNAVAILABLE, "object_store",
		                     "sandbox rootfs store is unavailable");
	s0__genid g;
	int rc = s0__branch_publish(v->br, 0, &g, err);
	if (rc == S0_OK)
		gen_hex(&g, gen_out);
	return rc;
}

const s0__blockdev *s0__volume_dev(s0__volume *v)
{
	return &v->dev;
}

int s0__volume_lend(s0__volume *v, s0_error **err)
{
	if (!v->fs)
		return s0__error_set(err, S0_ECONFLICT, "lifecycle_conflict", "volume is fenced");
	int rc = s0__rootfs_close(v->fs, err);
	v->fs = NULL;
	v->lent = rc == S0_OK;
	return rc;
}

int s0__volume_checkpoint(s0__volume *v, char gen_out[S0__GEN_MAX], s0_error **err)
{
	if (!v->fs && !v->lent)
		return s0__error_set(err, S0_ECONFLICT, "lifecycle_conflict", "volume is fenced");
	/* lent: the runtime's cut (runtime.h) put the kernel's bytes on the branch */
	int rc = v->fs ? s0__rootfs_flush(v->fs, err) : S0_OK;
	s0__genid g;
	if (rc == S0_OK)
		rc = s0__branch_publish(v->br, S0__PUBLISH_CONTINUE, &g, err);
	if (rc == S0_OK)
		gen_hex(&g, gen_out);
	return rc;
}

bool s0__volume_sealed(const s0__volume *v)
{
	return !v || (!v->fs && !v->lent);
}

void s0__volume_free(s0__volume *v)
{
	if (!v)
		return;
	s0__rootfs_discard(v->fs);
	s0__branch_free(v->br);
	free(v);
}

struct s0__rootfs *s0__volume_rootfs(s0__volume *v)
{
	return v->fs;
}

void s0__volume_stats(s0__volume *v, int64_t *dirty_chunks, int64_t *fetched_chunks)
{
	s0__branch_counters c;
	s0__branch_counters_get(v->br, &c);
	*dirty_chunks = (int64_t)c.dirty_chunks;
	*fetched_chunks = (int64_t)c.chunks_fetched;
}

void s0__storage_unpin(s0__storage *st, const char *gen)
{
	s0__genid g;
	if (parse_gen(gen, &g, NULL) == S0_OK)
		s0__bstore_unref(st->bs, &g);
}

int s0__storage_gc(s0__storage *st, s0_error **err)
{
	return s0__bstore_gc(st->bs, NULL, err);
}

int s0__storage_gen_bytes(s0__storage *st, const char *gen, uint64_t *bytes, s0_error **err)
{
	s0__genid g;
	s0__gen_usage u = {0};
	int rc = parse_gen(gen, &g, err);
	if (rc == S0_OK)
		rc = s0__bstore_gen_usage(st->bs, &g, &u, err);
	*bytes = rc == S0_OK ? u.bytes : 0;
	return rc;
}

int s0__storage_export(s0__storage *st, const char *gen, const char *path, s0_error **err)
{
	s0__genid g;
	s0__branch *br = NULL;
	int rc = parse_gen(gen, &g, err);
	if (rc == S0_OK)
		rc = s0__bstore_attach(st->bs, &g, &br, err);
	if (rc < 0)
		return rc;
	s0__blockdev dev;
	s0__branch_blockdev(br, &dev);
	rc = s0__rootfs_image_export(&dev, path, NULL, err);
	s0__branch_free(br);
	return rc;
}

char *s0__storage_stats_json(s0__storage *st)
{
	s0__bstore_counters c;
	s0__bstore_counters_get(st->bs, &c);
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "publications", (double)c.publications);
	cJSON_AddNumberToObject(o, "objects_written", (double)c.objects_written);
	cJSON_AddNumberToObject(o, "bytes_written", (double)c.bytes_written);
	cJSON_AddNumberToObject(o, "chunks_stored", (double)c.chunks_stored);
	cJSON_AddNumberToObject(o, "chunks_fetched", (double)c.chunks_fetched);
	cJSON_AddNumberToObject(o, "chunk_bytes_fetched", (double)c.chunk_bytes_fetched);
	cJSON_AddNumberToObject(o, "gc_runs", (double)c.gc_runs);
	cJSON_AddNumberToObject(o, "gc_objects_deleted", (double)c.gc_objects_deleted);
	s0__objstore_usage_info u;
	if (s0__objstore_usage(st->os, &u, NULL) == S0_OK) {
		cJSON_AddNumberToObject(o, "objects", (double)u.objects);
		cJSON_AddNumberToObject(o, "stored_bytes", (double)u.stored_bytes);
	}
	s0__objstore_counters oc;
	s0__objstore_counters_get(st->os, &oc);
	cJSON_AddNumberToObject(o, "object_bytes_read", (double)oc.bytes_read);
	cJSON_AddNumberToObject(o, "object_bytes_written", (double)oc.bytes_written);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}
