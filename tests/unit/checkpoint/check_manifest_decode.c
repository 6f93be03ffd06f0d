/*
 * Memory image manifests decode only from their canonical encoding: a blob's
 * "present" flag other than 0 or 1 is refused as corrupt instead of being read
 * as true and re-encoded as 1 (fuzz finding
 * corpus/decoders/manifest_present_flag, tests/fuzz/README.md).
 */
#include "cksuites.h"

#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "local/checkpoint/ckpt_int.h"

/* The manifest of the fuzz seed (tests/fuzz/fuzz_decoders.c), encoded. */
static void seed_manifest(s0__buf *out, s0__objid ids[2])
{
	s0__manifest m = {0};
	snprintf(m.info.sandbox_id, sizeof m.info.sandbox_id, "sb_seed");
	snprintf(m.info.rootfs_generation, sizeof m.info.rootfs_generation, "%064x", 5);
	m.info.runtime_generation = 2;
	m.info.chunk_bytes = 65536;
	m.info.logical_bytes = 65536;
	memset(ids, 0x33, 2 * sizeof *ids);
	m.state = (s0__mf_blob){.present = true, .len = 10, .nparts = 1, .ids = ids};
	s0__mf_heap heap = {.pid = 2, .size = 65536, .n = 1, .npages = 1, .pages = ids + 1};
	m.heaps = &heap;
	m.nheaps = 1;
	ck_assert_int_eq(s0__manifest_encode(&m, out, NULL), S0_OK);
}

/* Offset of the state blob's present byte: magic, two strings, two i64,
 * the fingerprint (five strings, two i64), u32, two u64. */
static size_t state_present_offset(const s0__buf *b)
{
	size_t o = 8;
	for (int i = 0; i < 7; i++) {
		uint32_t n;
		memcpy(&n, (const uint8_t *)b->data + o, 4); /* little-endian host, as CI */
		o += 4 + n;
		if (i == 1)
			o += 16; /* runtime_generation, created_at_ms */
		if (i == 5)
			o += 16; /* cpu_millis, memory_bytes */
	}
	return o + 4 + 8 + 8;
}

START_TEST(test_manifest_decode_canonical_roundtrip)
{
	s0__objid ids[2];
	s0__buf b = {0};
	seed_manifest(&b, ids);
	s0__manifest m = {0};
	ck_assert_int_eq(s0__manifest_decode(b.data, b.len, &m, NULL), S0_OK);
	s0__buf again = {0};
	ck_assert_int_eq(s0__manifest_encode(&m, &again, NULL), S0_OK);
	ck_assert_uint_eq(again.len, b.len);
	ck_assert(memcmp(again.data, b.data, b.len) == 0);
	s0__manifest_clear(&m);
	s0__buf_free(&again);
	s0__buf_free(&b);
}
END_TEST

START_TEST(test_manifest_decode_rejects_present_flag_2)
{
	s0__objid ids[2];
	s0__buf b = {0};
	seed_manifest(&b, ids);
	uint8_t *p = (uint8_t *)b.data + state_present_offset(&b);
	ck_assert_uint_eq(*p, 1); /* found the flag */
	for (unsigned v = 2; v <= 255; v += 253) {
		*p = (uint8_t)v;
		s0__manifest m = {0};
		s0_error *err = NULL;
		ck_assert_int_eq(s0__manifest_decode(b.data, b.len, &m, &err), S0_ECORRUPT);
		ck_assert_str_eq(s0_error_reason(err), "corrupt");
		s0_error_free(err);
		s0__manifest_clear(&m);
	}
	s0__buf_free(&b);
}
END_TEST

Suite *ck_manifest_decode_suite(void)
{
	Suite *s = suite_create("checkpoint-manifest-decode");
	TCase *tc = tcase_create("decode");
	tcase_add_test(tc, test_manifest_decode_canonical_roundtrip);
	tcase_add_test(tc, test_manifest_decode_rejects_present_flag_2);
	suite_add_tcase(s, tc);
	return s;
}
