/* Byte buffers, header lists and query strings (common/buf.c, common/http.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/http.h"
#include "common/internal.h"
#include "common_suites.h"

START_TEST(test_buf_basics)
{
	s0__buf b = S0__BUF_INIT;
	ck_assert_int_eq(s0__buf_put(&b, "ab", 2), 0);
	ck_assert_int_eq(s0__buf_puts(&b, "cd"), 0);
	ck_assert_int_eq(s0__buf_printf(&b, "-%d-%s", 42, "x"), 0);
	ck_assert_uint_eq(b.len, 9);
	ck_assert_str_eq(b.data, "abcd-42-x");
	ck_assert_int_eq(s0__buf_put(&b, "\0z", 2), 0); /* binary: length counts, NUL kept */
	ck_assert_uint_eq(b.len, 11);
	ck_assert_int_eq(b.data[11], '\0');
	ck_assert_int_eq(s0__buf_put(&b, NULL, 0), 0);
	ck_assert_uint_eq(b.len, 11);
	s0__buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	/* growth across many appends keeps the content */
	for (int i = 0; i < 10000; i++)
		ck_assert_int_eq(s0__buf_printf(&b, "%04d", i % 10000), 0);
	ck_assert_uint_eq(b.len, 40000);
	ck_assert(!memcmp(b.data + 4 * 9999, "9999", 4));
	ck_assert_int_eq(b.data[b.len], '\0');
	ck_assert_uint_ge(b.cap, b.len + 1);
	size_t n = 0;
	char *d = s0__buf_detach(&b, &n);
	ck_assert_uint_eq(n, 40000);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	free(d);
	s0__buf_free(&b);
	s0__buf_free(&b); /* twice is fine */
	/* an overflowing request fails cleanly */
	ck_assert_int_eq(s0__buf_grow(&b, SIZE_MAX - 4), -1);
	ck_assert_ptr_null(b.data);
}
END_TEST

/* An untouched or only-grown buffer is still a NUL-terminated "". */
START_TEST(test_buf_empty_is_a_string)
{
	s0__buf b = S0__BUF_INIT;
	size_t n = 99;
	char *d = s0__buf_detach(&b, &n);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(n, 0);
	ck_assert_str_eq(d, "");
	free(d);
	s0__buf g = S0__BUF_INIT;
	ck_assert_int_eq(s0__buf_grow(&g, 100), 0);
	ck_assert_str_eq(g.data, "");
	d = s0__buf_detach(&g, NULL);
	ck_assert_str_eq(d, "");
	free(d);
	s0__buf p = S0__BUF_INIT;
	ck_assert_int_eq(s0__buf_printf(&p, "%s", ""), 0);
	ck_assert_str_eq(p.data, "");
	s0__buf_free(&p);
}
END_TEST

START_TEST(test_headers)
{
	s0__headers h = {0};
	ck_assert_ptr_null(s0__headers_get(&h, "X"));
	for (int i = 0; i < 50; i++) {
		char name[16], value[16];
		snprintf(name, sizeof name, "X-H%d", i);
		snprintf(value, sizeof value, "v%d", i);
		ck_assert_int_eq(s0__headers_add(&h, name, value), 0);
	}
	ck_assert_int_eq(s0__headers_add(&h, "Retry-After", NULL), 0);
	ck_assert_int_eq(s0__headers_add(&h, "X-H7", "second"), 0);
	ck_assert_uint_eq(h.len, 52);
	ck_assert_str_eq(s0__headers_get(&h, "x-h7"), "v7"); /* first one, any case */
	ck_assert_str_eq(s0__headers_get(&h, "X-H49"), "v49");
	ck_assert_str_eq(s0__headers_get(&h, "RETRY-AFTER"), "");
	ck_assert_ptr_null(s0__headers_get(&h, "X-H"));
	s0__headers_free(&h);
	ck_assert_uint_eq(h.len, 0);
	ck_assert_ptr_null(h.items);
	s0__headers_free(&h);
}
END_TEST

START_TEST(test_url_escape)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{"abcXYZ019-._~", "abcXYZ019-._~"},
		{"a b", "a%20b"},
		{"a/b?c#d&e=f+g%h", "a%2Fb%3Fc%23d%26e%3Df%2Bg%25h"},
		{"\xc3\xa9t\xc3\xa9", "%C3%A9t%C3%A9"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *e = s0__url_escape(rows[i].in);
		ck_assert_str_eq(e, rows[i].out);
		free(e);
	}
}
END_TEST

