#include "fake_engine.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/fwdstream.h"
#include "local/api/stream_local.h"
#include "local/lifecycle/watch.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

struct s0__engine {
	int fail_code;
	char fail_reason[64], fail_msg[256], fail_details[256];
	int64_t fail_retry;
	bool accepted;
	const struct s0__files_ns *files;
	fake_seen seen;
	int next_id;
};

s0__engine *fake_engine_new(void)
{
	return calloc(1, sizeof(s0__engine));
}

void fake_engine_free(s0__engine *e)
{
	if (e)
		free(e->seen.config_json);
	free(e);
}

void fake_fail_next(s0__engine *e, int code, const char *reason, const char *message,
                    int64_t retry_after_ms, const char *details_json)
{
	e->fail_code = code;
	s0__strlcpy(e->fail_reason, reason ? reason : "", sizeof e->fail_reason);
	s0__strlcpy(e->fail_msg, message ? message : "", sizeof e->fail_msg);
	s0__strlcpy(e->fail_details, details_json ? details_json : "", sizeof e->fail_details);
	e->fail_retry = retry_after_ms;
}

void fake_pause_accepted(s0__engine *e)
{
	e->accepted = true;
}

const fake_seen *fake_last(s0__engine *e)
{
	return &e->seen;
}

static int begin(s0__engine *e, const char *team, const char *id, s0_error **err)
{
	e->seen.calls++;
	s0__strlcpy(e->seen.team, team ? team : "", sizeof e->seen.team);
	s0__strlcpy(e->seen.id, id ? id : "", sizeof e->seen.id);
	if (!e->fail_code)
		return 0;
	int code = e->fail_code;
	e->fail_code = 0;
	s0_error *x = s0__error_make(code, e->fail_reason[0] ? e->fail_reason : NULL,
	                             e->fail_msg[0] ? e->fail_msg : NULL);
	if (e->fail_retry >= 0)
		s0__error_set_http(x, 0, NULL, NULL, e->fail_retry);
	if (e->fail_details[0])
		s0__error_set_details(x, e->fail_details);
	return s0__error_put(err, x);
}

void s0__sandbox_rec_clear(s0__sandbox_rec *r)
{
	free(r->config_json);
	r->config_json = NULL;
}

static void fill(s0__sandbox_rec *r, const char *id, const char *team, bool paused)
{
	memset(r, 0, sizeof *r);
	s0__strlcpy(r->id, id, sizeof r->id);
	s0__strlcpy(r->team_id, team, sizeof r->team_id);
	s0__strlcpy(r->template_id, "default", sizeof r->template_id);
	s0__strlcpy(r->pod_name, paused ? "" : "pod-1", sizeof r->pod_name);
	s0__strlcpy(r->runtime_id, paused ? "" : "rt-1", sizeof r->runtime_id);
	r->status = paused ? S0_STATUS_PAUSED : S0_STATUS_RUNNING;
	r->paused = paused;
	r->auto_resume = true;
	r->runtime_generation = 1;
	r->created_at_ms = r->claimed_at_ms = T0;
	r->updated_at_ms = T0 + 1500;
	r->config_json = strdup("{\"resources\":{\"memory\":\"512Mi\"}}");
}

int s0__engine_claim(s0__engine *e, const char *team, const s0__claim_req *req,
                     s0__sandbox_rec *out, s0_error **err)
{
	int rc = begin(e, team, "", err);
	if (rc < 0)
		return rc;
	s0__strlcpy(e->seen.template_id, req->template_id, sizeof e->seen.template_id);
	s0__strlcpy(e->seen.snapshot_id, req->snapshot_id ? req->snapshot_id : "",
	            sizeof e->seen.snapshot_id);
	free(e->seen.config_json);
	e->seen.config_json = req->config ? cJSON_PrintUnformatted(req->config) : NULL;
	fill(out, "sb-new", team, false);
	s0__strlcpy(out->template_id, req->template_id, sizeof out->template_id);
	return 0;
}

/* No streams in the fake (the in-process transport's open_stream). */
int s0__stream_local_open(s0__engine *e, const char *team, const s0_stream_options *opts,
                          s0_stream **out, s0_error **err)
{
	(void)e;
	(void)team;
	(void)opts;
	(void)out;
	return s0__error_set(err, S0_EUNSUPPORTED, "unsupported", "no streams in the fake engine");
}

/* No change notification in the fake: every sandbox is at version 0 of epoch "". */
s0__engine_watch *s0__engine_watch_of(s0__engine *e)
{
	(void)e;
	return NULL;
}

