/*
 * SEC-74 through the engine: the committed head of a paused gvisor
 * sandbox with a stored chunk altered on disk (the one holding the
 * superblock and group descriptors, then the one holding the root inode's
 * inode table). The resume fails with an error naming the refused object —
 * the kernel's ext4 never parses the altered bytes, the sandbox is not
 * started (still paused, no runtime id), and nothing of a generation
 * (runsc process, loop device, mount) is on the host. With the bytes
 * restored the same head resumes with its files.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/engine_open.h"
#include "local/local_internal.h"
#include "local/objects/objstore.h"
#include "local/objects/pack/objdir.h"
#include "lt.h"
#include "gv_host.h"

#define CS (64u * 1024)

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Chunk ci of the exported image img (fd). */
static void chunk_of(int fd, uint64_t ci, uint8_t *buf)
{
	ck_assert_int_eq(pread(fd, buf, CS, (off_t)(ci * CS)), (ssize_t)CS);
}

/* Where chunk content c is stored (pack file, offset, length). */
static void locate(lt *t, const uint8_t *c, s0__objid *id, char **path, uint64_t *off,
                   uint64_t *len)
{
	s0__objstore *os = s0__storage_objstore(s0__local_engine(t->local)->storage);
	s0__objstore_hash(os, c, CS, id);
	s0_error *e = NULL;
	int rc = s0__objdir_locate(s0__objstore_backend(os), id, path, off, len, &e);
	ck_assert_msg(rc == S0_OK, "locate: %s", s0_error_message(e));
}

static void flip(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	uint8_t b;
	ck_assert_int_eq(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0x20;
	ck_assert_int_eq(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

START_TEST(tampered_head_is_not_started)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	lt t;
	lt_open(&t, &o);
	char *id = lt_claim(&t, NULL, NULL);
	char *ctx = lt_repl(&t, id);
	char *out = lt_sh(&t, id, ctx, "echo kept > /root/kept.txt; echo ok", NULL);
	ck_assert_str_eq(out, "ok");
	free(out);
	free(ctx);
	lt_pause(&t, id);
	char *head = lt_head(&t, id);
	char img[4200];
	snprintf(img, sizeof img, "%s/head.img", t.dir);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__engine_export_generation(s0__local_engine(t.local), head, img, &e),
	                 S0_OK);
	int fd = open(img, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	uint8_t *c = malloc(CS);
	chunk_of(fd, 0, c);
	/* group 0's inode table (4 KiB blocks, 64-byte descriptors at block 1) */
	uint64_t itable = le32(c + 4096 + 0x08) | (uint64_t)le32(c + 4096 + 0x28) << 32;
	uint64_t root_ci = (itable * 4096 + 256) / CS;
	ck_assert_uint_ne(root_ci, 0);
	const uint64_t chunks[2] = {0, root_ci};
	for (int i = 0; i < 2; i++) {
		chunk_of(fd, chunks[i], c);
		s0__objid oid;
		char *path = NULL, hex[S0__OBJID_HEX_BYTES];
		uint64_t off, len;
		locate(&t, c, &oid, &path, &off, &len);
		s0__objid_hex(&oid, hex);
		flip(path, off + len / 2);
		lt_reopen(&t); /* no cache of the intact chunk */
		e = NULL;
		int rc = lt_resume_rc(&t, id, &e);
		char msgs[2048] = ""; /* the error and its causes */
		for (const s0_error *x = e; x; x = s0_error_cause(x))
			snprintf(msgs + strlen(msgs), sizeof msgs - strlen(msgs), "%s%s",
			         msgs[0] ? " <- " : "", s0_error_message(x));
		fprintf(stderr, "resume of a tampered head (chunk %llu): %s: %s\n",
		        (unsigned long long)chunks[i], s0_code_name(rc), msgs);
		ck_assert_int_ne(rc, S0_OK);
		ck_assert_msg(strstr(msgs, hex), "the error does not name %s: %s", hex, msgs);
		s0_error_free(e);
		lt_assert_paused(&t, id);
		char what[512];
		gv_leftovers(t.dir, what, sizeof what);
		ck_assert_msg(!what[0], "left on the host: %s", what);
		flip(path, off + len / 2);
		free(path);
	}
	close(fd);
	free(c);
	unlink(img);
	lt_reopen(&t);
	lt_resume(&t, id);
	ctx = lt_repl(&t, id);
	out = lt_sh(&t, id, ctx, "cat /root/kept.txt", NULL);
	ck_assert_str_eq(out, "kept");
	free(out);
	free(ctx);
	free(head);
	free(id);
	lt_close(&t);
}
END_TEST

static Suite *gvisor_tamper_suite(void)
{
	Suite *s = suite_create("gvisor_tamper");
	TCase *tc = tcase_create("tamper");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, tampered_head_is_not_started);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_tamper_suite)
