/* Shared fixture of the client suites: a responder and a client on it. */
#ifndef S0_CLIENT_TEST_H
#define S0_CLIENT_TEST_H

#include <check.h>
#include <sandbox0/sandbox0.h>
#include <stdint.h>

#include "responder.h"

/* Set by ct_setup() for each test (each runs in its own forked child). */
extern s0t_responder *R;
extern s0_client *C;
extern int64_t ct_live_start;

#define CT_TOKEN "s0_test_token"

/* Start R and C (token CT_TOKEN); remember s0_live_objects(). */
void ct_setup(void);
/* Free C and R; assert that no library object leaked. */
void ct_teardown(void);
/* Make a client on R with the given options (base_url filled in when NULL). */
s0_client *ct_client(s0_client_options *o);
/* Monotonic ms of the real clock. */
int64_t ct_now_ms(void);

/* Assert request i's method, raw path and raw query (NULL: none). */
#define CT_ASSERT_REQ(q, m, p, qs)                                                  \
	do {                                                                            \
		const s0t_request *q_ = (q);                                                \
		ck_assert_ptr_nonnull(q_);                                                  \
		ck_assert_str_eq(q_->method, (m));                                          \
		ck_assert_str_eq(q_->path, (p));                                            \
		if ((qs) == NULL)                                                           \
			ck_assert_ptr_null(q_->query);                                          \
		else                                                                        \
			ck_assert_str_eq(q_->query ? q_->query : "(none)", (qs) ? (qs) : "");   \
	} while (0)

/* Assert the error's code, and that it carries the given reason. */
#define CT_ASSERT_ERR(e, code_, reason_)                                           \
	do {                                                                            \
		ck_assert_ptr_nonnull(e);                                                   \
		ck_assert_msg(s0_error_code(e) == (code_), "code %s (%s: %s), want %s",     \
		              s0_code_name(s0_error_code(e)), s0_error_reason(e),           \
		              s0_error_message(e), s0_code_name(code_));                    \
		ck_assert_str_eq(s0_error_reason(e), (reason_));                            \
	} while (0)

Suite *s0_client_requests_suite(void);
Suite *s0_client_files_suite(void);
Suite *s0_client_errors_suite(void);
Suite *s0_client_parse_suite(void);
Suite *s0_client_transport_suite(void);
Suite *s0_client_options_suite(void);

#endif
