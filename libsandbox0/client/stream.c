/* The public stream calls (sandbox0/streams.h) over either transport. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "client/client_internal.h"
#include "client/stream_vt.h"

int s0__stream_options_check(const s0_stream_options *o, s0_error **err)
{
	if (!o || o->version != S0_STREAM_OPTIONS_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_stream_options.version must be %u", S0_STREAM_OPTIONS_VERSION);
	if (o->kind < S0_STREAM_CONTEXT || o->kind > S0_STREAM_FILES_WATCH)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "unknown stream kind %d",
		                     (int)o->kind);
	if (s0__is_blank(o->sandbox_id))
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "sandbox_id is required");
	if (o->kind != S0_STREAM_FILES_WATCH && s0__is_blank(o->id))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "a context or session stream needs its id");
	if (o->after < 0 || o->wake_timeout_ms < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "after and wake_timeout_ms must be >= 0");
	return S0_OK;
}

char *s0__stream_route(const s0_stream_options *o)
{
	char *sb = s0__url_escape(o->sandbox_id);
	char *id = o->id ? s0__url_escape(o->id) : NULL;
	char *r = NULL;
	if (sb && o->kind == S0_STREAM_FILES_WATCH)
		r = s0__asprintf("/api/v1/sandboxes/%s/files/watch", sb);
	else if (sb && id && o->kind == S0_STREAM_CONTEXT)
		r = s0__asprintf("/api/v1/sandboxes/%s/contexts/%s/ws", sb, id);
	else if (sb && id)
		r = s0__asprintf("/api/v1/sandboxes/%s/sessions/%s/ws?after=%" PRId64, sb, id,
		                 o->after);
	free(sb);
	free(id);
	return r;
}

int s0_stream_open(s0_client *c, const s0_stream_options *opts, s0_stream **out,
                   s0_error **err)
{
	if (!c || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "client and out are required");
	int rc = s0__stream_options_check(opts, err);
	if (rc < 0)
		return rc;
	if (!c->ops->open_stream)
		return s0__error_set(err, S0_EUNSUPPORTED, "unsupported",
		                     "the %s transport has no streams", c->ops->name);
	return c->ops->open_stream(c->tctx, c, opts, out, err);
}

int s0_stream_send(s0_stream *st, const char *json, size_t len, s0_error **err)
{
	if (!st || !json)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "a stream and a message are required");
	return st->vt->send(st, json, len, err);
}

int s0_stream_recv(s0_stream *st, int64_t timeout_ms, char **msg_out, size_t *len_out,
                   s0_error **err)
{
	if (!st || !msg_out || (timeout_ms < 0 && timeout_ms != S0_TIMEOUT_INFINITE))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "a stream, msg_out and a timeout >= 0 are required");
	return st->vt->recv(st, timeout_ms, msg_out, len_out, err);
}

int s0_stream_close_code(const s0_stream *st, const char **reason_out)
{
	if (!st) {
		if (reason_out)
			*reason_out = "";
		return 0;
	}
	return st->vt->close_code(st, reason_out);
}

void s0_stream_free(s0_stream *st)
{
	if (st)
		st->vt->free(st);
}
