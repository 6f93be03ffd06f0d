/* Parallel-for over publish work: the caller plus up to threads-1 helpers,
 * each with its own codec context (zstd/sodium state is per thread). */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>

typedef struct par {
	s0__bstore *bs;
	size_t n;
	s0__par_fn fn;
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
	int rc = s0__bstore_ctx_get(p->bs, &cx, &e);
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
	s0__bstore_ctx_put(p->bs, cx);
	return NULL;
}

int s0__par_run(s0__bstore *bs, size_t n, s0__par_fn fn, void *arg, s0_error **err)
{
	if (!n)
		return S0_OK;
	par p = {.bs = bs, .n = n, .fn = fn, .arg = arg};
	pthread_mutex_init(&p.mu, NULL);
	size_t helpers = bs->threads > 1 ? bs->threads - 1 : 0;
	if (helpers > n - 1)
		helpers = n - 1;
	pthread_t tid[8];
	size_t started = 0;
	for (; started < helpers && started < 8; started++)
		if (pthread_create(&tid[started], NULL, worker, &p) != 0)
			break; /* fewer helpers: still correct */
	worker(&p);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p.mu);
	if (p.rc < 0)
		return p.err ? s0__error_put(err, p.err) : p.rc;
	return S0_OK;
}
