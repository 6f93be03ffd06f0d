/*
 * Shared pieces of the router's endpoint files: the per-request context,
 * reply builders, body and query parsing, JSON rendering of engine records.
 *
 * Convention: helpers that validate input return true when the input is
 * good; on false they have already written the error response. Reply
 * builders never fail visibly: an allocation failure sets ctx->oom and the
 * router reports S0_ENOMEM to its caller.
 */
#ifndef S0_API_INTERNAL_H
#define S0_API_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/internal.h"
#include "local/api/router.h"

typedef struct s0__rctx {
	s0__engine *e;
	const s0__router_opts *opts;
	const s0__http_request *req;
	s0__http_response *resp;
	const char *team;      /* opts->team_id */
	const char *id;        /* first path parameter (sandbox or snapshot id) */
	const char *id2;       /* second path parameter (context or session id), or NULL */
	const char *action;    /* for 500 messages: "failed to <action>: …" */
	char rid[S0__REQUEST_ID_MAX];
	bool oom;
} s0__rctx;

typedef void (*s0__endpoint_fn)(s0__rctx *c);

/* ---- reply.c ---- */
/* Success envelope {"success":true,"data":data}; takes data (nullable). */
void s0__reply_data(s0__rctx *c, int status, cJSON *data);
/* Error envelope with a printf message. */
void s0__reply_err(s0__rctx *c, int status, const char *wire, const char *fmt, ...)
	S0__PRINTF(4, 5);
/* 400 bad_request "invalid request: <msg>". */
void s0__reply_invalid(s0__rctx *c, const char *fmt, ...) S0__PRINTF(2, 3);
/* An engine error through the wire table (takes ownership of err). */
void s0__reply_error(s0__rctx *c, s0_error *err);
/* Raw bytes with a content type. */
void s0__reply_raw(s0__rctx *c, int status, const char *content_type, const void *data,
                   size_t len);
/* Add a response header (OOM sets c->oom). */
void s0__reply_header(s0__rctx *c, const char *name, const char *value);

/* ---- etag.c: entity tags of a sandbox (docs/wire.md "Long-poll") ---- */
/* The weak ETag naming the engine's current version of sandbox_id (n >= 64). */
void s0__etag_of(s0__engine *e, const char *sandbox_id, char *out, size_t n);
/* RFC 9110 If-None-Match against etag: false when a listed tag weakly matches or the
 * list is "*"; true when if_none_match is NULL or nothing matches. */
bool s0__etag_none_match(const char *if_none_match, const char *etag);

/* ---- body.c ---- */
/*
 * The body as a JSON object. Absent, empty or whitespace-only bodies give
 * *out = NULL when !required, else 400. JSON `null` counts as absent.
 * Over S0__ROUTER_JSON_BODY_MAX: 413; deeper than S0__ROUTER_JSON_DEPTH_MAX,
 * malformed or not an object: 400 "invalid request: …".
 */
bool s0__body_json(s0__rctx *c, bool required, cJSON **out);

/* ---- fields.c: typed members; absent and null mean "not given" ---- */
bool s0__field_str(s0__rctx *c, const cJSON *o, const char *key, const char **out);
bool s0__field_bool(s0__rctx *c, const cJSON *o, const char *key, bool *has, bool *out);
bool s0__field_i32(s0__rctx *c, const cJSON *o, const char *key, bool *has, int32_t *out);
bool s0__field_obj(s0__rctx *c, const cJSON *o, const char *key, const cJSON **out);
/* SandboxConfig type checks shared by claim and update; what = "claim"/"update". */
bool s0__check_config(s0__rctx *c, const cJSON *config, const char *what);

/* ---- query.c ---- */
/*
 * Value of a query key, percent-decoded ('+' = space). *present tells
 * whether the key appears. Returns false after answering 400 when the value
 * decodes to a NUL byte. *out is malloc'd (NULL when absent).
 */
