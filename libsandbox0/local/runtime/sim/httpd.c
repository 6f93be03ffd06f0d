/* The simulated runtime's HTTP listener (httpd.h): a registry of
 * (guest, port, root) and one libmicrohttpd daemon without a listening
 * socket that serves the connections connect hands out. GET/HEAD answer
 * the file under root (index.html for a directory path); POST/PUT echo
 * the request body with X-Sim-Method and X-Sim-Path, so a test sees what
 * reached the sandbox. */
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "local/fsview/router.h"
#include "local/runtime/sim/guest_impl.h"
#include "local/runtime/sim/httpd.h"

#define BODY_MAX ((size_t)16 << 20)

typedef struct site {
	struct site *next;
	s0__guest *g;
	uint32_t port;
	char *root;
} site;

typedef struct conn_link { /* one connection handed out */
	struct conn_link *next;
	int fd;
	const s0__files_ns *ns;
	char *root;
} conn_link;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static site *sites;
static conn_link *links;
static struct MHD_Daemon *daemon_;

int s0__sim_httpd_start(s0__guest *g, uint32_t port, const char *root, s0_error **err)
{
	s0__proc *procd = s0__gproc_find(g, 1);
	if (!procd || s0__gproc_port_listening(g, port) || procd->nports >= S0__MAX_SOCKETS)
		return s0__error_set(err, S0_ECONFLICT, "conflict", "Address already in use");
	site *s = calloc(1, sizeof *s);
	uint32_t *np = s ? realloc(procd->ports, (procd->nports + 1) * sizeof *np) : NULL;
	if (np)
		procd->ports = np;
	if (!np || !(s->root = strdup(root))) {
		free(s);
		return s0__error_nomem(err);
	}
	np[procd->nports++] = port;
	s->g = g;
	s->port = port;
	pthread_mutex_lock(&mu);
	s->next = sites;
	sites = s;
	pthread_mutex_unlock(&mu);
	return S0_OK;
}

void s0__sim_httpd_forget(s0__guest *g)
{
	pthread_mutex_lock(&mu);
	for (site **p = &sites; *p;) {
		site *s = *p;
		if (s->g == g) {
			*p = s->next;
			free(s->root);
			free(s);
		} else {
			p = &s->next;
		}
	}
	struct MHD_Daemon *d = !sites && !links ? daemon_ : NULL;
	if (d)
		daemon_ = NULL;
	pthread_mutex_unlock(&mu);
	if (d)
		MHD_stop_daemon(d);
}

/* The conn_link of a connection (mu held): by its socket. */
static conn_link *link_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	for (conn_link *l = links; ci && l; l = l->next)
		if (l->fd == ci->connect_fd)
			return l;
	return NULL;
}

static void on_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
                      enum MHD_ConnectionNotificationCode code)
{
	(void)cls;
	(void)socket_ctx;
	if (code != MHD_CONNECTION_NOTIFY_CLOSED)
		return;
	pthread_mutex_lock(&mu);
	conn_link *l = link_of(c);
	for (conn_link **p = &links; l && *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	pthread_mutex_unlock(&mu);
	if (l) {
		free(l->root);
		free(l);
	}
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
                              void *data, size_t len, const char *method, const char *url)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, data, data ? MHD_RESPMEM_MUST_FREE
		                                                : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	if (method) {
		MHD_add_response_header(r, "X-Sim-Method", method);
		MHD_add_response_header(r, "X-Sim-Path", url);
	}
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static const char *type_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (dot && !strcmp(dot, ".html"))
		return "text/html";
	if (dot && !strcmp(dot, ".json"))
		return "application/json";
	if (dot && !strcmp(dot, ".txt"))
		return "text/plain";
	return "application/octet-stream";
}

