/*
 * Fuzz target: the decoders of what the backend stores inside its sealed
 * objects and reads back — generation descriptors (s0__gen_decode), memory
 * image manifests (s0__manifest_decode), guest state blobs
 * (s0__guest_restore), tmpfs images (s0__tmpfs_deserialize), session
 * registries (s0__sessions_deserialize), pack record headers and names
 * (s0__pack_parse_rec/_name) and object id text (s0__objid_parse). On disk
 * these bytes sit behind XChaCha20-Poly1305 (objects/codec.h), so
 * fuzz_reopen's damage never reaches them; here they get hostile bytes
 * directly. A decoded descriptor or manifest must re-encode to what it
 * decoded from.
 *
 * Input: one selector byte, then the bytes. INTERNAL HEADERS: blocks,
 * checkpoint, runtime and objects (paths below), which the engine's
 * restructuring moves; only the include lines change with it.
 *
 * S0_FUZZ_WRITE_SEEDS=DIR writes valid encodings of each kind to DIR and
 * exits (how corpus/decoders/ was made).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "local/blocks/bstore_impl.h"
#include "local/checkpoint/ckpt_int.h"
#include "local/objects/objid.h"
#include "local/objects/pack/pack.h"
#include "local/runtime/sim/guest.h"
#include "local/runtime/sim/sessions.h"
#include "local/fsview/tmpfs.h"

enum { K_GEN, K_MANIFEST, K_GUEST, K_TMPFS, K_SESSIONS, K_PACK, K_OBJID, K_COUNT };

static void write_seed(const char *dir, const char *name, int kind, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *fp = fopen(path, "wb");
	if (!fp) {
		perror(path);
		exit(1);
	}
	fputc(kind, fp);
	fwrite(p, 1, n, fp);
	fclose(fp);
}

static void write_seeds(const char *dir)
{
	s0__gen_info g = {.size_bytes = 64ull << 20, .chunk_bytes = 65536, .depth = 2, .seq = 3,
	                  .nonzero_chunks = 7};
	memset(g.parent.b, 0x11, sizeof g.parent.b);
	memset(g.root.b, 0x22, sizeof g.root.b);
	uint8_t gen[S0__GEN_BYTES];
	s0__gen_encode(&g, gen);
	write_seed(dir, "gen", K_GEN, gen, sizeof gen);

	s0__manifest m = {0};
	snprintf(m.info.sandbox_id, sizeof m.info.sandbox_id, "sb_seed");
	snprintf(m.info.rootfs_generation, sizeof m.info.rootfs_generation, "%064x", 5);
	m.info.runtime_generation = 2;
	m.info.chunk_bytes = 65536;
	m.info.logical_bytes = 65536;
	m.info.heap_chunks = 1;
	m.info.objects = 2;
	s0__objid ids[2];
	memset(ids, 0x33, sizeof ids);
	m.state = (s0__mf_blob){.present = true, .len = 10, .nparts = 1, .ids = ids};
	s0__mf_heap heap = {.pid = 2, .size = 65536, .n = 1, .npages = 1, .pages = ids + 1};
	m.heaps = &heap;
	m.nheaps = 1;
	s0__buf b = {0};
	if (s0__manifest_encode(&m, &b, NULL) == S0_OK)
		write_seed(dir, "manifest", K_MANIFEST, b.data, b.len);
	s0__buf_free(&b);

	s0__guest *gu = NULL;
	if (s0__guest_new(NULL, &gu, NULL) == S0_OK) {
		static const char *const argv[] = {"sh", "-c", "x=1; sleep 100"};
		s0__spawn_req r = {.argv = argv, .argc = 3};
		int32_t pid;
		s0__guest_spawn(gu, &r, &pid, NULL);
		void *st = NULL;
		size_t n = 0;
		uint64_t dropped = 0;
		s0__guest_lock(gu);
		int rc = s0__guest_state_locked(gu, &st, &n, &dropped, NULL);
		s0__guest_unlock(gu);
		if (rc == S0_OK)
			write_seed(dir, "guest", K_GUEST, st, n);
		free(st);
		s0__guest_free(gu);
	}

	s0__tmpfs *t = NULL;
	if (s0__tmpfs_new(&t, NULL) == S0_OK) {
		s0__tmpfs_mkdir(t, "/tmp/d", 6, true, NULL, NULL);
		s0__tmpfs_write(t, "/tmp/d/f", 8, "hello", 5, NULL, NULL);
		void *img = NULL;
		size_t n = 0;
		if (s0__tmpfs_serialize(t, &img, &n, NULL) == S0_OK)
			write_seed(dir, "tmpfs", K_TMPFS, img, n);
		free(img);
		s0__tmpfs_free(t);
	}

	s0__sessions *s = NULL;
	s0__sessions_opts so = {.generation = 1};
	if (s0__sessions_new(&so, &s, NULL) == S0_OK) {
		void *blob = NULL;
		size_t n = 0;
		if (s0__sessions_serialize(s, &blob, &n, NULL) == S0_OK)
			write_seed(dir, "sessions", K_SESSIONS, blob, n);
		free(blob);
		s0__sessions_free(s);
	}

	uint8_t rec[S0__PACK_REC_BYTES];
	s0__pack_rec_header(&ids[0], 1234, rec);
	write_seed(dir, "pack", K_PACK, rec, sizeof rec);
	char hex[2 * sizeof ids[0].b + 1];
	for (size_t i = 0; i < sizeof ids[0].b; i++)
		snprintf(hex + 2 * i, 3, "%02x", ids[0].b[i]);
	write_seed(dir, "objid", K_OBJID, hex, strlen(hex));
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *d = getenv("S0_FUZZ_WRITE_SEEDS");
	if (d && *d) {
		write_seeds(d);
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	s0_error *err = NULL;
	switch (data[0] % K_COUNT) {
	case K_GEN: {
		s0__genid id;
		memset(&id, 0x44, sizeof id);
		s0__gen_info g;
		if (s0__gen_decode(&id, p, n, &g, &err) == S0_OK) {
			uint8_t again[S0__GEN_BYTES];
			s0__gen_encode(&g, again);
			if (n != S0__GEN_BYTES || memcmp(again, p, n))
				abort(); /* accepted bytes must be the canonical encoding */
		}
		break;
	}
	case K_MANIFEST: {
		s0__manifest m = {0};
		if (s0__manifest_decode(p, n, &m, &err) == S0_OK) {
			s0__buf b = {0};
			if (s0__manifest_encode(&m, &b, NULL) == S0_OK) {
				if (b.len != n || memcmp(b.data, p, n))
					abort(); /* accepted bytes must be the canonical encoding */
				s0__manifest m2 = {0};
				if (s0__manifest_decode(b.data, b.len, &m2, NULL) != S0_OK)
					abort(); /* what we write must read back */
				s0__manifest_clear(&m2);
			}
			s0__buf_free(&b);
		}
		s0__manifest_clear(&m);
		break;
	}
	case K_GUEST: {
		s0__guest *g = NULL;
		if (s0__guest_restore(p, n, NULL, NULL, 0, NULL, &g, &err) == S0_OK) {
			void *st = NULL;
			size_t len = 0;
			uint64_t dropped = 0;
			s0__guest_lock(g);
			s0__guest_state_locked(g, &st, &len, &dropped, NULL);
			s0__guest_unlock(g);
			free(st);
			s0__guest_advance(g, 1000, NULL); /* restored processes run on */
			s0__guest_free(g);
		}
		break;
	}
	case K_TMPFS: {
		s0__tmpfs *t = NULL;
		if (s0__tmpfs_deserialize(p, n, &t, &err) == S0_OK) {
			void *img = NULL;
			size_t len = 0;
			if (s0__tmpfs_serialize(t, &img, &len, NULL) == S0_OK) {
				s0__tmpfs *t2 = NULL;
				if (s0__tmpfs_deserialize(img, len, &t2, NULL) != S0_OK)
					abort();
				s0__tmpfs_free(t2);
			}
			free(img);
			s0__tmpfs_free(t);
		}
		break;
	}
	case K_SESSIONS: {
		s0__sessions *s = NULL;
		s0__sessions_opts o = {.generation = 2};
		if (s0__sessions_deserialize(p, n, &o, &s, &err) == S0_OK) {
			void *blob = NULL;
			size_t len = 0;
			s0__sessions_serialize(s, &blob, &len, NULL);
			free(blob);
			s0__sessions_free(s);
		}
		break;
	}
	case K_PACK: {
		if (n >= S0__PACK_REC_BYTES) {
			s0__objid id;
			uint32_t len;
			s0__pack_parse_rec(p, &id, &len);
		}
		char *name = strndup((const char *)p, n);
		uint64_t pid;
		if (name)
			s0__pack_parse_name(name, &pid);
		free(name);
		break;
	}
	default: {
		char *hex = strndup((const char *)p, n);
		s0__objid id;
		if (hex && s0__objid_parse(hex, &id, &err) == S0_OK && strlen(hex) != 2 * sizeof id.b)
			abort();
		free(hex);
		break;
	}
	}
	s0_error_free(err);
	return 0;
}
