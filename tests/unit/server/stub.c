#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "server_test.h"

void stub_init(stub *st)
{
	memset(st, 0, sizeof *st);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv, NULL);
}

void stub_release(stub *st)
{
	pthread_mutex_lock(&st->mu);
	st->release = true;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
}

bool stub_wait_blocked(stub *st, int n)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&st->mu);
	int rc = 0;
	while (st->blocked < n && rc == 0)
		rc = pthread_cond_timedwait(&st->cv, &st->mu, &until);
	bool ok = st->blocked >= n;
	pthread_mutex_unlock(&st->mu);
	return ok;
}

static void block(stub *st)
{
	pthread_mutex_lock(&st->mu);
	st->blocked++;
	pthread_cond_broadcast(&st->cv);
	while (!st->release)
		pthread_cond_wait(&st->cv, &st->mu);
	st->blocked--;
	pthread_mutex_unlock(&st->mu);
}

int stub_handler(void *ctx, const s0__server_call *call, const s0__http_request *req,
                 s0__http_response *resp)
{
	stub *st = ctx;
	pthread_mutex_lock(&st->mu);
	st->calls++;
	st->entered++;
	s0__strlcpy(st->last_team, call->team_id ? call->team_id : "", sizeof st->last_team);
	s0__strlcpy(st->last_rid, call->request_id, sizeof st->last_rid);
	pthread_mutex_unlock(&st->mu);
	if (!strcmp(req->path, "/block"))
		block(st);
	cJSON *o = cJSON_CreateObject();
	s0__json_add_str(o, "team", call->team_id ? call->team_id : "");
	s0__json_add_str(o, "rid", call->request_id);
	s0__json_add_str(o, "method", req->method);
	s0__json_add_str(o, "path", req->path);
	s0__json_add_str(o, "query", req->query ? req->query : "");
	s0__json_add_i64(o, "body_len", (int64_t)req->body_len);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	resp->status = 200;
	s0__buf_puts(&resp->body, text);
	free(text);
	s0__headers_add(&resp->headers, "Content-Type", "application/json");
	s0__headers_add(&resp->headers, "X-Request-ID", call->request_id);
	return 0;
}

size_t stub_limit(void *ctx, const char *method, const char *path, const char **wire)
{
	(void)ctx;
	(void)method;
	if (strstr(path, "/files")) {
		*wire = "file_too_large";
		return 4096;
	}
	*wire = "request_too_large";
	return 1024;
}

s0_server *start_stub_server(stub *st, s0_server_options *o)
{
	static const s0_server_api_key keys[] = {{KEY_A, "team_a"}, {KEY_B, "team_b"}};
	s0_server_options d = S0_SERVER_OPTIONS_INIT;
	if (!o)
		o = &d;
	if (!o->api_keys) {
		o->api_keys = keys;
		o->api_keys_len = 2;
	}
	s0__server_config cfg = {.opts = o, .handler = stub_handler, .handler_ctx = st,
	                         .body_limit = stub_limit};
	s0_server *s = NULL;
	s0_error *err = NULL;
	if (s0__server_new(&cfg, &s, &err) < 0) {
		ck_abort_msg("server: %s", s0_error_message(err));
	}
	return s;
}

cJSON *resp_json(const th_resp *r)
{
	return r->body ? cJSON_Parse(r->body) : NULL;
}

const char *err_code(cJSON *root)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
	return s0__json_str0(e, "code");
}

const char *err_message(cJSON *root)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
	return s0__json_str0(e, "message");
}
