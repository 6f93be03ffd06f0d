/*
 * SWIG interface of the Go package's C surface (package capi, internal).
 *
 * Regenerate the committed wrapper with bindings/go/internal/capi/gen.sh
 * (swig -go -cgo); scripts/test.d/40-go.sh checks that doing so gives no
 * diff, so Go users never need SWIG.
 *
 * Rules followed here (the idioms live in the hand-written package above):
 *  - every opaque handle of the public C API is a SWIG pointer type; the
 *    getters of sandbox0/*.h are wrapped as they are;
 *  - a function with `**out` or `s0_error **err` parameters is wrapped by an
 *    s0go_ helper that takes an s0go_call (the call's record: return code,
 *    error, byte/string output, 2xx status) and returns the object, NULL on
 *    failure; the caller takes the error out with s0go_call_take_error();
 *  - options structs are never exposed (their `const char *` members would
 *    point at memory freed when the SWIG call returns): the helpers take the
 *    fields as arguments and build the struct on the C stack; an empty
 *    string stands for NULL where the C API allows NULL;
 *  - bytes leave C as []byte (SWIGCDATA, a copy) and enter it as a Go string
 *    (char *STRING, size_t LENGTH), borrowed for the call only.
 */
%module capi

%include <stdint.i>
%include <cdata.i>

%{
#include <stdlib.h>
#include <string.h>
#include <sandbox0/sandbox0.h>
%}

/* ---- the plain part of the public headers ---- */

%ignore s0_error_body;
%ignore s0_error_map_wire;
%ignore s0_error_to_wire;
%ignore s0_client_options_init;
%ignore s0_client_new;
%ignore s0_client_new_from_env;
%ignore s0_client_clock;
%ignore s0_clock_real;
%ignore s0_manual_clock_new;
%ignore s0_manual_clock_get;
%ignore s0_cancel_token_new;
%ignore s0_sandbox_info_parse;
%ignore s0_sandbox_info_dup;
%ignore s0_sandbox_claim;
%ignore s0_sandbox_get;
%ignore s0_sandbox_status;
%ignore s0_sandbox_update;
%ignore s0_sandbox_get_network_policy;
%ignore s0_sandbox_update_network_policy;
%ignore s0_sandbox_delete;
%ignore s0_sandbox_pause;
%ignore s0_sandbox_resume;
%ignore s0_sandbox_refresh;
%ignore s0_sandbox_list;
%ignore s0_sandbox_iter_new;
%ignore s0_sandbox_iter_next;
%ignore s0_snapshot_create;
%ignore s0_snapshot_list_get;
%ignore s0_snapshot_get;
%ignore s0_snapshot_delete;
%ignore s0_sandbox_restore;
%ignore s0_sandbox_fork;
%ignore s0_wait_options_init;
%ignore s0_sandbox_wait;
%ignore s0_sandbox_pause_and_wait;
%ignore s0_sandbox_resume_and_wait;
%ignore s0_files_read;
%ignore s0_files_write;
%ignore s0_files_mkdir;
%ignore s0_files_delete;
%ignore s0_files_stat;
%ignore s0_files_list;
%ignore s0_files_move;
%ignore s0_context_create;
%ignore s0_context_exec;
%ignore s0_context_get;
%ignore s0_context_delete;
%ignore s0_runtime_call;
%ignore s0_local_options_init;
%ignore s0_local_open;
%ignore s0_client_new_local;
%ignore s0_local_clock_advance;
%ignore s0_local_quiesce;
%ignore s0_local_restart_manager;
%ignore s0_local_fault_arm;
%ignore s0_local_fault_release;
%ignore s0_local_inspect;
%ignore s0_local_gc;
%ignore s0_local_template_build;
%ignore s0_global_init;
/* option structs and callback typedefs: built in the helpers below */
%ignore s0_clock;
%ignore s0_client_options;
%ignore s0_wait_options;
%ignore s0_sandbox_config;
%ignore s0_list_options;
%ignore s0_fork_options;
%ignore s0_local_options;
%ignore s0_template_options;

