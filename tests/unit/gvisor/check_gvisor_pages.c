/*
 * pages.img cut by content into the chunks of a gvisor memory image
 * (local/runtime/gvisor/gv_pages.h, docs/memory-gvisor.md "Recapture"):
 * the pieces' bounds, a few pages inserted early leave the pieces after
 * them unchanged, the mapped and the copied heap hold each piece at its
 * chunk's start with zeros after it (the mapped one refuses writes), the
 * layout record gives every chunk's place in pages.img back, and bad input
 * is refused. No root needed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_main.h"
#include "local/runtime/gvisor/gv_pages.h"

#define MiB (1u << 20)
#define PG 4096u

/* @p len bytes of pseudo-random pages (every page distinct). */
static uint8_t *random_bytes(size_t len, uint64_t seed)
{
	uint8_t *p = malloc(len);
	ck_assert_ptr_nonnull(p);
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (size_t i = len / 8 * 8; i < len; i++)
		p[i] = (uint8_t)i;
	return p;
}

static void cut(const uint8_t *d, size_t len, uint32_t **lens, size_t *n)
{
	s0_error *e = NULL;
	ck_assert_int_eq(s0__gv_pages_cut(d, len, MiB, lens, n, &e), S0_OK);
}

START_TEST(pieces_are_whole_pages_between_half_and_one_chunk)
{
	size_t len = 9 * MiB + 3 * PG + 100; /* a partial last page */
	uint8_t *d = random_bytes(len, 1);
	uint32_t *lens;
	size_t n;
	cut(d, len, &lens, &n);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_le(lens[i], MiB);
		if (i + 1 < n) {
			ck_assert_uint_eq(lens[i] % PG, 0);
			ck_assert_uint_ge(lens[i], MiB / 2);
		}
		sum += lens[i];
	}
	ck_assert_uint_eq(sum, len);
	ck_assert_uint_lt(n, 19); /* the pieces fill most of their chunks */
	free(lens);
	free(d);
}
END_TEST

/* Three pages inserted after 1.3 MiB (what a page the sentry allocated
 * does to pages.img): the pieces after the insertion come back. */
START_TEST(inserted_pages_leave_later_pieces_unchanged)
{
	size_t len = 24 * MiB, at = 333 * PG, ins = 3 * PG;
	uint8_t *a = random_bytes(len, 2), *b = malloc(len + ins), *extra = random_bytes(ins, 3);
	ck_assert_ptr_nonnull(b);
	memcpy(b, a, at);
	memcpy(b + at, extra, ins);
	memcpy(b + at + ins, a + at, len - at);
	uint32_t *la, *lb;
	size_t na, nb;
	cut(a, len, &la, &na);
	cut(b, len + ins, &lb, &nb);
	size_t fresh = 0, ob = 0;
	for (size_t i = 0; i < nb; ob += lb[i++]) {
		bool found = false;
		for (size_t k = 0, oa = 0; k < na && !found; oa += la[k++])
			found = la[k] == lb[i] && !memcmp(a + oa, b + ob, lb[i]);
		fresh += !found;
	}
	ck_assert_msg(fresh <= 2, "%zu of %zu pieces changed after 3 pages inserted", fresh, nb);
	free(la);
	free(lb);
	free(a);
	free(b);
	free(extra);
}
END_TEST

/* Chunk i of @p h is piece i then zeros. */
static void assert_chunks(s0__heap *h, const uint8_t *d, const uint32_t *lens, size_t n)
{
	ck_assert_uint_eq(s0__heap_size(h), n * (uint64_t)MiB);
	uint8_t *buf = malloc(MiB), *zero = calloc(1, MiB);
	ck_assert(buf && zero);
	size_t off = 0;
	for (size_t i = 0; i < n; off += lens[i++]) {
		s0_error *e = NULL;
		ck_assert_int_eq(s0__heap_read(h, i * (uint64_t)MiB, buf, MiB, &e), S0_OK);
		ck_assert(!memcmp(buf, d + off, lens[i]));
		ck_assert(!memcmp(buf + lens[i], zero, MiB - lens[i]));
	}
	free(buf);
	free(zero);
}