int s0__engine_get(s0__engine *e, const char *team, const char *id, s0__sandbox_rec *out,
                   s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	fill(out, id, team, !strcmp(id, "sb-paused"));
	if (!strcmp(id, "sb-ttl")) {
		out->expires_at_ms = T0 + 60000;
		out->hard_expires_at_ms = T0 + 120250;
	}
	return 0;
}

int s0__engine_list(s0__engine *e, const char *team, const s0__list_filter *f,
                    s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err)
{
	int rc = begin(e, team, "", err);
	if (rc < 0)
		return rc;
	e->seen.filter = *f;
	s0__strlcpy(e->seen.filter_template, f->template_id ? f->template_id : "",
	            sizeof e->seen.filter_template);
	*count = 3;
	size_t k = f->offset >= 3 ? 0 : (size_t)(3 - f->offset);
	if (k > (size_t)f->limit)
		k = (size_t)f->limit;
	*out = calloc(k ? k : 1, sizeof **out);
	for (size_t i = 0; i < k; i++)
		fill(&(*out)[i], i ? "sb-b" : "sb-a", team, false);
	*n = k;
	return 0;
}

int s0__engine_update(s0__engine *e, const char *team, const char *id, const cJSON *config,
                      s0__sandbox_rec *out, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	free(e->seen.config_json);
	e->seen.config_json = cJSON_PrintUnformatted(config);
	fill(out, id, team, false);
	return 0;
}

int s0__engine_delete(s0__engine *e, const char *team, const char *id, s0_error **err)
{
	return begin(e, team, id, err);
}

int s0__engine_pause(s0__engine *e, const char *team, const char *id, bool memory,
                     s0__pause_reply *out, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	e->seen.memory = memory;
	*out = (s0__pause_reply){.paused = false, .status = S0_STATUS_RUNNING,
	                         .accepted = e->accepted};
	e->accepted = false;
	return 0;
}

int s0__engine_resume(s0__engine *e, const char *team, const char *id, bool memory,
                      s0__resume_reply *out, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	e->seen.memory = memory;
	out->resumed = !memory;
	return 0;
}

/* /healthz: the fake runs no sandboxes, so no capabilities. */
struct cJSON *s0__engine_runtime_json(s0__engine *e)
{
	(void)e;
	return cJSON_Parse("{\"name\":\"fake\",\"capabilities\":[]}");
}

int s0__engine_refresh(s0__engine *e, const char *team, const char *id, bool has_duration,
                       int64_t duration_sec, s0__sandbox_rec *out, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	e->seen.has_duration = has_duration;
	e->seen.duration = duration_sec;
	fill(out, id, team, false);
	out->expires_at_ms = has_duration ? T0 + duration_sec * 1000 : 0;
	return 0;
}

static void snap(s0__snapshot_rec *r, const char *id, const char *sandbox)
{
	memset(r, 0, sizeof *r);
	s0__strlcpy(r->id, id, sizeof r->id);
	s0__strlcpy(r->sandbox_id, sandbox, sizeof r->sandbox_id);
	r->created_at_ms = T0;
}

int s0__engine_snapshot_create(s0__engine *e, const char *team, const char *id,
                               const char *name, const char *description,
                               int64_t expires_at_ms, s0__snapshot_rec *out, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	s0__strlcpy(e->seen.name, name ? name : "", sizeof e->seen.name);
	s0__strlcpy(e->seen.description, description ? description : "",
	            sizeof e->seen.description);
	e->seen.expires_at_ms = expires_at_ms;
	snap(out, "snap-1", id);
	s0__strlcpy(out->name, name ? name : "", sizeof out->name);
	s0__strlcpy(out->description, description ? description : "", sizeof out->description);
	out->expires_at_ms = expires_at_ms;
	return 0;
}

int s0__engine_snapshot_list(s0__engine *e, const char *team, const char *id,
                             s0__snapshot_rec **out, size_t *n, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	*out = calloc(2, sizeof **out);
	snap(&(*out)[0], "snap-2", id);
	snap(&(*out)[1], "snap-1", id);
	*n = 2;
	return 0;
}

int s0__engine_snapshot_get(s0__engine *e, const char *team, const char *snapshot_id,
                            s0__snapshot_rec *out, s0_error **err)
{
	int rc = begin(e, team, snapshot_id, err);
	if (rc < 0)
		return rc;
	snap(out, snapshot_id, "sb-1");
	return 0;
}

