/*
 * Streams (sandbox0/streams.h) and the in-process HTTP server
 * (sandbox0/server.h) of the SWIG module; %included by sandbox0.i.
 *
 * A CStream wraps one s0_stream. Its calls take the stream's mutex (an
 * s0_stream is one-thread-at-a-time); recv() waits at most the given
 * timeout, so the package's iterator waits in short slices with the GIL
 * taken back between them (Ctrl-C and close() from another thread act
 * within one slice). close() marks the stream closing, waits for the call
 * in flight to end, then frees it; it is idempotent and safe from any
 * thread. A stream is registered with its client: closing the client (or
 * its backend) closes the client's streams first, so no s0_stream outlives
 * the client or backend it borrows.
 *
 * A CServer is s0_server_new() on an embedded backend (`s0 serve` in
 * process); it is registered with the backend, whose close() stops it
 * before closing the backend.
 */

%{
#include <sandbox0/server.h>
#include <sandbox0/streams.h>

typedef struct s0py_stream CStream;
typedef struct s0py_server CServer;

struct s0py_stream {
	pthread_mutex_t mu; /* serialises the calls on st */
	s0_stream *st;      /* NULL once closed */
	atomic_int closing;
	struct s0py_client *cl; /* a reference; NULL once unregistered */
	struct s0py_stream *next;
	atomic_int refs; /* the proxy and the client's list */
};

struct s0py_server {
	s0_server *srv; /* NULL once stopped */
	int port;
	struct s0py_local *L; /* a reference */
	struct s0py_server *next;
	atomic_int refs; /* the proxy and the backend's list */
};

static pthread_mutex_t s0py_stream_list_mu = PTHREAD_MUTEX_INITIALIZER;

static void s0py_stream_unref(struct s0py_stream *S)
{
	if (!S || atomic_fetch_sub(&S->refs, 1) != 1)
		return;
	s0_stream_free(S->st);
	pthread_mutex_destroy(&S->mu);
	free(S);
}

/* Free the s0_stream (idempotent): waits for the call in flight. */
static void s0py_stream_end(struct s0py_stream *S)
{
	atomic_store(&S->closing, 1);
	pthread_mutex_lock(&S->mu);
	s0_stream *st = S->st;
	S->st = NULL;
	pthread_mutex_unlock(&S->mu);
	s0_stream_free(st);
}

/* Take S off its client's list (idempotent); drops the list's reference. */
static void s0py_stream_unregister(struct s0py_stream *S)
{
	pthread_mutex_lock(&s0py_stream_list_mu);
	struct s0py_client *cl = S->cl;
	int listed = 0;
	if (cl) {
		struct s0py_stream **pp = &cl->streams;
		while (*pp && *pp != S)
			pp = &(*pp)->next;
		if (*pp) {
			*pp = S->next;
			listed = 1;
		}
		S->cl = NULL;
	}
	pthread_mutex_unlock(&s0py_stream_list_mu);
	if (listed)
		s0py_stream_unref(S);
	s0py_client_unref(cl);
}

static void s0py_stream_close(struct s0py_stream *S)
{
	s0py_stream_end(S);
	s0py_stream_unregister(S);
}

/* Close every stream of a client (called by s0py_client_close with the
 * client's write lock held; the streams never take that lock). */
static void s0py_client_close_streams(struct s0py_client *cl)
{
	for (;;) {
		pthread_mutex_lock(&s0py_stream_list_mu);
		struct s0py_stream *S = cl->streams;
		if (S)
			atomic_fetch_add(&S->refs, 1);
		pthread_mutex_unlock(&s0py_stream_list_mu);
		if (!S)
			return;
		s0py_stream_end(S);
		s0py_stream_unregister(S);
		s0py_stream_unref(S);
	}
}

/* Open a stream on c_ (the client's read lock held) and list it on cl. */
static int s0py_stream_open(struct s0py_client *cl, s0_client *c, const s0_stream_options *o,
                            struct s0py_stream **out, s0_error **err)
{
	struct s0py_stream *S = calloc(1, sizeof *S);
	if (!S)
		return S0_ENOMEM;
	int rc = s0_stream_open(c, o, &S->st, err);
	if (rc < 0) {
		free(S);
		return rc;
	}
	pthread_mutex_init(&S->mu, NULL);
	atomic_init(&S->refs, 2);
	atomic_fetch_add(&cl->refs, 1);
	S->cl = cl;
	pthread_mutex_lock(&s0py_stream_list_mu);
	S->next = cl->streams;
	cl->streams = S;
	pthread_mutex_unlock(&s0py_stream_list_mu);
	*out = S;
	return S0_OK;
}

/* recv() results. */
enum { S0PY_MSG = 0, S0PY_NONE = 1, S0PY_END = 2 };

static int s0py_stream_recv(struct s0py_stream *S, int64_t timeout_ms, char **json_out,
                            s0_error **err)
{
	int r;
	pthread_mutex_lock(&S->mu);
	if (!S->st || atomic_load(&S->closing)) {
		r = S0PY_END;
	} else {
		int rc = s0_stream_recv(S->st, timeout_ms, json_out, NULL, err);
		if (rc == S0_OK) {
			r = S0PY_MSG;
		} else if (rc == S0_ETIMEDOUT || rc == S0_ITEROVER) {
			s0_error_free(*err);
			*err = NULL;
			r = rc == S0_ETIMEDOUT ? S0PY_NONE : S0PY_END;
		} else {
			s0py_settle(rc, err);
			r = S0PY_END;
		}
	}
	pthread_mutex_unlock(&S->mu);
	return r;
}

static void s0py_stream_send(struct s0py_stream *S, const char *json, s0_error **err)
{
	pthread_mutex_lock(&S->mu);
	int rc = S0_EGONE;
	if (S->st)
		rc = s0_stream_send(S->st, json, strlen(json), err);
	else
		*err = s0_error_new(S0_EGONE, "stream_closed", "the stream is closed");
	pthread_mutex_unlock(&S->mu);
	s0py_settle(rc, err);
}

/* ---- in-process server ---- */

static void s0py_server_unref(struct s0py_server *V)
{
	if (!V || atomic_fetch_sub(&V->refs, 1) != 1)
		return;
	s0_server_free(V->srv);
	s0py_local_unref(V->L);
	free(V);
}

/* Stop the server (idempotent). */
static void s0py_server_stop(struct s0py_server *V)
{
	struct s0py_local *L = V->L;
	int listed = 0;
	pthread_mutex_lock(&L->mu);
	struct s0py_server **pp = &L->servers;
	while (*pp && *pp != V)
		pp = &(*pp)->next;
	if (*pp) {
		*pp = V->next;
		listed = 1;
	}
	s0_server *srv = V->srv;
	V->srv = NULL;
	pthread_mutex_unlock(&L->mu);
	s0_server_free(srv);
	if (listed)
		s0py_server_unref(V);
}

/* Stop every server of a backend (called by s0py_local_close first). */
static void s0py_local_stop_servers(struct s0py_local *L)
{
	for (;;) {
		pthread_mutex_lock(&L->mu);
		struct s0py_server *V = L->servers;
		if (V)
			atomic_fetch_add(&V->refs, 1);
		pthread_mutex_unlock(&L->mu);
		if (!V)
			return;
		s0py_server_stop(V);
		s0py_server_unref(V);
	}
}

static struct s0py_server *s0py_server_start(struct s0py_local *L, s0_local *l,
                                             const char *api_key, const char *team_id,
                                             s0_error **err)
{
	s0_server_options o;
	s0_server_options_init(&o, S0_SERVER_OPTIONS_VERSION);
	s0_server_api_key k = {api_key, team_id};
	if (api_key) {
		o.api_keys = &k;
		o.api_keys_len = 1;
	}
	o.drain_timeout_ms = 5000;
	struct s0py_server *V = calloc(1, sizeof *V);
	if (!V) {
		s0py_settle(S0_ENOMEM, err);
		return NULL;
	}
	int rc = s0_server_new(l, &o, &V->srv, err);
	if (rc < 0) {
		s0py_settle(rc, err);
		free(V);
		return NULL;
	}
	V->port = s0_server_port(V->srv);
	atomic_init(&V->refs, 2);
	atomic_fetch_add(&L->refs, 1);
	V->L = L;
	pthread_mutex_lock(&L->mu);
	V->next = L->servers;
	L->servers = V;
	pthread_mutex_unlock(&L->mu);
	return V;
}
%}

