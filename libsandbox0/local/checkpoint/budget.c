/* The capture reservation budget (budget.h). */
#include "local/checkpoint/budget.h"

#include <pthread.h>
#include <stdlib.h>

struct s0__ckpt_budget {
	pthread_mutex_t mu;
	uint64_t total, limit, reserved, held, n, refused;
};

int s0__ckpt_budget_new(uint64_t total_bytes, uint64_t image_limit_bytes,
                        s0__ckpt_budget **out, s0_error **err)
{
	if (!total_bytes)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "budget of 0 bytes");
	s0__ckpt_budget *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	pthread_mutex_init(&b->mu, NULL);
	b->total = total_bytes;
	b->limit = image_limit_bytes ? image_limit_bytes : total_bytes;
	*out = b;
	return S0_OK;
}

void s0__ckpt_budget_free(s0__ckpt_budget *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->mu);
	free(b);
}

int s0__ckpt_budget_admit(s0__ckpt_budget *b, uint64_t image_bytes, uint64_t upload_bytes,
                          s0_error **err)
{
	pthread_mutex_lock(&b->mu);
	bool ok = image_bytes <= b->limit && upload_bytes <= b->total;
	if (!ok)
		b->refused++;
	uint64_t limit = b->limit;
	pthread_mutex_unlock(&b->mu);
	if (ok)
		return S0_OK;
	return s0__error_set(err, S0_ECONFLICT, "image_too_large",
	                     "memory checkpoint exceeds reservation limit (%llu > %llu bytes)",
	                     (unsigned long long)image_bytes, (unsigned long long)limit);
}

bool s0__ckpt_budget_try(s0__ckpt_budget *b, uint64_t bytes)
{
	pthread_mutex_lock(&b->mu);
	uint64_t used = b->reserved + b->held;
	bool ok = used <= b->total && bytes <= b->total - used;
	if (ok) {
		b->reserved += bytes;
		b->n++;
	}
	pthread_mutex_unlock(&b->mu);
	return ok;
}

void s0__ckpt_budget_put(s0__ckpt_budget *b, uint64_t bytes)
{
	pthread_mutex_lock(&b->mu);
	b->reserved -= bytes < b->reserved ? bytes : b->reserved;
	if (b->n)
		b->n--;
	pthread_mutex_unlock(&b->mu);
}

void s0__ckpt_budget_hold(s0__ckpt_budget *b, uint64_t bytes)
{
	pthread_mutex_lock(&b->mu);
	b->held += bytes;
	pthread_mutex_unlock(&b->mu);
}

void s0__ckpt_budget_unhold(s0__ckpt_budget *b, uint64_t bytes)
{
	pthread_mutex_lock(&b->mu);
	b->held -= bytes < b->held ? bytes : b->held;
	pthread_mutex_unlock(&b->mu);
}

void s0__ckpt_budget_usage_get(s0__ckpt_budget *b, s0__ckpt_budget_usage *out)
{
	pthread_mutex_lock(&b->mu);
	*out = (s0__ckpt_budget_usage){.total_bytes = b->total, .image_limit_bytes = b->limit,
	                               .reserved_bytes = b->reserved, .held_bytes = b->held,
	                               .reservations = b->n, .refused = b->refused};
	pthread_mutex_unlock(&b->mu);
}
