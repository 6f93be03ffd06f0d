/* The error tables of sandbox0/error.h and the error object (docs/decisions.md "Conventions",
 * "Errors"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "common_suites.h"

typedef struct code_case {
	int value;
	const char *ident, *name, *desc;
} code_case;
#define CODE_CASE(id, val, name, desc) {val, #id, name, desc},
static const code_case codes[] = {S0_CODE_MAP(CODE_CASE)};
#define N_CODES (sizeof codes / sizeof codes[0])

typedef struct wire_case {
	const char *wire;
	int status;
	int code;
	const char *reason;
} wire_case;
#define WIRE_CASE(w, st, c, r) {w, st, c, r},
static const wire_case wires[] = {S0_WIRE_ERROR_MAP(WIRE_CASE)};
#define N_WIRES (sizeof wires / sizeof wires[0])

typedef struct reason_case {
	const char *wire, *needle, *reason;
} reason_case;
#define REASON_CASE(w, m, r) {w, m, r},
static const reason_case reasons[] = {S0_WIRE_REASON_MAP(REASON_CASE)};
#define N_REASONS (sizeof reasons / sizeof reasons[0])

static bool is_code(int v)
{
	for (size_t i = 0; i < N_CODES; i++)
		if (codes[i].value == v)
			return true;
	return false;
}

static bool snake_case(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

START_TEST(test_codes_unique_and_named)
{
	for (size_t i = 0; i < N_CODES; i++) {
		ck_assert_int_le(codes[i].value, 0);
		ck_assert_msg(snake_case(codes[i].name), "%s", codes[i].name);
		ck_assert_str_ne(codes[i].desc, "");
		for (size_t j = i + 1; j < N_CODES; j++) {
			ck_assert_msg(codes[i].value != codes[j].value, "%s and %s share %d",
			              codes[i].ident, codes[j].ident, codes[i].value);
			ck_assert_msg(strcmp(codes[i].name, codes[j].name), "name %s twice", codes[i].name);
		}
		ck_assert_str_eq(s0_code_name(codes[i].value), codes[i].name);
		ck_assert_str_eq(s0_strerror(codes[i].value), codes[i].desc);
		ck_assert_int_eq(s0_code_from_name(codes[i].name), codes[i].value);
	}
	/* the documented values are stable (include/sandbox0/error.h) */
	ck_assert_int_eq(S0_OK, 0);
	ck_assert_int_eq(S0_ERROR, -1);
	ck_assert_int_eq(S0_EINVAL, -3);
	ck_assert_int_eq(S0_ECANCELED, -5);
	ck_assert_int_eq(S0_ITEROVER, -7);
	ck_assert_int_eq(S0_ENOTFOUND, -10);
	ck_assert_int_eq(S0_ETIMEDOUT, -15);
	ck_assert_int_eq(S0_ELIFECYCLE, -20);
	ck_assert_int_eq(S0_ERESUME, -21);
	ck_assert_int_eq(S0_ETRANSPORT, -30);
	ck_assert_int_eq(S0_EPROTOCOL, -31);
	ck_assert_int_eq(S0_ENOSPACE, -42);
	ck_assert_str_eq(s0_code_name(S0_ENOTFOUND), "not_found");
	/* unknown values read as S0_ERROR; unknown names give S0_ERROR */
	ck_assert_str_eq(s0_code_name(-999), "error");
	ck_assert_str_eq(s0_code_name(5), "error");
	ck_assert_str_eq(s0_strerror(-999), s0_strerror(S0_ERROR));
	ck_assert_int_eq(s0_code_from_name(NULL), S0_ERROR);
	ck_assert_int_eq(s0_code_from_name("no_such_code"), S0_ERROR);
	ck_assert_int_eq(s0_code_from_name("NOT_FOUND"), S0_ERROR);
	ck_assert_int_eq(s0_code_from_name(""), S0_ERROR);
}
END_TEST