%include <sandbox0/common.h>
%include <sandbox0/error.h>
%include <sandbox0/clock.h>
%include <sandbox0/client.h>
%include <sandbox0/sandbox.h>
%include <sandbox0/wait.h>
%include <sandbox0/files.h>
%include <sandbox0/contexts.h>
%include <sandbox0/local.h>

/* ---- the call record and the helpers ---- */

%{
/** One call's record: its code, error, byte output and 2xx status. */
typedef struct s0go_call {
	int rc;
	int status;
	s0_error *err;
	void *data;
	size_t len;
} s0go_call;

static const char *s0go_nz(const char *s) { return (s && *s) ? s : NULL; }
static void s0go_set_data(s0go_call *k, void *data, size_t len)
{
	s0_free(k->data);
	k->data = data;
	k->len = len;
}
static void s0go_set_str(s0go_call *k, char *s)
{
	s0go_set_data(k, s, s ? strlen(s) : 0);
}
static int s0go_done(s0go_call *k, int rc)
{
	k->rc = rc;
	return rc;
}
static void s0go_config(s0_sandbox_config *cfg, uint32_t set, int32_t ttl_sec,
                        int32_t hard_ttl_sec, int32_t auto_resume, const char *memory,
                        const char *extra_json)
{
	s0_sandbox_config init = S0_SANDBOX_CONFIG_INIT;
	*cfg = init;
	cfg->set = set;
	cfg->ttl_sec = ttl_sec;
	cfg->hard_ttl_sec = hard_ttl_sec;
	cfg->auto_resume = auto_resume;
	cfg->memory = s0go_nz(memory);
	cfg->extra_json = s0go_nz(extra_json);
}
static void s0go_wait_opts(s0_wait_options *o, int32_t memory, int64_t timeout_ms,
                           int64_t poll_initial_ms, int64_t poll_max_ms, uint32_t flags,
                           s0_cancel_token *cancel)
{
	s0_wait_options init = S0_WAIT_OPTIONS_INIT;
	*o = init;
	o->memory = memory;
	o->timeout_ms = timeout_ms;
	o->poll_initial_ms = poll_initial_ms;
	o->poll_max_ms = poll_max_ms;
	o->flags = flags;
	o->cancel = cancel;
}
%}

%apply (char *STRING, size_t LENGTH) { (const char *data, size_t len) };

/** The call record is opaque to Go. */
typedef struct s0go_call s0go_call;

%inline %{
/** A new call record (free with s0go_call_free). NULL when out of memory. */
s0go_call *s0go_call_new(void) { return calloc(1, sizeof(s0go_call)); }

/** Free a call record with the error and bytes it still holds. */
void s0go_call_free(s0go_call *k)
{
	if (!k)
		return;
	s0_error_free(k->err);
	s0_free(k->data);
	free(k);
}

/** The call's return code (S0_OK or a negative s0_code). */
int s0go_call_rc(const s0go_call *k) { return k->rc; }
/** The 2xx status s0_runtime_call() reported (0 otherwise). */
int s0go_call_status(const s0go_call *k) { return k->status; }
/** Take the error out of the record (transfer full; NULL when none). */
s0_error *s0go_call_take_error(s0go_call *k)
{
	s0_error *e = k->err;
	k->err = NULL;
	return e;
}
/** A copy of the bytes output ([]byte; nil when none). */
SWIGCDATA s0go_call_data(const s0go_call *k)
{
	SWIGCDATA d;
	d.data = k->data ? (char *)k->data : (char *)"";
	d.len = (intgo)k->len;
	return d;
}
/** Whether the call produced bytes (distinguishes empty from none). */
int s0go_call_has_data(const s0go_call *k) { return k->data != NULL; }

/** A copy of an error's raw response body ([]byte). */
SWIGCDATA s0go_error_body(const s0_error *e)
{
	SWIGCDATA d;
	size_t n = 0;
	const void *b = s0_error_body(e, &n);
	d.data = b ? (char *)b : (char *)"";
	d.len = b ? (intgo)n : 0;
	return d;
}

/** Wire mapping of the error table: the s0_code for (wire code, status, message). */
int s0go_map_wire_code(const char *wire_code, int http_status, const char *message)
{
	int code = 0;
	const char *reason = NULL;
	s0_error_map_wire(s0go_nz(wire_code), http_status, s0go_nz(message), &code, &reason);
	return code;
}
/** The reason of the same mapping. (transfer none) */
const char *s0go_map_wire_reason(const char *wire_code, int http_status, const char *message)
{
	int code = 0;
	const char *reason = NULL;
	s0_error_map_wire(s0go_nz(wire_code), http_status, s0go_nz(message), &code, &reason);
	return reason;
}

/** s0_cancel_token_new(); NULL with k->err on failure. */
s0_cancel_token *s0go_cancel_token_new(s0go_call *k)
{
	s0_cancel_token *t = NULL;
	s0go_done(k, s0_cancel_token_new(&t, &k->err));
	return t;
}

/**
 * s0_client_new() (from_env: s0_client_new_from_env()) with the fields of
 * s0_client_options; "" = NULL; request_timeout_ms 0 = default.
 */
s0_client *s0go_client_new(s0go_call *k, int from_env, const char *base_url, const char *token,
                           const char *user_agent, const char *team_id,
                           int64_t request_timeout_ms, s0_cancel_token *cancel)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	s0_client *c = NULL;
	o.base_url = s0go_nz(base_url);
	o.token = s0go_nz(token);
	o.user_agent = s0go_nz(user_agent);
	o.team_id = s0go_nz(team_id);
	o.request_timeout_ms = request_timeout_ms;
	o.cancel = cancel;
	s0go_done(k, from_env ? s0_client_new_from_env(&o, &c, &k->err)
	                      : s0_client_new(&o, &c, &k->err));
	return c;
}

