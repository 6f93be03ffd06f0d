/* Blocking library calls on threads the addon owns.
 *
 * Every call gets a promise. A call runs
 * on its own thread while fewer than the cap (default 128, env
 * SANDBOX0_NODE_MAX_THREADS, setMaxThreads()) are busy; beyond the cap it
 * waits in a FIFO queue and the next thread to finish a call takes it. A
 * thread that finds the queue empty stays for up to IDLE_LINGER_MS for the
 * next call (at most IDLE_MAX such threads), then exits: a sequence of calls
 * reuses one thread instead of creating one per call (bench/client/README.md),
 * and an idle process has no addon thread left after a second. A call with a
 * progress callback or predicate has a threadsafe function (TSFN) of its own:
 * its result, progress events and predicate questions reach the JS thread
 * through it; it keeps the event loop alive exactly while the call is in
 * flight and is released when the call ends. Every other call ends through
 * its environment's completion channel (chan.c), which holds the loop while
 * any of them is in flight. Either way an idle process exits.
 * libuv's own thread pool is never used. */
#include "addon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MSG_DONE = 1, MSG_PROGRESS = 2, MSG_PREDICATE = 3 };

typedef struct nx_msg {
	int kind;
	char *json;
	int64_t elapsed_ms;
} nx_msg;

static nx_msg done_msg = {MSG_DONE, NULL, 0};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static nx_job *queue_head, *queue_tail;
static int pool_threads, pool_queued, pool_inflight, pool_peak; /* pool_threads: busy ones */
static int pool_cap = 128;

enum { IDLE_MAX = 4, IDLE_LINGER_MS = 1000 };
/* Threads waiting for a call, and the calls handed to them: pool_idle plus
 * the handoff list's length is the number of waiting threads (a submitter
 * that pushes a call takes one from pool_idle; a thread whose wait ends with
 * the list empty takes itself off). */
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;
static nx_job *handoff_head, *handoff_tail;
static int pool_idle;

int nx_pool_cap(void)
{
	pthread_mutex_lock(&pool_mu);
	int c = pool_cap;
	pthread_mutex_unlock(&pool_mu);
	return c;
}

static void spawn_queued_locked(void);

bool nx_pool_set_cap(int cap)
{
	if (cap < 1 || cap > 4096)
		return false;
	pthread_mutex_lock(&pool_mu);
	pool_cap = cap;
	spawn_queued_locked();
	pthread_mutex_unlock(&pool_mu);
	return true;
}

void nx_pool_stats(int *threads, int *queued, int *inflight, int *peak)
{
	pthread_mutex_lock(&pool_mu);
	*threads = pool_threads;
	*queued = pool_queued;
	*inflight = pool_inflight;
	*peak = pool_peak;
	pthread_mutex_unlock(&pool_mu);
}

static int handoff_count_locked(void)
{
	int n = 0;
	for (nx_job *j = handoff_head; j; j = j->next)
		n++;
	return n;
}

/* Give @p j to a waiting thread, counted busy; false when none waits. */
static bool handoff_locked(nx_job *j)
{
	if (pool_idle == 0)
		return false;
	pool_idle--;
	if (handoff_tail)
		handoff_tail->next = j;
	else
		handoff_head = j;
	handoff_tail = j;
	pool_threads++;
	if (pool_threads > pool_peak)
		pool_peak = pool_threads;
	pthread_cond_signal(&idle_cv);
	return true;
}

static nx_job *dequeue_locked(void)
{
	nx_job *j = queue_head;
	if (j) {
		queue_head = j->next;
		if (!queue_head)
			queue_tail = NULL;
		j->next = NULL;
		pool_queued--;
	}
	return j;
}

static void job_free(napi_env env, nx_job *j);
void nx_job_free(napi_env env, nx_job *j) { job_free(env, j); }