%feature("docstring") CStream "One stream (s0_stream): a context's input and output, a session attach or a file watch; JSON texts both ways. close() is safe from any thread.";
%feature("docstring") CServer "`s0 serve` in process (s0_server) on an embedded backend, on 127.0.0.1 and an ephemeral port.";
%nodefaultctor CStream;
%nodefaultdtor CStream;
%nodefaultctor CServer;
%nodefaultdtor CServer;
typedef struct {} CStream;
typedef struct {} CServer;

%extend CStream {
	~CStream() {
		s0py_stream_close($self);
		s0py_stream_unref($self);
	}
	/** Next server message: (0, json) a message, 1 nothing within
	 *  timeout_ms (ms; -1 = until one comes), 2 the stream has ended. */
	int recv(int64_t timeout_ms, char **json_out, s0_error **err) {
		return s0py_stream_recv($self, timeout_ms, json_out, err);
	}
	/** Send one client message (a JSON object text). GoneError
	 *  (stream_closed) once the stream has ended. */
	void send(const char *json, s0_error **err) { s0py_stream_send($self, json, err); }
	/** The close code (0 while the stream goes on). */
	int close_code() {
		pthread_mutex_lock(&$self->mu);
		int r = $self->st ? s0_stream_close_code($self->st, NULL) : 0;
		pthread_mutex_unlock(&$self->mu);
		return r;
	}
	/** The close reason ("" when none), copied. */
	%newobject close_reason;
	char *close_reason() {
		const char *why = NULL;
		pthread_mutex_lock(&$self->mu);
		if ($self->st)
			s0_stream_close_code($self->st, &why);
		char *r = strdup(why ? why : "");
		pthread_mutex_unlock(&$self->mu);
		return r;
	}
	/** Free the stream (the process goes on); waits for a call in flight. Idempotent. */
	void close() { s0py_stream_close($self); }
	bool closed() { return atomic_load(&$self->closing) != 0; }
}

