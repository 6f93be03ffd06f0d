/* Shared fixtures of the server suites. */
#ifndef S0_SERVER_TEST_H
#define S0_SERVER_TEST_H

#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>

#include "http_client.h"
#include "server/server_internal.h"

#define KEY_A "s0_team_a_key_0123456789"
#define KEY_B "s0_team_b_key_9876543210"

/* A stub handler: echoes what it received as JSON; "/block" waits for release. */
typedef struct stub {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int entered;  /* requests that reached the handler */
	int blocked;  /* requests currently waiting in /block */
	bool release;
	int calls;
	char last_team[96];
	char last_rid[160];
} stub;

void stub_init(stub *st);
void stub_release(stub *st);
/* Wait (real time) until n requests are blocked in /block; false after 10 s. */
bool stub_wait_blocked(stub *st, int n);
int stub_handler(void *ctx, const s0__server_call *call, const s0__http_request *req,
                 s0__http_response *resp);
size_t stub_limit(void *ctx, const char *method, const char *path, const char **wire);

/* Start a server over the stub with keys A (team_a) and B (team_b). */
s0_server *start_stub_server(stub *st, s0_server_options *o);

/* Parse a response body as JSON (NULL when it is not). */
cJSON *resp_json(const th_resp *r);
/* error.code of an error envelope ("" when absent). */
const char *err_code(cJSON *root);
const char *err_message(cJSON *root);

Suite *s0_server_core_suite(void);
Suite *s0_server_admin_suite(void);
Suite *s0_router_unit_suite(void);
Suite *s0_router_adapters_suite(void);
Suite *s0_router_files_suite(void);
Suite *s0_router_engine_suite(void);
Suite *s0_server_local_suite(void);
Suite *s0_server_teams_suite(void);
Suite *s0_server_templates_suite(void);
Suite *s0_pause_join_suite(void);
Suite *s0_server_longpoll_suite(void);
Suite *s0_streams_local_suite(void);
Suite *s0_streams_http_suite(void);

#endif
