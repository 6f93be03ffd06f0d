/* Unauthenticated service routes and the deferred-route answer (docs/wire.md §1.2, §8.4). */
#include "common/json.h"
#include "local/api/api_internal.h"

void s0__ep_healthz(s0__rctx *c)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *rt = d ? s0__engine_runtime_json(c->e) : NULL; /* which runtime runs sandboxes */
	cJSON *node = d ? cJSON_AddObjectToObject(d, "node") : NULL; /* which node answers */
	if (d && (!node || s0__json_add_str(node, "id", s0__engine_node_id(c->e)) < 0 ||
	          s0__json_add_str(node, "advertise", s0__engine_advertise(c->e)) < 0 ||
	          s0__json_add_str(d, "status", "healthy") < 0 ||
	          s0__json_add_i64(d, "timestamp", s0__real_unix_ms() / 1000) < 0 ||
	          !cJSON_AddItemToObject(d, "runtime", rt))) {
		cJSON_Delete(d);
		d = NULL;
	}
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}

void s0__ep_metadata(s0__rctx *c)
{
	cJSON *d = cJSON_CreateObject();
	if (d && (s0__json_add_str(d, "gateway_mode", "direct") < 0 ||
	          s0__json_add_str(d, "service", "libsandbox0") < 0)) {
		cJSON_Delete(d);
		d = NULL;
	}
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}

/* A stream that only `s0 serve` answers (before routing): the in-process
 * transport has no connection to stream on. */
void s0__ep_not_implemented(s0__rctx *c)
{
	s0__reply_err(c, 501, "not_implemented",
	              "%.16s %.200s is a server-sent event stream, which only s0 serve answers; "
	              "in process, open the same events with s0_stream_open() (kind session, "
	              "after = the last seq) or poll GET .../sessions/{id}/events",
	              c->req->method, c->req->path);
}