/* Every wire row maps wire -> (code, reason) and back to the same wire and status. */
START_TEST(test_wire_rows_round_trip)
{
	for (size_t i = 0; i < N_WIRES; i++) {
		const wire_case *w = &wires[i];
		ck_assert_msg(is_code(w->code) && w->code < 0, "%s", w->wire);
		ck_assert_msg(snake_case(w->wire) && snake_case(w->reason), "%s", w->wire);
		ck_assert_int_ge(w->status, 400);
		ck_assert_int_le(w->status, 599);
		for (size_t j = i + 1; j < N_WIRES; j++) {
			ck_assert_msg(strcmp(w->wire, wires[j].wire) || w->status != wires[j].status,
			              "(%s, %d) twice", w->wire, w->status);
			ck_assert_msg(w->code != wires[j].code || strcmp(w->reason, wires[j].reason),
			              "(%s, %s) twice", s0_code_name(w->code), w->reason);
		}
		int code = 0;
		const char *reason = NULL;
		s0_error_map_wire(w->wire, w->status, NULL, &code, &reason);
		ck_assert_int_eq(code, w->code);
		ck_assert_str_eq(reason, w->reason);
		/* a message that names no reason row keeps the row's reason */
		s0_error_map_wire(w->wire, w->status, "some unrelated message", &code, &reason);
		ck_assert_str_eq(reason, w->reason);
		const char *wire = NULL, *msg = (const char *)1;
		int status = 0;
		s0_error_to_wire(w->code, w->reason, &wire, &status, &msg);
		ck_assert_str_eq(wire, w->wire);
		ck_assert_int_eq(status, w->status);
		ck_assert_ptr_null(msg);
	}
}
END_TEST

/* Every reason row: server side gives its message, client side finds the reason again. */
START_TEST(test_reason_rows_round_trip)
{
	for (size_t i = 0; i < N_REASONS; i++) {
		const reason_case *r = &reasons[i];
		ck_assert_msg(snake_case(r->reason), "%s", r->reason);
		for (size_t j = 0; j < N_REASONS; j++)
			ck_assert(i == j || strcmp(r->reason, reasons[j].reason));
		int code = 0;
		s0_error_map_wire(r->wire, 0, NULL, &code, NULL);
		ck_assert_msg(code != S0_ERROR, "reason row %s names unknown wire %s", r->reason,
		              r->wire);
		const char *wire = NULL, *msg = NULL;
		int status = 0;
		s0_error_to_wire(code, r->reason, &wire, &status, &msg);
		ck_assert_str_eq(wire, r->wire);
		ck_assert_ptr_nonnull(msg);
		ck_assert_str_eq(msg, r->needle);
		const char *reason = NULL;
		int back = 0;
		s0_error_map_wire(wire, status, msg, &back, &reason);
		ck_assert_int_eq(back, code);
		ck_assert_msg(!strcmp(reason, r->reason), "%s came back as %s", r->reason, reason);
		/* embedded in a longer server message */
		char longer[256];
		snprintf(longer, sizeof longer, "prefix: %s; suffix", r->needle);
		s0_error_map_wire(wire, status, longer, &back, &reason);
		ck_assert_str_eq(reason, r->reason);
		/* the same text under another wire code is not refined */
		s0_error_map_wire("internal_error", 500, r->needle, &back, &reason);
		ck_assert_int_eq(back, S0_EINTERNAL);
		ck_assert_str_eq(reason, "internal_error");
	}
}
END_TEST