/** s0_client_new_local() with a user agent and the client's cancel token. */
s0_client *s0go_client_new_local(s0go_call *k, s0_local *local, const char *user_agent,
                                 s0_cancel_token *cancel)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	s0_client *c = NULL;
	o.user_agent = s0go_nz(user_agent);
	o.cancel = cancel;
	s0go_done(k, s0_client_new_local(local, &o, &c, &k->err));
	return c;
}

/** s0_sandbox_claim(); has_config 0 sends no config. */
s0_sandbox_info *s0go_sandbox_claim(s0go_call *k, s0_client *c, const char *template_id,
                                    const char *snapshot_id, int has_config, uint32_t set,
                                    int32_t ttl_sec, int32_t hard_ttl_sec, int32_t auto_resume,
                                    const char *memory, const char *extra_json)
{
	s0_sandbox_config cfg;
	s0_sandbox_info *out = NULL;
	s0go_config(&cfg, set, ttl_sec, hard_ttl_sec, auto_resume, memory, extra_json);
	s0go_done(k, s0_sandbox_claim(c, template_id, s0go_nz(snapshot_id),
	                              has_config ? &cfg : NULL, &out, &k->err));
	return out;
}

/** s0_sandbox_get(). */
s0_sandbox_info *s0go_sandbox_get(s0go_call *k, s0_client *c, const char *id)
{
	s0_sandbox_info *out = NULL;
	s0go_done(k, s0_sandbox_get(c, id, &out, &k->err));
	return out;
}

/** s0_sandbox_status(). */
s0_sandbox_info *s0go_sandbox_status(s0go_call *k, s0_client *c, const char *id)
{
	s0_sandbox_info *out = NULL;
	s0go_done(k, s0_sandbox_status(c, id, &out, &k->err));
	return out;
}

/** s0_sandbox_update() with the config fields. */
s0_sandbox_info *s0go_sandbox_update(s0go_call *k, s0_client *c, const char *id, uint32_t set,
                                     int32_t ttl_sec, int32_t hard_ttl_sec, int32_t auto_resume,
                                     const char *memory, const char *extra_json)
{
	s0_sandbox_config cfg;
	s0_sandbox_info *out = NULL;
	s0go_config(&cfg, set, ttl_sec, hard_ttl_sec, auto_resume, memory, extra_json);
	s0go_done(k, s0_sandbox_update(c, id, &cfg, &out, &k->err));
	return out;
}

