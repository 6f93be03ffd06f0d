/* The scripted fake server of the wait tests (see fake_transport.h). */
#include "fake_transport.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cancel.h"

#define FT_START_UNIX_MS INT64_C(1700000000000) /* Tue, 14 Nov 2023 22:13:20 GMT */

int64_t ft_now(ft *f)
{
	int64_t now = f->mc ? s0_manual_clock_now(f->mc) : s0__real_monotonic_ms();
	return now - f->t0;
}

/* "running,0,3" → {"success":true,"data":{…}} */
static char *sandbox_envelope(const char *spec)
{
	char status[32] = "";
	int paused = 0;
	long long gen = 0;
	if (sscanf(spec, "%31[^,],%d,%lld", status, &paused, &gen) != 3)
		return NULL;
	char rid[32] = "";
	if (strcmp(status, "paused") != 0)
		snprintf(rid, sizeof rid, "rt-%lld", gen);
	return s0__asprintf("{\"success\":true,\"data\":{\"id\":\"" FT_SANDBOX_ID "\","
	                    "\"template_id\":\"default\",\"status\":\"%s\",\"paused\":%s,"
	                    "\"runtime_generation\":%lld,\"runtime_id\":\"%s\"}}",
	                    status, paused ? "true" : "false", gen, rid);
}

s0_sandbox_info *ft_sandbox(const char *spec)
{
	char *env = sandbox_envelope(spec);
	cJSON *root = env ? cJSON_Parse(env) : NULL;
	s0_sandbox_info *i = NULL;
	if (root)
		s0__sandbox_info_from_json(cJSON_GetObjectItem(root, "data"), &i, NULL);
	cJSON_Delete(root);
	free(env);
	return i;
}

void ft_spec_of(const s0_sandbox_info *i, char *buf, size_t n)
{
	if (!i) {
		snprintf(buf, n, "(none)");
		return;
	}
	snprintf(buf, n, "%s,%d,%" PRId64, s0_status_name(s0_sandbox_info_status(i)),
	         s0_sandbox_info_paused(i) ? 1 : 0, s0_sandbox_info_runtime_generation(i));
}

static void record(ft *f, const s0__http_request *req, int64_t timeout_ms)
{
	if (f->nrec >= FT_MAX_RECORDS)
		return;
	ft_record *r = &f->rec[f->nrec++];
	snprintf(r->method, sizeof r->method, "%s", req->method);
	const char *prefix = "/api/v1/sandboxes/" FT_SANDBOX_ID;
	const char *p = req->path;
	if (!strncmp(p, prefix, strlen(prefix)))
		p += strlen(prefix);
	snprintf(r->path, sizeof r->path, "%s", p);
	r->body = req->has_body ? s0__strndup(req->body, req->body_len) : NULL;
	r->at_ms = ft_now(f);
	r->timeout_ms = timeout_ms;
}

static const ft_step *next_step(ft *f)
{
	for (;;) {
		const ft_step *s = &f->steps[f->pos];
		if (s->kind == FT_LOOP) {
			f->loop = ++f->pos;
			continue;
		}
		if (s->kind != FT_END) {
			f->pos++;
			return s;
		}
		if (f->loop == SIZE_MAX || f->loop == f->pos) {
			f->overrun = true;
			return NULL;
		}
		f->pos = f->loop;
	}
}

static int respond(ft *f, const ft_step *s, s0__http_response *resp, s0_error **err)
{
	resp->status = s->status;
	char *body = s->sb ? sandbox_envelope(s->sb) : s0__strdup(s->body);
	if ((s->sb || s->body) && !body)
		return s0__error_set(err, S0_ERROR, "test", "bad sandbox spec %s", s->sb);
	if (body) {
		s0__headers_add(&resp->headers, "Content-Type", "application/json");
		s0__buf_puts(&resp->body, body);
	}
	free(body);
	if (s->header) {
		const char *colon = strchr(s->header, ':');
		char *name = s0__strndup(s->header, (size_t)(colon - s->header));
		s0__headers_add(&resp->headers, name, colon + 2);
		free(name);
	}
	(void)f;
	return S0_OK;
}