int64_t nx_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Worker thread: free a job whose environment went away mid-call. Its
 * holders are left alone (their refcounts belong to that environment's JS
 * thread, whose finalizers may still run): the library objects of a call
 * cut off by a terminated Worker leak rather than race. */
void nx_job_orphan(nx_job *j)
{
	pthread_mutex_lock(&pool_mu);
	pool_inflight--;
	pthread_mutex_unlock(&pool_mu);
	j->on_progress = j->predicate = NULL; /* deleted with the environment */
	job_free(NULL, j);
}

/* Under pool_mu, with no call queued: count the thread as waiting for a
 * call; false when IDLE_MAX threads already wait (the thread exits). */
static bool idle_enter_locked(void)
{
	if (pool_idle + handoff_count_locked() >= IDLE_MAX)
		return false;
	pool_idle++;
	return true;
}

/* Under pool_mu, after idle_enter_locked: wait up to IDLE_LINGER_MS for a
 * handed-off call (already counted busy by its submitter; it may be there
 * already); NULL when none came: the thread exits. */
static nx_job *idle_wait_locked(void)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += IDLE_LINGER_MS / 1000;
	dl.tv_nsec += (long)(IDLE_LINGER_MS % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	int rc = 0;
	while (!handoff_head && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&idle_cv, &pool_mu, &dl);
	nx_job *j = handoff_head;
	if (!j) {
		pool_idle--;
		return NULL;
	}
	handoff_head = j->next;
	if (!handoff_head)
		handoff_tail = NULL;
	j->next = NULL;
	return j;
}

/* Worker thread, when the library call of @p j (which has its own TSFN)
 * returned: send the result to the JS thread and release the TSFN, or free
 * the job when its environment went away. */
static void finish_own_tsfn(nx_job *j)
{
	pthread_mutex_lock(&j->mu);
	if (j->tsfn_gone) {
		pthread_mutex_unlock(&j->mu);
		nx_job_orphan(j);
		return;
	}
	/* Under mu, so tsfn_finalize (which takes mu) cannot run between the
	 * two calls; once mu is released the JS thread may free j at any time.
	 * The queue is unbounded: the blocking call never blocks. */
	napi_call_threadsafe_function(j->tsfn, &done_msg, napi_tsfn_blocking);
	napi_release_threadsafe_function(j->tsfn, napi_tsfn_release);
	j->worker_done = true;
	pthread_mutex_unlock(&j->mu);
}

static void *worker_main(void *arg)
{
	nx_job *j = arg;
	while (j) {
		bool gone;
		if (j->chan) {
			gone = nx_chan_gone(j->chan);
		} else {
			pthread_mutex_lock(&j->mu);
			gone = j->tsfn_gone;
			pthread_mutex_unlock(&j->mu);
		}
		j->rc = gone ? S0_ECANCELED : j->run(j);
		/* Take the next queued call, or count this thread as waiting,
		 * before the result goes out: the call the JS thread makes on
		 * receiving it is handed to this thread (no second thread, and no
		 * sleep when it comes before this thread waits). */
		pthread_mutex_lock(&pool_mu);
		nx_job *next = dequeue_locked();
		bool idle = false;
		if (!next) {
			pool_threads--;
			idle = idle_enter_locked();
		}
		pthread_mutex_unlock(&pool_mu);
		if (j->chan)
			nx_chan_finish(j); /* j may be freed from here on */
		else
			finish_own_tsfn(j);
		if (idle) {
			pthread_mutex_lock(&pool_mu);
			next = idle_wait_locked();
			pthread_mutex_unlock(&pool_mu);
		}
		j = next;
	}
	return NULL;
}

/* Start a thread for @p j; false when the system refuses one. */
static bool start_thread_locked(nx_job *j)
{
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &attr, worker_main, j);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return false;
	pool_threads++;
	if (pool_threads > pool_peak)
		pool_peak = pool_threads;
	return true;
}

