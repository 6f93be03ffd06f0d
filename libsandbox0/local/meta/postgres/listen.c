/* The change feed between nodes on PostgreSQL (meta.h s0__meta_listen):
 * every write of a sandbox row notifies channel "s0_sandbox" with its id in
 * the writing transaction (stmts.c Q_SB_PUT, and Q_SB_DEL with "-" before
 * the id; delivered at its commit), and a thread with a connection of its own LISTENs and hands each
 * id to the callback, except the ones this handle's own connections sent
 * (their backend PIDs: the engine already told its watchers of its own
 * commits, and a late second wake moved a version after the change had
 * settled). A lost connection is made again every half second;
 * the notifications sent meanwhile are lost (a long-poll waiting for one
 * answers at its time limit instead). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "local/meta/postgres/mpg.h"

struct mpg_listen {
	s0__meta_change_fn fn;
	void *arg;
	int wake[2]; /* a pipe: a byte stops the thread */
	pthread_t thread;
};

/* A connection that LISTENs, or NULL. */
static PGconn *subscribe(s0__mpg *q)
{
	mpg_conn c = {0};
	if (s0__mpg_connect(q, &c, NULL) < 0)
		return NULL;
	PGresult *r = PQexec(c.pg, "LISTEN s0_sandbox");
	bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	if (!ok) {
		PQfinish(c.pg);
		return NULL;
	}
	return c.pg;
}

/* Whether a notification came from one of this handle's pooled connections. */
static bool own_pid(s0__mpg *q, int pid)
{
	for (int i = 0; i < S0__MPG_POOL; i++)
		if (pid && __atomic_load_n(&q->own_pids[i], __ATOMIC_ACQUIRE) == pid)
			return true;
	return false;
}

static void *listen_main(void *arg)
{
	s0__mpg *q = arg;
	struct mpg_listen *l = q->listen;
	PGconn *pg = NULL;
	for (;;) {
		if (!pg)
			pg = subscribe(q);
		struct pollfd fds[2] = {{.fd = l->wake[0], .events = POLLIN},
		                        {.fd = pg ? PQsocket(pg) : -1, .events = POLLIN}};
		int n = poll(fds, pg ? 2 : 1, pg ? -1 : 500);
		if (n < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break; /* stop */
		if (!pg || !fds[1].revents)
			continue;
		if (!PQconsumeInput(pg)) { /* the connection broke: again */
			PQfinish(pg);
			pg = NULL;
			continue;
		}
		PGnotify *nf;
		while ((nf = PQnotifies(pg))) {
			const char *id = nf->extra ? nf->extra : "";
			bool deleted = *id == '-'; /* Q_SB_DEL's payload: "-" and the id */
			if (id[deleted] && !own_pid(q, nf->be_pid))
				l->fn(l->arg, id + deleted, deleted);
			PQfreemem(nf);
		}
	}
	PQfinish(pg);
	return NULL;
}

int s0__mpg_listen(s0__meta *m, s0__meta_change_fn fn, void *arg, s0_error **err)
{
	s0__mpg *q = MPG(m);
	if (q->listen)
		return s0__error_set(err, S0_EINVAL, "bad_request", "listen: already listening");
	struct mpg_listen *l = calloc(1, sizeof *l);
	if (!l)
		return s0__error_nomem(err);
	l->fn = fn;
	l->arg = arg;
	if (pipe(l->wake) < 0) {
		free(l);
		return s0__error_set(err, S0_EIO, "meta_store", "listen: no pipe");
	}
	q->listen = l;
	if (pthread_create(&l->thread, NULL, listen_main, q)) {
		close(l->wake[0]);
		close(l->wake[1]);
		free(l);
		q->listen = NULL;
		return s0__error_set(err, S0_ERROR, "thread", "cannot start the change listener");
	}
	return S0_OK;
}

void s0__mpg_listen_stop(s0__mpg *q)
{
	struct mpg_listen *l = q->listen;
	if (!l)
		return;
	ssize_t w = write(l->wake[1], "x", 1); /* the thread's poll wakes */
	(void)w;
	pthread_join(l->thread, NULL);
	close(l->wake[0]);
	close(l->wake[1]);
	free(l);
	q->listen = NULL;
}
