/*
 * CL-12 parsing tolerance of the result objects (docs/wire.md §3.0, §6.2, §6.5):
 * status and paused independent, unset timestamps, runtime_id "", unknown
 * fields ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "client_test.h"

static s0_sandbox_info *parse_ok(const char *json)
{
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	int rc = s0_sandbox_info_parse(json, &sb, &e);
	ck_assert_msg(rc == S0_OK, "%s: %s", json, s0_error_message(e));
	return sb;
}

/* CL-12: null, absent and 0001-01-01T00:00:00Z all read as unset (0). */
START_TEST(test_unset_timestamps)
{
	const char *forms[] = {
		"{\"id\":\"a\",\"expires_at\":null,\"hard_expires_at\":null,\"created_at\":null,"
		"\"updated_at\":null,\"claimed_at\":null}",
		"{\"id\":\"a\"}",
		"{\"id\":\"a\",\"expires_at\":\"0001-01-01T00:00:00Z\","
		"\"hard_expires_at\":\"0001-01-01T00:00:00Z\",\"created_at\":\"0001-01-01T00:00:00Z\","
		"\"updated_at\":\"0001-01-01T00:00:00Z\",\"claimed_at\":\"0001-01-01T00:00:00Z\"}",
		"{\"id\":\"a\",\"expires_at\":\"0001-01-01T00:00:00.000Z\","
		"\"hard_expires_at\":\"0001-01-01T00:00:00+00:00\"}",
		"{\"id\":\"a\",\"expires_at\":\"\",\"hard_expires_at\":\"garbage\"}",
	};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		s0_sandbox_info *sb = parse_ok(forms[i]);
		ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 0);
		ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), 0);
		ck_assert_int_eq(s0_sandbox_info_created_at_unix_ms(sb), 0);
		ck_assert_int_eq(s0_sandbox_info_updated_at_unix_ms(sb), 0);
		ck_assert_int_eq(s0_sandbox_info_claimed_at_unix_ms(sb), 0);
		s0_sandbox_info_free(sb);
	}
}
END_TEST

START_TEST(test_timestamps_precision_and_offsets)
{
	s0_sandbox_info *sb = parse_ok(
		"{\"id\":\"a\",\"expires_at\":\"2030-01-01T02:00:00.123456789+02:00\","
		"\"hard_expires_at\":\"2029-12-31T19:00:00-05:00\","
		"\"created_at\":\"2030-01-01T00:00:00.5Z\",\"updated_at\":\"2030-01-01t00:00:01z\"}");
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 1893456000123LL);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), 1893456000000LL);
	ck_assert_int_eq(s0_sandbox_info_created_at_unix_ms(sb), 1893456000500LL);
	ck_assert_int_eq(s0_sandbox_info_updated_at_unix_ms(sb), 1893456001000LL);
	s0_sandbox_info_free(sb);
}
END_TEST

/* CL-12: `failed` with paused true is a valid, independent combination (§6.5). */
START_TEST(test_failed_and_paused_independent)
{
	static const struct {
		const char *json;
		int status;
		bool paused;
	} rows[] = {
		{"{\"id\":\"a\",\"status\":\"failed\",\"paused\":true}", S0_STATUS_FAILED, true},
		{"{\"id\":\"a\",\"status\":\"paused\",\"paused\":false}", S0_STATUS_PAUSED, false},
		{"{\"id\":\"a\",\"status\":\"running\",\"paused\":true}", S0_STATUS_RUNNING, true},
		{"{\"id\":\"a\",\"status\":\"starting\",\"paused\":true}", S0_STATUS_STARTING, true},
		{"{\"id\":\"a\",\"status\":\"terminating\"}", S0_STATUS_TERMINATING, false},
		{"{\"id\":\"a\",\"status\":\"pausing\",\"paused\":false}", S0_STATUS_UNKNOWN, false},
		{"{\"id\":\"a\",\"status\":\"RUNNING\"}", S0_STATUS_UNKNOWN, false},
		{"{\"id\":\"a\",\"status\":null,\"paused\":null}", S0_STATUS_UNKNOWN, false},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		s0_sandbox_info *sb = parse_ok(rows[i].json);
		ck_assert_int_eq(s0_sandbox_info_status(sb), rows[i].status);
		ck_assert(s0_sandbox_info_paused(sb) == rows[i].paused);
		s0_sandbox_info_free(sb);
	}
}
END_TEST

