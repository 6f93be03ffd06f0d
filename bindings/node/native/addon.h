/*
 * Internal interfaces of the sandbox0 Node addon (sandbox0_napi.node).
 *
 * Layout: handles.c wraps library objects (client, local backend, cancel
 * token) in reference-counted holders; pool.c runs blocking library calls on
 * threads the addon owns and settles promises through a per-call napi
 * threadsafe function; ops_*.c marshal each call's arguments and results;
 * convert.c turns s0_error and result objects into JS values; addon.c
 * registers the exports.
 *
 * Threading rule: napi_* functions are only called on the JS thread (the
 * one that loaded the addon). Worker threads only call the library and
 * napi_call_threadsafe_function / napi_release_threadsafe_function.
 */
#ifndef SANDBOX0_NODE_ADDON_H
#define SANDBOX0_NODE_ADDON_H

#define NAPI_VERSION 8
#include <node_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <sandbox0/sandbox0.h>

/* ---- errors while marshalling (JS thread) -------------------------------- */

/* Throw a TypeError unless an exception is already pending; returns NULL. */
napi_value nx_throw_type(napi_env env, const char *msg);
/* Throw the pending N-API error as a JS Error unless one is pending; NULL. */
napi_value nx_throw_last(napi_env env);

#define NX_CHECK(env, call)                                                   \
	do {                                                                      \
		if ((call) != napi_ok)                                                \
			return nx_throw_last(env);                                        \
	} while (0)

/* ---- argument helpers (JS thread); each returns false after throwing ---- */

/* The first @p want arguments of the call into @p argv (those not passed are
 * NULL). */
bool nx_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv);

/* Copy a JS string into a malloc'd C string; undefined/null give NULL when
 * optional. Strings with NUL bytes are refused. */
bool nx_str(napi_env env, napi_value v, bool optional, const char *what, char **out);
/* A finite JS number as int64 (truncated toward zero); undefined gives dflt. */
bool nx_i64(napi_env env, napi_value v, int64_t dflt, const char *what, int64_t *out);
/* Property @p key of object @p obj (undefined when obj is not an object). */
napi_value nx_prop(napi_env env, napi_value obj, const char *key);
/* A JS array of strings as a NULL-terminated malloc'd array (each entry
 * malloc'd); undefined/null give NULL. Free with nx_strv_free(). */
bool nx_strv(napi_env env, napi_value v, const char *what, char ***out);
void nx_strv_free(char **v);

/* ---- handles (handles.c) ------------------------------------------------- */

typedef enum nx_kind { NX_CLIENT = 1, NX_LOCAL = 2, NX_TOKEN = 3 } nx_kind;

/* A library object shared by JS and in-flight calls. refs counts the JS
 * handle (until closed or collected) plus one per call using it plus, for
 * a local backend, one per client made on it. Touched on the JS thread only. */
typedef struct nx_obj {
	nx_kind kind;
	int refs;
	bool js_closed;         /* the JS handle let go (close() or GC) */
	bool js_gone;           /* the external was collected */
	void *ptr;              /* s0_client*, s0_local*, s0_cancel_token* */
	struct nx_obj *parent;  /* for a local client: its backend */
	napi_env env;           /* the environment whose JS thread owns it */
	napi_deferred on_free;  /* resolved once ptr is freed (localClose) */
} nx_obj;

/* The holder behind a JS external of @p kind; throws and returns NULL when
 * @p v is not one or was closed. */
nx_obj *nx_obj_get(napi_env env, napi_value v, nx_kind kind, const char *what);
/* Wrap a new holder (refs = 1) in a JS external with a finalizer. */
napi_value nx_obj_wrap(napi_env env, nx_kind kind, void *ptr, nx_obj *parent);
void nx_obj_ref(nx_obj *o);
/* Drop one reference; the library object is freed when none is left, the
 * holder itself once the external is collected too. */
void nx_obj_unref(nx_obj *o);
/* Drop the JS handle's reference (close()); idempotent. */
void nx_obj_close(nx_obj *o);
/* Number of holders whose library object is still alive (tests). */
int64_t nx_obj_live(void);

/* ---- calls on addon threads (pool.c) ------------------------------------- */

typedef struct nx_job nx_job;
typedef struct nx_chan nx_chan;
/* Worker thread: call the library; return its result code. */
typedef int (*nx_run_fn)(nx_job *j);
/* JS thread, on success: the value the promise resolves with. */
typedef napi_value (*nx_done_fn)(napi_env env, nx_job *j);
/* Any thread, once: free what the job's arguments and results own. */
typedef void (*nx_free_fn)(nx_job *j);

enum { NX_MAX_STR = 5, NX_MAX_NUM = 8 };

