/*
 * Fuzz target: the client's decoding of responses — every endpoint's result
 * parser, the error envelope and header decoding, and the waits' state
 * machines — over a scripted transport (client_internal.h's
 * s0__client_new_with_transport) on a manual clock with auto-advance, so
 * waits run in virtual time.
 *
 * Input: one byte choosing the call, then replies separated by the line
 * "====": "STATUS\nName: value\n...\n\nBODY". A reply whose status line is
 * not a number is a transport error after sending; when the replies run
 * out the transport refuses (not sent). Every result and error is read
 * through its public accessors.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "sandbox0/sandbox0.h"

#define SEP "\n====\n"

typedef struct script {
	const char *p, *end;
	int replies;
} script;

static int fz_send(void *ctx, const s0__http_request *req, int64_t timeout_ms,
                   s0_cancel_token *cancel, s0__http_response *resp, bool *sent, s0_error **err)
{
	script *s = ctx;
	(void)timeout_ms;
	(void)cancel;
	*sent = false;
	if (s->p >= s->end || ++s->replies > 64)
		return s0__error_set(err, S0_ETRANSPORT, "curl:7", "%s %s: connection refused",
		                     req->method, req->path);
	*sent = true;
	const char *stop = memmem(s->p, (size_t)(s->end - s->p), SEP, strlen(SEP));
	const char *rend = stop ? stop : s->end;
	const char *p = s->p;
	s->p = stop ? stop + strlen(SEP) : s->end;
	/* status line */
	const char *nl = memchr(p, '\n', (size_t)(rend - p));
	const char *lend = nl ? nl : rend;
	char num[8] = "";
	size_t nlen = (size_t)(lend - p) < sizeof num - 1 ? (size_t)(lend - p) : sizeof num - 1;
	memcpy(num, p, nlen);
	char *e;
	long st = strtol(num, &e, 10);
	if (!nlen || *e)
		return s0__error_set(err, S0_ETRANSPORT, "curl:28", "operation timed out");
	resp->status = (int)st;
	p = nl ? nl + 1 : rend;
	/* headers up to an empty line */
	while (p < rend) {
		nl = memchr(p, '\n', (size_t)(rend - p));
		lend = nl ? nl : rend;
		if (lend == p) {
			p++;
			break;
		}
		char *line = s0__strndup(p, (size_t)(lend - p));
		char *colon = line ? strchr(line, ':') : NULL;
		if (colon) {
			*colon = 0;
			const char *v = colon + 1;
			while (*v == ' ')
				v++;
			s0__headers_add(&resp->headers, line, v);
		}
		free(line);
		p = nl ? nl + 1 : rend;
	}
	if (p < rend)
		s0__buf_put(&resp->body, p, (size_t)(rend - p));
	return S0_OK;
}

static void fz_free(void *ctx)
{
	(void)ctx;
}

static const s0__transport_ops fz_ops = {"fuzz", fz_send, fz_free, NULL};

static volatile size_t sink;

static void touch(const char *s)
{
	if (s)
		sink += strlen(s);
}

static void use_info(const s0_sandbox_info *i)
{
	if (!i)
		return;
	touch(s0_sandbox_info_id(i));
	touch(s0_sandbox_info_json(i));
	touch(s0_sandbox_info_template_id(i));
	touch(s0_sandbox_info_runtime_id(i));
	touch(s0_sandbox_info_team_id(i));
	touch(s0_sandbox_info_pod_name(i));
	sink += (size_t)s0_sandbox_info_status(i) + s0_sandbox_info_paused(i) +
	        (size_t)s0_sandbox_info_runtime_generation(i) +
	        (size_t)s0_sandbox_info_expires_at_unix_ms(i) +
	        (size_t)s0_sandbox_info_created_at_unix_ms(i) + s0_sandbox_info_auto_resume(i);
	s0_sandbox_info *d = NULL;
	if (s0_sandbox_info_dup(i, &d, NULL) == S0_OK)
		s0_sandbox_info_free(d);
}