static void spawn_queued_locked(void)
{
	while (queue_head && pool_threads < pool_cap) {
		nx_job *j = dequeue_locked();
		if (!handoff_locked(j) && !start_thread_locked(j)) {
			/* put it back; a finishing thread will take it */
			j->next = queue_head;
			queue_head = j;
			if (!queue_tail)
				queue_tail = j;
			pool_queued++;
			return;
		}
	}
}

static void enqueue_locked(nx_job *j)
{
	if (queue_tail)
		queue_tail->next = j;
	else
		queue_head = j;
	queue_tail = j;
	pool_queued++;
}

nx_job *nx_job_new(napi_env env, nx_run_fn run, nx_done_fn done, nx_free_fn free_fn)
{
	nx_job *j = calloc(1, sizeof *j);
	if (!j) {
		napi_throw_error(env, NULL, "out of memory");
		return NULL;
	}
	j->run = run;
	j->done = done;
	j->free_fn = free_fn;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	s0_wait_options_init(&j->wopts, S0_WAIT_OPTIONS_VERSION);
	return j;
}

nx_job *nx_client_job(napi_env env, napi_callback_info info, size_t want, napi_value *argv,
                      nx_run_fn run, nx_done_fn done, nx_free_fn free_fn)
{
	if (!nx_args(env, info, want, argv))
		return NULL;
	nx_obj *c = nx_obj_get(env, argv[0], NX_CLIENT, "client");
	if (!c)
		return NULL;
	nx_job *j = nx_job_new(env, run, done, free_fn);
	if (j)
		j->client = c;
	return j;
}

static void free_results(nx_job *j)
{
	if (j->free_fn)
		j->free_fn(j);
	j->free_fn = NULL;
	j->res = NULL;
	s0_error_free(j->err);
	j->err = NULL;
}

static void job_free(napi_env env, nx_job *j)
{
	free_results(j);
	for (int i = 0; i < NX_MAX_STR; i++)
		free(j->s[i]);
	nx_strv_free(j->strv);
	free(j->buf);
	if (env && j->on_progress)
		napi_delete_reference(env, j->on_progress);
	if (env && j->predicate)
		napi_delete_reference(env, j->predicate);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	free(j);
}

void nx_job_discard(napi_env env, nx_job *j)
{
	/* never submitted: no references were taken on holders */
	job_free(env, j);
}

static void release_holders(nx_job *j)
{
	nx_obj_unref(j->client);
	nx_obj_unref(j->local);
	nx_obj_unref(j->token);
	j->client = j->local = j->token = NULL;
}

void nx_job_settle(napi_env env, nx_job *j)
{
	napi_value v = NULL;
	pthread_mutex_lock(&pool_mu);
	pool_inflight--;
	pthread_mutex_unlock(&pool_mu);
	if (j->rc == S0_OK) {
		v = j->done ? j->done(env, j) : NULL;
		if (!v)
			napi_get_undefined(env, &v);
		bool pending = false;
		napi_is_exception_pending(env, &pending);
		if (pending) {
			napi_value exc;
			napi_get_and_clear_last_exception(env, &exc);
			napi_reject_deferred(env, j->deferred, exc);
		} else {
			napi_resolve_deferred(env, j->deferred, v);
		}
	} else {
		v = nx_error_value(env, j->rc, j->err);
		napi_reject_deferred(env, j->deferred, v);
	}
	/* Results and errors are freed now, not when the TSFN is finalized
	 * later: a settled call holds no library object (leak counts). */
	free_results(j);
	release_holders(j);
}

/* Record @p r as the predicate's answer unless one is in already, and wake
 * the worker waiting for it. */
static void answer_predicate(nx_job *j, int r)
{
	pthread_mutex_lock(&j->mu);
	if (!j->pred_answered) {
		j->pred_answered = true;
		j->pred_result = r;
		pthread_cond_signal(&j->cv);
	}
	pthread_mutex_unlock(&j->mu);
}

