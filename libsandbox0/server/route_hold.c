/* Counts of the requests each public id has in the proxy (route_hold.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/route_hold.h"

typedef struct hold {
	int n;
	struct hold *next;
	char id[]; /* the public id */
} hold;

static pthread_mutex_t holds_mu = PTHREAD_MUTEX_INITIALIZER;
static hold *holds; /* ids with n > 0 only */

bool s0__route_hold_take(const char *id)
{
	pthread_mutex_lock(&holds_mu);
	hold *h = holds;
	while (h && strcmp(h->id, id))
		h = h->next;
	bool ok = true;
	if (!h) {
		size_t len = strlen(id);
		h = malloc(sizeof *h + len + 1);
		if (h) {
			memcpy(h->id, id, len + 1);
			h->n = 0;
			h->next = holds;
			holds = h;
		}
	}
	if (!h || h->n >= S0__ROUTE_HOLD_MAX)
		ok = false;
	else
		h->n++;
	pthread_mutex_unlock(&holds_mu);
	return ok;
}

void s0__route_hold_drop(const char *id)
{
	pthread_mutex_lock(&holds_mu);
	for (hold **p = &holds; *p; p = &(*p)->next) {
		if (strcmp((*p)->id, id))
			continue;
		hold *h = *p;
		if (--h->n == 0) {
			*p = h->next;
			free(h);
		}
		break;
	}
	pthread_mutex_unlock(&holds_mu);
}

int s0__route_hold_count(const char *id)
{
	int n = 0;
	pthread_mutex_lock(&holds_mu);
	for (const hold *h = holds; h; h = h->next)
		if (!strcmp(h->id, id))
			n = h->n;
	pthread_mutex_unlock(&holds_mu);
	return n;
}