struct nx_job {
	nx_job *next;
	napi_deferred deferred;
	napi_threadsafe_function tsfn;
	nx_obj *client;   /* referenced for the call's duration (nullable) */
	nx_obj *local;    /* ditto */
	nx_obj *token;    /* the call's cancel token (nullable) */
	nx_run_fn run;
	nx_done_fn done;
	nx_free_fn free_fn;
	int rc;
	s0_error *err;
	/* arguments */
	char *s[NX_MAX_STR];
	int64_t n[NX_MAX_NUM];
	char **strv;
	void *buf;
	size_t buf_len;
	s0_sandbox_config config;
	bool has_config;
	s0_wait_options wopts;
	/* results */
	void *res;
	void *res2;
	size_t res_len;
	int status;
	/* JS callbacks of waits (JS thread only) */
	napi_ref on_progress;
	napi_ref predicate;
	/* predicate round trip: worker waits, JS thread answers */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool pred_answered;
	int pred_result;
	/* JS thread only: predicate questions not yet answered, and whether the
	 * TSFN was finalized meanwhile (the last answer then frees the job). */
	int pred_outstanding;
	bool free_pending;
	/* Guarded by mu: the worker is done with the TSFN (its last message
	 * sent and released), and the TSFN was finalized before that (the
	 * environment went away mid-call: a terminated Worker, process exit).
	 * Once tsfn_gone the worker never touches the TSFN again and frees the
	 * job itself. */
	bool worker_done;
	bool tsfn_gone;
	/* Worker thread: when a wait with a JS predicate started (nx_mono_ms),
	 * so a predicate answer that is late past the deadline ends the wait. */
	int64_t started_mono_ms;
	/* A call with neither on_progress nor predicate ends through its
	 * environment's completion channel (chan.c) instead of a TSFN of its
	 * own; live_prev/live_next link it in the channel's in-flight list
	 * (under the channel's lock). */
	nx_chan *chan;
	nx_job *live_prev, *live_next;
};

/* CLOCK_MONOTONIC in ms (any thread). */
int64_t nx_mono_ms(void);

/* A zeroed job; throws and returns NULL when out of memory. */
nx_job *nx_job_new(napi_env env, nx_run_fn run, nx_done_fn done, nx_free_fn free_fn);
/* A job on the client handle in argv[0] of the call: reads @p want arguments
 * into @p argv (as nx_args), checks argv[0] is a client and makes the job with
 * j->client set; throws and returns NULL on any failure. */
nx_job *nx_client_job(napi_env env, napi_callback_info info, size_t want, napi_value *argv,
                      nx_run_fn run, nx_done_fn done, nx_free_fn free_fn);
/* Free a job that was never submitted (after a marshalling error). */
void nx_job_discard(napi_env env, nx_job *j);
/* Start @p j: make its promise and threadsafe function, take references on
 * its holders and hand it to an addon thread (or the queue beyond the cap).
 * On failure the job is discarded and an exception is pending. */
napi_value nx_job_submit(napi_env env, nx_job *j);
/* Worker thread: the wait progress callback (s0_wait_cb) of jobs with
 * on_progress; forwards a copy of the sandbox JSON to the JS thread. */
int nx_job_progress(const s0_sandbox_info *info, int64_t elapsed_ms, void *payload);
/* Worker thread: the wait predicate (s0_wait_predicate) of jobs with a JS
 * predicate; blocks until the JS thread answers. */
int nx_job_predicate(const s0_sandbox_info *info, void *payload);
/* JS thread: resolve or reject the promise of finished @p j and release
 * its results and holders (the job itself stays; free it after). */
void nx_job_settle(napi_env env, nx_job *j);
/* JS thread: free a settled job (its references in @p env). */
void nx_job_free(napi_env env, nx_job *j);
/* Any thread: free a job whose environment went away, unsettled; its
 * holders are left alone (they belong to that environment's JS thread). */
void nx_job_orphan(nx_job *j);

/* ---- the completion channel (chan.c) -------------------------------------- */

/* JS thread: @p env's channel, made on first use (its TSFN unreferenced:
 * it holds the loop only while calls are in flight); throws and returns
 * NULL when it cannot be made. */
nx_chan *nx_chan_get(napi_env env);
/* JS thread, at submit: @p j ends through @p c; holds the loop while any
 * call of @p c is in flight. */
void nx_chan_add(napi_env env, nx_chan *c, nx_job *j);
/* Worker thread: whether @p c's environment went away. */
bool nx_chan_gone(nx_chan *c);
/* Worker thread, when @p j's library call returned: queue it for the JS
 * thread (one wake per batch), or free it when the environment is gone. */
void nx_chan_finish(nx_job *j);

/* Thread cap and counters. */
int nx_pool_cap(void);
bool nx_pool_set_cap(int cap);
void nx_pool_stats(int *threads, int *queued, int *inflight, int *peak_threads);

/* ---- conversions (convert.c, JS thread) ---------------------------------- */

/* A plain object describing an error (code, name, reason, message, wire
 * fields, last sandbox JSON, cause…); the TS layer turns it into a class. */
napi_value nx_error_value(napi_env env, int rc, const s0_error *err);
napi_value nx_string(napi_env env, const char *s);  /* NULL gives null */
napi_value nx_int(napi_env env, int64_t v);
napi_value nx_bool(napi_env env, bool v);
napi_value nx_file_info_value(napi_env env, const s0_file_info *fi);
void nx_set(napi_env env, napi_value obj, const char *key, napi_value v);

/* ---- export tables (ops_*.c) --------------------------------------------- */

/* Each adds its functions to @p exports; false after throwing. */
bool nx_export_client_ops(napi_env env, napi_value exports);
bool nx_export_wait_ops(napi_env env, napi_value exports);
bool nx_export_data_ops(napi_env env, napi_value exports);
bool nx_export_local_ops(napi_env env, napi_value exports);
bool nx_export_stream_ops(napi_env env, napi_value exports);
bool nx_export_define(napi_env env, napi_value exports, const char *name, napi_callback cb);

#endif
