/* The server's life: options, the daemon, clean shutdown (issue #8). */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/deadline.h"
#include "server/loop.h"
#include "server/server_internal.h"
#include "server/workers.h"

#define DEFAULT_CONNECTIONS 256
#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_DRAIN_MS 60000

int s0_server_options_init(s0_server_options *opts, uint32_t version)
{
	if (!opts || (version != S0_SERVER_OPTIONS_VERSION && version != 1))
		return S0_EINVAL;
	s0_server_options d = S0_SERVER_OPTIONS_INIT;
	d.version = version;
	/* a version 1 struct ends before admin_token */
	memcpy(opts, &d, version == 1 ? offsetof(s0_server_options, admin_token) : sizeof d);
	return S0_OK;
}

/* Our own copy of the options: strings duplicated, defaults filled. */
static int copy_options(s0_server *s, const s0_server_options *o, s0_error **err)
{
	if (o->version != S0_SERVER_OPTIONS_VERSION && o->version != 1)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_server_options.version %u is not 1 or %u", o->version,
		                     S0_SERVER_OPTIONS_VERSION);
	if (o->connection_limit < 0 || o->connection_timeout_ms < 0 || o->drain_timeout_ms < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "connection_limit and timeouts must be >= 0");
	if (o->version == 1) { /* a caller built before admin_token: copy what it has */
		memcpy(&s->o, o, offsetof(s0_server_options, admin_token));
		s->o.admin_token = NULL;
	} else {
		s->o = *o;
	}
	const char *admin_token = s->o.admin_token;
	s->o.admin_token = NULL; /* hashed into the keyring, never kept */
	s->o.api_keys = NULL;
	s->o.api_keys_len = 0;
	s->listen_address = s0__strdup(o->listen_address);
	s->unix_socket_path = s0__strdup(o->unix_socket_path);
	s->anonymous_team_id = s0__strdup(o->anonymous_team_id);
	if ((o->listen_address && !s->listen_address) ||
	    (o->unix_socket_path && !s->unix_socket_path) ||
	    (o->anonymous_team_id && !s->anonymous_team_id))
		return s0__error_nomem(err);
	s->o.listen_address = s->listen_address;
	s->o.unix_socket_path = s->unix_socket_path;
	s->o.anonymous_team_id = s->anonymous_team_id;
	if (!s->o.connection_limit)
		s->o.connection_limit = DEFAULT_CONNECTIONS;
	if (!s->o.connection_timeout_ms)
		s->o.connection_timeout_ms = DEFAULT_TIMEOUT_MS;
	if (!s->o.drain_timeout_ms)
		s->o.drain_timeout_ms = DEFAULT_DRAIN_MS;
	int rc = s0__keyring_new(o->api_keys, o->api_keys_len, o->anonymous_team_id, &s->keys, err);
	if (rc == S0_OK && admin_token)
		rc = s0__keyring_set_admin(s->keys, admin_token, err);
	return rc;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/*
 * One libmicrohttpd thread on epoll: it parses and sends; handlers run on
 * the worker threads (workers.h) and held-open connections on our loop
 * (loop.h). One thread keeps the connection limit exact (a pool splits it).
 */
static int start_daemon(s0_server *s, s0_error **err)
{
	unsigned timeout_s = (unsigned)((s->o.connection_timeout_ms + 999) / 1000);
	s->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			MHD_ALLOW_UPGRADE | MHD_USE_ITC,
		0, NULL, NULL, s0__server_on_request, s, MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->o.connection_limit,
		MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		S0__SERVER_POOL_BYTES, MHD_OPTION_NOTIFY_COMPLETED,
		s0__server_on_completed, s, MHD_OPTION_URI_LOG_CALLBACK, s0__server_on_uri, s,
		MHD_OPTION_END);
	if (!s->daemon)
		return s0__error_set(err, S0_EIO, "listen_failed",
		                     "libmicrohttpd could not start on the listening socket");
	return S0_OK;
}

