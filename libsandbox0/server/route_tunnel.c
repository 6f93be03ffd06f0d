/* A public route's upgraded connection relayed both ways (route_tunnel.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "server/loop.h"
#include "server/route_tunnel.h"

struct s0__route_tunnel {
	s0_server *s;
	pthread_mutex_t mu;
	s0__http_body *svc;  /* the service's side (its fd) */
	int cfd;             /* the client's side (libmicrohttpd's socket) */
	struct MHD_UpgradeResponseHandle *urh;
	s0__loop_src *csrc, *ssrc;
	char c2s[S0__ROUTE_TUNNEL_BUFFER], s2c[S0__ROUTE_TUNNEL_BUFFER];
	size_t c2s_len, s2c_len;
	bool c_end, s_end;   /* that side sent its end or failed */
	bool closing;        /* the sources are going; the last one frees this */
};
typedef struct s0__route_tunnel tunnel;

static bool again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Send what buf holds to fd: false when fd failed. */
static bool flush(int fd, char *buf, size_t *len)
{
	ssize_t n = *len ? send(fd, buf, *len, MSG_NOSIGNAL) : 0;
	if (n < 0 && !again())
		return false;
	if (n > 0) {
		memmove(buf, buf + n, *len - (size_t)n);
		*len -= (size_t)n;
	}
	return true;
}

/* Move what can move without blocking (t->mu held). */
static void pump(tunnel *t)
{
	for (int round = 0; round < 16; round++) {
		size_t before = t->c2s_len + t->s2c_len;
		bool ends = t->c_end + t->s_end;
		if (!t->c_end && t->c2s_len < sizeof t->c2s) {
			ssize_t n = recv(t->cfd, t->c2s + t->c2s_len, sizeof t->c2s - t->c2s_len, 0);
			if (n > 0)
				t->c2s_len += (size_t)n;
			else if (n == 0 || !again())
				t->c_end = true;
		}
		if (!t->s_end && t->s2c_len < sizeof t->s2c) {
			ptrdiff_t n = t->svc->read(t->svc, t->s2c + t->s2c_len, sizeof t->s2c - t->s2c_len);
			if (n > 0)
				t->s2c_len += (size_t)n;
			else if (n != S0__HTTP_BODY_AGAIN)
				t->s_end = true;
		}
		if (!flush(t->svc->fd, t->c2s, &t->c2s_len)) {
			t->s_end = true;
			t->c2s_len = 0;
		}
		if (!flush(t->cfd, t->s2c, &t->s2c_len)) {
			t->c_end = true;
			t->s2c_len = 0;
		}
		if (t->c2s_len + t->s2c_len == before && t->c_end + t->s_end == ends)
			break;
	}
}

/* Over: one side ended and what was buffered toward the other went. */
static bool over(const tunnel *t)
{
	return (t->c_end && (!t->c2s_len || t->s_end)) || (t->s_end && (!t->s2c_len || t->c_end));
}

/* Remove @p src (t->mu held; unlocks): the tunnel is closing, the other
 * source is told to go too, and the last one frees it. */
static void drop_src(tunnel *t, s0__loop_src *src)
{
	s0__loop_remove(src);
	if (src == t->csrc)
		t->csrc = NULL;
	else
		t->ssrc = NULL;
	s0__loop_src *other = t->csrc ? t->csrc : t->ssrc;
	if (!t->closing && other) /* a source removes only itself (loop.h) */
		s0__loop_signal(other);
	t->closing = true;
	pthread_mutex_unlock(&t->mu);
	if (other)
		return;
	t->svc->free(t->svc);
	MHD_upgrade_action(t->urh, MHD_UPGRADE_ACTION_CLOSE);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* Either side's socket changed, or the loop stops (loop thread). */
static void on_event(s0__loop_src *src, unsigned events, void *arg)
{
	tunnel *t = arg;
	pthread_mutex_lock(&t->mu);
	if (!t->closing && !(events & S0__LOOP_STOP))
		pump(t);
	if (t->closing || events & S0__LOOP_STOP || over(t)) {
		drop_src(t, src);
		return;
	}
	s0__loop_set(t->csrc, (!t->c_end && t->c2s_len < sizeof t->c2s ? S0__LOOP_IN : 0) |
	                          (t->s2c_len ? S0__LOOP_OUT : 0),
	             0);
	s0__loop_set(t->ssrc, (!t->s_end && t->s2c_len < sizeof t->s2c ? S0__LOOP_IN : 0) |
	                          (t->c2s_len ? S0__LOOP_OUT : 0),
	             0);
	pthread_mutex_unlock(&t->mu);
}

void s0__route_tunnel_upgraded(tunnel *t, const char *extra_in, size_t extra_in_size,
                               MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	t->cfd = sock;
	t->urh = urh;
	int fl = fcntl(sock, F_GETFL);
	bool ok = fl >= 0 && fcntl(sock, F_SETFL, fl | O_NONBLOCK) == 0 &&
	          extra_in_size <= sizeof t->c2s;
	if (ok && extra_in_size) { /* bytes the client sent after its head */
		memcpy(t->c2s, extra_in, extra_in_size);
		t->c2s_len = extra_in_size;
	}
	pthread_mutex_lock(&t->mu);
	ok = ok && s0__loop_add(t->s->loop, sock, S0__LOOP_IN, 0, on_event, t, &t->csrc) == S0_OK;
	ok = ok &&
	     s0__loop_add(t->s->loop, t->svc->fd, S0__LOOP_IN, 0, on_event, t, &t->ssrc) == S0_OK;
	if (!ok) {
		t->closing = true;
		s0__loop_src *added = t->csrc ? t->csrc : t->ssrc;
		if (added) { /* its callback removes it and frees t */
			s0__loop_signal(added);
			pthread_mutex_unlock(&t->mu);
			return;
		}
		pthread_mutex_unlock(&t->mu);
		t->svc->free(t->svc);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return;
	}
	s0__loop_signal(t->ssrc); /* what came after the service's 101, and extra_in */
	pthread_mutex_unlock(&t->mu);
}

tunnel *s0__route_tunnel_new(s0_server *s, s0__http_body *svc)
{
	tunnel *t = calloc(1, sizeof *t);
	if (!t) {
		svc->free(svc);
		return NULL;
	}
	t->s = s;
	t->svc = svc;
	t->cfd = -1;
	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void s0__route_tunnel_discard(tunnel *t)
{
	if (!t)
		return;
	t->svc->free(t->svc);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