%extend CServer {
	~CServer() {
		s0py_server_stop($self);
		s0py_server_unref($self);
	}
	int port() { return $self->port; }
	/** Stop serving; waits for requests in flight. Idempotent. */
	void close() { s0py_server_stop($self); }
}

%extend CClient {
	/** Open a stream (s0_stream_open): kind 1 context, 2 session, 3 file
	 *  watch; after: a session's replay cursor (seq). */
	%newobject stream_open;
	CStream *stream_open(int32_t kind, const char *sandbox_id, const char *id = NULL,
	                     int64_t after = 0, int64_t wake_timeout_ms = 0, s0_error **err) {
		s0_stream_options o = S0_STREAM_OPTIONS_INIT;
		struct s0py_stream *S = NULL;
		o.kind = kind;
		o.sandbox_id = sandbox_id;
		o.id = id;
		o.after = after;
		o.wake_timeout_ms = wake_timeout_ms;
		S0PY_CALL($self, s0py_stream_open($self, c_, &o, &S, err));
		return S;
	}
}

%extend CLocal {
	/** Serve this backend over HTTP in process (s0_server_new) with one API
	 *  key of team team_id; stopped by close() or the backend's close(). */
	%newobject serve;
	CServer *serve(const char *api_key = NULL, const char *team_id = NULL, s0_error **err) {
		struct s0py_server *V = NULL;
		S0PY_LOCAL_CALL($self, (V = s0py_server_start($self, l_, api_key, team_id, err))
		                           ? S0_OK : S0_EIO);
		return V;
	}
}
