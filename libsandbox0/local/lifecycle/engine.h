/*
 * The lifecycle engine of the local reference backend: the server side of
 * docs/behaviours.md run in one process. The router
 * (local/api) turns HTTP into these calls and renders their records as the
 * wire JSON of docs/wire.md; nothing else writes lifecycle state.
 *
 * Every call is thread-safe. Calls that take a team only see that team's
 * sandboxes (another team's sandbox is S0_ENOTFOUND). Errors carry the
 * wire reason of include/sandbox0/error.h so the router can emit them with
 * s0_error_to_wire(code, reason, …); the message is the wire message.
 */
#ifndef S0_ENGINE_H
#define S0_ENGINE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/meta/records.h" /* s0__sandbox_rec, s0__snapshot_rec, s0__list_filter */

typedef struct s0__engine s0__engine;

/* ---- claim, read, list, update, delete ---- */

typedef struct s0__claim_req {
	const char *template_id; /* required, already trimmed and lowercased by the router */
	const char *snapshot_id; /* nullable */
	const cJSON *config;     /* nullable SandboxConfig object (validated here) */
} s0__claim_req;

/*
 * Claim: a running sandbox on the template's (or snapshot's) generation.
 * Errors: S0_EINVAL bad_request (config), S0_ENOTFOUND (template/snapshot),
 * S0_EQUOTA quota_exceeded (active runtimes), S0_EUNAVAILABLE (no carrier or
 * capacity).
 */
int s0__engine_claim(s0__engine *e, const char *team, const s0__claim_req *req,
                     s0__sandbox_rec *out, s0_error **err);
int s0__engine_get(s0__engine *e, const char *team, const char *id, s0__sandbox_rec *out,
                   s0_error **err);

/* Newest first. *out is an array of *n records (free each, then the array). */
int s0__engine_list(s0__engine *e, const char *team, const s0__list_filter *f,
                    s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err);
/* PUT config (SandboxUpdateConfig object). S0_EINVAL bad_request on bad values. */
int s0__engine_update(s0__engine *e, const char *team, const char *id, const cJSON *config,
                      s0__sandbox_rec *out, s0_error **err);
/* Delete: identity, config, runtime and writable RootFS; snapshots stay. */
int s0__engine_delete(s0__engine *e, const char *team, const char *id, s0_error **err);

/* ---- pause / resume / refresh ---- */

typedef struct s0__pause_reply {
	bool paused;   /* committed and physically released */
	int status;    /* status to report */
	bool accepted; /* true: answer 202 (intent recorded, node channel down) */
	int64_t op_id; /* the durable operation recorded or joined; 0 when already paused */
	int64_t generation; /* the runtime generation that operation retires (with op_id) */
} s0__pause_reply;

/*
 * Pause (docs/wire.md §3.7, §6.3; PTX-01..PTX-10). Records
 * the durable intent and returns; the transaction runs on the controller.
 * Errors: S0_ENOTFOUND; S0_ECONFLICT lifecycle_conflict (starting, failed,
 * terminating); S0_EUNAVAILABLE memory_unavailable / reservation_unavailable
 * for memory pauses; S0_EINTERNAL when the intent could not be recorded.
 */
int s0__engine_pause(s0__engine *e, const char *team, const char *id, bool memory,
                     s0__pause_reply *out, s0_error **err);

typedef struct s0__resume_reply {
	bool resumed; /* false: durable fallback work accepted, poll */
} s0__resume_reply;

/*
 * Resume (RTX-01..RTX-08): synchronous; returns once
 * the new runtime is committed running (or the fallback is durably
 * scheduled). Errors: S0_ENOTFOUND; S0_ECONFLICT (terminating); S0_EQUOTA;
 * S0_EUNAVAILABLE (carrier, capacity, nbd, node channel, object store): the
 * sandbox stays paused with its head unchanged.
 */
int s0__engine_resume(s0__engine *e, const char *team, const char *id, bool memory,
                      s0__resume_reply *out, s0_error **err);