int s0__engine_snapshot_delete(s0__engine *e, const char *team, const char *snapshot_id,
                               s0_error **err)
{
	return begin(e, team, snapshot_id, err);
}

int s0__engine_restore(s0__engine *e, const char *team, const char *id,
                       const char *snapshot_id, s0_error **err)
{
	int rc = begin(e, team, id, err);
	s0__strlcpy(e->seen.snapshot_id, snapshot_id, sizeof e->seen.snapshot_id);
	return rc;
}

int s0__engine_fork(s0__engine *e, const char *team, const char *id, const s0__fork_req *req,
                    s0__sandbox_rec *out, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	e->seen.fork = *req;
	s0__strlcpy(e->seen.idem, req->idempotency_key ? req->idempotency_key : "",
	            sizeof e->seen.idem);
	fill(out, "sb-child", team, true);
	return 0;
}

void fake_set_files(s0__engine *e, const struct s0__files_ns *ns)
{
	e->files = ns;
}

struct s0__runtime_access {
	const struct s0__files_ns *ns;
};

/* "sb-paused": auto_resume off; "sb-waking": the wake outlasts the budget. */
int s0__engine_runtime_begin(s0__engine *e, const char *team, const char *id,
                             int64_t wake_budget_ms, s0__runtime_access **out, s0_error **err)
{
	int rc = begin(e, team, id, err);
	if (rc < 0)
		return rc;
	e->seen.duration = wake_budget_ms;
	if (!strcmp(id, "sb-paused"))
		return s0__error_set(err, S0_EUNAVAILABLE, "auto_resume_disabled",
		                     "sandbox is not running and auto_resume is disabled");
	if (!strcmp(id, "sb-waking"))
		return s0__error_set(err, S0_EUNAVAILABLE, "waking_up", "sandbox is waking up");
	s0__runtime_access *a = calloc(1, sizeof *a);
	a->ns = e->files;
	*out = a;
	return 0;
}

void s0__engine_runtime_end(s0__runtime_access *a)
{
	free(a);
}

const struct s0__files_ns *s0__runtime_access_files(s0__runtime_access *a)
{
	return a->ns;
}

/* No runtime behind the fake: the process APIs are tested over the real
 * engine (tests/unit/local). */
int s0__runtime_access_proc(s0__runtime_access *a, struct s0__rt_proc_call *call,
                            cJSON **data_out, int *status_out, s0_error **err)
{
	(void)a, (void)call, (void)data_out, (void)status_out;
	return s0__error_set(err, S0_EUNAVAILABLE, "unsupported", "the fake engine has no runtime");
}

void s0__engine_sessions_save(s0__engine *e, const char *id)
{
	(void)e, (void)id;
}

/* One node: every sandbox runs here, nothing is forwarded (forward.c). */
int s0__engine_owner(s0__engine *e, const char *sandbox_id, s0__owner_kind *kind, char *addr,
                     size_t addr_len, s0_error **err)
{
	(void)e, (void)sandbox_id, (void)err;
	*kind = S0__OWNER_HERE;
	if (addr_len)
		addr[0] = '\0';
	return S0_OK;
}

/* No forwarded streams (fwdstream.h): the fake's node channel refuses every call. */
bool s0__fwdstream_is_route(const char *path)
{
	(void)path;
	return false;
}

int s0__fwdstream_serve(s0__engine *e, const s0__router_opts *opts,
                        const s0__http_request *req, const char *path,
                        s0__http_response *resp)
{
	(void)e, (void)opts, (void)req, (void)path, (void)resp;
	return S0_ENOMEM;
}

void s0__engine_node_sign(s0__engine *e, const char *method, const char *target,
                          const void *body, size_t body_len, char out[S0__NODE_AUTH_MAX])
{
	(void)e, (void)method, (void)target, (void)body, (void)body_len;
	out[0] = '\0';
}

int s0__engine_node_verify(s0__engine *e, const char *value, const char *method,
                           const char *target, const void *body, size_t body_len,
                           s0_error **err)
{
	(void)e, (void)value, (void)method, (void)target, (void)body, (void)body_len;
	return s0__error_set(err, S0_EAUTH, "node_auth", "the fake engine has no node channel");
}

const char *s0__engine_node_id(const s0__engine *e)
{
	(void)e;
	return "node_fake";
}

const char *s0__engine_advertise(const s0__engine *e)
{
	(void)e;
	return "";
}
