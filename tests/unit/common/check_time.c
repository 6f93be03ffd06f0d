/* RFC 3339 timestamps and Retry-After values (common/timefmt.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common_suites.h"

static int64_t parse_ok(const char *s)
{
	int64_t v = 12345;
	ck_assert_msg(s0__time_parse_rfc3339(s, &v) == 0, "\"%s\" did not parse", s);
	return v;
}

START_TEST(test_parse_valid)
{
	static const struct {
		const char *s;
		int64_t ms;
	} rows[] = {
		{"2030-01-01T00:00:00Z", 1893456000000LL},
		{"2030-01-01t00:00:00z", 1893456000000LL},
		{"2030-01-01 00:00:00Z", 1893456000000LL},
		{"2024-02-29T12:34:56Z", 1709210096000LL},
		{"2000-01-01T00:00:00Z", 946684800000LL},
		{"1969-12-31T23:59:59Z", -1000LL},
		{"2038-01-19T03:14:08Z", 2147483648000LL},
		{"9999-12-31T23:59:59Z", 253402300799000LL},
		{"1900-03-01T00:00:00Z", -2203891200000LL},
		{"0001-01-02T00:00:00Z", -62135510400000LL},
		/* fractional seconds: 1 to 9+ digits, truncated to ms */
		{"2030-01-01T00:00:00.5Z", 1893456000500LL},
		{"2030-01-01T00:00:00.12Z", 1893456000120LL},
		{"2030-01-01T00:00:00.123Z", 1893456000123LL},
		{"2030-01-01T00:00:00.123456789Z", 1893456000123LL},
		{"2030-01-01T00:00:00.999999999999Z", 1893456000999LL},
		{"2030-01-01T00:00:00.000Z", 1893456000000LL},
		/* offsets */
		{"2030-01-01T02:00:00+02:00", 1893456000000LL},
		{"2029-12-31T19:00:00-05:00", 1893456000000LL},
		{"2030-01-01T05:30:00.250+05:30", 1893456000250LL},
		{"2030-01-01T00:00:00+00:00", 1893456000000LL},
		{"2030-01-01T00:00:00-00:00", 1893456000000LL},
		{"2029-12-31T23:59:00-00:01", 1893456000000LL},
		/* leap second: accepted, read as the next second */
		{"2016-12-31T23:59:60Z", 1483228800000LL},
		/* the Go zero time means "unset" in every spelling */
		{"0001-01-01T00:00:00Z", 0},
		{"0001-01-01T00:00:00.000000Z", 0},
		{"0001-01-01T00:00:00+00:00", 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		ck_assert_msg(parse_ok(rows[i].s) == rows[i].ms, "%s: %lld, want %lld", rows[i].s,
		              (long long)parse_ok(rows[i].s), (long long)rows[i].ms);
}
END_TEST

START_TEST(test_parse_invalid)
{
	const char *bad[] = {
		"", "2030", "2030-01-01", "2030-01-01T00:00:00", "2030-01-01T00:00Z",
		"2030-01-01T00:00:00ZZ", "2030-01-01T00:00:00.Z", "2030-01-01T00:00:00,5Z",
		"2030-1-01T00:00:00Z", "2030-01-01X00:00:00Z", "2030/01/01T00:00:00Z",
		"2030-13-01T00:00:00Z", "2030-00-01T00:00:00Z", "2030-01-00T00:00:00Z",
		"2030-01-32T00:00:00Z", "2030-02-30T00:00:00Z", "2029-02-29T00:00:00Z",
		"2100-02-29T00:00:00Z", "2030-04-31T00:00:00Z", "2030-01-01T24:00:00Z",
		"2030-01-01T00:60:00Z", "2030-01-01T00:00:61Z", "2030-01-01T00:00:00+2:00",
		"2030-01-01T00:00:00+0200", "2030-01-01T00:00:00+24:00", "2030-01-01T00:00:00+01:60",
		"2030-01-01T00:00:00+01", "2030-01-01T00:00:00 Z", " 2030-01-01T00:00:00Z",
		"2030-01-01T00:00:00Z ", "abcd-ef-ghTij:kl:mnZ", "+030-01-01T00:00:00Z",
		"2030-01-01T00:00:00UTC", "2030-01-01T00:00:00GMT",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int64_t v = 777;
		ck_assert_msg(s0__time_parse_rfc3339(bad[i], &v) < 0, "\"%s\" parsed as %lld", bad[i],
		              (long long)v);
		ck_assert_int_eq(v, 777); /* untouched */
	}
	/* 2000 and 2024 are leap years */
	parse_ok("2000-02-29T00:00:00Z");
	parse_ok("2030-04-30T00:00:00Z");
}
END_TEST

START_TEST(test_format)
{
	char buf[40];
	s0__time_format_rfc3339(1893456000000LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "2030-01-01T00:00:00Z");
	s0__time_format_rfc3339(1893456000123LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "2030-01-01T00:00:00.123Z");
	s0__time_format_rfc3339(1893456000001LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "2030-01-01T00:00:00.001Z");
	s0__time_format_rfc3339(0, buf, sizeof buf);
	ck_assert_str_eq(buf, "1970-01-01T00:00:00Z");
	s0__time_format_rfc3339(-1, buf, sizeof buf);
	ck_assert_str_eq(buf, "1969-12-31T23:59:59.999Z");
	s0__time_format_rfc3339(-1000, buf, sizeof buf);
	ck_assert_str_eq(buf, "1969-12-31T23:59:59Z");
	s0__time_format_rfc3339(253402300799999LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "9999-12-31T23:59:59.999Z");
	s0__time_format_rfc3339(-62135596800000LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "0001-01-01T00:00:00Z");
	s0__time_format_rfc3339(951782400000LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "2000-02-29T00:00:00Z");
	/* outside RFC 3339's years the text is clamped, never garbage */
	s0__time_format_rfc3339(INT64_MAX, buf, sizeof buf);
	ck_assert_str_eq(buf, "9999-12-31T23:59:59.999Z");
	s0__time_format_rfc3339(INT64_MIN, buf, sizeof buf);
	ck_assert_str_eq(buf, "0001-01-01T00:00:00Z");
	s0__time_format_rfc3339(253402300800000LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "9999-12-31T23:59:59.999Z");
	/* a short buffer is truncated, never overrun */
	char small[8];
	memset(small, 'x', sizeof small);
	s0__time_format_rfc3339(1893456000000LL, small, sizeof small);
	ck_assert_str_eq(small, "2030-01");
}
END_TEST