static void use_error(const s0_error *e)
{
	for (; e; e = s0_error_cause(e)) {
		touch(s0_error_message(e));
		touch(s0_error_reason(e));
		touch(s0_error_wire_code(e));
		touch(s0_error_request_id(e));
		touch(s0_error_details_json(e));
		touch(s0_error_sandbox_id(e));
		touch(s0_error_action(e));
		size_t n = 0;
		s0_error_body(e, &n);
		sink += n + (size_t)s0_error_http_status(e) + (size_t)s0_error_retry_after_ms(e) +
		        s0_error_is_retryable(e);
		use_info(s0_error_last_sandbox(e));
	}
}

static void use_result(s0_lifecycle_result *r)
{
	if (!r)
		return;
	touch(s0_lifecycle_result_json(r));
	touch(s0_lifecycle_result_sandbox_id(r));
	touch(s0_lifecycle_result_snapshot_id(r));
	sink += (size_t)s0_lifecycle_result_status(r) + s0_lifecycle_result_paused(r) +
	        s0_lifecycle_result_resumed(r) + (size_t)s0_lifecycle_result_http_status(r);
	s0_lifecycle_result_free(r);
}

static void use_snap(const s0_snapshot_info *s)
{
	if (!s)
		return;
	touch(s0_snapshot_info_id(s));
	touch(s0_snapshot_info_json(s));
	touch(s0_snapshot_info_name(s));
	touch(s0_snapshot_info_description(s));
	touch(s0_snapshot_info_sandbox_id(s));
	sink += (size_t)s0_snapshot_info_created_at_unix_ms(s);
}

static void use_file(const s0_file_info *f)
{
	if (!f)
		return;
	touch(s0_file_info_name(f));
	touch(s0_file_info_path(f));
	touch(s0_file_info_link_target(f));
	sink += (size_t)s0_file_info_type(f) + (size_t)s0_file_info_size_bytes(f) +
	        s0_file_info_mode(f) + s0_file_info_is_link(f) +
	        (size_t)s0_file_info_mod_time_unix_ms(f);
}