static enum MHD_Result get_file(struct MHD_Connection *c, const char *url)
{
	pthread_mutex_lock(&mu);
	conn_link *l = link_of(c);
	const s0__files_ns *ns = l ? l->ns : NULL;
	char *path = l && !strstr(url, "/..") && url[0] == '/'
	                     ? s0__asprintf("%s%s%s", l->root, url,
	                                    url[strlen(url) - 1] == '/' ? "index.html" : "")
	                     : NULL;
	pthread_mutex_unlock(&mu);
	void *data = NULL;
	size_t len = 0;
	int rc = path ? s0__files_read(ns, path, strlen(path), 0, -1, &data, &len, NULL)
	              : S0_ENOTFOUND;
	enum MHD_Result ok = rc == S0_OK ? answer(c, 200, type_of(path), data, len, NULL, NULL)
	                                 : answer(c, 404, "text/plain", strdup("not found\n"), 10,
	                                          NULL, NULL);
	free(path);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **req_cls)
{
	(void)cls;
	(void)version;
	bool body = !strcmp(method, "POST") || !strcmp(method, "PUT");
	if (!body) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return answer(c, 405, "text/plain", strdup("method not allowed\n"), 19, NULL,
			              NULL);
		return get_file(c, url);
	}
	s0__buf *b = *req_cls;
	if (!b) {
		if (!(b = calloc(1, sizeof *b)))
			return MHD_NO;
		*req_cls = b;
		return MHD_YES;
	}
	if (*upload_size) {
		bool over = b->len + *upload_size > BODY_MAX;
		int rc = over ? -1 : s0__buf_put(b, upload, *upload_size);
		*upload_size = 0;
		return rc < 0 ? MHD_NO : MHD_YES;
	}
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	size_t len = b->len;
	void *data = len ? s0__buf_detach(b, &len) : NULL;
	return answer(c, 200, ct ? ct : "application/octet-stream", data, len, method, url);
}

static void on_done(void *cls, struct MHD_Connection *c, void **req_cls,
                    enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	s0__buf *b = *req_cls;
	if (b) {
		s0__buf_free(b);
		free(b);
	}
	*req_cls = NULL;
}

/* The daemon (mu held), started on first use. */
static struct MHD_Daemon *daemon_get(void)
{
	if (!daemon_)
		daemon_ = MHD_start_daemon(
			MHD_USE_NO_LISTEN_SOCKET | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
				MHD_USE_EPOLL,
			0, NULL, NULL, on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
			MHD_OPTION_NOTIFY_CONNECTION, on_notify, NULL, MHD_OPTION_END);
	return daemon_;
}

int s0__sim_httpd_connect(s0__guest *g, const s0__files_ns *ns, uint32_t port, int *fd_out,
                          s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	bool listening = s0__gproc_port_listening(g, port);
	pthread_mutex_unlock(&g->mu);
	if (!listening)
		return s0__error_set(err, S0_EUNAVAILABLE, "port_not_listening",
		                     "nothing listens on port %u in the sandbox", (unsigned)port);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return s0__error_set(err, S0_EUNAVAILABLE, "unavailable", "socketpair failed");
	pthread_mutex_lock(&mu);
	const site *s = sites;
	while (s && !(s->g == g && s->port == port))
		s = s->next;
	conn_link *l = s ? calloc(1, sizeof *l) : NULL;
	struct MHD_Daemon *d = l ? daemon_get() : NULL;
	int rc = S0_OK;
	if (l && d && (l->root = strdup(s->root))) {
		l->fd = sv[1];
		l->ns = ns;
		l->next = links;
		links = l;
		struct sockaddr_un_dummy {
			sa_family_t f;
		} addr = {AF_UNIX};
		/* MHD owns sv[1] from here (it closes it on failure too); on_notify
		 * frees l when the connection closes */
		if (MHD_add_connection(d, sv[1], (const struct sockaddr *)&addr, sizeof addr) !=
		    MHD_YES) {
			links = l->next;
			free(l->root);
			free(l);
			rc = s0__error_set(err, S0_EUNAVAILABLE, "unavailable",
			                   "the simulated listener refused the connection");
		}
	} else if (s) {
		free(l);
		close(sv[1]);
		rc = s0__error_nomem(err);
	} else {
		close(sv[1]); /* a bare `listen` socket: accepted and closed */
	}
	pthread_mutex_unlock(&mu);
	if (rc < 0) {
		close(sv[0]);
		return rc;
	}
	*fd_out = sv[0];
	return S0_OK;
}