START_TEST(test_query_add)
{
	s0__buf q = S0__BUF_INIT;
	ck_assert_int_eq(s0__query_add(&q, "path", "/workspace/a b+c.txt"), 0);
	ck_assert_str_eq(q.data, "path=%2Fworkspace%2Fa%20b%2Bc.txt");
	ck_assert_int_eq(s0__query_add(&q, "mkdir", "true"), 0);
	ck_assert_int_eq(s0__query_add(&q, "k&=", "v&=?"), 0);
	ck_assert_int_eq(s0__query_add(&q, "empty", NULL), 0);
	ck_assert_str_eq(q.data,
	                 "path=%2Fworkspace%2Fa%20b%2Bc.txt&mkdir=true&k%26%3D=v%26%3D%3F&empty=");
	s0__buf_free(&q);
}
END_TEST

/* query_get decodes what query_add encodes, and what browsers and SDKs send. */
START_TEST(test_query_get)
{
	const char *q = "path=%2Fa%20b%2Bc&mkdir=true&flag&plus=a+b&empty=&dup=1&dup=2"
	                "&k%26=v%3D&utf=%C3%A9";
	bool present = false;
	char *v = s0__query_get(q, "path", &present);
	ck_assert(present);
	ck_assert_str_eq(v, "/a b+c");
	free(v);
	v = s0__query_get(q, "mkdir", NULL);
	ck_assert_str_eq(v, "true");
	free(v);
	v = s0__query_get(q, "flag", &present); /* a key without '=' has value "" */
	ck_assert(present);
	ck_assert_str_eq(v, "");
	free(v);
	v = s0__query_get(q, "plus", NULL);
	ck_assert_str_eq(v, "a b");
	free(v);
	v = s0__query_get(q, "empty", &present);
	ck_assert(present);
	ck_assert_str_eq(v, "");
	free(v);
	v = s0__query_get(q, "dup", NULL);
	ck_assert_str_eq(v, "1");
	free(v);
	v = s0__query_get(q, "k&", NULL);
	ck_assert_str_eq(v, "v=");
	free(v);
	v = s0__query_get(q, "utf", NULL);
	ck_assert_str_eq(v, "\xc3\xa9");
	free(v);
	present = true;
	ck_assert_ptr_null(s0__query_get(q, "missing", &present));
	ck_assert(!present);
	ck_assert_ptr_null(s0__query_get(q, "pat", &present));
	ck_assert(!present);
	ck_assert_ptr_null(s0__query_get(NULL, "path", &present));
	ck_assert(!present);
	ck_assert_ptr_null(s0__query_get("", "path", &present));
	ck_assert_ptr_null(s0__query_get("&&", "path", &present));
	v = s0__query_get("&&a=1&", "a", NULL);
	ck_assert_str_eq(v, "1");
	free(v);

	/* round trip through query_add */
	const char *values[] = {"/workspace/x y/z", "a+b=c&d", "%41", "", "\xe2\x82\xac 100%"};
	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		s0__buf b = S0__BUF_INIT;
		ck_assert_int_eq(s0__query_add(&b, "first", "1"), 0);
		ck_assert_int_eq(s0__query_add(&b, "path", values[i]), 0);
		v = s0__query_get(b.data, "path", &present);
		ck_assert(present);
		ck_assert_str_eq(v, values[i]);
		free(v);
		s0__buf_free(&b);
	}
}
END_TEST

START_TEST(test_string_helpers)
{
	ck_assert(s0__is_blank(NULL));
	ck_assert(s0__is_blank(""));
	ck_assert(s0__is_blank(" \t\r\n"));
	ck_assert(!s0__is_blank(" x "));
	ck_assert_ptr_null(s0__strdup(NULL));
	char *d = s0__strndup("abcdef", 3);
	ck_assert_str_eq(d, "abc");
	free(d);
	d = s0__asprintf("%s-%05d", "n", 42);
	ck_assert_str_eq(d, "n-00042");
	free(d);
	char small[4];
	s0__strlcpy(small, "abcdef", sizeof small);
	ck_assert_str_eq(small, "abc");
	s0__strlcpy(small, NULL, sizeof small);
	ck_assert_str_eq(small, "");
}
END_TEST

Suite *s0_buf_query_suite(void)
{
	Suite *s = suite_create("buf_query");
	TCase *tc = tcase_create("buf_query");
	tcase_add_test(tc, test_buf_basics);
	tcase_add_test(tc, test_buf_empty_is_a_string);
	tcase_add_test(tc, test_headers);
	tcase_add_test(tc, test_url_escape);
	tcase_add_test(tc, test_query_add);
	tcase_add_test(tc, test_query_get);
	tcase_add_test(tc, test_string_helpers);
	suite_add_tcase(s, tc);
	return s;
}
