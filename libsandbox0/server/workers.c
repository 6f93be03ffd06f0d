/* The handler threads (workers.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "server/workers.h"

typedef struct job {
	struct job *next;
	void (*fn)(void *arg);
	void *arg;
} job;

struct s0__workers {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	job *head, *tail;
	pthread_t *threads;
	size_t max, n, idle, queued; /* queued: jobs not yet taken */
	bool stopping;
};

static void *worker_main(void *arg)
{
	s0__workers *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->head && !w->stopping) {
			w->idle++;
			pthread_cond_wait(&w->cv, &w->mu);
			w->idle--;
		}
		job *j = w->head;
		if (!j)
			break; /* stopping and nothing left */
		w->head = j->next;
		w->queued--;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int s0__workers_new(size_t max_threads, s0__workers **out, s0_error **err)
{
	s0__workers *w = calloc(1, sizeof *w);
	if (w)
		w->threads = calloc(max_threads ? max_threads : 1, sizeof *w->threads);
	if (!w || !w->threads) {
		free(w);
		return s0__error_nomem(err);
	}
	w->max = max_threads ? max_threads : 1;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	*out = w;
	return S0_OK;
}

int s0__workers_submit(s0__workers *w, void (*fn)(void *arg), void *arg)
{
	job *j = malloc(sizeof *j);
	if (!j)
		return S0_ENOMEM;
	*j = (job){NULL, fn, arg};
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	w->queued++;
	/* a new thread unless an idle one is left for this job; if that fails, a
	 * running one takes it later */
	if (w->queued > w->idle && w->n < w->max && !pthread_create(&w->threads[w->n], NULL, worker_main, w))
		w->n++;
	else
		pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return S0_OK;
}

void s0__workers_free(s0__workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->cv);
	size_t n = w->n;
	pthread_mutex_unlock(&w->mu);
	for (size_t i = 0; i < n; i++)
		pthread_join(w->threads[i], NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w->threads);
	free(w);
}
