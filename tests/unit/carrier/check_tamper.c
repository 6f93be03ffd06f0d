/* SEC-74: the bytes the host kernel's ext4 parses come only from objects
 * whose content address verifies. A stored chunk of a RootFS generation
 * altered on disk (the one holding the superblock and group descriptors,
 * the one holding the root inode's inode table block) makes the attach fail
 * with a clear error naming the refused object — the kernel never sees the
 * altered bytes — and leaves no mount, loop device or record; the intact
 * store attaches again. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartest.h"
#include "local/objects/objid.h"
#include "objenv.h"

#define MiB (1024ull * 1024)
#define CS (64u * 1024)

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Chunk ci of the template generation, read through a fresh branch. */
static void read_chunk(ct *t, uint64_t ci, uint8_t *buf)
{
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t->env, &b, &err_));
	CT_OK(s0__branch_read(b, ci * CS, buf, CS, &err_));
	s0__branch_free(b);
}

/* Index of the chunk holding the root inode (inode 2): group 0's inode
 * table from the group descriptors (block 1 with 4 KiB blocks), the inode
 * size from the superblock (ext4 on-disk layout). */
static uint64_t root_inode_chunk(const uint8_t *chunk0)
{
	const uint8_t *sb = chunk0 + 1024;
	ck_assert_uint_eq(le16(sb + 0x38), 0xEF53); /* s_magic */
	ck_assert_uint_eq(le32(sb + 0x18), 2);      /* s_log_block_size: 4 KiB */
	uint16_t isize = le16(sb + 0x58);
	uint16_t dsize = le16(sb + 0xFE);
	const uint8_t *gd = chunk0 + 4096;
	uint64_t itable = le32(gd + 0x08);
	if (dsize >= 64)
		itable |= (uint64_t)le32(gd + 0x28) << 32;
	return (itable * 4096 + (uint64_t)isize) / CS;
}

static void flip(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	uint8_t c;
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)off), 1);
	c ^= 0x20;
	ck_assert_int_eq(pwrite(fd, &c, 1, (off_t)off), 1);
	close(fd);
}

/* Attach a fresh branch (cold caches): the attach fails with S0_EIO naming
 * the mount and the refused object; nothing is left on the host. */
static void attach_refused(ct *t, const s0__objid *id, const char *cid)
{
	s0__bstore_drop_caches(t->env.bs);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t->env, &b, &err_));
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__carrier_opts o = {.dev = &dev, .state_dir = t->state, .id = cid};
	s0__carrier *c = NULL;
	s0_error *e = NULL;
	int rc = s0__carrier_attach(&o, &c, &e);
	ck_assert_msg(rc == S0_EIO, "attach of a tampered generation: %s (%s)", s0_code_name(rc),
	              e ? s0_error_message(e) : "mounted");
	ck_assert_ptr_null(c);
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	const char *msg = s0_error_message(e);
	ck_assert_msg(strstr(msg, "mount ext4") && strstr(msg, hex),
	              "the error names neither the mount nor object %s: %s", hex, msg);
	s0_error_free(e);
	s0__branch_free(b);
	char what[512];
	ck_assert_msg(ct_leftovers(t->state, what, sizeof what) == 0, "left:%s", what);
	CT_OK(s0__carrier_proof(t->state, cid, &err_));
	char rec[4200];
	snprintf(rec, sizeof rec, "%s/%s.carrier", t->state, cid);
	ck_assert_int_eq(access(rec, F_OK), -1);
}

START_TEST(test_tampered_chunk_refused)
{
	ct t;
	ct_open(&t, 32 * MiB);
	uint8_t *chunk = malloc(CS);
	read_chunk(&t, 0, chunk);
	uint64_t ci = root_inode_chunk(chunk);
	ck_assert_uint_ne(ci, 0); /* a different object from the superblock's */
	struct {
		const char *what;
		s0__objid id;
	} targets[2];
	memset(targets, 0, sizeof targets);
	targets[0].what = "superblock + group descriptors";
	targets[1].what = "root inode table";
	s0__objstore_hash(t.env.os, chunk, CS, &targets[0].id);
	read_chunk(&t, ci, chunk);
	s0__objstore_hash(t.env.os, chunk, CS, &targets[1].id);
	for (int i = 0; i < 2; i++) {
		char *path = NULL;
		uint64_t off, len;
		CT_OK(objenv_locate(t.env.os, &targets[i].id, &path, &off, &len, &err_));
		/* the sealed header, the ciphertext's middle, the last byte */
		const uint64_t at[] = {off + 8, off + len / 2, off + len - 1};
		for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
			fprintf(stderr, "tamper: %s, object byte %llu of %llu\n", targets[i].what,
			        (unsigned long long)(at[k] - off), (unsigned long long)len);
			flip(path, at[k]);
			attach_refused(&t, &targets[i].id, "tampered");
			flip(path, at[k]);
		}
		free(path);
	}
	/* Restored bytes: the same generation attaches and reads. */
	s0__bstore_drop_caches(t.env.bs);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "intact");
	char *p = ct_path(c, "/etc/hostname");
	char *got = ct_get(p, NULL);
	ck_assert_str_eq(got, CARENV_HOSTNAME);
	free(got);
	free(p);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	s0__branch_free(b);
	free(chunk);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

Suite *carrier_tamper_suite(void)
{
	Suite *s = suite_create("carrier_tamper");
	TCase *tc = tcase_create("tamper");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_tampered_chunk_refused);
	suite_add_tcase(s, tc);
	return s;
}