/* CL-12: runtime_id "" means no runtime; absent reads the same. */
START_TEST(test_runtime_id_and_defaults)
{
	s0_sandbox_info *sb = parse_ok("{\"id\":\"a\",\"runtime_id\":\"\",\"paused\":true}");
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
	s0_sandbox_info_free(sb);
	sb = parse_ok("{\"id\":\"a\"}");
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
	ck_assert_str_eq(s0_sandbox_info_template_id(sb), "");
	ck_assert_str_eq(s0_sandbox_info_team_id(sb), "");
	ck_assert_str_eq(s0_sandbox_info_pod_name(sb), "");
	ck_assert(s0_sandbox_info_auto_resume(sb)); /* wire default true */
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_int_eq(s0_sandbox_info_runtime_generation(sb), 0);
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_UNKNOWN);
	s0_sandbox_info_free(sb);
	sb = parse_ok("{\"id\":\"a\",\"auto_resume\":false,\"runtime_generation\":9007199254740993,"
	              "\"runtime_id\":\"rt-9\",\"pod_name\":\"\"}");
	ck_assert(!s0_sandbox_info_auto_resume(sb));
	ck_assert_int_gt(s0_sandbox_info_runtime_generation(sb), 9007199254740000LL);
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "rt-9");
	s0_sandbox_info_free(sb);
	/* ClaimResponse spelling: sandbox_id and template */
	sb = parse_ok("{\"sandbox_id\":\"sb-9\",\"template\":\"tpl\",\"status\":\"starting\"}");
	ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-9");
	ck_assert_str_eq(s0_sandbox_info_template_id(sb), "tpl");
	s0_sandbox_info_free(sb);
	sb = parse_ok("{}");
	ck_assert_str_eq(s0_sandbox_info_id(sb), "");
	s0_sandbox_info_free(sb);
	/* null reads as absent for every modelled field */
	sb = parse_ok("{\"id\":\"a\",\"runtime_generation\":null,\"auto_resume\":null,"
	              "\"runtime_id\":null,\"pod_name\":null,\"team_id\":null,\"template_id\":null}");
	ck_assert_int_eq(s0_sandbox_info_runtime_generation(sb), 0);
	ck_assert(s0_sandbox_info_auto_resume(sb));
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
	ck_assert_str_eq(s0_sandbox_info_template_id(sb), "");
	s0_sandbox_info_free(sb);
}
END_TEST

/* CL-12: unknown extra fields are ignored but kept in the JSON view. */
START_TEST(test_unknown_fields)
{
	s0_sandbox_info *sb = parse_ok(
		"{\"id\":\"a\",\"status\":\"running\",\"ssh\":{\"host\":\"h\",\"port\":22},"
		"\"services\":[{\"id\":\"web\"}],\"resources\":{\"memory\":\"1Gi\"},"
		"\"lifecycle_operation\":null,\"future\":[1,{\"x\":true}],\"cluster_id\":null}");
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_RUNNING);
	const char *j = s0_sandbox_info_json(sb);
	ck_assert_ptr_nonnull(strstr(j, "\"ssh\":{\"host\":\"h\",\"port\":22}"));
	ck_assert_ptr_nonnull(strstr(j, "\"future\""));
	s0_sandbox_info *d = NULL;
	ck_assert_int_eq(s0_sandbox_info_dup(sb, &d, NULL), S0_OK);
	s0_sandbox_info_free(sb); /* the copy does not borrow */
	ck_assert_str_eq(s0_sandbox_info_id(d), "a");
	ck_assert_ptr_nonnull(strstr(s0_sandbox_info_json(d), "services"));
	s0_sandbox_info_free(d);
	s0_sandbox_info_free(NULL);
}
END_TEST