/** s0_sandbox_get_network_policy(): the policy JSON lands in the record's bytes. */
int s0go_sandbox_get_network_policy(s0go_call *k, s0_client *c, const char *id)
{
	char *json = NULL;
	int rc = s0_sandbox_get_network_policy(c, id, &json, &k->err);
	s0go_set_str(k, json);
	return s0go_done(k, rc);
}

/** s0_sandbox_update_network_policy(): the stored policy lands in the record's bytes. */
int s0go_sandbox_update_network_policy(s0go_call *k, s0_client *c, const char *id,
                                       const char *policy_json)
{
	char *json = NULL;
	int rc = s0_sandbox_update_network_policy(c, id, policy_json, &json, &k->err);
	s0go_set_str(k, json);
	return s0go_done(k, rc);
}

/** s0_sandbox_delete(). */
int s0go_sandbox_delete(s0go_call *k, s0_client *c, const char *id)
{
	return s0go_done(k, s0_sandbox_delete(c, id, &k->err));
}

/** s0_sandbox_pause() (memory: S0_BOOL_*). */
s0_lifecycle_result *s0go_sandbox_pause(s0go_call *k, s0_client *c, const char *id,
                                        int32_t memory)
{
	s0_lifecycle_result *out = NULL;
	s0go_done(k, s0_sandbox_pause(c, id, memory, &out, &k->err));
	return out;
}

/** s0_sandbox_resume() (memory: S0_BOOL_*). */
s0_lifecycle_result *s0go_sandbox_resume(s0go_call *k, s0_client *c, const char *id,
                                         int32_t memory)
{
	s0_lifecycle_result *out = NULL;
	s0go_done(k, s0_sandbox_resume(c, id, memory, &out, &k->err));
	return out;
}

/** s0_sandbox_refresh(). */
s0_sandbox_info *s0go_sandbox_refresh(s0go_call *k, s0_client *c, const char *id,
                                      int32_t duration_sec)
{
	s0_sandbox_info *out = NULL;
	s0go_done(k, s0_sandbox_refresh(c, id, duration_sec, &out, &k->err));
	return out;
}

/** s0_sandbox_list() with the fields of s0_list_options. */
s0_sandbox_page *s0go_sandbox_list(s0go_call *k, s0_client *c, int32_t status, int32_t paused,
                                   const char *template_id, int32_t limit, int32_t offset)
{
	s0_list_options o = S0_LIST_OPTIONS_INIT;
	s0_sandbox_page *out = NULL;
	o.status = status;
	o.paused = paused;
	o.template_id = s0go_nz(template_id);
	o.limit = limit;
	o.offset = offset;
	s0go_done(k, s0_sandbox_list(c, &o, &out, &k->err));
	return out;
}

/** s0_sandbox_iter_new() with the fields of s0_list_options; the iterator borrows the client. */
s0_sandbox_iter *s0go_sandbox_iter_new(s0go_call *k, s0_client *c, int32_t status,
                                       int32_t paused, const char *template_id, int32_t limit,
                                       int32_t offset)
{
	s0_list_options o = S0_LIST_OPTIONS_INIT;
	s0_sandbox_iter *out = NULL;
	o.status = status;
	o.paused = paused;
	o.template_id = s0go_nz(template_id);
	o.limit = limit;
	o.offset = offset;
	s0go_done(k, s0_sandbox_iter_new(c, &o, &out, &k->err));
	return out;
}

/** s0_sandbox_iter_next(): the item (borrowed from the iterator), NULL at the end (rc S0_ITEROVER) or on error. */
const s0_sandbox_info *s0go_sandbox_iter_next(s0go_call *k, s0_sandbox_iter *it)
{
	const s0_sandbox_info *out = NULL;
	s0go_done(k, s0_sandbox_iter_next(it, &out, &k->err));
	return out;
}

/** s0_snapshot_create(). */
s0_snapshot_info *s0go_snapshot_create(s0go_call *k, s0_client *c, const char *id,
                                       const char *name, const char *description,
                                       int64_t expires_at_unix_ms)
{
	s0_snapshot_info *out = NULL;
	s0go_done(k, s0_snapshot_create(c, id, s0go_nz(name), s0go_nz(description),
	                                expires_at_unix_ms, &out, &k->err));
	return out;
}