/* format(parse(x)) and parse(format(t)) agree over a wide range. */
START_TEST(test_round_trip)
{
	uint64_t x = 88172645463325252ULL;
	long n = 20000;
	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* years 0001 .. 9999, or 1900 .. 2200 */
		int64_t t = i % 2 ? (int64_t)(x % 9467280000000ULL) - 2208988800000LL
		                  : (int64_t)(x % (uint64_t)(S0__RFC3339_MAX_MS - S0__RFC3339_MIN_MS)) +
		                        S0__RFC3339_MIN_MS;
		if (i % 3 == 0)
			t -= t % 1000; /* whole seconds too */
		if (t == 0 || t == S0__RFC3339_MIN_MS) /* both read back as "unset" (0) */
			continue;
		char buf[40];
		s0__time_format_rfc3339(t, buf, sizeof buf);
		int64_t back = 0;
		ck_assert_msg(s0__time_parse_rfc3339(buf, &back) == 0 && back == t, "%lld -> %s -> %lld",
		              (long long)t, buf, (long long)back);
	}
}
END_TEST

START_TEST(test_json_time_helpers)
{
	cJSON *o = cJSON_Parse("{\"a\":\"2030-01-01T00:00:00Z\",\"b\":null,\"c\":5,"
	                       "\"d\":\"0001-01-01T00:00:00Z\",\"e\":\"junk\"}");
	ck_assert_int_eq(s0__json_time(o, "a"), 1893456000000LL);
	ck_assert_int_eq(s0__json_time(o, "b"), 0);
	ck_assert_int_eq(s0__json_time(o, "c"), 0);
	ck_assert_int_eq(s0__json_time(o, "d"), 0);
	ck_assert_int_eq(s0__json_time(o, "e"), 0);
	ck_assert_int_eq(s0__json_time(o, "absent"), 0);
	ck_assert_int_eq(s0__json_add_time(o, "t1", 1893456000500LL, false), 0);
	ck_assert_int_eq(s0__json_add_time(o, "t2", 0, false), 0);
	ck_assert_int_eq(s0__json_add_time(o, "t3", 0, true), 0);
	ck_assert_str_eq(s0__json_str(o, "t1"), "2030-01-01T00:00:00.500Z");
	ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "t2")));
	ck_assert_str_eq(s0__json_str(o, "t3"), "0001-01-01T00:00:00Z");
	ck_assert_int_eq(s0__json_time(o, "t3"), 0);
	cJSON_Delete(o);
}
END_TEST

/* Retry-After: delta-seconds or an HTTP date (RFC 9110 §10.2.3) -> ms; -1 when invalid. */
START_TEST(test_retry_after)
{
	const int64_t now = 1893456000000LL; /* Tue, 01 Jan 2030 00:00:00 GMT */
	static const struct {
		const char *v;
		int64_t ms;
	} rows[] = {
		{"0", 0},
		{"1", 1000},
		{"120", 120000},
		{"  45\t", 45000},
		{"007", 7000},
		{"31536000", 31536000000LL}, /* one year: the largest delay taken */
		{"31536001", -1},
		{"99999999999999999999999999", -1},
		{"Tue, 01 Jan 2030 00:00:30 GMT", 30000},
		{"Tuesday, 01-Jan-30 00:02:00 GMT", 120000},
		{"Tue Jan  1 00:00:01 2030", 1000},
		{"Mon, 31 Dec 2029 23:59:59 GMT", 0}, /* past: retry now */
		{"Sun, 06 Nov 1994 08:49:37 GMT", 0},
		{"Wed, 01 Jan 2031 00:00:01 GMT", -1}, /* beyond a year: not believable */
		{"Wed, 21 Oct 999999999", -1}, /* a year that overflows milliseconds (fuzz_json) */
		{NULL, -1},
		{"", -1},
		{"   ", -1},
		{"-1", -1},
		{"+5", -1},
		{"1.5", -1},
		{"1e3", -1},
		{"0x10", -1},
		{"5 s", -1},
		{"soon", -1},
		{"tomorrow", -1},
		{"Tue", -1},
		{"GMT", -1},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int64_t got = s0__retry_after_parse(rows[i].v, now);
		ck_assert_msg(got == rows[i].ms, "\"%s\": %lld, want %lld",
		              rows[i].v ? rows[i].v : "(null)", (long long)got, (long long)rows[i].ms);
	}
}
END_TEST

Suite *s0_time_suite(void)
{
	Suite *s = suite_create("time");
	TCase *tc = tcase_create("rfc3339");
	tcase_add_test(tc, test_parse_valid);
	tcase_add_test(tc, test_parse_invalid);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_json_time_helpers);
	tcase_add_test(tc, test_retry_after);
	suite_add_tcase(s, tc);
	return s;
}
