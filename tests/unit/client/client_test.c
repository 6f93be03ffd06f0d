#include "client_test.h"

#include <stdlib.h>
#include <time.h>

#include "check_main.h"

s0t_responder *R;
s0_client *C;
int64_t ct_live_start;

int64_t ct_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

s0_client *ct_client(s0_client_options *o)
{
	s0_client_options d = S0_CLIENT_OPTIONS_INIT;
	if (!o) {
		o = &d;
		o->token = CT_TOKEN;
	}
	if (!o->base_url)
		o->base_url = s0t_responder_url(R);
	s0_client *c = NULL;
	s0_error *e = NULL;
	int rc = s0_client_new(o, &c, &e);
	ck_assert_msg(rc == S0_OK, "s0_client_new: %s", s0_error_message(e));
	s0_error_free(e);
	return c;
}

void ct_setup(void)
{
	ct_live_start = s0_live_objects();
	R = s0t_responder_new();
	ck_assert_ptr_nonnull(R);
	C = ct_client(NULL);
}

void ct_teardown(void)
{
	s0_client_free(C);
	C = NULL;
	s0t_responder_free(R);
	R = NULL;
	ck_assert_int_eq(s0_live_objects(), ct_live_start);
}

S0_TEST_MAIN(s0_client_requests_suite, s0_client_files_suite, s0_client_errors_suite,
             s0_client_parse_suite, s0_client_transport_suite, s0_client_options_suite)
