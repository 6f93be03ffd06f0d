/* Generation descriptors decode only from their canonical encoding: a
 * descriptor whose reserved word or zero tail is set is refused as corrupt
 * (fuzz finding corpus/decoders/gen_reserved_word, tests/fuzz/README.md). */
#include <string.h>

#include "blktest.h"
#include "check_main.h"
#include "local/blocks/bstore_impl.h"

/* The descriptor of the fuzz finding, before its damage. */
static void finding_base(uint8_t out[S0__GEN_BYTES])
{
	s0__gen_info g = {.size_bytes = 64ull << 20, .chunk_bytes = 65536, .depth = 3, .seq = 0,
	                  .nonzero_chunks = 7};
	memset(g.parent.b, 0x11, sizeof g.parent.b);
	memset(g.root.b, 0x22, sizeof g.root.b);
	s0__gen_encode(&g, out);
}

/* Decode buf and assert the outcome is code (with "object_corrupt" for
 * S0_ECORRUPT); on S0_OK the descriptor re-encodes to buf. */
static void expect_decode(const uint8_t buf[S0__GEN_BYTES], int code)
{
	s0__genid id;
	memset(&id, 0x44, sizeof id);
	s0__gen_info g;
	s0_error *err = NULL;
	int rc = s0__gen_decode(&id, buf, S0__GEN_BYTES, &g, &err);
	ck_assert_msg(rc == code, "got %s (%s), want %s", s0_code_name(rc),
	              err ? s0_error_message(err) : "", s0_code_name(code));
	if (rc == S0_OK) {
		uint8_t again[S0__GEN_BYTES];
		s0__gen_encode(&g, again);
		ck_assert(memcmp(again, buf, S0__GEN_BYTES) == 0);
	} else {
		ck_assert_str_eq(s0_error_reason(err), "object_corrupt");
	}
	s0_error_free(err);
}

START_TEST(test_gen_decode_canonical_roundtrip)
{
	uint8_t buf[S0__GEN_BYTES];
	finding_base(buf);
	expect_decode(buf, S0_OK);
}
END_TEST

/* The fuzz input: a valid descriptor with 0x300 in the reserved u32 at
 * offset 28 decoded, and re-encoded to different bytes. */
START_TEST(test_gen_decode_rejects_reserved_word)
{
	uint8_t buf[S0__GEN_BYTES];
	finding_base(buf);
	buf[29] = 0x03;
	expect_decode(buf, S0_ECORRUPT);
	for (int i = 28; i < 32; i++) {
		finding_base(buf);
		buf[i] = 0x80;
		expect_decode(buf, S0_ECORRUPT);
	}
}
END_TEST

START_TEST(test_gen_decode_rejects_nonzero_tail)
{
	uint8_t buf[S0__GEN_BYTES];
	for (int i = 112; i < S0__GEN_BYTES; i++) {
		finding_base(buf);
		buf[i] = 1;
		expect_decode(buf, S0_ECORRUPT);
	}
}
END_TEST

Suite *s0_bstore_gen_decode_suite(void)
{
	Suite *s = suite_create("bstore_gen_decode");
	TCase *tc = tcase_create("gen_decode");
	tcase_add_test(tc, test_gen_decode_canonical_roundtrip);
	tcase_add_test(tc, test_gen_decode_rejects_reserved_word);
	tcase_add_test(tc, test_gen_decode_rejects_nonzero_tail);
	suite_add_tcase(s, tc);
	return s;
}