START_TEST(test_parse_rejects)
{
	const char *bad[] = {"", "[]", "\"x\"", "{\"id\":", "{\"id\":1}", "{\"paused\":\"true\"}",
	                     "{\"runtime_generation\":\"1\"}", "{\"template_id\":{}}", "null",
	                     "{\"auto_resume\":\"false\"}", "{\"runtime_id\":[]}", "{\"paused\":0}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		s0_sandbox_info *sb = NULL;
		s0_error *e = NULL;
		ck_assert_msg(s0_sandbox_info_parse(bad[i], &sb, &e) == S0_EPROTOCOL, "%s", bad[i]);
		ck_assert_ptr_null(sb);
		s0_error_free(e);
	}
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_info_parse(NULL, &sb, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_info_parse("{}", NULL, NULL), S0_EINVAL);
}
END_TEST

START_TEST(test_status_names)
{
	for (int s = S0_STATUS_STARTING; s <= S0_STATUS_FAILED; s++)
		ck_assert_int_eq(s0_status_from_name(s0_status_name(s)), s);
	ck_assert_str_eq(s0_status_name(S0_STATUS_RUNNING), "running");
	ck_assert_str_eq(s0_status_name(S0_STATUS_UNKNOWN), "unknown");
	ck_assert_str_eq(s0_status_name(-1), "unknown");
	ck_assert_str_eq(s0_status_name(99), "unknown");
	ck_assert_int_eq(s0_status_from_name("unknown"), S0_STATUS_UNKNOWN);
	ck_assert_int_eq(s0_status_from_name("completed"), S0_STATUS_UNKNOWN);
	ck_assert_int_eq(s0_status_from_name(NULL), S0_STATUS_UNKNOWN);
	ck_assert_uint_eq(S0_STATUS_MASK(S0_STATUS_PAUSED), 1u << 3);
}
END_TEST

/* The same tolerance through the wire: the server's compat mode. */
START_TEST(test_over_http)
{
	s0t_push_ok(R, 200,
	            "{\"id\":\"sb-1\",\"status\":\"failed\",\"paused\":true,\"runtime_id\":\"\","
	            "\"expires_at\":\"0001-01-01T00:00:00Z\",\"extra\":{\"deep\":[null]}}");
	s0t_push_ok(R, 200, "{\"sandboxes\":null,\"count\":0}");
	s0t_push_ok(R, 200, "{\"snapshots\":[{\"id\":\"s\",\"sandbox_id\":\"sb-1\","
	                    "\"created_at\":\"2030-01-01T00:00:00Z\"}],\"count\":1}");
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_FAILED);
	ck_assert(s0_sandbox_info_paused(sb));
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 0);
	s0_sandbox_info_free(sb);
	s0_sandbox_page *p = NULL;
	ck_assert_int_eq(s0_sandbox_list(C, NULL, &p, NULL), S0_OK);
	ck_assert_uint_eq(s0_sandbox_page_length(p), 0);
	ck_assert(!s0_sandbox_page_has_more(p));
	s0_sandbox_page_free(p);
	s0_snapshot_list *l = NULL;
	ck_assert_int_eq(s0_snapshot_list_get(C, "sb-1", &l, NULL), S0_OK);
	ck_assert_str_eq(s0_snapshot_info_name(s0_snapshot_list_at(l, 0)), "");
	ck_assert_int_eq(s0_snapshot_info_expires_at_unix_ms(s0_snapshot_list_at(l, 0)), 0);
	ck_assert_ptr_nonnull(s0_snapshot_info_json(s0_snapshot_list_at(l, 0)));
	s0_snapshot_list_free(l);
}
END_TEST

Suite *s0_client_parse_suite(void)
{
	Suite *s = suite_create("client_parse");
	TCase *tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_unset_timestamps);
	tcase_add_test(tc, test_timestamps_precision_and_offsets);
	tcase_add_test(tc, test_failed_and_paused_independent);
	tcase_add_test(tc, test_runtime_id_and_defaults);
	tcase_add_test(tc, test_unknown_fields);
	tcase_add_test(tc, test_parse_rejects);
	tcase_add_test(tc, test_status_names);
	tcase_add_test(tc, test_over_http);
	suite_add_tcase(s, tc);
	return s;
}