/*
 * The automatic wake of access.c (TTL-05..TTL-11): a resume of the committed
 * state (memory restored when retained) that keeps waiting for a pause in
 * progress to commit and for its runtime to be released (until the engine
 * stops) instead of answering 503: each request bounds its own wait by its
 * budget, and the requests that joined this wake must not see a failure
 * their next look would not (a pause outlasting one request's budget is not
 * a failed resume). Blocks; other errors and state as s0__engine_resume.
 */
int s0__engine_resume_wake(s0__engine *e, const char *id, s0__resume_reply *out);

/* Refresh (docs/wire.md §3.7): has_duration false = now + ttl. S0_ECONFLICT when paused. */
int s0__engine_refresh(s0__engine *e, const char *team, const char *id, bool has_duration,
                       int64_t duration_sec, s0__sandbox_rec *out, s0_error **err);

/* ---- snapshots, restore, fork ---- */

int s0__engine_snapshot_create(s0__engine *e, const char *team, const char *id,
                               const char *name, const char *description,
                               int64_t expires_at_ms, s0__snapshot_rec *out, s0_error **err);
/* Newest first; *out array of *n. */
int s0__engine_snapshot_list(s0__engine *e, const char *team, const char *id,
                             s0__snapshot_rec **out, size_t *n, s0_error **err);
int s0__engine_snapshot_get(s0__engine *e, const char *team, const char *snapshot_id,
                            s0__snapshot_rec *out, s0_error **err);
int s0__engine_snapshot_delete(s0__engine *e, const char *team, const char *snapshot_id,
                               s0_error **err);
/* Restore a paused sandbox's head; S0_ECONFLICT not_paused otherwise. */
int s0__engine_restore(s0__engine *e, const char *team, const char *id,
                       const char *snapshot_id, s0_error **err);

typedef struct s0__fork_req {
	bool has_ttl, has_hard_ttl;
	int32_t ttl_sec, hard_ttl_sec;
	bool memory;
	const char *idempotency_key; /* nullable */
} s0__fork_req;

/* Fork into a new paused sandbox (the child record is returned). */
int s0__engine_fork(s0__engine *e, const char *team, const char *id, const s0__fork_req *req,
                    s0__sandbox_rec *out, s0_error **err);

/* ---- runtime access (files, contexts, sessions) ---- */

/* A pinned running runtime, held for the duration of one request. */
typedef struct s0__runtime_access s0__runtime_access;

/*
 * Pin the sandbox's running runtime for one runtime request. A paused
 * sandbox with auto_resume is woken (TTL-05..TTL-11); the call
 * waits for the wake up to wake_budget_ms on the engine clock (45 s at the
 * gateway), then fails with S0_EUNAVAILABLE waking_up while the resume goes
 * on. S0_ERESUME resume_failed when that wake failed; S0_EUNAVAILABLE
 * auto_resume_disabled; S0_ENOTFOUND. The pin blocks a pause's fence until
 * released (one request, never long).
 */
int s0__engine_runtime_begin(s0__engine *e, const char *team, const char *id,
                             int64_t wake_budget_ms, s0__runtime_access **out, s0_error **err);
void s0__engine_runtime_end(s0__runtime_access *a);
/*
 * Pin the runtime only if it runs now: no wake, no wait (a stream's reads,
 * which must not wake a sandbox that paused under them). S0_EUNAVAILABLE
 * not_running otherwise; S0_ENOTFOUND. End it with s0__engine_runtime_end.
 */
int s0__engine_runtime_pin_running(s0__engine *e, const char *team, const char *id,
                                   s0__runtime_access **out, s0_error **err);

/* The files view of a pinned runtime (RootFS + tmpfs + ephemeral mounts):
 * the namespace of local/fsview/router.h, valid until runtime_end. */
struct s0__files_ns;
const struct s0__files_ns *s0__runtime_access_files(s0__runtime_access *a);