/* Every code docs/wire.md §2.2 and §3.10 document has a row with its status. */
START_TEST(test_documented_codes_present)
{
	static const struct {
		const char *wire;
		int status, code;
	} doc[] = {
		{"bad_request", 400, S0_EINVAL},          {"unauthorized", 401, S0_EAUTH},
		{"forbidden", 403, S0_EFORBIDDEN},        {"admission_restricted", 403, S0_EFORBIDDEN},
		{"not_found", 404, S0_ENOTFOUND},         {"conflict", 409, S0_ECONFLICT},
		{"template_not_ready", 409, S0_ECONFLICT}, {"quota_exceeded", 429, S0_EQUOTA},
		{"claim_start_throttled", 429, S0_ETHROTTLED},
		{"unavailable", 503, S0_EUNAVAILABLE},    {"unavailable", 504, S0_EUNAVAILABLE},
		{"unavailable", 502, S0_EUNAVAILABLE},    {"sandbox_resume_failed", 503, S0_ERESUME},
		{"internal_error", 500, S0_EINTERNAL},    {"gone", 410, S0_EGONE},
		{"feature_not_licensed", 403, S0_EFORBIDDEN},
		{"request_too_large", 413, S0_ETOOLARGE}, {"invalid_request", 400, S0_EINVAL},
		{"read_failed", 400, S0_EINVAL},          {"invalid_paths", 400, S0_EINVAL},
		{"file_not_found", 404, S0_ENOTFOUND},    {"directory_not_found", 404, S0_ENOTFOUND},
		{"permission_denied", 403, S0_EFORBIDDEN}, {"path_exists", 409, S0_ECONFLICT},
		{"path_not_directory", 409, S0_ECONFLICT}, {"path_not_file", 409, S0_ECONFLICT},
		{"file_too_large", 413, S0_ETOOLARGE},    {"method_not_allowed", 405, S0_EUNSUPPORTED},
		{"operation_failed", 500, S0_EINTERNAL},
	};
	for (size_t i = 0; i < sizeof doc / sizeof doc[0]; i++) {
		bool found = false;
		for (size_t j = 0; j < N_WIRES && !found; j++)
			found = !strcmp(wires[j].wire, doc[i].wire) && wires[j].status == doc[i].status;
		ck_assert_msg(found, "no row for (%s, %d)", doc[i].wire, doc[i].status);
		int code;
		s0_error_map_wire(doc[i].wire, doc[i].status, NULL, &code, NULL);
		ck_assert_msg(code == doc[i].code, "%s: %s", doc[i].wire, s0_code_name(code));
	}
}
END_TEST

/* The first row of a code is its default; codes without rows go out as internal_error. */
START_TEST(test_to_wire_defaults)
{
	for (size_t i = 0; i < N_CODES; i++) {
		int code = codes[i].value;
		const wire_case *first = NULL;
		for (size_t j = 0; j < N_WIRES && !first; j++)
			if (wires[j].code == code)
				first = &wires[j];
		const char *wire = NULL, *msg = (const char *)1;
		int status = 0;
		s0_error_to_wire(code, NULL, &wire, &status, &msg);
		ck_assert_ptr_null(msg);
		if (first) {
			ck_assert_str_eq(wire, first->wire);
			ck_assert_int_eq(status, first->status);
		} else {
			ck_assert_msg(!strcmp(wire, "internal_error") && status == 500,
			              "%s has no row but went out as %s/%d", codes[i].name, wire, status);
		}
		/* an unknown reason falls back on the default too */
		const char *wire2 = NULL;
		int status2 = 0;
		s0_error_to_wire(code, "no_such_reason", &wire2, &status2, NULL);
		ck_assert_str_eq(wire2, wire);
		ck_assert_int_eq(status2, status);
	}
	/* client-only codes never go on the wire as themselves */
	int client_only[] = {S0_ECANCELED, S0_ETRANSPORT, S0_EPROTOCOL, S0_ELIFECYCLE};
	for (size_t i = 0; i < sizeof client_only / sizeof client_only[0]; i++) {
		const char *wire = NULL;
		int status = 0;
		s0_error_to_wire(client_only[i], NULL, &wire, &status, NULL);
		ck_assert_str_eq(wire, "internal_error");
		ck_assert_int_eq(status, 500);
	}
	s0_error_to_wire(S0_EUNAVAILABLE, NULL, NULL, NULL, NULL); /* NULL outputs are fine */
}
END_TEST