static int ft_send(void *ctx, const s0__http_request *req, int64_t timeout_ms,
                   s0_cancel_token *cancel, s0__http_response *resp, bool *sent, s0_error **err)
{
	ft *f = ctx;
	pthread_mutex_lock(&f->mu);
	record(f, req, timeout_ms);
	const ft_step *s = next_step(f);
	pthread_mutex_unlock(&f->mu);
	*sent = false;
	if (!s)
		return s0__error_set(err, S0_ETRANSPORT, "test_overrun", "script exhausted");
	if (s->delay_ms && f->mc)
		s0_manual_clock_advance(f->mc, s->delay_ms);
	switch (s->kind) {
	case FT_FAIL_SENT:
		*sent = true;
		return s0__error_set(err, S0_ETRANSPORT, "curl:28", "%s %s: operation timed out",
		                     req->method, req->path);
	case FT_FAIL_UNSENT:
		return s0__error_set(err, S0_ETRANSPORT, "curl:7", "%s %s: connection refused",
		                     req->method, req->path);
	case FT_CANCEL:
		s0_cancel_token_cancel(f->fire);
		return s0__error_set(err, S0_ECANCELED, "canceled", "canceled");
	case FT_BLOCK:
		*sent = true;
		if (s0__cancel_sleep(cancel, 10000) == S0_ECANCELED)
			return s0__error_set(err, S0_ECANCELED, "canceled", "canceled in flight");
		return s0__error_set(err, S0_ETRANSPORT, "curl:28", "blocked request timed out");
	default:
		*sent = true;
		return respond(f, s, resp, err);
	}
}

static void ft_free_ctx(void *ctx)
{
	(void)ctx; /* the fixture owns itself */
}

const s0__transport_ops ft_ops = {"fake", ft_send, ft_free_ctx, NULL};

ft *ft_new(const ft_step *steps, bool manual)
{
	ft *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	pthread_mutex_init(&f->mu, NULL);
	f->steps = steps;
	f->loop = SIZE_MAX;
	s0_clock clock;
	if (manual) {
		s0_manual_clock_new(FT_START_UNIX_MS, S0_MANUAL_CLOCK_AUTO_ADVANCE, &f->mc, NULL);
		s0_manual_clock_get(f->mc, &clock);
		f->t0 = s0_manual_clock_now(f->mc);
	} else {
		s0_clock_real(&clock);
		f->t0 = s0__real_monotonic_ms();
	}
	s0_cancel_token_new(&f->client_cancel, NULL);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.clock = &clock;
	o.cancel = f->client_cancel;
	if (s0__client_new_with_transport(&o, &ft_ops, f, "fake://", &f->client, NULL) < 0) {
		ft_free(f);
		return NULL;
	}
	return f;
}

void ft_free(ft *f)
{
	if (!f)
		return;
	s0_client_free(f->client);
	s0_cancel_token_free(f->client_cancel);
	s0_manual_clock_free(f->mc);
	for (size_t i = 0; i < f->nrec; i++)
		free(f->rec[i].body);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

static void append(char *buf, size_t n, const char *s)
{
	size_t len = strlen(buf);
	if (len + 1 < n)
		snprintf(buf + len, n - len, "%s", s);
}

void ft_log(ft *f, char *buf, size_t n)
{
	buf[0] = '\0';
	for (size_t i = 0; i < f->nrec; i++) {
		const ft_record *r = &f->rec[i];
		if (i)
			append(buf, n, ", ");
		append(buf, n, r->method);
		if (r->path[0]) {
			append(buf, n, " ");
			append(buf, n, r->path);
		}
		if (r->body) {
			append(buf, n, " ");
			char tmp[128];
			size_t k = 0;
			for (const char *p = r->body; *p && k + 1 < sizeof tmp; p++)
				if (*p != '"')
					tmp[k++] = *p;
			tmp[k] = '\0';
			append(buf, n, tmp);
		}
	}
}

void ft_times(ft *f, char *buf, size_t n)
{
	buf[0] = '\0';
	for (size_t i = 0; i < f->nrec; i++) {
		char t[32];
		snprintf(t, sizeof t, "%s%" PRId64, i ? "," : "", f->rec[i].at_ms);
		append(buf, n, t);
	}
}