/*
 * A contexts or sessions call (runtime/runtime.h s0__rt_proc_call) on the
 * pinned runtime's generation, through its driver, with its virtual time
 * caught up with the engine clock first. For a sessions call, call->sessions
 * is set here to the sandbox's registry (created on first use; it outlives
 * runtime generations and goes with the sandbox). S0_EUNAVAILABLE
 * `unsupported` when the runtime has no contexts / sessions capability;
 * S0_ENOMEM; else the driver's answer (docs/wire.md §8 errors).
 */
struct s0__rt_proc_call;
int s0__runtime_access_proc(s0__runtime_access *a, struct s0__rt_proc_call *call,
                            cJSON **data_out, int *status_out, s0_error **err);

/* The latest time (unix ms) the data directory recorded; 0 when empty.
 * A manual clock starts no earlier (local.c), so it never goes back
 * across a reopen. */
int64_t s0__engine_latest_recorded_ms(s0__engine *e);

/* Keep sandbox id's sessions registry in the metadata store (best effort;
 * sessions_store.c): after a session is created, deleted or re-specified,
 * so its identity outlives a backend restart. */
void s0__engine_sessions_save(s0__engine *e, const char *id);

/*
 * The node identity (REC-06; test support): durable UID, boot credential
 * and incarnation. A successor boot after `node_reboot` reconciles the old
 * incarnation only with the same UID and the valid credential
 * (S0_EFORBIDDEN boot_rejected otherwise: capacity stays fenced), after
 * proving the old runtime state absent; the incarnation then advances.
 */
void s0__engine_node_identity(s0__engine *e, char uid[S0__ID_MAX], char credential[S0__ID_MAX],
                              int64_t *incarnation);
int s0__engine_node_boot(s0__engine *e, const char *node_uid, const char *credential,
                         s0_error **err);

/**
 * The runtime driver of this engine for /healthz: `{name, capabilities}`.
 * Never blocks (fixed at open). @return (transfer full) NULL when OOM.
 */
struct cJSON *s0__engine_runtime_json(s0__engine *e);

/* ---- several nodes on one store (docs/scaling.md "Several nodes") ---- */

/* Where a sandbox's runtime generation runs. */
typedef enum s0__owner_kind {
	S0__OWNER_HERE, /* this node, or nowhere (never claimed, or released: paused) */
	S0__OWNER_PEER, /* another node under a live lease */
	S0__OWNER_LOST, /* another node whose lease lapsed: any node may take it over */
} s0__owner_kind;

/*
 * Where sandbox_id's generation runs, and for a peer its advertised URL
 * into addr (addr_len bytes; "" when it advertised none). One or two
 * metadata reads; S0_EUNAVAILABLE when the store cannot be read.
 * Thread-safe.
 */
int s0__engine_owner(s0__engine *e, const char *sandbox_id, s0__owner_kind *kind, char *addr,
                     size_t addr_len, s0_error **err);
/* This node's id (its data directory's `node-id`), and its advertised URL
 * ("" when none). Borrowed, fixed at open. */
const char *s0__engine_node_id(const s0__engine *e);
const char *s0__engine_advertise(const s0__engine *e);

/* Longest X-S0-Node-Auth value. */
#define S0__NODE_AUTH_MAX 256
/*
 * The node channel (nodeauth.c): the X-S0-Node-Auth value authenticating a
 * request this node forwards to another, over (method, raw target with
 * query, body), a timestamp and a random nonce, with crypto_auth
 * (HMAC-SHA-512-256) under the channel key derived from the installation
 * key. out gets S0__NODE_AUTH_MAX bytes. Thread-safe.
 */
void s0__engine_node_sign(s0__engine *e, const char *method, const char *target,
                          const void *body, size_t body_len, char out[S0__NODE_AUTH_MAX]);
/*
 * Check a received X-S0-Node-Auth value: S0_OK when its tag verifies, its
 * time is within 30 s of this node's clock, and its nonce was not seen
 * before (a replay); else S0_EAUTH reason node_auth (nothing is recorded).
 * Thread-safe.
 */
int s0__engine_node_verify(s0__engine *e, const char *value, const char *method,
                           const char *target, const void *body, size_t body_len,
                           s0_error **err);

#endif