START_TEST(test_map_wire_fallbacks)
{
	int code;
	const char *reason;
	/* known wire code, undocumented status: the code's first row */
	s0_error_map_wire("unavailable", 500, NULL, &code, &reason);
	ck_assert_int_eq(code, S0_EUNAVAILABLE);
	ck_assert_str_eq(reason, "unavailable");
	s0_error_map_wire("unavailable", 504, "timed out waiting for sandbox to resume", &code,
	                  &reason);
	ck_assert_str_eq(reason, "gateway_timeout");
	/* reasons are refined for their own wire code only */
	s0_error_map_wire("conflict", 409, "sandbox is waking up", &code, &reason);
	ck_assert_int_eq(code, S0_ECONFLICT);
	ck_assert_str_eq(reason, "conflict");
	/* case-sensitive match of the message */
	s0_error_map_wire("unavailable", 503, "Sandbox Is Waking Up", &code, &reason);
	ck_assert_str_eq(reason, "unavailable");
	/* no code or an unknown one: the status decides */
	s0_error_map_wire(NULL, 404, NULL, &code, &reason);
	ck_assert_int_eq(code, S0_ENOTFOUND);
	s0_error_map_wire("brand_new_code", 409, "m", &code, &reason);
	ck_assert_int_eq(code, S0_ECONFLICT);
	s0_error_map_wire(NULL, 429, NULL, &code, &reason);
	ck_assert_int_eq(code, S0_ETHROTTLED);
	ck_assert_str_eq(reason, "rate_limited");
	s0_error_map_wire(NULL, 418, NULL, &code, &reason);
	ck_assert_int_eq(code, S0_EPROTOCOL);
	s0_error_map_wire(NULL, 507, NULL, &code, &reason);
	ck_assert_int_eq(code, S0_EINTERNAL);
	s0_error_map_wire(NULL, 0, NULL, &code, &reason);
	ck_assert_int_eq(code, S0_EPROTOCOL);
	ck_assert_ptr_nonnull(reason);
	s0_error_map_wire("not_found", 404, NULL, NULL, NULL);
}
END_TEST

