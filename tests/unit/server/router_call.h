/* Calling the router directly (no sockets) in tests. */
#ifndef S0_ROUTER_CALL_H
#define S0_ROUTER_CALL_H

#include <cjson/cJSON.h>

#include "local/api/router.h"

typedef struct rc_result {
	int status;
	cJSON *json;       /* parsed body (NULL when not JSON) */
	const cJSON *data; /* json.data */
	s0__http_response resp;
} rc_result;

typedef struct rc_opts {
	const char *team;        /* default "team_a"; "" = none */
	const char *query;
	const char *body;        /* NULL = no body */
	size_t body_len;         /* 0 = strlen(body) */
	const char *const *headers; /* NULL-terminated "Name", "value" pairs */
	bool zero_time;
	bool pause_200_only;
	bool raw;                /* go through s0__router_handle_raw (path encoded) */
	int pad_;                /* unused (see CALL in the suites) */
} rc_opts;

/* Route one request through engine e; asserts the common response headers. */
rc_result rc_call(s0__engine *e, const char *method, const char *path, const rc_opts *o);
void rc_free(rc_result *r);
const char *rc_header(const rc_result *r, const char *name);
const char *rc_err_code(const rc_result *r);
const char *rc_err_message(const rc_result *r);
/* Whether an object has exactly these keys (NULL-terminated list). */
bool rc_has_keys(const cJSON *o, const char *const *keys);

#endif