bool s0__query_value(s0__rctx *c, const char *key, bool *present, char **out);
/* Go strconv.ParseBool. Returns 0 and sets *out, or -1. */
int s0__parse_go_bool(const char *s, bool *out);
/* Go strconv.Atoi (64-bit). Returns 0 and sets *out, or -1. */
int s0__parse_go_int(const char *s, int64_t *out);
/* Percent-decode n bytes into a malloc'd string; *len_out decoded length. */
char *s0__pct_decode(const char *s, size_t n, bool plus_space, size_t *len_out);

/* ---- render.c ---- */
cJSON *s0__render_sandbox(const s0__sandbox_rec *r, bool zero_time);
cJSON *s0__render_summary(const s0__sandbox_rec *r, bool zero_time);
cJSON *s0__render_status(const s0__sandbox_rec *r, bool zero_time);
cJSON *s0__render_snapshot(const s0__snapshot_rec *r);
/* RFC 3339 at whole seconds (the status endpoint's form). */
int s0__json_add_time_sec(cJSON *o, const char *key, int64_t unix_ms);

/* ---- endpoints ---- */
void s0__ep_healthz(s0__rctx *c);
void s0__ep_metadata(s0__rctx *c);
void s0__ep_claim(s0__rctx *c);
void s0__ep_list(s0__rctx *c);
void s0__ep_get(s0__rctx *c);
void s0__ep_status(s0__rctx *c);
void s0__ep_update(s0__rctx *c);
void s0__ep_network_get(s0__rctx *c);
void s0__ep_network_put(s0__rctx *c);
void s0__ep_delete(s0__rctx *c);
void s0__ep_pause(s0__rctx *c);
void s0__ep_resume(s0__rctx *c);
void s0__ep_refresh(s0__rctx *c);
void s0__ep_snapshot_create(s0__rctx *c);
void s0__ep_snapshot_list(s0__rctx *c);
void s0__ep_snapshot_get(s0__rctx *c);
void s0__ep_snapshot_delete(s0__rctx *c);
void s0__ep_restore(s0__rctx *c);
void s0__ep_fork(s0__rctx *c);
void s0__ep_files_read(s0__rctx *c);
void s0__ep_files_write(s0__rctx *c); /* also mkdir=true */
void s0__ep_files_delete(s0__rctx *c);
void s0__ep_files_stat(s0__rctx *c);
void s0__ep_files_list(s0__rctx *c);
void s0__ep_files_move(s0__rctx *c);
void s0__ep_not_implemented(s0__rctx *c);
/* ep_templates.c: templates of the team (docs/local-backend.md "Templates") */
void s0__ep_services_get(s0__rctx *c); /* ep_services.c */
void s0__ep_services_put(s0__rctx *c);
void s0__ep_template_create(s0__rctx *c);
void s0__ep_template_list(s0__rctx *c);
void s0__ep_template_get(s0__rctx *c);
void s0__ep_template_delete(s0__rctx *c);
/* A WebSocket route reached without an upgrade: 426 (stream_route.c). */
void s0__ep_upgrade_required(s0__rctx *c);
/* ep_procs.c: contexts and sessions (docs/wire.md §8) */
void s0__ep_ctx_create(s0__rctx *c);
void s0__ep_ctx_list(s0__rctx *c);
void s0__ep_ctx_get(s0__rctx *c);
void s0__ep_ctx_delete(s0__rctx *c);
void s0__ep_ctx_restart(s0__rctx *c);
void s0__ep_ctx_input(s0__rctx *c);
void s0__ep_ctx_exec(s0__rctx *c);
void s0__ep_ctx_signal(s0__rctx *c);
void s0__ep_ctx_resize(s0__rctx *c);
void s0__ep_ses_create(s0__rctx *c);
void s0__ep_ses_list(s0__rctx *c);
void s0__ep_ses_get(s0__rctx *c);
void s0__ep_ses_delete(s0__rctx *c);
void s0__ep_ses_desired(s0__rctx *c);
void s0__ep_ses_signal(s0__rctx *c);
void s0__ep_ses_events(s0__rctx *c);
void s0__ep_ses_replace(s0__rctx *c);
void s0__ep_ses_attempt(s0__rctx *c);
void s0__ep_ses_input(s0__rctx *c);
void s0__ep_ses_terminal(s0__rctx *c);

#endif