static void call(s0_client *c, int op)
{
	s0_error *err = NULL;
	s0_sandbox_info *info = NULL;
	s0_lifecycle_result *res = NULL;
	char *json = NULL;
	const char *id = "sb_1";
	s0_wait_options w = S0_WAIT_OPTIONS_INIT;
	w.timeout_ms = 120000;
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	switch (op) {
	case 0: s0_sandbox_get(c, id, &info, &err); break;
	case 1: s0_sandbox_status(c, id, &info, &err); break;
	case 2: {
		s0_sandbox_page *pg = NULL;
		if (s0_sandbox_list(c, NULL, &pg, &err) == S0_OK) {
			for (size_t i = 0; i < s0_sandbox_page_length(pg); i++)
				use_info(s0_sandbox_page_at(pg, i));
			sink += (size_t)s0_sandbox_page_count(pg) + s0_sandbox_page_has_more(pg);
			s0_sandbox_page_free(pg);
		}
		break;
	}
	case 3: {
		s0_sandbox_iter *it = NULL;
		if (s0_sandbox_iter_new(c, NULL, &it, &err) == S0_OK) {
			const s0_sandbox_info *i;
			for (int k = 0; k < 1000 && s0_sandbox_iter_next(it, &i, &err) == S0_OK && i; k++)
				use_info(i);
			s0_sandbox_iter_free(it);
		}
		break;
	}
	case 4: s0_sandbox_pause(c, id, 1, &res, &err); break;
	case 5: s0_sandbox_resume(c, id, 0, &res, &err); break;
	case 6: w.memory = 1; s0_sandbox_pause_and_wait(c, id, &w, &info, &err); break;
	case 7: s0_sandbox_resume_and_wait(c, id, &w, &info, &err); break;
	case 8:
		s0_sandbox_wait(c, id, S0_STATUS_MASK(S0_STATUS_RUNNING), NULL, &w, &info, &err);
		break;
	case 9: s0_sandbox_claim(c, "default", NULL, NULL, &info, &err); break;
	case 10: s0_sandbox_update(c, id, &cfg, &info, &err); break;
	case 11: s0_sandbox_get_network_policy(c, id, &json, &err); break;
	case 12: s0_sandbox_update_network_policy(c, id, "{\"mode\":\"block-all\"}", &json, &err); break;
	case 13: s0_sandbox_delete(c, id, &err); break;
	case 14: s0_sandbox_refresh(c, id, 60, &info, &err); break;
	case 15: {
		s0_snapshot_info *s = NULL;
		s0_snapshot_create(c, id, "n", "d", 0, &s, &err);
		use_snap(s);
		s0_snapshot_info_free(s);
		break;
	}
	case 16: {
		s0_snapshot_list *l = NULL;
		if (s0_snapshot_list_get(c, id, &l, &err) == S0_OK) {
			for (size_t i = 0; i < s0_snapshot_list_length(l); i++)
				use_snap(s0_snapshot_list_at(l, i));
			sink += (size_t)s0_snapshot_list_count(l);
			s0_snapshot_list_free(l);
		}
		break;
	}
	case 17: {
		s0_snapshot_info *s = NULL;
		s0_snapshot_get(c, "snap_1", &s, &err);
		use_snap(s);
		s0_snapshot_info_free(s);
		break;
	}
	case 18: s0_snapshot_delete(c, "snap_1", &err); break;
	case 19: s0_sandbox_restore(c, id, "snap_1", &res, &err); break;
	case 20: {
		s0_fork_options fo = S0_FORK_OPTIONS_INIT;
		s0_sandbox_fork(c, id, &fo, &info, &err);
		break;
	}
	case 21: {
		void *d = NULL;
		size_t n = 0;
		s0_files_read(c, id, "/workspace/a", &d, &n, &err);
		free(d);
		break;
	}
	case 22: s0_files_write(c, id, "/workspace/a", "x", 1, &err); break;
	case 23: {
		s0_file_info *fi = NULL;
		s0_files_stat(c, id, "/workspace/a", &fi, &err);
		use_file(fi);
		s0_file_info_free(fi);
		break;
	}
	case 24: {
		s0_file_list *fl = NULL;
		if (s0_files_list(c, id, "/workspace", &fl, &err) == S0_OK) {
			for (size_t i = 0; i < s0_file_list_length(fl); i++)
				use_file(s0_file_list_at(fl, i));
			s0_file_list_free(fl);
		}
		break;
	}
	case 25: s0_files_move(c, id, "/workspace/a", "/workspace/b", &err); break;
	case 26: s0_files_mkdir(c, id, "/workspace/d", true, &err); break;
	case 27: s0_files_delete(c, id, "/workspace/a", &err); break;
	case 28: s0_context_create(c, id, "{\"type\":\"cmd\"}", &json, &err); break;
	case 29: s0_context_exec(c, id, "ctx_1", "echo hi\n", &json, &err); break;
	case 30: s0_context_get(c, id, "ctx_1", &json, &err); break;
	case 31: {
		int st = 0;
		s0_runtime_call(c, "GET", id, "/contexts", NULL, NULL, &st, &json, &err);
		break;
	}
	default: {
		w.memory = 1;
		s0_sandbox_resume_and_wait(c, id, &w, &info, &err);
		break;
	}
	}
	use_info(info);
	s0_sandbox_info_free(info);
	use_result(res);
	touch(json);
	free(json);
	use_error(err);
	s0_error_free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	script s = {(const char *)data + 1, (const char *)data + size, 0};
	s0_manual_clock *mc = NULL;
	s0_clock clock;
	if (s0_manual_clock_new(1700000000000LL, S0_MANUAL_CLOCK_AUTO_ADVANCE, &mc, NULL) != S0_OK)
		abort();
	s0_manual_clock_get(mc, &clock);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.clock = &clock;
	s0_client *c = NULL;
	if (s0__client_new_with_transport(&o, &fz_ops, &s, "fuzz://", &c, NULL) != S0_OK)
		abort();
	call(c, data[0] % 33);
	s0_client_free(c);
	s0_manual_clock_free(mc);
	return 0;
}
