/* One completion channel per environment for calls with no JS callback.
 *
 * A call without a progress callback or predicate (a GET, a claim, a file
 * read: most calls) needs the JS thread once, when it ends. Instead of a
 * threadsafe function per call (created, woken once, closed and finalized on
 * a later loop turn), such calls share one threadsafe function per
 * environment: a finishing worker appends its job to the channel's list and
 * wakes the JS thread only when the list was empty, and the JS thread settles
 * every finished call in one turn. The channel's TSFN holds the event loop
 * only while calls of that environment are in flight (ref at the first,
 * unref after the last), so an idle process exits as before. Calls with JS
 * callbacks keep their own TSFN (pool.c). bench/client/README.md has the
 * measurements. */
#include "addon.h"

#include <stdlib.h>

struct nx_chan {
	napi_threadsafe_function tsfn;
	pthread_mutex_t mu;
	/* under mu: the environment's reference (until finalized) plus one per
	 * call using the channel */
	int refs;
	bool gone;  /* under mu: the environment went away (TSFN finalized) */
	bool woken; /* under mu: a wake is queued and not yet drained */
	nx_job *done_head, *done_tail; /* under mu: finished calls to settle */
	nx_job *live;                  /* under mu: calls submitted, not settled */
	int inflight;                  /* JS thread: calls holding the loop */
};

static void chan_unref_locked(nx_chan *c, int n)
{
	c->refs -= n;
	if (c->refs == 0) {
		pthread_mutex_unlock(&c->mu);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return;
	}
	pthread_mutex_unlock(&c->mu);
}

static void live_unlink_locked(nx_chan *c, nx_job *j)
{
	if (j->live_prev)
		j->live_prev->live_next = j->live_next;
	else
		c->live = j->live_next;
	if (j->live_next)
		j->live_next->live_prev = j->live_prev;
	j->live_prev = j->live_next = NULL;
}

/* JS thread, once per wake: settle every finished call. */
static void chan_call_js(napi_env env, napi_value js_cb, void *context, void *data)
{
	(void)js_cb;
	(void)data;
	nx_chan *c = context;
	if (!env) /* the environment is going away: chan_finalize frees the list */
		return;
	pthread_mutex_lock(&c->mu);
	nx_job *list = c->done_head;
	c->done_head = c->done_tail = NULL;
	c->woken = false;
	pthread_mutex_unlock(&c->mu);
	int n = 0;
	while (list) {
		nx_job *j = list;
		list = j->next;
		j->next = NULL;
		nx_job_settle(env, j);
		pthread_mutex_lock(&c->mu);
		live_unlink_locked(c, j);
		c->refs--; /* never the last: the environment holds one */
		pthread_mutex_unlock(&c->mu);
		nx_job_free(env, j);
		n++;
	}
	c->inflight -= n;
	if (n > 0 && c->inflight == 0)
		napi_unref_threadsafe_function(env, c->tsfn);
}

/* JS thread, when the environment goes away: finished calls are freed
 * unsettled, running ones are cancelled where they can be and freed by
 * their worker (nx_chan_finish). */
static void chan_finalize(napi_env env, void *finalize_data, void *hint)
{
	(void)hint;
	nx_chan *c = finalize_data;
	pthread_mutex_lock(&c->mu);
	c->gone = true;
	int n = 0;
	for (nx_job *j = c->done_head, *next; j; j = next) {
		next = j->next;
		live_unlink_locked(c, j);
		nx_job_orphan(j);
		n++;
	}
	c->done_head = c->done_tail = NULL;
	for (nx_job *j = c->live; j; j = j->live_next)
		if (j->wopts.cancel)
			s0_cancel_token_cancel(j->wopts.cancel);
	chan_unref_locked(c, n + 1);
}

nx_chan *nx_chan_get(napi_env env)
{
	void *data = NULL;
	if (napi_get_instance_data(env, &data) == napi_ok && data)
		return data;
	nx_chan *c = calloc(1, sizeof *c);
	if (!c) {
		napi_throw_error(env, NULL, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->refs = 1;
	napi_value name;
	if (napi_create_string_utf8(env, "sandbox0.calls", NAPI_AUTO_LENGTH, &name) != napi_ok ||
	    napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, c, chan_finalize, c,
	                                    chan_call_js, &c->tsfn) != napi_ok) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		nx_throw_last(env);
		return NULL;
	}
	/* idle: no call in flight, the loop is free to end */
	if (napi_unref_threadsafe_function(env, c->tsfn) != napi_ok ||
	    napi_set_instance_data(env, c, NULL, NULL) != napi_ok) {
		/* the TSFN stays (finalized with the environment); calls use
		 * their own TSFN */
		nx_throw_last(env);
		return NULL;
	}
	return c;
}

void nx_chan_add(napi_env env, nx_chan *c, nx_job *j)
{
	j->chan = c;
	pthread_mutex_lock(&c->mu);
	c->refs++;
	j->live_prev = NULL;
	j->live_next = c->live;
	if (c->live)
		c->live->live_prev = j;
	c->live = j;
	pthread_mutex_unlock(&c->mu);
	if (c->inflight++ == 0)
		napi_ref_threadsafe_function(env, c->tsfn);
}

bool nx_chan_gone(nx_chan *c)
{
	pthread_mutex_lock(&c->mu);
	bool g = c->gone;
	pthread_mutex_unlock(&c->mu);
	return g;
}

void nx_chan_finish(nx_job *j)
{
	nx_chan *c = j->chan;
	pthread_mutex_lock(&c->mu);
	if (c->gone) {
		nx_job_orphan(j);
		chan_unref_locked(c, 1);
		return;
	}
	j->next = NULL;
	if (c->done_tail)
		c->done_tail->next = j;
	else
		c->done_head = j;
	c->done_tail = j;
	if (!c->woken) {
		/* under mu, so chan_finalize cannot run before the call; the
		 * queue is unbounded: never blocks */
		c->woken = true;
		napi_call_threadsafe_function(c->tsfn, NULL, napi_tsfn_nonblocking);
	}
	pthread_mutex_unlock(&c->mu);
}
