/* An engine error as the API's JSON envelope, for adapters that answer
 * outside the route table (server/proxy.c: public routes). */
#include "local/api/api_internal.h"

int s0__router_reply_s0_error(s0__http_response *resp, const char *request_id, s0_error *err)
{
	s0__rctx c = {.resp = resp, .action = "proxy the route"};
	s0__reply_error(&c, err);
	if (request_id)
		s0__reply_header(&c, "X-Request-ID", request_id);
	return c.oom ? S0_ENOMEM : S0_OK;
}