/** s0_snapshot_list_get(). */
s0_snapshot_list *s0go_snapshot_list_get(s0go_call *k, s0_client *c, const char *id)
{
	s0_snapshot_list *out = NULL;
	s0go_done(k, s0_snapshot_list_get(c, id, &out, &k->err));
	return out;
}

/** s0_snapshot_get(). */
s0_snapshot_info *s0go_snapshot_get(s0go_call *k, s0_client *c, const char *snapshot_id)
{
	s0_snapshot_info *out = NULL;
	s0go_done(k, s0_snapshot_get(c, snapshot_id, &out, &k->err));
	return out;
}

/** s0_snapshot_delete(). */
int s0go_snapshot_delete(s0go_call *k, s0_client *c, const char *snapshot_id)
{
	return s0go_done(k, s0_snapshot_delete(c, snapshot_id, &k->err));
}

/** s0_sandbox_restore(). */
s0_lifecycle_result *s0go_sandbox_restore(s0go_call *k, s0_client *c, const char *id,
                                          const char *snapshot_id)
{
	s0_lifecycle_result *out = NULL;
	s0go_done(k, s0_sandbox_restore(c, id, snapshot_id, &out, &k->err));
	return out;
}

/** s0_sandbox_fork() with the fields of s0_fork_options; has_key 0 sends none. */
s0_sandbox_info *s0go_sandbox_fork(s0go_call *k, s0_client *c, const char *id, uint32_t set,
                                   int32_t ttl_sec, int32_t hard_ttl_sec, int32_t memory,
                                   int has_key, const char *idempotency_key)
{
	s0_fork_options o = S0_FORK_OPTIONS_INIT;
	s0_sandbox_info *out = NULL;
	o.set = set;
	o.ttl_sec = ttl_sec;
	o.hard_ttl_sec = hard_ttl_sec;
	o.memory = memory;
	o.idempotency_key = has_key ? idempotency_key : NULL;
	s0go_done(k, s0_sandbox_fork(c, id, &o, &out, &k->err));
	return out;
}

/** s0_sandbox_pause_and_wait() with the fields of s0_wait_options. */
s0_sandbox_info *s0go_pause_and_wait(s0go_call *k, s0_client *c, const char *id, int32_t memory,
                                     int64_t timeout_ms, int64_t poll_initial_ms,
                                     int64_t poll_max_ms, uint32_t flags,
                                     s0_cancel_token *cancel)
{
	s0_wait_options o;
	s0_sandbox_info *out = NULL;
	s0go_wait_opts(&o, memory, timeout_ms, poll_initial_ms, poll_max_ms, flags, cancel);
	s0go_done(k, s0_sandbox_pause_and_wait(c, id, &o, &out, &k->err));
	return out;
}

/** s0_sandbox_resume_and_wait() with the fields of s0_wait_options. */
s0_sandbox_info *s0go_resume_and_wait(s0go_call *k, s0_client *c, const char *id,
                                      int32_t memory, int64_t timeout_ms,
                                      int64_t poll_initial_ms, int64_t poll_max_ms,
                                      uint32_t flags, s0_cancel_token *cancel)
{
	s0_wait_options o;
	s0_sandbox_info *out = NULL;
	s0go_wait_opts(&o, memory, timeout_ms, poll_initial_ms, poll_max_ms, flags, cancel);
	s0go_done(k, s0_sandbox_resume_and_wait(c, id, &o, &out, &k->err));
	return out;
}

/**
 * s0_sandbox_wait(); predicate is an s0_wait_predicate function address
 * (0 = none) and payload its opaque argument (an integer handle, never a
 * Go pointer).
 */
s0_sandbox_info *s0go_sandbox_wait(s0go_call *k, s0_client *c, const char *id,
                                   uint32_t until_mask, uintptr_t predicate, uintptr_t payload,
                                   int64_t timeout_ms, int64_t poll_initial_ms,
                                   int64_t poll_max_ms, uint32_t flags, s0_cancel_token *cancel)
{
	s0_wait_options o;
	s0_sandbox_info *out = NULL;
	s0go_wait_opts(&o, 0, timeout_ms, poll_initial_ms, poll_max_ms, flags, cancel);
	o.payload = (void *)payload;
	s0go_done(k, s0_sandbox_wait(c, id, until_mask, (s0_wait_predicate)predicate, &o, &out,
	                             &k->err));
	return out;
}

