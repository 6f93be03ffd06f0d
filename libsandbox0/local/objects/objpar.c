/* Parallel-for with one codec context per worker thread (objpar.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "local/objects/objpar.h"

#define MAX_HELPERS 7

typedef struct par {
	const s0__objpar_ctxs *ctxs;
	size_t n;
	s0__objpar_fn fn;
	void *arg;
	atomic_size_t next;
	atomic_bool stop;
	pthread_mutex_t mu;
	int rc;
	s0_error *err;
} par;

static void fail(par *p, int rc, s0_error *e)
{
	pthread_mutex_lock(&p->mu);
	if (p->rc == S0_OK) {
		p->rc = rc;
		p->err = e;
		e = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	s0_error_free(e);
	atomic_store(&p->stop, true);
}

static void *worker(void *arg)
{
	par *p = arg;
	s0__objctx *cx;
	s0_error *e = NULL;
	int rc = p->ctxs->get(p->ctxs->owner, &cx, &e);
	if (rc < 0) {
		fail(p, rc, e);
		return NULL;
	}
	while (!atomic_load(&p->stop)) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		e = NULL;
		if ((rc = p->fn(p->arg, i, cx, &e)) < 0)
			fail(p, rc, e);
	}
	p->ctxs->put(p->ctxs->owner, cx);
	return NULL;
}

int s0__objpar_run(size_t threads, size_t n, const s0__objpar_ctxs *ctxs, s0__objpar_fn fn,
                   void *arg, s0_error **err)
{
	if (!n)
		return S0_OK;
	par p = {.ctxs = ctxs, .n = n, .fn = fn, .arg = arg};
	pthread_mutex_init(&p.mu, NULL);
	size_t helpers = threads > 1 ? threads - 1 : 0;
	if (helpers > n - 1)
		helpers = n - 1;
	if (helpers > MAX_HELPERS)
		helpers = MAX_HELPERS;
	pthread_t tid[MAX_HELPERS];
	size_t started = 0;
	for (; started < helpers; started++)
		if (pthread_create(&tid[started], NULL, worker, &p) != 0)
			break;
	worker(&p);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p.mu);
	if (p.rc < 0)
		return p.err ? s0__error_put(err, p.err) : p.rc;
	return S0_OK;
}