/* JS side of the predicate round trip: reply(result) with 1 (done),
 * 0 (keep polling) or a negative s0_code. Called once per question (the TS
 * wrapper guarantees it), possibly after the wait ended (cancelled while the
 * predicate's promise was pending): the job then stays allocated until the
 * answer arrives. */
static napi_value js_predicate_reply(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1];
	void *data = NULL;
	int32_t r = 0;
	NX_CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, &data));
	if (argc < 1 || napi_get_value_int32(env, argv[0], &r) != napi_ok)
		r = S0_EUSER;
	nx_job *j = data;
	answer_predicate(j, r);
	if (--j->pred_outstanding == 0 && j->free_pending)
		job_free(env, j);
	return NULL;
}

static void call_js(napi_env env, napi_value js_cb, void *context, void *data)
{
	(void)js_cb;
	nx_job *j = context;
	nx_msg *m = data;
	if (m->kind == MSG_DONE) {
		if (env)
			nx_job_settle(env, j);
		return;
	}
	if (!env) { /* the environment is going away */
		if (m->kind == MSG_PREDICATE)
			answer_predicate(j, S0_ECANCELED);
		free(m->json);
		free(m);
		return;
	}
	napi_value global, fn, argv[2], result;
	napi_get_global(env, &global);
	if (m->kind == MSG_PROGRESS && j->on_progress &&
	    napi_get_reference_value(env, j->on_progress, &fn) == napi_ok) {
		argv[0] = nx_string(env, m->json);
		argv[1] = nx_int(env, m->elapsed_ms);
		napi_call_function(env, global, fn, 2, argv, &result);
	} else if (m->kind == MSG_PREDICATE) {
		bool ok = false;
		if (j->predicate && napi_get_reference_value(env, j->predicate, &fn) == napi_ok &&
		    napi_create_function(env, "reply", NAPI_AUTO_LENGTH, js_predicate_reply, j,
		                         &argv[1]) == napi_ok) {
			argv[0] = nx_string(env, m->json);
			j->pred_outstanding++;
			ok = napi_call_function(env, global, fn, 2, argv, &result) == napi_ok;
			if (!ok)
				j->pred_outstanding--;
		}
		if (!ok)
			answer_predicate(j, S0_EUSER);
	}
	bool pending = false;
	napi_is_exception_pending(env, &pending);
	if (pending) { /* the TS wrappers catch; never leave one pending here */
		napi_value exc;
		napi_get_and_clear_last_exception(env, &exc);
	}
	free(m->json);
	free(m);
}

static void tsfn_finalize(napi_env env, void *finalize_data, void *hint)
{
	(void)hint;
	nx_job *j = finalize_data;
	pthread_mutex_lock(&j->mu);
	if (!j->worker_done) {
		/* The environment is going away while the call runs (or waits in
		 * the queue): the TSFN is deleted after this returns. Stop the
		 * call if it can be stopped, wake a pending predicate question,
		 * and leave the job to the worker, which frees it. */
		j->tsfn_gone = true;
		if (j->wopts.cancel)
			s0_cancel_token_cancel(j->wopts.cancel);
		if (!j->pred_answered) {
			j->pred_answered = true;
			j->pred_result = S0_ECANCELED;
		}
		pthread_cond_signal(&j->cv);
		pthread_mutex_unlock(&j->mu);
		return;
	}
	pthread_mutex_unlock(&j->mu);
	if (j->pred_outstanding > 0) {
		free_results(j); /* nothing but the job itself waits for the answer */
		j->free_pending = true;
		return;
	}
	job_free(env, j);
}