START_TEST(mapped_and_copied_heaps_hold_the_pieces)
{
	size_t len = 5 * MiB + 7 * PG + 10;
	uint8_t *d = random_bytes(len, 4);
	int fd = memfd_create("pages.img", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, d, len), (ssize_t)len);
	uint32_t *lens;
	size_t n;
	cut(d, len, &lens, &n);
	s0__heap *m = NULL, *c = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__gv_pages_map(fd, len, lens, n, MiB, &m, &e), S0_OK);
	close(fd); /* the mapping keeps the file's pages */
	ck_assert_int_eq(s0__gv_pages_copy(d, lens, n, MiB, &c, &e), S0_OK);
	assert_chunks(m, d, lens, n);
	assert_chunks(c, d, lens, n);
	/* read-only */
	ck_assert_int_eq(s0__heap_write(m, 0, "x", 1, &e), S0_EINVAL);
	ck_assert_str_eq(s0_error_message(e), "a mapped heap is read-only");
	s0_error_free(e);
	e = NULL;
	ck_assert_int_eq(s0__heap_grow(m, MiB, 0, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	/* lengths that do not add up */
	lens[0] -= PG;
	ck_assert_int_eq(s0__gv_pages_map(-1, len, lens, n, MiB, &m, &e), S0_EINVAL);
	s0_error_free(e);
	s0__heap_unref(m);
	s0__heap_unref(c);
	free(lens);
	free(d);
}
END_TEST

START_TEST(layout_record_places_every_chunk)
{
	size_t len = 6 * MiB + 5;
	uint8_t *d = random_bytes(len, 5);
	uint32_t *lens;
	size_t n;
	cut(d, len, &lens, &n);
	s0__buf rec = {0};
	ck_assert_int_eq(s0__gv_pages_layout(lens, n, MiB, &rec), 0);
	s0__gv_slot *slots;
	size_t ns;
	uint64_t file;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__gv_pages_slots(rec.data, rec.len, n * (uint64_t)MiB, MiB, &slots, &ns,
	                                    &file, &e),
	                 S0_OK);
	ck_assert_uint_eq(ns, n);
	ck_assert_uint_eq(file, len);
	uint64_t off = 0;
	for (size_t i = 0; i < n; off += lens[i++]) {
		ck_assert_uint_eq(slots[i].off, off);
		ck_assert_uint_eq(slots[i].len, lens[i]);
	}
	free(slots);
	/* an image without the record: chunk i is pages.img's bytes i MiB.. */
	ck_assert_int_eq(s0__gv_pages_slots(NULL, 0, 2 * MiB + 5, MiB, &slots, &ns, &file, &e), S0_OK);
	ck_assert_uint_eq(ns, 3);
	ck_assert_uint_eq(slots[2].off, 2 * MiB);
	ck_assert_uint_eq(slots[2].len, 5);
	ck_assert_uint_eq(file, 2 * MiB + 5);
	free(slots);
	/* a record that does not match its region, or a bad piece */
	ck_assert_int_eq(s0__gv_pages_slots(rec.data, rec.len, (n + 1) * (uint64_t)MiB, MiB, &slots,
	                                    &ns, &file, &e),
	                 S0_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(s0_error_message(e), "does not match its region"));
	s0_error_free(e);
	e = NULL;
	uint8_t *p = (uint8_t *)rec.data + 8; /* first length: not whole pages */
	p[0] = 1;
	ck_assert_int_eq(s0__gv_pages_slots(rec.data, rec.len, n * (uint64_t)MiB, MiB, &slots, &ns,
	                                    &file, &e),
	                 S0_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(s0_error_message(e), "bad length"));
	s0_error_free(e);
	e = NULL;
	/* a chunk size the cut refuses */
	uint32_t *none;
	ck_assert_int_eq(s0__gv_pages_cut(d, len, 3000, &none, &ns, &e), S0_EINVAL);
	ck_assert_ptr_null(none);
	s0_error_free(e);
	s0__buf_free(&rec);
	free(lens);
	free(d);
}
END_TEST

static Suite *gvisor_pages_suite(void)
{
	Suite *s = suite_create("gvisor-pages");
	TCase *tc = tcase_create("pages");
	tcase_add_test(tc, pieces_are_whole_pages_between_half_and_one_chunk);
	tcase_add_test(tc, inserted_pages_leave_later_pieces_unchanged);
	tcase_add_test(tc, mapped_and_copied_heaps_hold_the_pieces);
	tcase_add_test(tc, layout_record_places_every_chunk);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_pages_suite)