/** s0_files_read(): the bytes land in the record. */
int s0go_files_read(s0go_call *k, s0_client *c, const char *id, const char *path)
{
	void *data = NULL;
	size_t len = 0;
	int rc = s0_files_read(c, id, path, &data, &len, &k->err);
	s0go_set_data(k, data, len);
	return s0go_done(k, rc);
}

/** s0_files_write(); data is borrowed for the call. */
int s0go_files_write(s0go_call *k, s0_client *c, const char *id, const char *path,
                     const char *data, size_t len)
{
	return s0go_done(k, s0_files_write(c, id, path, data, len, &k->err));
}

/** s0_files_mkdir(). */
int s0go_files_mkdir(s0go_call *k, s0_client *c, const char *id, const char *path,
                     int recursive)
{
	return s0go_done(k, s0_files_mkdir(c, id, path, recursive != 0, &k->err));
}

/** s0_files_delete(). */
int s0go_files_delete(s0go_call *k, s0_client *c, const char *id, const char *path)
{
	return s0go_done(k, s0_files_delete(c, id, path, &k->err));
}

/** s0_files_stat(). */
s0_file_info *s0go_files_stat(s0go_call *k, s0_client *c, const char *id, const char *path)
{
	s0_file_info *out = NULL;
	s0go_done(k, s0_files_stat(c, id, path, &out, &k->err));
	return out;
}

/** s0_files_list(). */
s0_file_list *s0go_files_list(s0go_call *k, s0_client *c, const char *id, const char *path)
{
	s0_file_list *out = NULL;
	s0go_done(k, s0_files_list(c, id, path, &out, &k->err));
	return out;
}

/** s0_files_move(). */
int s0go_files_move(s0go_call *k, s0_client *c, const char *id, const char *source,
                    const char *destination)
{
	return s0go_done(k, s0_files_move(c, id, source, destination, &k->err));
}

/** s0_context_create(): the ContextResponse JSON lands in the record. */
int s0go_context_create(s0go_call *k, s0_client *c, const char *id, const char *request_json)
{
	char *json = NULL;
	int rc = s0_context_create(c, id, request_json, &json, &k->err);
	s0go_set_str(k, json);
	return s0go_done(k, rc);
}

/** s0_context_exec(): the ContextExecResponse JSON lands in the record. */
int s0go_context_exec(s0go_call *k, s0_client *c, const char *id, const char *context_id,
                      const char *input)
{
	char *json = NULL;
	int rc = s0_context_exec(c, id, context_id, input, &json, &k->err);
	s0go_set_str(k, json);
	return s0go_done(k, rc);
}

/** s0_context_get(): the ContextResponse JSON lands in the record. */
int s0go_context_get(s0go_call *k, s0_client *c, const char *id, const char *context_id)
{
	char *json = NULL;
	int rc = s0_context_get(c, id, context_id, &json, &k->err);
	s0go_set_str(k, json);
	return s0go_done(k, rc);
}

/** s0_context_delete(). */
int s0go_context_delete(s0go_call *k, s0_client *c, const char *id, const char *context_id)
{
	return s0go_done(k, s0_context_delete(c, id, context_id, &k->err));
}

/** s0_runtime_call(): "" body or key = none; data JSON and 2xx status land in the record. */
int s0go_runtime_call(s0go_call *k, s0_client *c, const char *method, const char *id,
                      const char *suffix, const char *body_json, const char *idempotency_key)
{
	char *json = NULL;
	int status = 0;
	int rc = s0_runtime_call(c, method, id, suffix, s0go_nz(body_json),
	                         s0go_nz(idempotency_key), &status, &json, &k->err);
	s0go_set_str(k, json);
	k->status = status;
	return s0go_done(k, rc);
}