napi_value nx_job_submit(napi_env env, nx_job *j)
{
	napi_value promise, name;
	/* calls with JS callbacks need their own TSFN; the others share the
	 * environment's channel (chan.c) */
	nx_chan *chan = j->on_progress || j->predicate ? NULL : nx_chan_get(env);
	if (!j->on_progress && !j->predicate && !chan) {
		job_free(env, j);
		return NULL;
	}
	if (napi_create_promise(env, &j->deferred, &promise) != napi_ok ||
	    (!chan && (napi_create_string_utf8(env, "sandbox0.call", NAPI_AUTO_LENGTH, &name) != napi_ok ||
	               napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, j, tsfn_finalize, j,
	                                               call_js, &j->tsfn) != napi_ok))) {
		/* a created deferred is left pending and collected with its promise */
		job_free(env, j);
		return nx_throw_last(env);
	}
	if (chan)
		nx_chan_add(env, chan, j);
	if (j->client)
		nx_obj_ref(j->client);
	if (j->local)
		nx_obj_ref(j->local);
	if (j->token)
		nx_obj_ref(j->token);
	pthread_mutex_lock(&pool_mu);
	pool_inflight++;
	if (pool_threads >= pool_cap || (!handoff_locked(j) && !start_thread_locked(j)))
		enqueue_locked(j);
	pthread_mutex_unlock(&pool_mu);
	return promise;
}

static nx_msg *msg_new(int kind, const s0_sandbox_info *info, int64_t elapsed_ms)
{
	nx_msg *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->kind = kind;
	m->elapsed_ms = elapsed_ms;
	m->json = strdup(s0_sandbox_info_json(info));
	if (!m->json) {
		free(m);
		return NULL;
	}
	return m;
}

int nx_job_progress(const s0_sandbox_info *info, int64_t elapsed_ms, void *payload)
{
	nx_job *j = payload;
	nx_msg *m = msg_new(MSG_PROGRESS, info, elapsed_ms);
	if (!m)
		return 0;
	pthread_mutex_lock(&j->mu);
	if (j->tsfn_gone || napi_call_threadsafe_function(j->tsfn, m, napi_tsfn_nonblocking) != napi_ok) {
		free(m->json);
		free(m);
	}
	pthread_mutex_unlock(&j->mu);
	return 0;
}

int nx_job_predicate(const s0_sandbox_info *info, void *payload)
{
	nx_job *j = payload;
	nx_msg *m = msg_new(MSG_PREDICATE, info, 0);
	if (!m)
		return S0_ENOMEM;
	pthread_mutex_lock(&j->mu);
	j->pred_answered = false;
	if (j->tsfn_gone || napi_call_threadsafe_function(j->tsfn, m, napi_tsfn_blocking) != napi_ok) {
		pthread_mutex_unlock(&j->mu);
		free(m->json);
		free(m);
		return S0_ECANCELED;
	}
	pthread_mutex_unlock(&j->mu);
	/* Wait for the answer, but stay cancellable and keep the deadline: a
	 * predicate whose promise never settles must hold neither an aborted
	 * wait nor one past its timeout (checked every 10 ms; the deadline is
	 * measured in real time from the start of the wait, the default 60 s
	 * when none was given). A late answer finds the job still allocated
	 * (pred_outstanding). */
	s0_cancel_token *tok = j->wopts.cancel;
	int64_t budget = j->wopts.timeout_ms == 0 ? 60000 : j->wopts.timeout_ms;
	int64_t deadline = budget < 0 ? -1 : j->started_mono_ms + budget;
	int r;
	pthread_mutex_lock(&j->mu);
	for (;;) {
		if (j->pred_answered) {
			r = j->pred_result;
			break;
		}
		if (j->tsfn_gone || (tok && s0_cancel_token_is_canceled(tok))) {
			r = S0_ECANCELED;
			break;
		}
		if (deadline >= 0 && nx_mono_ms() >= deadline) {
			r = S0_ETIMEDOUT; /* reason "predicate": the TS layer reads it as the wait's deadline */
			break;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&j->cv, &j->mu, &ts);
	}
	pthread_mutex_unlock(&j->mu);
	return r;
}
