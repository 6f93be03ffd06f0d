/* The event loop of held-open connections (loop.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "server/loop.h"

struct s0__loop_src {
	s0__loop *loop;
	s0__loop_src *prev, *next; /* live or incoming list */
	s0__loop_src *ready_next;  /* on the ready list (under mu) */
	int fd;
	unsigned interest;
	int64_t deadline_ms;
	unsigned pending; /* events not yet delivered (under mu) */
	bool ready, live;
	s0__loop_fn fn;
	void *arg;
};

struct s0__loop {
	int ep, efd;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	size_t max, count;          /* sources held (incoming + live), under mu */
	s0__loop_src *incoming;     /* added, not yet on the loop thread (under mu) */
	s0__loop_src *ready;        /* signalled (under mu) */
	bool stopping;              /* under mu */
	s0__loop_src *live;         /* loop thread only */
};

static void unlink_src(s0__loop_src **head, s0__loop_src *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		*head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void push_src(s0__loop_src **head, s0__loop_src *s)
{
	s->prev = NULL;
	s->next = *head;
	if (*head)
		(*head)->prev = s;
	*head = s;
}

static void poke(s0__loop *l)
{
	uint64_t one = 1;
	ssize_t n = write(l->efd, &one, sizeof one);
	(void)n; /* the counter saturates only after 2^64 - 2 unread pokes */
}

static uint32_t epoll_bits(unsigned interest)
{
	uint32_t ev = 0;
	if (interest & S0__LOOP_IN)
		ev |= EPOLLIN;
	if (interest & S0__LOOP_OUT)
		ev |= EPOLLOUT;
	if (interest & S0__LOOP_HUP)
		ev |= EPOLLRDHUP;
	return ev;
}

/* Mark events on a source and queue it (mu held). */
static void mark(s0__loop *l, s0__loop_src *s, unsigned ev)
{
	s->pending |= ev;
	if (!s->ready) {
		s->ready = true;
		s->ready_next = l->ready;
		l->ready = s;
	}
}

static int64_t next_timeout(s0__loop *l)
{
	int64_t first = 0;
	for (s0__loop_src *s = l->live; s; s = s->next)
		if (s->deadline_ms && (!first || s->deadline_ms < first))
			first = s->deadline_ms;
	if (!first)
		return -1;
	int64_t left = first - s0__real_monotonic_ms();
	return left < 0 ? 0 : left > 60000 ? 60000 : left;
}

/* Take the incoming sources onto the loop thread (mu held). */
static void adopt(s0__loop *l)
{
	while (l->incoming) {
		s0__loop_src *s = l->incoming;
		unlink_src(&l->incoming, s);
		push_src(&l->live, s);
		s->live = true;
		if (s->fd >= 0) {
			struct epoll_event ev = {.events = epoll_bits(s->interest), .data.ptr = s};
			if (epoll_ctl(l->ep, EPOLL_CTL_ADD, s->fd, &ev) < 0)
				mark(l, s, S0__LOOP_HUP); /* a socket we cannot watch is as good as gone */
		}
	}
}

/* One round: collect, then run each ready callback outside the lock. */
static bool round_once(s0__loop *l)
{
	struct epoll_event evs[64];
	int n = epoll_wait(l->ep, evs, 64, (int)next_timeout(l));
	pthread_mutex_lock(&l->mu);
	for (int i = 0; i < n; i++) {
		s0__loop_src *s = evs[i].data.ptr;
		if (!s) {
			uint64_t v;
			ssize_t r = read(l->efd, &v, sizeof v);
			(void)r;
			continue;
		}
		unsigned ev = 0;
		if (evs[i].events & EPOLLIN)
			ev |= S0__LOOP_IN;
		if (evs[i].events & EPOLLOUT)
			ev |= S0__LOOP_OUT;
		if (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			ev |= S0__LOOP_HUP;
		mark(l, s, ev);
	}
	adopt(l);
	int64_t now = s0__real_monotonic_ms();
	for (s0__loop_src *s = l->live; s; s = s->next) {
		if (s->deadline_ms && s->deadline_ms <= now)
			mark(l, s, S0__LOOP_TIMEOUT);
		if (l->stopping)
			mark(l, s, S0__LOOP_STOP);
	}
	s0__loop_src *ready = l->ready;
	l->ready = NULL;
	bool stopping = l->stopping;
	pthread_mutex_unlock(&l->mu);
	while (ready) {
		s0__loop_src *s = ready;
		pthread_mutex_lock(&l->mu);
		ready = s->ready_next;
		unsigned ev = s->pending;
		s->pending = 0;
		s->ready = false;
		pthread_mutex_unlock(&l->mu);
		if (s->deadline_ms && ev & S0__LOOP_TIMEOUT)
			s->deadline_ms = 0; /* reported once; set again to re-arm */
		s->fn(s, ev, s->arg); /* may remove s */
	}
	pthread_mutex_lock(&l->mu);
	bool done = stopping && !l->count;
	pthread_mutex_unlock(&l->mu);
	return !done;
}

static void *loop_main(void *arg)
{
	s0__loop *l = arg;
	while (round_once(l))
		;
	return NULL;
}

int s0__loop_new(size_t max_sources, s0__loop **out, s0_error **err)
{
	s0__loop *l = calloc(1, sizeof *l);
	if (!l)
		return s0__error_nomem(err);
	l->max = max_sources ? max_sources : 1;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&l->mu, NULL);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (l->ep < 0 || l->efd < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->efd, &ev) < 0 ||
	    pthread_create(&l->thread, NULL, loop_main, l)) {
		int e = errno;
		s0__loop_free(l);
		return s0__error_set(err, S0_EIO, "loop_failed",
		                     "the server's event loop could not start (errno %d)", e);
	}
	l->started = true;
	*out = l;
	return S0_OK;
}

