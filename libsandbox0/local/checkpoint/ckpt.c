/* The checkpoint engine: codec contexts, parallel-for, hooks, counters (ckpt.h). */
#include "local/checkpoint/ckpt_int.h"
#include "local/objects/objpar.h"

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

/* ---- parallel-for (objects/objpar.h) ---- */

static int par_ctx_get(void *owner, s0__objctx **cx, s0_error **err)
{
	return s0__ckpt_ctx_get(owner, cx, err);
}

static void par_ctx_put(void *owner, s0__objctx *cx)
{
	s0__ckpt_ctx_put(owner, cx);
}

int s0__ckpt_par(s0__ckpt *c, size_t n, s0__ckpt_par_fn fn, void *arg, s0_error **err)
{
	s0__objpar_ctxs ctxs = {c, par_ctx_get, par_ctx_put};
	return s0__objpar_run(c->threads, n, &ctxs, fn, arg, err);
}