START_TEST(test_error_object)
{
	int64_t live = s0_live_objects();
	s0_error *e = s0_error_new(S0_ENOTFOUND, NULL, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(s0_live_objects(), live + 1);
	ck_assert_int_eq(s0_error_code(e), S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_reason(e), "not_found");
	ck_assert_str_eq(s0_error_message(e), s0_strerror(S0_ENOTFOUND));
	ck_assert_ptr_null(s0_error_wire_code(e));
	ck_assert_int_eq(s0_error_http_status(e), 0);
	ck_assert_ptr_null(s0_error_request_id(e));
	ck_assert_int_eq(s0_error_retry_after_ms(e), -1);
	ck_assert_ptr_null(s0_error_details_json(e));
	size_t n = 9;
	ck_assert_ptr_null(s0_error_body(e, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(s0_error_sandbox_id(e));
	ck_assert_ptr_null(s0_error_action(e));
	ck_assert_ptr_null(s0_error_last_sandbox(e));
	ck_assert_int_eq(s0_error_timeout_ms(e), 0);
	ck_assert_ptr_null(s0_error_cause(e));
	ck_assert(!s0_error_is_retryable(e));
	ck_assert(!s0_error_is_claim_start_throttled(e));
	s0_error_free(e);
	s0_error_free(NULL);
	ck_assert_int_eq(s0_live_objects(), live);

	e = s0_error_new(S0_EUSER, "my_reason", "my message");
	ck_assert_str_eq(s0_error_reason(e), "my_reason");
	ck_assert_str_eq(s0_error_message(e), "my message");
	s0__error_set_cause(e, s0_error_new(S0_EIO, NULL, "disk"));
	ck_assert_str_eq(s0_error_message(s0_error_cause(e)), "disk");
	s0__error_set_body(e, "ab\0c", 4);
	const char *b = s0_error_body(e, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_mem_eq(b, "ab\0c", 5);
	s0_error_free(e);
	ck_assert_int_eq(s0_live_objects(), live);

	/* NULL-tolerant accessors */
	ck_assert_int_eq(s0_error_code(NULL), S0_OK);
	ck_assert_str_eq(s0_error_reason(NULL), "");
	ck_assert_str_eq(s0_error_message(NULL), "");
	ck_assert_int_eq(s0_error_retry_after_ms(NULL), -1);
	ck_assert(!s0_error_is_retryable(NULL));

	/* s0__error_set: NULL slot, empty slot, occupied slot */
	ck_assert_int_eq(s0__error_set(NULL, S0_EINVAL, NULL, "x %d", 1), S0_EINVAL);
	s0_error *slot = NULL;
	ck_assert_int_eq(s0__error_set(&slot, S0_EINVAL, "r", "x %d", 1), S0_EINVAL);
	ck_assert_str_eq(s0_error_message(slot), "x 1");
	ck_assert_int_eq(s0__error_set(&slot, S0_EIO, "r2", "second"), S0_EIO);
	ck_assert_str_eq(s0_error_message(slot), "x 1"); /* the first error is kept */
	s0_error_free(slot);
	slot = NULL;
	ck_assert_int_eq(s0__error_nomem(&slot), S0_ENOMEM);
	ck_assert_int_eq(s0_error_code(slot), S0_ENOMEM);
	s0_error_free(slot); /* the static ENOMEM error is not freed */
	ck_assert_int_eq(s0_live_objects(), live);
}
END_TEST

static s0_error *http_error(int code, int status, const char *wire, int64_t retry_ms)
{
	s0_error *e = s0__error_make(code, NULL, NULL);
	s0__error_set_http(e, status, wire, "rid", retry_ms);
	return e;
}

/* s0_error_is_retryable and the claim-throttled predicate (CL-10). */
START_TEST(test_retryable_and_throttled)
{
	static const struct {
		int code, status;
		const char *wire;
		int64_t retry;
		bool retryable, throttled;
	} rows[] = {
		{S0_EUNAVAILABLE, 503, "unavailable", -1, true, false},
		{S0_ETHROTTLED, 429, "claim_start_throttled", 1000, true, true},
		{S0_ETHROTTLED, 503, "claim_start_throttled", 1000, true, false},
		{S0_ETHROTTLED, 429, "unexpected_response", -1, true, false},
		{S0_ETRANSPORT, 0, NULL, -1, true, false},
		{S0_EQUOTA, 429, "quota_exceeded", -1, false, false},
		{S0_EQUOTA, 429, "quota_exceeded", 0, true, false},
		{S0_ENOTFOUND, 404, "not_found", -1, false, false},
		{S0_EINTERNAL, 502, "x", -1, true, false},
		{S0_EPROTOCOL, 504, "x", -1, true, false},
		{S0_ERESUME, 503, "sandbox_resume_failed", -1, false, false},
		{S0_ECONFLICT, 409, "template_not_ready", 1000, false, false},
		{S0_ECANCELED, 0, NULL, -1, false, false},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		s0_error *e = http_error(rows[i].code, rows[i].status, rows[i].wire, rows[i].retry);
		ck_assert_msg(s0_error_is_retryable(e) == rows[i].retryable, "row %zu", i);
		ck_assert_msg(s0_error_is_claim_start_throttled(e) == rows[i].throttled, "row %zu", i);
		ck_assert_int_eq(s0_error_retry_after_ms(e), rows[i].retry);
		s0_error_free(e);
	}
}
END_TEST

Suite *s0_error_map_suite(void)
{
	Suite *s = suite_create("error_map");
	TCase *tc = tcase_create("tables");
	tcase_add_test(tc, test_codes_unique_and_named);
	tcase_add_test(tc, test_wire_rows_round_trip);
	tcase_add_test(tc, test_reason_rows_round_trip);
	tcase_add_test(tc, test_documented_codes_present);
	tcase_add_test(tc, test_to_wire_defaults);
	tcase_add_test(tc, test_map_wire_fallbacks);
	tcase_add_test(tc, test_error_object);
	tcase_add_test(tc, test_retryable_and_throttled);
	suite_add_tcase(s, tc);
	return s;
}