void s0__loop_stop(s0__loop *l)
{
	if (!l || !l->started)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = true;
	pthread_mutex_unlock(&l->mu);
	poke(l);
	pthread_join(l->thread, NULL);
	l->started = false;
}

void s0__loop_free(s0__loop *l)
{
	if (!l)
		return;
	s0__loop_stop(l);
	if (l->ep >= 0)
		close(l->ep);
	if (l->efd >= 0)
		close(l->efd);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

int s0__loop_add(s0__loop *l, int fd, unsigned interest, int64_t deadline_ms, s0__loop_fn fn,
                 void *arg, s0__loop_src **out)
{
	s0__loop_src *s = calloc(1, sizeof *s);
	if (!s)
		return S0_ENOMEM;
	s->loop = l;
	s->fd = fd;
	s->interest = interest;
	s->deadline_ms = deadline_ms;
	s->fn = fn;
	s->arg = arg;
	pthread_mutex_lock(&l->mu);
	if (l->stopping || l->count >= l->max) {
		pthread_mutex_unlock(&l->mu);
		free(s);
		return S0_EUNAVAILABLE;
	}
	l->count++;
	push_src(&l->incoming, s);
	*out = s;
	pthread_mutex_unlock(&l->mu);
	poke(l);
	return S0_OK;
}

void s0__loop_signal(s0__loop_src *s)
{
	s0__loop *l = s->loop;
	pthread_mutex_lock(&l->mu);
	mark(l, s, S0__LOOP_SIGNAL);
	pthread_mutex_unlock(&l->mu);
	poke(l);
}

void s0__loop_set(s0__loop_src *s, unsigned interest, int64_t deadline_ms)
{
	s->deadline_ms = deadline_ms;
	if (interest != s->interest && s->fd >= 0) {
		struct epoll_event ev = {.events = epoll_bits(interest), .data.ptr = s};
		epoll_ctl(s->loop->ep, EPOLL_CTL_MOD, s->fd, &ev);
	}
	s->interest = interest;
}

void s0__loop_remove(s0__loop_src *s)
{
	s0__loop *l = s->loop;
	if (s->fd >= 0)
		epoll_ctl(l->ep, EPOLL_CTL_DEL, s->fd, NULL);
	pthread_mutex_lock(&l->mu);
	if (s->ready) /* drop it from the ready list */
		for (s0__loop_src **p = &l->ready; *p; p = &(*p)->ready_next)
			if (*p == s) {
				*p = s->ready_next;
				break;
			}
	unlink_src(s->live ? &l->live : &l->incoming, s);
	l->count--;
	pthread_mutex_unlock(&l->mu);
	free(s);
}

size_t s0__loop_count(s0__loop *l)
{
	pthread_mutex_lock(&l->mu);
	size_t n = l->count;
	pthread_mutex_unlock(&l->mu);
	return n;
}
