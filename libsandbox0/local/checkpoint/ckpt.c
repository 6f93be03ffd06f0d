/* The checkpoint engine: codec contexts, parallel-for, hooks, counters (ckpt.h). */
#include "local/checkpoint/ckpt_int.h"

#include <stdlib.h>
#include <unistd.h>

const char *s0__ckpt_phase_name(int phase)
{
	static const char *const n[] = {"", "prepare", "authorize", "capture", "commit",
	                                "authorize-restore", "restore"};
	return phase >= S0__CKPT_PREPARE && phase <= S0__CKPT_RESTORE ? n[phase] : "unknown";
}

int s0__ckpt_new(s0__objstore *os, const s0__ckpt_opts *o, s0__ckpt **out, s0_error **err)
{
	s0__ckpt *c = calloc(1, sizeof *c);
	if (!c)
		return s0__error_nomem(err);
	pthread_mutex_init(&c->mu, NULL);
	c->os = os;
	c->level = o && o->zstd_level ? o->zstd_level : -1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	c->threads = o && o->threads ? o->threads : (uint32_t)(cpus > 0 ? cpus : 1);
	if (c->threads > 8)
		c->threads = 8;
	if (o) {
		c->budget = o->budget;
		c->hook = o->hook;
		c->hook_payload = o->hook_payload;
	}
	*out = c;
	return S0_OK;
}

void s0__ckpt_free(s0__ckpt *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npool; i++)
		s0__objctx_free(c->pool[i]);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

int s0__ckpt_ctx_get(s0__ckpt *c, s0__objctx **out, s0_error **err)
{
	pthread_mutex_lock(&c->mu);
	s0__objctx *cx = c->npool ? c->pool[--c->npool] : NULL;
	pthread_mutex_unlock(&c->mu);
	if (cx) {
		*out = cx;
		return S0_OK;
	}
	return s0__objctx_new(c->level, out, err);
}

void s0__ckpt_ctx_put(s0__ckpt *c, s0__objctx *cx)
{
	pthread_mutex_lock(&c->mu);
	if (c->npool < S0__CKPT_POOL) {
		c->pool[c->npool++] = cx;
		cx = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	s0__objctx_free(cx);
}

int s0__ckpt_hook(s0__ckpt *c, int phase, const char *sandbox_id)
{
	return c->hook ? c->hook(c->hook_payload, phase, sandbox_id ? sandbox_id : "")
	               : S0__HOOK_PROCEED;
}

void s0__ckpt_stats_get(s0__ckpt *c, s0__ckpt_stats *out)
{
	out->captures = atomic_load(&c->captures);
	out->restores = atomic_load(&c->restores);
	out->chunks_fetched = atomic_load(&c->fetched);
	out->chunk_bytes_fetched = atomic_load(&c->fetched_bytes);
	out->parts_fetched = atomic_load(&c->parts_fetched);
}

/* ---- parallel-for ---- */

typedef struct par {
	s0__ckpt *c;
	size_t n;
	s0__ckpt_par_fn fn;
	void *arg;
	atomic_size_t next;
	atomic_bool stop;
	pthread_mutex_t mu;
	int rc;
	s0_error *err;
} par;

static void par_fail(par *p, int rc, s0_error *e)
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

static void *par_worker(void *arg)
{
	par *p = arg;
	s0__objctx *cx;
	s0_error *e = NULL;
	int rc = s0__ckpt_ctx_get(p->c, &cx, &e);
	if (rc < 0) {
		par_fail(p, rc, e);
		return NULL;
	}
	while (!atomic_load(&p->stop)) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		e = NULL;
		if ((rc = p->fn(p->arg, i, cx, &e)) < 0)
			par_fail(p, rc, e);
	}
	s0__ckpt_ctx_put(p->c, cx);
	return NULL;
}

int s0__ckpt_par(s0__ckpt *c, size_t n, s0__ckpt_par_fn fn, void *arg, s0_error **err)
{
	if (!n)
		return S0_OK;
	par p = {.c = c, .n = n, .fn = fn, .arg = arg};
	pthread_mutex_init(&p.mu, NULL);
	size_t helpers = c->threads > 1 ? c->threads - 1 : 0;
	if (helpers > n - 1)
		helpers = n - 1;
	pthread_t tid[8];
	size_t started = 0;
	for (; started < helpers && started < 8; started++)
		if (pthread_create(&tid[started], NULL, par_worker, &p) != 0)
			break; /* fewer helpers: still correct */
	par_worker(&p);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p.mu);
	if (p.rc < 0)
		return p.err ? s0__error_put(err, p.err) : p.rc;
	return S0_OK;
}