/** s0_local_open() with the fields of s0_local_options used by Go. */
s0_local *s0go_local_open(s0go_call *k, const char *data_dir, int32_t manual_clock,
                          int64_t manual_clock_start_unix_ms, int64_t node_cpu_millis,
                          int64_t node_memory_bytes, int32_t warm_carriers,
                          int32_t max_active_runtimes, uint64_t rootfs_size_bytes,
                          const char *team_id, int32_t disable_memory_checkpoints,
                          uint64_t memory_image_limit_bytes)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	s0_local *out = NULL;
	o.manual_clock = manual_clock;
	o.manual_clock_start_unix_ms = manual_clock_start_unix_ms;
	o.node_cpu_millis = node_cpu_millis;
	o.node_memory_bytes = node_memory_bytes;
	o.warm_carriers = warm_carriers;
	o.max_active_runtimes = max_active_runtimes;
	o.rootfs_size_bytes = rootfs_size_bytes;
	o.team_id = s0go_nz(team_id);
	o.disable_memory_checkpoints = disable_memory_checkpoints;
	o.memory_image_limit_bytes = memory_image_limit_bytes;
	s0go_done(k, s0_local_open(data_dir, &o, &out, &k->err));
	return out;
}

/** s0_local_clock_advance(). */
int s0go_local_clock_advance(s0go_call *k, s0_local *l, int64_t ms)
{
	return s0go_done(k, s0_local_clock_advance(l, ms, &k->err));
}

/** s0_local_quiesce(). */
int s0go_local_quiesce(s0go_call *k, s0_local *l, int64_t timeout_ms)
{
	return s0go_done(k, s0_local_quiesce(l, timeout_ms, &k->err));
}

/** s0_local_restart_manager(). */
int s0go_local_restart_manager(s0go_call *k, s0_local *l)
{
	return s0go_done(k, s0_local_restart_manager(l, &k->err));
}

/** s0_local_fault_arm(). */
int s0go_local_fault_arm(s0go_call *k, s0_local *l, const char *name, int32_t mode,
                         int64_t count, int64_t delay_ms)
{
	return s0go_done(k, s0_local_fault_arm(l, name, mode, count, delay_ms, &k->err));
}

/** s0_local_fault_release(). */
int s0go_local_fault_release(s0go_call *k, s0_local *l, const char *name)
{
	return s0go_done(k, s0_local_fault_release(l, name, &k->err));
}

/** s0_local_inspect(): the JSON lands in the record; "" sandbox id = all. */
int s0go_local_inspect(s0go_call *k, s0_local *l, const char *sandbox_id)
{
	char *json = NULL;
	int rc = s0_local_inspect(l, s0go_nz(sandbox_id), &json, &k->err);
	s0go_set_str(k, json);
	return s0go_done(k, rc);
}

/** s0_local_gc(). */
int s0go_local_gc(s0go_call *k, s0_local *l)
{
	return s0go_done(k, s0_local_gc(l, &k->err));
}

/**
 * s0_local_template_build(); "" dir = the standard empty tree;
 * ephemeral_mounts is newline-separated ("" = none).
 */
int s0go_local_template_build(s0go_call *k, s0_local *l, const char *name, const char *dir,
                              uint64_t size_bytes, const char *ephemeral_mounts)
{
	s0_template_options o = S0_TEMPLATE_OPTIONS_INIT;
	const char *mounts[65];
	char *copy = NULL;
	size_t n = 0;
	o.size_bytes = size_bytes;
	if (ephemeral_mounts && *ephemeral_mounts) {
		copy = strdup(ephemeral_mounts);
		if (!copy) {
			k->err = s0_error_new(S0_ENOMEM, NULL, NULL);
			return s0go_done(k, S0_ENOMEM);
		}
		for (char *save = NULL, *p = strtok_r(copy, "\n", &save); p && n < 64;
		     p = strtok_r(NULL, "\n", &save))
			mounts[n++] = p;
		mounts[n] = NULL;
		o.ephemeral_mounts = mounts;
	}
	int rc = s0_local_template_build(l, name, s0go_nz(dir), &o, &k->err);
	free(copy);
	return s0go_done(k, rc);
}
%}