static int init_sync(s0_server *s)
{
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca))
		return -1;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (rc)
		return -1;
	if (pthread_mutex_init(&s->mu, NULL)) {
		pthread_cond_destroy(&s->cv);
		return -1;
	}
	return 0;
}

static void destroy(s0_server *s)
{
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->unix_socket_path && s->port < 0)
		unlink(s->unix_socket_path);
	s0__keyring_free(s->keys);
	free(s->listen_address);
	free(s->unix_socket_path);
	free(s->anonymous_team_id);
	s0__loop_free(s->loop);
	s0__workers_free(s->workers);
	s0_cancel_token_free(s->stop);
	pthread_mutex_destroy(&s->park_mu);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	if (s->counted)
		s0__obj_dec();
	free(s);
}

int s0__server_new(const s0__server_config *cfg, s0_server **out, s0_error **err)
{
	s0_server_options d = S0_SERVER_OPTIONS_INIT;
	if (!cfg || !cfg->handler || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "a handler and out are required");
	s0_server *s = calloc(1, sizeof *s);
	if (!s || init_sync(s) < 0) {
		free(s);
		return s0__error_nomem(err);
	}
	if (s0_cancel_token_new(&s->stop, err) < 0) {
		destroy(s);
		return S0_ENOMEM;
	}
	s->listen_fd = -1;
	s->cfg = *cfg;
	s->cfg.opts = NULL;
	int rc = copy_options(s, cfg->opts ? cfg->opts : &d, err);
	if (rc == S0_OK && (s->listen_fd = s0__server_listen(&s->o, err)) < 0)
		rc = s->listen_fd;
	int limit = s->o.connection_limit;
	if (rc == S0_OK)
		rc = s0__workers_new((size_t)limit, &s->workers, err);
	if (rc == S0_OK) {
		int reserve = limit / 4 > S0__SERVER_PARK_RESERVE_MIN ? limit / 4
		                                                     : S0__SERVER_PARK_RESERVE_MIN;
		s->park_max = limit > reserve ? (size_t)(limit - reserve) : 1;
		rc = s0__loop_new(s->park_max, &s->loop, err);
	}
	if (rc == S0_OK) {
		/* port -1 marks "we created the unix socket file" for destroy() */
		s->port = s->unix_socket_path ? -1 : port_of(s->listen_fd);
		rc = start_daemon(s, err);
	}
	if (rc < 0) {
		destroy(s);
		return rc;
	}
	s0__obj_inc();
	s->counted = true;
	*out = s;
	return S0_OK;
}

int s0_server_port(const s0_server *srv)
{
	return srv && srv->port > 0 ? srv->port : 0;
}

/* Wait until no request is in flight, up to the drain timeout. */
static void drain(s0_server *s)
{
	struct timespec until = s0__deadline_after_ms(CLOCK_MONOTONIC, s->o.drain_timeout_ms);
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	while (s->active > 0)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&s->mu);
}

void s0_server_free(s0_server *srv)
{
	if (!srv)
		return;
	/* stop accepting first: the listening socket comes back to us and is
	 * shut down at once, so the kernel stops queueing new connections; it is
	 * closed only after MHD_stop_daemon(): MHD's threads take it out of their
	 * epoll sets a little later, and a closed number could be reused by then */
	MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
	if (fd != MHD_INVALID_SOCKET)
		shutdown(fd, SHUT_RDWR);
	srv->listen_fd = -1; /* ours (closed below), or still MHD's (closed on stop) */
	pthread_mutex_lock(&srv->mu);
	srv->stopping = true;
	pthread_mutex_unlock(&srv->mu);
	/* handlers waiting on a route's service start give up now */
	s0_cancel_token_cancel(srv->stop);
	/* parked long-polls answer now, streams close; nothing parks after this */
	s0__loop_stop(srv->loop);
	drain(srv);
	/* handlers still running past the drain finish first: MHD must not stop
	 * with a connection suspended */
	s0__workers_free(srv->workers);
	srv->workers = NULL;
	MHD_stop_daemon(srv->daemon);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	if (srv->cfg.on_free)
		srv->cfg.on_free(srv->cfg.handler_ctx);
	destroy(srv);
}
