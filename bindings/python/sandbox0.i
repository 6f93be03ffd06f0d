/*
 * SWIG interface of the Python package `libsandbox0`.
 *
 * This is the C surface, `libsandbox0.capi`: opaque handles of the public C
 * API as proxy classes with destructors, every blocking call as a method.
 * The idioms (keyword arguments with units in seconds, dataclasses, the
 * UCloud-style facade) live in the pure-Python modules of the package.
 *
 * Rules followed here:
 *  - `s0_error **err` is never an argument on the Python side: a failure is
 *    raised as the matching exception of libsandbox0.errors inside the same
 *    wrapper call (no thread hop, no "last error" state);
 *  - objects returned through `**out` are owned by their proxy (%newobject)
 *    and freed by its destructor; borrowed items of lists keep their owner
 *    alive (`_owner`);
 *  - options structs are never exposed: methods take their fields as
 *    keyword arguments and build the struct on the C stack, so no string
 *    member is ever set through SWIG;
 *  - `swig -threads`: every call runs with the GIL released; callbacks into
 *    Python take it back with PyGILState_Ensure();
 *  - a blocking call made on the main thread turns SIGINT into a fired
 *    cancel token (a self-pipe and a watcher thread; the previous handler
 *    is chained), so Ctrl-C interrupts a wait promptly and surfaces as
 *    KeyboardInterrupt.
 */
%module(package="libsandbox0", docstring="Low-level bindings of the libsandbox0 C API (SWIG). Use the libsandbox0 package instead; this module is its C surface.") capi

%feature("kwargs");
%feature("autodoc", "1");

%include <stdint.i>

%{
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sandbox0/sandbox0.h>

/* Names SWIG sees for the library's opaque types (the proxy class names). */
typedef s0_error CError;
typedef s0_sandbox_info CSandboxInfo;
typedef s0_lifecycle_result CLifecycleResult;
typedef s0_sandbox_page CSandboxPage;
typedef s0_snapshot_info CSnapshotInfo;
typedef s0_snapshot_list CSnapshotList;
typedef s0_file_info CFileInfo;
typedef s0_file_list CFileList;
typedef s0_cancel_token CCancelToken;
typedef struct s0py_client CClient;
typedef struct s0py_local CLocal;
typedef struct s0py_iter CSandboxIter;
%}

/* ------------------------------------------------------------------ */
/* Helper state: handles with close-vs-call safety, SIGINT, exceptions */
/* ------------------------------------------------------------------ */
%{
struct s0py_local;

/*
 * A client handle. Calls hold `lock` for reading; close() fires `tok`
 * (in-flight waits and requests return S0_ECANCELED promptly), then takes
 * it for writing and frees the client. The struct itself is reference
 * counted: the proxy, iterators and the owning backend's child list.
 */
struct s0py_client {
	pthread_rwlock_t lock;
	s0_client *c;
	s0_cancel_token *tok;
	struct s0py_local *local; /* owning backend (a reference), or NULL */
	int in_local_list;
	struct s0py_client *next;
	struct s0py_stream *streams; /* open streams (streams.i) */
	atomic_int refs;
};

struct s0py_local {
	pthread_rwlock_t lock;
	pthread_mutex_t mu; /* children */
	s0_local *l;
	struct s0py_client *children;
	struct s0py_server *servers; /* in-process servers (streams.i) */
	char *path;
	atomic_int refs;
};

struct s0py_iter {
	pthread_mutex_t mu; /* an s0_sandbox_iter is one-thread-at-a-time */
	s0_sandbox_iter *it;
	struct s0py_client *cl;
};

static void s0py_local_unref(struct s0py_local *L);
static void s0py_client_close_streams(struct s0py_client *cl);
static void s0py_local_stop_servers(struct s0py_local *L);

static void s0py_client_unref(struct s0py_client *cl)
{
	if (!cl || atomic_fetch_sub(&cl->refs, 1) != 1)
		return;
	s0_client_free(cl->c);
	s0_cancel_token_free(cl->tok);
	pthread_rwlock_destroy(&cl->lock);
	s0py_local_unref(cl->local);
	free(cl);
}

/* Free the C client (idempotent); waits for calls in flight, which the
 * fired token makes return promptly. */
static void s0py_client_close(struct s0py_client *cl)
{
	if (!cl)
		return;
	struct s0py_local *L = cl->local;
	if (L) {
		pthread_mutex_lock(&L->mu);
		if (cl->in_local_list) {
			struct s0py_client **pp = &L->children;
			while (*pp && *pp != cl)
				pp = &(*pp)->next;
			if (*pp)
				*pp = cl->next;
			cl->in_local_list = 0;
			pthread_mutex_unlock(&L->mu);
			s0py_client_unref(cl); /* the list's reference; the caller holds another */
		} else {
			pthread_mutex_unlock(&L->mu);
		}
	}
	if (cl->tok)
		s0_cancel_token_cancel(cl->tok);
	pthread_rwlock_wrlock(&cl->lock);
	s0py_client_close_streams(cl);
	s0_client *c = cl->c;
	cl->c = NULL;
	pthread_rwlock_unlock(&cl->lock);
	s0_client_free(c);
}

static struct s0py_client *s0py_client_wrap(s0_client *c, s0_cancel_token *tok,
                                            struct s0py_local *L)
{
	struct s0py_client *cl = calloc(1, sizeof *cl);
	if (!cl)
		return NULL;
	pthread_rwlock_init(&cl->lock, NULL);
	cl->c = c;
	cl->tok = tok;
	atomic_init(&cl->refs, 1);
	if (L) {
		atomic_fetch_add(&L->refs, 1);
		cl->local = L;
		atomic_fetch_add(&cl->refs, 1); /* the backend's child list */
		pthread_mutex_lock(&L->mu);
		cl->next = L->children;
		L->children = cl;
		cl->in_local_list = 1;
		pthread_mutex_unlock(&L->mu);
	}
	return cl;
}

static void s0py_local_unref(struct s0py_local *L)
{
	if (!L || atomic_fetch_sub(&L->refs, 1) != 1)
		return;
	s0_local_close(L->l);
	pthread_rwlock_destroy(&L->lock);
	pthread_mutex_destroy(&L->mu);
	free(L->path);
	free(L);
}

/* Close every client of the backend, then the backend (idempotent). */
static void s0py_local_close(struct s0py_local *L)
{
	if (!L)
		return;
	s0py_local_stop_servers(L);
	for (;;) {
		pthread_mutex_lock(&L->mu);
		struct s0py_client *cl = L->children;
		if (cl)
			atomic_fetch_add(&cl->refs, 1);
		pthread_mutex_unlock(&L->mu);
		if (!cl)
			break;
		s0py_client_close(cl);
		s0py_client_unref(cl);
	}
	pthread_rwlock_wrlock(&L->lock);
	s0_local *l = L->l;
	L->l = NULL;
	pthread_rwlock_unlock(&L->lock);
	s0_local_close(l);
}

/* ---- SIGINT on the main thread → cancel token ---- */

static pthread_mutex_t s0py_sig_mu = PTHREAD_MUTEX_INITIALIZER;
static int s0py_sig_pipe[2] = {-1, -1};
static pid_t s0py_sig_pid;
static unsigned long s0py_main_ident;
static int s0py_sig_depth;
static s0_cancel_token *s0py_sig_tokens[32];
static int s0py_sig_fired;
static struct sigaction s0py_sig_old;

static _Thread_local int s0py_tls_interrupted;
static _Thread_local PyObject *s0py_tls_exc_type, *s0py_tls_exc_value, *s0py_tls_exc_tb;

static void s0py_on_sigint(int signo, siginfo_t *si, void *uc)
{
	int saved = errno;
	if (s0py_sig_pipe[1] >= 0) {
		char b = 1;
		ssize_t r = write(s0py_sig_pipe[1], &b, 1);
		(void)r;
	}
	/* chain the previous handler (Python's: it schedules KeyboardInterrupt) */
	if (s0py_sig_old.sa_flags & SA_SIGINFO) {
		if (s0py_sig_old.sa_sigaction)
			s0py_sig_old.sa_sigaction(signo, si, uc);
	} else if (s0py_sig_old.sa_handler != SIG_DFL && s0py_sig_old.sa_handler != SIG_IGN) {
		s0py_sig_old.sa_handler(signo);
	}
	errno = saved;
}

static void *s0py_sig_watcher(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[64];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		pthread_mutex_lock(&s0py_sig_mu);
		for (int i = 0; i < s0py_sig_depth; i++)
			s0_cancel_token_cancel(s0py_sig_tokens[i]);
		if (s0py_sig_depth > 0)
			s0py_sig_fired = 1;
		pthread_mutex_unlock(&s0py_sig_mu);
	}
}

/* Under s0py_sig_mu. */
static int s0py_sig_ensure_watcher(void)
{
	if (s0py_sig_pipe[0] >= 0 && s0py_sig_pid == getpid())
		return 0;
	int p[2];
	if (pipe(p) < 0)
		return -1;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* the watcher never takes signals */
	int rc = pthread_create(&th, &at, s0py_sig_watcher, (void *)(intptr_t)p[0]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	s0py_sig_pipe[0] = p[0];
	s0py_sig_pipe[1] = p[1];
	s0py_sig_pid = getpid();
	return 0;
}

typedef struct s0py_sig {
	int active;
	s0_cancel_token *tok;
} s0py_sig;

/* Runs without the GIL. Only the main thread installs the handler. */
static void s0py_sig_enter(s0py_sig *s, s0_cancel_token *tok)
{
	s->active = 0;
	s->tok = tok;
	s0py_tls_interrupted = 0;
	if (!tok || !s0py_main_ident || (unsigned long)pthread_self() != s0py_main_ident)
		return;
	pthread_mutex_lock(&s0py_sig_mu);
	if (s0py_sig_depth == 0) {
		struct sigaction cur;
		if (sigaction(SIGINT, NULL, &cur) == 0 &&
		    ((cur.sa_flags & SA_SIGINFO) ? cur.sa_sigaction != NULL
		                                 : (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)) &&
		    s0py_sig_ensure_watcher() == 0) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_sigaction = s0py_on_sigint;
			sa.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_ONSTACK);
			sa.sa_mask = cur.sa_mask;
			s0py_sig_old = cur;
			s0py_sig_fired = 0;
			if (sigaction(SIGINT, &sa, NULL) == 0)
				s->active = 1;
		}
	} else if (s0py_sig_depth < (int)(sizeof s0py_sig_tokens / sizeof s0py_sig_tokens[0])) {
		s->active = 1;
	}
	if (s->active)
		s0py_sig_tokens[s0py_sig_depth++] = tok;
	pthread_mutex_unlock(&s0py_sig_mu);
}

static void s0py_sig_leave(s0py_sig *s)
{
	if (!s->active)
		return;
	pthread_mutex_lock(&s0py_sig_mu);
	int fired = s0py_sig_fired;
	s0py_sig_tokens[--s0py_sig_depth] = NULL;
	if (s0py_sig_depth == 0) {
		sigaction(SIGINT, &s0py_sig_old, NULL);
		s0py_sig_fired = 0;
	}
	pthread_mutex_unlock(&s0py_sig_mu);
	if (fired) {
		s0_cancel_token_reset(s->tok);
		s0py_tls_interrupted = 1;
	}
}

/* Keep the first Python exception raised by a callback (GIL held). */
static void s0py_stash_exception(void)
{
	PyObject *t, *v, *tb;
	PyErr_Fetch(&t, &v, &tb);
	if (s0py_tls_exc_type) {
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
		return;
	}
	s0py_tls_exc_type = t;
	s0py_tls_exc_value = v;
	s0py_tls_exc_tb = tb;
}

static int s0py_exception_pending(void)
{
	return s0py_tls_exc_type != NULL;
}

static PyObject *s0py_errors_module;

/*
 * Raise the Python exception for @p e (GIL held; takes ownership of e, which
 * may be NULL when only a callback's exception is pending). Order: an
 * exception a callback raised; KeyboardInterrupt when SIGINT cancelled the
 * call; otherwise libsandbox0._errors._from_native(CError).
 */
static void s0py_raise(s0_error *e)
{
	if (s0py_tls_exc_type) {
		PyErr_Restore(s0py_tls_exc_type, s0py_tls_exc_value, s0py_tls_exc_tb);
		s0py_tls_exc_type = s0py_tls_exc_value = s0py_tls_exc_tb = NULL;
		s0py_tls_interrupted = 0;
		s0_error_free(e);
		return;
	}
	if (!e) {
		PyErr_SetString(PyExc_RuntimeError, "libsandbox0: failure without an error object");
		return;
	}
	if (s0py_tls_interrupted) {
		s0py_tls_interrupted = 0;
		if (s0_error_code(e) == S0_ECANCELED && PyErr_CheckSignals() < 0) {
			s0_error_free(e);
			return; /* KeyboardInterrupt (or what the SIGINT handler raised) */
		}
	}
	PyObject *obj = SWIG_NewPointerObj((void *)e, SWIGTYPE_p_CError, SWIG_POINTER_OWN);
	if (!obj) {
		s0_error_free(e);
		return;
	}
	if (!s0py_errors_module)
		s0py_errors_module = PyImport_ImportModule("libsandbox0._errors");
	PyObject *exc = s0py_errors_module
	                    ? PyObject_CallMethod(s0py_errors_module, "_from_native", "O", obj)
	                    : NULL;
	Py_DECREF(obj);
	if (!exc)
		return;
	PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_DECREF(exc);
}

/* A failing call always leaves an error object behind. */
static void s0py_settle(int rc, s0_error **err)
{
	if (rc < 0 && err && !*err)
		*err = s0_error_new(rc, NULL, NULL);
}

static int s0py_closed(s0_error **err, const char *what)
{
	if (err && !*err)
		*err = s0_error_new(S0_EINVAL, "closed", what);
	return S0_EINVAL;
}

/*
 * Run a blocking call of client `cl`: hold its read lock, map SIGINT to its
 * token on the main thread, make sure a failure has an error object.
 * `expr` may use the local `c_` (the s0_client).
 */
#define S0PY_CALL(cl, expr)                                                   \
	do {                                                                      \
		pthread_rwlock_rdlock(&(cl)->lock);                                   \
		s0_client *c_ = (cl)->c;                                              \
		int rc_;                                                              \
		if (!c_) {                                                            \
			rc_ = s0py_closed(err, "the client is closed");                   \
		} else {                                                              \
			s0py_sig sg_;                                                     \
			s0py_sig_enter(&sg_, (cl)->tok);                                  \
			rc_ = (expr);                                                     \
			s0py_sig_leave(&sg_);                                             \
		}                                                                     \
		pthread_rwlock_unlock(&(cl)->lock);                                   \
		s0py_settle(rc_, err);                                                \
	} while (0)

#define S0PY_LOCAL_CALL(L, expr)                                              \
	do {                                                                      \
		pthread_rwlock_rdlock(&(L)->lock);                                    \
		s0_local *l_ = (L)->l;                                                \
		int rc_ = l_ ? (expr) : s0py_closed(err, "the backend is closed");    \
		pthread_rwlock_unlock(&(L)->lock);                                    \
		s0py_settle(rc_, err);                                                \
	} while (0)

/* ---- wait callbacks ---- */

typedef struct s0py_wait_ctx {
	PyObject *progress;  /* callable(CSandboxInfo, elapsed_ms) or NULL */
	PyObject *predicate; /* callable(CSandboxInfo) -> bool, or NULL */
	uint32_t fail_mask;  /* statuses that end the wait with S0_ELIFECYCLE */
} s0py_wait_ctx;

/* A new reference to an owned copy of @p info as a CSandboxInfo proxy. */
static PyObject *s0py_info_object(const s0_sandbox_info *info)
{
	s0_sandbox_info *dup = NULL;
	if (s0_sandbox_info_dup(info, &dup, NULL) < 0) {
		PyErr_NoMemory();
		return NULL;
	}
	return SWIG_NewPointerObj((void *)dup, SWIGTYPE_p_CSandboxInfo, SWIG_POINTER_OWN);
}

static int s0py_progress_cb(const s0_sandbox_info *info, int64_t elapsed_ms, void *payload)
{
	s0py_wait_ctx *w = payload;
	if (!w->progress)
		return 0;
	int rc = 0;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *obj = s0py_info_object(info);
	PyObject *r = obj ? PyObject_CallFunction(w->progress, "OL", obj, (long long)elapsed_ms) : NULL;
	Py_XDECREF(obj);
	if (!r) {
		s0py_stash_exception();
		rc = 1;
	} else {
		rc = r == Py_False; /* False stops the wait (S0_EUSER) */
		Py_DECREF(r);
	}
	PyGILState_Release(g);
	return rc;
}

static int s0py_predicate_cb(const s0_sandbox_info *info, void *payload)
{
	s0py_wait_ctx *w = payload;
	if (w->fail_mask & S0_STATUS_MASK(s0_sandbox_info_status(info)))
		return S0_ELIFECYCLE;
	if (!w->predicate)
		return 1;
	int rc;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *obj = s0py_info_object(info);
	PyObject *r = obj ? PyObject_CallFunctionObjArgs(w->predicate, obj, NULL) : NULL;
	Py_XDECREF(obj);
	int t = r ? PyObject_IsTrue(r) : -1;
	Py_XDECREF(r);
	if (t < 0) {
		s0py_stash_exception();
		rc = S0_EUSER;
	} else {
		rc = t;
	}
	PyGILState_Release(g);
	return rc;
}

static int s0py_wait_options(s0_wait_options *wo, int32_t memory, int64_t timeout_ms,
                             int64_t poll_initial_ms, int64_t poll_max_ms,
                             uint32_t backoff_factor_pct, uint32_t jitter_pct, uint32_t flags,
                             s0py_wait_ctx *ctx, s0_cancel_token *cancel)
{
	s0_wait_options_init(wo, S0_WAIT_OPTIONS_VERSION);
	wo->memory = memory;
	wo->timeout_ms = timeout_ms;
	wo->poll_initial_ms = poll_initial_ms;
	wo->poll_max_ms = poll_max_ms;
	wo->backoff_factor_pct = backoff_factor_pct;
	wo->jitter_pct = jitter_pct;
	wo->flags = flags;
	wo->progress_cb = ctx->progress ? s0py_progress_cb : NULL;
	wo->payload = ctx;
	wo->cancel = cancel;
	return 0;
}

static int s0py_iter_step(s0_sandbox_iter *it, s0_sandbox_info **d, s0_error **err)
{
	const s0_sandbox_info *x = NULL;
	int r = s0_sandbox_iter_next(it, &x, err);
	if (r == S0_ITEROVER)
		return S0_OK;
	if (r == S0_OK)
		r = s0_sandbox_info_dup(x, d, err);
	return r;
}

/* ---- strings in ---- */

/* Raise the package's InvalidArgumentError (a ValueError; reason
 * `invalid_argument`, as the package raises for every bad argument before
 * any request) for a str argument holding a NUL character, which C would cut
 * there: "sb_x\0junk" would reach sandbox "sb_x", a path
 * "/workspace/a\0/../x" would name /workspace/a. The message names the
 * parameter (and its index in a sequence, -1 for none), never the value,
 * which may be a token. Always returns -1. */
static int s0py_nul_refused(const char *param, Py_ssize_t index)
{
	char msg[160];
	if (index >= 0)
		snprintf(msg, sizeof msg, "%s[%zd] contains a NUL character; C strings cannot carry one",
		         param, index);
	else
		snprintf(msg, sizeof msg, "%s contains a NUL character; C strings cannot carry one",
		         param);
	s0_error *e = s0_error_new(S0_EINVAL, "invalid_argument", msg);
	if (!e) {
		PyErr_NoMemory();
		return -1;
	}
	s0py_raise(e);
	return -1;
}

/* A str argument as the NUL-terminated UTF-8 the C API takes (GIL held);
 * None -> NULL. The text stays owned by the str object, which the wrapper
 * holds for the call. A NUL inside is refused (s0py_nul_refused): @p param
 * is the C parameter's name, @p fn and @p argnum name the wrapper for a
 * TypeError. */
static int s0py_cstr(PyObject *o, const char **out, const char *param, const char *fn,
                     int argnum)
{
	Py_ssize_t n;
	const char *s;

	*out = NULL;
	if (o == Py_None)
		return 0;
	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "in method '%s', argument %d of type 'char const *'",
		             fn, argnum);
		return -1;
	}
	if (!(s = PyUnicode_AsUTF8AndSize(o, &n)))
		return -1;
	if (memchr(s, '\0', (size_t)n))
		return s0py_nul_refused(param, -1);
	*out = s;
	return 0;
}

/* ---- string vectors ---- */

static void s0py_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* NULL-terminated copy of a sequence of str (GIL held); None → NULL. An
 * item holding a NUL is refused (s0py_nul_refused, naming @p param). */
static int s0py_strv_from(PyObject *o, char ***out, const char *param)
{
	*out = NULL;
	if (o == Py_None)
		return 0;
	if (PyUnicode_Check(o) || PyBytes_Check(o)) {
		PyErr_SetString(PyExc_TypeError, "expected a sequence of str, not a single string");
		return -1;
	}
	PyObject *seq = PySequence_Fast(o, "expected a sequence of str");
	if (!seq)
		return -1;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	char **v = calloc((size_t)n + 1, sizeof *v);
	if (!v) {
		Py_DECREF(seq);
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
		Py_ssize_t len = 0;
		const char *s = PyUnicode_Check(it) ? PyUnicode_AsUTF8AndSize(it, &len) : NULL;
		if (!s) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "expected a sequence of str");
			s0py_strv_free(v);
			Py_DECREF(seq);
			return -1;
		}
		if (memchr(s, '\0', (size_t)len)) {
			s0py_strv_free(v);
			Py_DECREF(seq);
			return s0py_nul_refused(param, i);
		}
		if (!(v[i] = strdup(s))) {
			s0py_strv_free(v);
			Py_DECREF(seq);
			PyErr_NoMemory();
			return -1;
		}
	}
	Py_DECREF(seq);
	*out = v;
	return 0;
}
%}

%{
static void s0py_config(s0_sandbox_config *cfg, uint32_t set, int32_t ttl_sec,
                        int32_t hard_ttl_sec, int32_t auto_resume, const char *memory,
                        char **env_vars, const char *extra_json)
{
	s0_sandbox_config init = S0_SANDBOX_CONFIG_INIT;
	*cfg = init;
	cfg->set = set;
	cfg->ttl_sec = ttl_sec;
	cfg->hard_ttl_sec = hard_ttl_sec;
	cfg->auto_resume = auto_resume;
	cfg->memory = memory;
	cfg->env_vars = (const char *const *)env_vars;
	cfg->extra_json = extra_json;
}

static void s0py_list_options(s0_list_options *lo, int32_t status, int32_t paused,
                              const char *template_id, int32_t limit, int32_t offset)
{
	s0_list_options init = S0_LIST_OPTIONS_INIT;
	*lo = init;
	lo->status = status;
	lo->paused = paused;
	lo->template_id = template_id;
	lo->limit = limit;
	lo->offset = offset;
}

static int s0py_generic_wait(s0_client *c, const char *id, uint32_t until_mask,
                             s0py_wait_ctx *ctx, const s0_wait_options *wo,
                             s0_sandbox_info **out, s0_error **err)
{
	s0_wait_predicate pred = (ctx->predicate || ctx->fail_mask) ? s0py_predicate_cb : NULL;
	return s0_sandbox_wait(c, id, until_mask, pred, wo, out, err);
}

static int s0py_local_client(s0_local *l, const char *user_agent, s0_cancel_token *tok,
                             s0_client **out, s0_error **err)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.user_agent = user_agent;
	o.cancel = tok;
	return s0_client_new_local(l, &o, out, err);
}
%}

/* ------------------------------------------------------------------ */
/* Typemaps                                                            */
/* ------------------------------------------------------------------ */

/* The error argout: raise inside this wrapper call. */
%typemap(in, numinputs=0) s0_error **err (s0_error *tmp_err = NULL) {
	$1 = &tmp_err;
}
%typemap(argout) s0_error **err {
	if (*$1 || s0py_exception_pending()) {
		Py_XDECREF($result);
		$result = NULL;
		s0py_raise(*$1);
		*$1 = NULL;
		SWIG_fail;
	}
}
%typemap(freearg) s0_error **err {
	s0_error_free(*$1);
}

/* Bytes out (owned by the library, freed with s0_free). */
%typemap(in, numinputs=0) (void **data_out, size_t *len_out) (void *tmp_data = NULL, size_t tmp_len = 0) {
	$1 = &tmp_data;
	$2 = &tmp_len;
}
%typemap(argout) (void **data_out, size_t *len_out) {
	if (*$1) {
		PyObject *b = PyBytes_FromStringAndSize((const char *)*$1, (Py_ssize_t)*$2);
		if (!b)
			SWIG_fail;
		$result = SWIG_Python_AppendOutput($result, b);
	}
}
%typemap(freearg) (void **data_out, size_t *len_out) {
	s0_free(*$1);
}

/* Bytes out, borrowed (valid while the owner lives). */
%typemap(in, numinputs=0) (const void **view_out, size_t *len_out) (const void *tmp_view = NULL, size_t tmp_vlen = 0) {
	$1 = ($1_ltype)&tmp_view;
	$2 = &tmp_vlen;
}
%typemap(argout) (const void **view_out, size_t *len_out) {
	PyObject *b;
	if (*$1) {
		b = PyBytes_FromStringAndSize((const char *)*$1, (Py_ssize_t)*$2);
		if (!b)
			SWIG_fail;
	} else {
		b = Py_None;
		Py_INCREF(b);
	}
	$result = SWIG_Python_AppendOutput($result, b);
}

/* Bytes in: any buffer (bytes, bytearray, memoryview), held for the call. */
%typemap(in) (const void *data, size_t len) (Py_buffer view, int have_view = 0) {
	if (PyObject_GetBuffer($input, &view, PyBUF_SIMPLE) < 0)
		SWIG_fail;
	have_view = 1;
	$1 = view.buf;
	$2 = (size_t)view.len;
}
%typemap(freearg) (const void *data, size_t len) {
	if (have_view$argnum)
		PyBuffer_Release(&view$argnum);
}
%typemap(typecheck) (const void *data, size_t len) {
	$1 = PyObject_CheckBuffer($input) ? 1 : 0;
}

/* Text out (JSON), freed with s0_free. */
%typemap(in, numinputs=0) char **json_out (char *tmp_json = NULL) {
	$1 = &tmp_json;
}
%typemap(argout) char **json_out {
	if (*$1) {
		PyObject *s = PyUnicode_FromString(*$1);
		if (!s)
			SWIG_fail;
		$result = SWIG_Python_AppendOutput($result, s);
	}
}
%typemap(freearg) char **json_out {
	s0_free(*$1);
}

/* Every string argument: str (or None -> NULL), no embedded NUL (s0py_cstr:
 * InvalidArgumentError naming the parameter). This replaces SWIG's char*
 * conversion for all wrapped calls, so paths, ids, tokens, base URLs, template
 * names, JSON bodies and context input are checked in one place. */
%typemap(in) const char * {
	if (s0py_cstr($input, (const char **)&$1, "$1_name", "$symname", $argnum) < 0)
		SWIG_fail;
}
%typemap(freearg) const char * "";
%typemap(typecheck, precedence=SWIG_TYPECHECK_STRING) const char * {
	$1 = ($input == Py_None || PyUnicode_Check($input)) ? 1 : 0;
}

/* NULL-terminated string vectors from a sequence of str or None. */
%typemap(in) char **strv (char **tmp_strv = NULL) {
	if (s0py_strv_from($input, &tmp_strv, "$1_name") < 0)
		SWIG_fail;
	$1 = tmp_strv;
}
%typemap(freearg) char **strv {
	s0py_strv_free(tmp_strv$argnum);
}
%typemap(default) char **strv {
	$1 = NULL;
}

/* Python callables (or None) passed through. */
%typemap(in) PyObject *callable {
	if ($input != Py_None && !PyCallable_Check($input)) {
		PyErr_SetString(PyExc_TypeError, "expected a callable or None");
		SWIG_fail;
	}
	$1 = $input == Py_None ? NULL : $input;
}

%apply char **strv { char **env_vars, char **headers, char **ephemeral_mounts };
%apply PyObject *callable { PyObject *progress, PyObject *predicate };

/* bool results as Python bool. */
%typemap(out) _Bool {
	$result = PyBool_FromLong($1);
}
typedef int _Bool;
#define bool _Bool

%include "streams.i"

/* ------------------------------------------------------------------ */
/* Opaque types                                                        */
/* ------------------------------------------------------------------ */

%pythonappend CError::cause %{
    if val is not None:
        val._owner = self
%}
%pythonappend CSnapshotList::at %{
    if val is not None:
        val._owner = self
%}
%pythonappend CFileList::at %{
    if val is not None:
        val._owner = self
%}
%feature("docstring") CError "An error of the C library (s0_error). Read-only; converted to a libsandbox0 exception by the package.";
%feature("docstring") CSandboxInfo "One sandbox as a response described it (s0_sandbox_info, immutable). Times are ms since the epoch, 0 when unset.";
%feature("docstring") CCancelToken "A cancel token (s0_cancel_token): fire it from any thread to make the waits using it return CanceledError promptly.";
%feature("docstring") CSandboxIter "Lazy iterator over every page of a sandbox list (one thread at a time).";
%feature("docstring") CClient "A thread-safe client of one Sandbox0 API (s0_client): HTTP(S), or a LocalBackend in process. Every method blocks with the GIL released; times are in ms.";
%feature("docstring") CLocal "An embedded local backend (s0_local) on a data directory. close() closes its clients first.";

%feature("docstring") CLifecycleResult "Answer of pause, resume or restore (s0_lifecycle_result, immutable).";
%feature("docstring") CSandboxPage "One page of a sandbox list (s0_sandbox_page, immutable); at(i) returns owned copies.";
%feature("docstring") CSnapshotInfo "A named RootFS snapshot (s0_snapshot_info, immutable).";
%feature("docstring") CSnapshotList "A list of snapshots (s0_snapshot_list); at(i) is borrowed and keeps the list alive.";
%feature("docstring") CFileInfo "One FileInfo of the files API (s0_file_info, immutable).";
%feature("docstring") CFileList "A directory listing (s0_file_list); at(i) is borrowed and keeps the list alive.";

%nodefaultctor CError;
%nodefaultctor CSandboxInfo;
%nodefaultctor CLifecycleResult;
%nodefaultctor CSandboxPage;
%nodefaultctor CSnapshotInfo;
%nodefaultctor CSnapshotList;
%nodefaultctor CFileInfo;
%nodefaultctor CFileList;
%nodefaultctor CClient;
%nodefaultctor CLocal;
%nodefaultctor CSandboxIter;
%nodefaultdtor CError;
%nodefaultdtor CSandboxInfo;
%nodefaultdtor CLifecycleResult;
%nodefaultdtor CSandboxPage;
%nodefaultdtor CSnapshotInfo;
%nodefaultdtor CSnapshotList;
%nodefaultdtor CFileInfo;
%nodefaultdtor CFileList;
%nodefaultdtor CClient;
%nodefaultdtor CLocal;
%nodefaultdtor CSandboxIter;

typedef struct {} CError;
typedef struct {} CSandboxInfo;
typedef struct {} CLifecycleResult;
typedef struct {} CSandboxPage;
typedef struct {} CSnapshotInfo;
typedef struct {} CSnapshotList;
typedef struct {} CFileInfo;
typedef struct {} CFileList;
typedef struct {} CCancelToken;
typedef struct {} CClient;
typedef struct {} CLocal;
typedef struct {} CSandboxIter;

%extend CError {
	~CError() { s0_error_free($self); }
	/** The s0_code (negative). */
	int code() { return s0_error_code($self); }
	const char *reason() { return s0_error_reason($self); }
	const char *message() { return s0_error_message($self); }
	const char *wire_code() { return s0_error_wire_code($self); }
	int http_status() { return s0_error_http_status($self); }
	const char *request_id() { return s0_error_request_id($self); }
	int64_t retry_after_ms() { return s0_error_retry_after_ms($self); }
	const char *details_json() { return s0_error_details_json($self); }
	void body(const void **view_out, size_t *len_out) { *view_out = s0_error_body($self, len_out); }
	const char *sandbox_id() { return s0_error_sandbox_id($self); }
	const char *action() { return s0_error_action($self); }
	%newobject last_sandbox;
	CSandboxInfo *last_sandbox() {
		const s0_sandbox_info *i = s0_error_last_sandbox($self);
		s0_sandbox_info *d = NULL;
		if (i)
			s0_sandbox_info_dup(i, &d, NULL);
		return d;
	}
	int64_t timeout_ms() { return s0_error_timeout_ms($self); }
	/* Borrowed: the proxy keeps its owner alive (see %pythonappend). */
	CError *cause() { return (CError *)s0_error_cause($self); }
	bool is_retryable() { return s0_error_is_retryable($self); }
	bool is_claim_start_throttled() { return s0_error_is_claim_start_throttled($self); }
}

%extend CSandboxInfo {
	~CSandboxInfo() { s0_sandbox_info_free($self); }
	const char *id() { return s0_sandbox_info_id($self); }
	const char *template_id() { return s0_sandbox_info_template_id($self); }
	const char *team_id() { return s0_sandbox_info_team_id($self); }
	int status() { return s0_sandbox_info_status($self); }
	bool paused() { return s0_sandbox_info_paused($self); }
	bool auto_resume() { return s0_sandbox_info_auto_resume($self); }
	const char *pod_name() { return s0_sandbox_info_pod_name($self); }
	const char *runtime_id() { return s0_sandbox_info_runtime_id($self); }
	int64_t runtime_generation() { return s0_sandbox_info_runtime_generation($self); }
	int64_t expires_at_unix_ms() { return s0_sandbox_info_expires_at_unix_ms($self); }
	int64_t hard_expires_at_unix_ms() { return s0_sandbox_info_hard_expires_at_unix_ms($self); }
	int64_t created_at_unix_ms() { return s0_sandbox_info_created_at_unix_ms($self); }
	int64_t updated_at_unix_ms() { return s0_sandbox_info_updated_at_unix_ms($self); }
	int64_t claimed_at_unix_ms() { return s0_sandbox_info_claimed_at_unix_ms($self); }
	const char *json() { return s0_sandbox_info_json($self); }
}

%extend CLifecycleResult {
	~CLifecycleResult() { s0_lifecycle_result_free($self); }
	const char *sandbox_id() { return s0_lifecycle_result_sandbox_id($self); }
	int status() { return s0_lifecycle_result_status($self); }
	bool paused() { return s0_lifecycle_result_paused($self); }
	bool resumed() { return s0_lifecycle_result_resumed($self); }
	const char *snapshot_id() { return s0_lifecycle_result_snapshot_id($self); }
	int http_status() { return s0_lifecycle_result_http_status($self); }
	const char *json() { return s0_lifecycle_result_json($self); }
}

%extend CSandboxPage {
	~CSandboxPage() { s0_sandbox_page_free($self); }
	int64_t count() { return s0_sandbox_page_count($self); }
	bool has_more() { return s0_sandbox_page_has_more($self); }
	size_t length() { return s0_sandbox_page_length($self); }
	/** An owned copy of item i, or None when out of range. */
	%newobject at;
	CSandboxInfo *at(size_t i) {
		const s0_sandbox_info *x = s0_sandbox_page_at($self, i);
		s0_sandbox_info *d = NULL;
		if (x)
			s0_sandbox_info_dup(x, &d, NULL);
		return d;
	}
}

%extend CSnapshotInfo {
	~CSnapshotInfo() { s0_snapshot_info_free($self); }
	const char *id() { return s0_snapshot_info_id($self); }
	const char *sandbox_id() { return s0_snapshot_info_sandbox_id($self); }
	const char *name() { return s0_snapshot_info_name($self); }
	const char *description() { return s0_snapshot_info_description($self); }
	int64_t created_at_unix_ms() { return s0_snapshot_info_created_at_unix_ms($self); }
	int64_t expires_at_unix_ms() { return s0_snapshot_info_expires_at_unix_ms($self); }
	const char *json() { return s0_snapshot_info_json($self); }
}

%extend CSnapshotList {
	~CSnapshotList() { s0_snapshot_list_free($self); }
	int64_t count() { return s0_snapshot_list_count($self); }
	size_t length() { return s0_snapshot_list_length($self); }
	/* Borrowed item (keeps the list alive), or None. */
	CSnapshotInfo *at(size_t i) { return (CSnapshotInfo *)s0_snapshot_list_at($self, i); }
}

%extend CFileInfo {
	~CFileInfo() { s0_file_info_free($self); }
	const char *name() { return s0_file_info_name($self); }
	const char *path() { return s0_file_info_path($self); }
	int type() { return s0_file_info_type($self); }
	int64_t size_bytes() { return s0_file_info_size_bytes($self); }
	uint32_t mode() { return s0_file_info_mode($self); }
	int64_t mod_time_unix_ms() { return s0_file_info_mod_time_unix_ms($self); }
	bool is_link() { return s0_file_info_is_link($self); }
	const char *link_target() { return s0_file_info_link_target($self); }
}

%extend CFileList {
	~CFileList() { s0_file_list_free($self); }
	size_t length() { return s0_file_list_length($self); }
	/* Borrowed item (keeps the list alive), or None. */
	CFileInfo *at(size_t i) { return (CFileInfo *)s0_file_list_at($self, i); }
}

%extend CCancelToken {
	CCancelToken(s0_error **err) {
		s0_cancel_token *t = NULL;
		s0py_settle(s0_cancel_token_new(&t, err), err);
		return t;
	}
	~CCancelToken() { s0_cancel_token_free($self); }
	void cancel() { s0_cancel_token_cancel($self); }
	bool is_canceled() { return s0_cancel_token_is_canceled($self); }
	void reset() { s0_cancel_token_reset($self); }
}

%extend CSandboxIter {
	~CSandboxIter() {
		s0_sandbox_iter_free($self->it);
		s0py_client_unref($self->cl);
		pthread_mutex_destroy(&$self->mu);
		free($self);
	}
	/** The next sandbox (an owned copy), or None at the end. */
	%newobject next_info;
	CSandboxInfo *next_info(s0_error **err) {
		s0_sandbox_info *d = NULL;
		pthread_mutex_lock(&$self->mu);
		struct s0py_client *cl = $self->cl;
		s0_sandbox_iter *it = $self->it;
		S0PY_CALL(cl, s0py_iter_step(it, &d, err));
		pthread_mutex_unlock(&$self->mu);
		return d;
	}
}



%extend CClient {
	~CClient() {
		s0py_client_close($self);
		s0py_client_unref($self);
	}
	/** Free the C client; calls in flight are cancelled first. Idempotent. */
	void close() { s0py_client_close($self); }
	bool closed() {
		pthread_rwlock_rdlock(&$self->lock);
		bool r = $self->c == NULL;
		pthread_rwlock_unlock(&$self->lock);
		return r;
	}
	/** Normalised base URL ("local:<dir>" in process), copied. */
	%newobject base_url;
	char *base_url() {
		pthread_rwlock_rdlock(&$self->lock);
		char *r = $self->c ? strdup(s0_client_base_url($self->c)) : NULL;
		pthread_rwlock_unlock(&$self->lock);
		return r;
	}

	%newobject claim;
	CSandboxInfo *claim(const char *template_id, const char *snapshot_id = NULL, uint32_t set = 0,
	                    int32_t ttl_sec = 0, int32_t hard_ttl_sec = 0, int32_t auto_resume = 0,
	                    const char *memory = NULL, char **env_vars = NULL,
	                    const char *extra_json = NULL, s0_error **err) {
		s0_sandbox_config cfg;
		s0_sandbox_info *out = NULL;
		s0py_config(&cfg, set, ttl_sec, hard_ttl_sec, auto_resume, memory, env_vars, extra_json);
		S0PY_CALL($self, s0_sandbox_claim(c_, template_id, snapshot_id, &cfg, &out, err));
		return out;
	}
	%newobject get;
	CSandboxInfo *get(const char *sandbox_id, s0_error **err) {
		s0_sandbox_info *out = NULL;
		S0PY_CALL($self, s0_sandbox_get(c_, sandbox_id, &out, err));
		return out;
	}
	%newobject status;
	CSandboxInfo *status(const char *sandbox_id, s0_error **err) {
		s0_sandbox_info *out = NULL;
		S0PY_CALL($self, s0_sandbox_status(c_, sandbox_id, &out, err));
		return out;
	}
	%newobject update;
	CSandboxInfo *update(const char *sandbox_id, uint32_t set = 0, int32_t ttl_sec = 0,
	                     int32_t hard_ttl_sec = 0, int32_t auto_resume = 0,
	                     const char *memory = NULL, char **env_vars = NULL,
	                     const char *extra_json = NULL, s0_error **err) {
		s0_sandbox_config cfg;
		s0_sandbox_info *out = NULL;
		s0py_config(&cfg, set, ttl_sec, hard_ttl_sec, auto_resume, memory, env_vars, extra_json);
		S0PY_CALL($self, s0_sandbox_update(c_, sandbox_id, &cfg, &out, err));
		return out;
	}
	void delete(const char *sandbox_id, s0_error **err) {
		S0PY_CALL($self, s0_sandbox_delete(c_, sandbox_id, err));
	}
	%newobject pause;
	CLifecycleResult *pause(const char *sandbox_id, int32_t memory = 0, s0_error **err) {
		s0_lifecycle_result *out = NULL;
		S0PY_CALL($self, s0_sandbox_pause(c_, sandbox_id, memory, &out, err));
		return out;
	}
	%newobject resume;
	CLifecycleResult *resume(const char *sandbox_id, int32_t memory = 0, s0_error **err) {
		s0_lifecycle_result *out = NULL;
		S0PY_CALL($self, s0_sandbox_resume(c_, sandbox_id, memory, &out, err));
		return out;
	}
	%newobject refresh;
	CSandboxInfo *refresh(const char *sandbox_id, int32_t duration_sec = 0, s0_error **err) {
		s0_sandbox_info *out = NULL;
		S0PY_CALL($self, s0_sandbox_refresh(c_, sandbox_id, duration_sec, &out, err));
		return out;
	}
	/** The sandbox's network policy (s0_sandbox_get_network_policy); returns
	 *  the SandboxNetworkPolicy JSON text. */
	void get_network_policy(const char *sandbox_id, char **json_out, s0_error **err) {
		S0PY_CALL($self, s0_sandbox_get_network_policy(c_, sandbox_id, json_out, err));
	}
	/** Replace the network policy (s0_sandbox_update_network_policy); returns
	 *  the stored SandboxNetworkPolicy JSON text. */
	void update_network_policy(const char *sandbox_id, const char *policy_json,
	                           char **json_out, s0_error **err) {
		S0PY_CALL($self, s0_sandbox_update_network_policy(c_, sandbox_id, policy_json,
		                                                  json_out, err));
	}
	%newobject list;
	CSandboxPage *list(int32_t status = 0, int32_t paused = 0, const char *template_id = NULL,
	                   int32_t limit = 0, int32_t offset = 0, s0_error **err) {
		s0_list_options lo;
		s0_sandbox_page *out = NULL;
		s0py_list_options(&lo, status, paused, template_id, limit, offset);
		S0PY_CALL($self, s0_sandbox_list(c_, &lo, &out, err));
		return out;
	}
	%newobject iter;
	CSandboxIter *iter(int32_t status = 0, int32_t paused = 0, const char *template_id = NULL,
	                   int32_t limit = 0, int32_t offset = 0, s0_error **err) {
		s0_list_options lo;
		s0_sandbox_iter *it = NULL;
		struct s0py_iter *r = NULL;
		s0py_list_options(&lo, status, paused, template_id, limit, offset);
		S0PY_CALL($self, s0_sandbox_iter_new(c_, &lo, &it, err));
		if (it) {
			r = calloc(1, sizeof *r);
			if (!r) {
				s0_sandbox_iter_free(it);
				*err = s0_error_new(S0_ENOMEM, NULL, NULL);
				return NULL;
			}
			pthread_mutex_init(&r->mu, NULL);
			r->it = it;
			r->cl = $self;
			atomic_fetch_add(&$self->refs, 1);
		}
		return r;
	}

	%newobject snapshot_create;
	CSnapshotInfo *snapshot_create(const char *sandbox_id, const char *name = NULL,
	                               const char *description = NULL,
	                               int64_t expires_at_unix_ms = 0, s0_error **err) {
		s0_snapshot_info *out = NULL;
		S0PY_CALL($self, s0_snapshot_create(c_, sandbox_id, name, description,
		                                    expires_at_unix_ms, &out, err));
		return out;
	}
	%newobject snapshot_list;
	CSnapshotList *snapshot_list(const char *sandbox_id, s0_error **err) {
		s0_snapshot_list *out = NULL;
		S0PY_CALL($self, s0_snapshot_list_get(c_, sandbox_id, &out, err));
		return out;
	}
	%newobject snapshot_get;
	CSnapshotInfo *snapshot_get(const char *snapshot_id, s0_error **err) {
		s0_snapshot_info *out = NULL;
		S0PY_CALL($self, s0_snapshot_get(c_, snapshot_id, &out, err));
		return out;
	}
	void snapshot_delete(const char *snapshot_id, s0_error **err) {
		S0PY_CALL($self, s0_snapshot_delete(c_, snapshot_id, err));
	}
	%newobject restore;
	CLifecycleResult *restore(const char *sandbox_id, const char *snapshot_id, s0_error **err) {
		s0_lifecycle_result *out = NULL;
		S0PY_CALL($self, s0_sandbox_restore(c_, sandbox_id, snapshot_id, &out, err));
		return out;
	}
	%newobject fork;
	CSandboxInfo *fork(const char *sandbox_id, uint32_t set = 0, int32_t ttl_sec = 0,
	                   int32_t hard_ttl_sec = 0, int32_t memory = 0,
	                   const char *idempotency_key = NULL, s0_error **err) {
		s0_fork_options fo = S0_FORK_OPTIONS_INIT;
		s0_sandbox_info *out = NULL;
		fo.set = set;
		fo.ttl_sec = ttl_sec;
		fo.hard_ttl_sec = hard_ttl_sec;
		fo.memory = memory;
		fo.idempotency_key = idempotency_key;
		S0PY_CALL($self, s0_sandbox_fork(c_, sandbox_id, &fo, &out, err));
		return out;
	}

	%newobject pause_and_wait;
	CSandboxInfo *pause_and_wait(const char *sandbox_id, int32_t memory = 0, int64_t timeout_ms = 0,
	                             int64_t poll_initial_ms = 0, int64_t poll_max_ms = 0,
	                             uint32_t backoff_factor_pct = 0, uint32_t jitter_pct = 0,
	                             uint32_t flags = 0, PyObject *progress = NULL,
	                             CCancelToken *cancel = NULL, s0_error **err) {
		s0py_wait_ctx ctx = {progress, NULL, 0};
		s0_wait_options wo;
		s0_sandbox_info *out = NULL;
		s0py_wait_options(&wo, memory, timeout_ms, poll_initial_ms, poll_max_ms,
		                  backoff_factor_pct, jitter_pct, flags, &ctx, cancel);
		S0PY_CALL($self, s0_sandbox_pause_and_wait(c_, sandbox_id, &wo, &out, err));
		return out;
	}
	%newobject resume_and_wait;
	CSandboxInfo *resume_and_wait(const char *sandbox_id, int32_t memory = 0, int64_t timeout_ms = 0,
	                              int64_t poll_initial_ms = 0, int64_t poll_max_ms = 0,
	                              uint32_t backoff_factor_pct = 0, uint32_t jitter_pct = 0,
	                              uint32_t flags = 0, PyObject *progress = NULL,
	                              CCancelToken *cancel = NULL, s0_error **err) {
		s0py_wait_ctx ctx = {progress, NULL, 0};
		s0_wait_options wo;
		s0_sandbox_info *out = NULL;
		s0py_wait_options(&wo, memory, timeout_ms, poll_initial_ms, poll_max_ms,
		                  backoff_factor_pct, jitter_pct, flags, &ctx, cancel);
		S0PY_CALL($self, s0_sandbox_resume_and_wait(c_, sandbox_id, &wo, &out, err));
		return out;
	}
	/** Generic wait: until a status in until_mask (and predicate(info) is true);
	 *  a status in fail_mask raises SandboxLifecycleFailedError. None after a
	 *  404 with WAIT_NOTFOUND_OK. */
	%newobject wait;
	CSandboxInfo *wait(const char *sandbox_id, uint32_t until_mask = 0, uint32_t fail_mask = 0,
	                   PyObject *predicate = NULL, int64_t timeout_ms = 0,
	                   int64_t poll_initial_ms = 0, int64_t poll_max_ms = 0,
	                   uint32_t backoff_factor_pct = 0, uint32_t jitter_pct = 0,
	                   uint32_t flags = 0, PyObject *progress = NULL,
	                   CCancelToken *cancel = NULL, s0_error **err) {
		s0py_wait_ctx ctx = {progress, predicate, fail_mask};
		s0_wait_options wo;
		s0_sandbox_info *out = NULL;
		s0py_wait_options(&wo, 0, timeout_ms, poll_initial_ms, poll_max_ms, backoff_factor_pct,
		                  jitter_pct, flags, &ctx, cancel);
		S0PY_CALL($self, s0py_generic_wait(c_, sandbox_id, until_mask, &ctx, &wo, &out, err));
		return out;
	}

	/** Read a whole file; returns bytes. */
	void files_read(const char *sandbox_id, const char *path, void **data_out, size_t *len_out,
	                s0_error **err) {
		S0PY_CALL($self, s0_files_read(c_, sandbox_id, path, data_out, len_out, err));
	}
	void files_write(const char *sandbox_id, const char *path, const void *data, size_t len,
	                 s0_error **err) {
		S0PY_CALL($self, s0_files_write(c_, sandbox_id, path, data, len, err));
	}
	void files_mkdir(const char *sandbox_id, const char *path, int recursive = 0, s0_error **err) {
		S0PY_CALL($self, s0_files_mkdir(c_, sandbox_id, path, recursive != 0, err));
	}
	void files_delete(const char *sandbox_id, const char *path, s0_error **err) {
		S0PY_CALL($self, s0_files_delete(c_, sandbox_id, path, err));
	}
	%newobject files_stat;
	CFileInfo *files_stat(const char *sandbox_id, const char *path, s0_error **err) {
		s0_file_info *out = NULL;
		S0PY_CALL($self, s0_files_stat(c_, sandbox_id, path, &out, err));
		return out;
	}
	%newobject files_list;
	CFileList *files_list(const char *sandbox_id, const char *path, s0_error **err) {
		s0_file_list *out = NULL;
		S0PY_CALL($self, s0_files_list(c_, sandbox_id, path, &out, err));
		return out;
	}
	void files_move(const char *sandbox_id, const char *source, const char *destination,
	                s0_error **err) {
		S0PY_CALL($self, s0_files_move(c_, sandbox_id, source, destination, err));
	}

	/** Create a context (s0_context_create); returns the ContextResponse JSON text. */
	void context_create(const char *sandbox_id, const char *request_json, char **json_out,
	                    s0_error **err) {
		S0PY_CALL($self, s0_context_create(c_, sandbox_id, request_json, json_out, err));
	}
	/** Run input in a context (s0_context_exec); returns the ContextExecResponse JSON text. */
	void context_exec(const char *sandbox_id, const char *context_id, const char *input,
	                  char **json_out, s0_error **err) {
		S0PY_CALL($self, s0_context_exec(c_, sandbox_id, context_id, input, json_out, err));
	}
	/** Read a context (s0_context_get); returns the ContextResponse JSON text. */
	void context_get(const char *sandbox_id, const char *context_id, char **json_out,
	                 s0_error **err) {
		S0PY_CALL($self, s0_context_get(c_, sandbox_id, context_id, json_out, err));
	}
	/** Delete a context and kill its process (s0_context_delete). */
	void context_delete(const char *sandbox_id, const char *context_id, s0_error **err) {
		S0PY_CALL($self, s0_context_delete(c_, sandbox_id, context_id, err));
	}
	/** Any process-family endpoint (s0_runtime_call); returns the `data` JSON text. */
	void runtime_call(const char *method, const char *sandbox_id, const char *suffix,
	                  char **json_out, const char *body_json = NULL,
	                  const char *idempotency_key = NULL, s0_error **err) {
		S0PY_CALL($self, s0_runtime_call(c_, method, sandbox_id, suffix, body_json,
		                                 idempotency_key, NULL, json_out, err));
	}
}

%extend CLocal {
	~CLocal() {
		s0py_local_close($self);
		s0py_local_unref($self);
	}
	void close() { s0py_local_close($self); }
	bool closed() {
		pthread_rwlock_rdlock(&$self->lock);
		bool r = $self->l == NULL;
		pthread_rwlock_unlock(&$self->lock);
		return r;
	}
	const char *path() { return $self->path; }
	/** A client in process; closed automatically with the backend. */
	%newobject client;
	CClient *client(const char *user_agent = NULL, s0_error **err) {
		s0_cancel_token *tok = NULL;
		s0_client *c = NULL;
		struct s0py_client *cl = NULL;
		S0PY_LOCAL_CALL($self, s0_cancel_token_new(&tok, err) < 0
		                           ? S0_ENOMEM
		                           : s0py_local_client(l_, user_agent, tok, &c, err));
		if (!c) {
			s0_cancel_token_free(tok);
			return NULL;
		}
		cl = s0py_client_wrap(c, tok, $self);
		if (!cl) {
			s0_client_free(c);
			s0_cancel_token_free(tok);
			*err = s0_error_new(S0_ENOMEM, NULL, NULL);
		}
		return cl;
	}
	void clock_advance_ms(int64_t ms, s0_error **err) {
		S0PY_LOCAL_CALL($self, s0_local_clock_advance(l_, ms, err));
	}
	int64_t now_unix_ms() {
		pthread_rwlock_rdlock(&$self->lock);
		int64_t r = $self->l ? s0_local_now_unix_ms($self->l) : 0;
		pthread_rwlock_unlock(&$self->lock);
		return r;
	}
	void quiesce(int64_t timeout_ms = 10000, s0_error **err) {
		S0PY_LOCAL_CALL($self, s0_local_quiesce(l_, timeout_ms, err));
	}
	void restart_manager(s0_error **err) {
		S0PY_LOCAL_CALL($self, s0_local_restart_manager(l_, err));
	}
	void fault_arm(const char *name, int32_t mode = 1, int64_t count = 1, int64_t delay_ms = 0,
	               s0_error **err) {
		S0PY_LOCAL_CALL($self, s0_local_fault_arm(l_, name, mode, count, delay_ms, err));
	}
	void fault_release(const char *name, s0_error **err) {
		S0PY_LOCAL_CALL($self, s0_local_fault_release(l_, name, err));
	}
	/** Inspection JSON text (docs/decisions.md "Faults and inspection"). */
	void inspect(char **json_out, const char *sandbox_id = NULL, s0_error **err) {
		S0PY_LOCAL_CALL($self, s0_local_inspect(l_, sandbox_id, json_out, err));
	}
	void gc(s0_error **err) {
		S0PY_LOCAL_CALL($self, s0_local_gc(l_, err));
	}
	void template_build(const char *name, const char *dir = NULL, uint64_t size_bytes = 0,
	                    char **ephemeral_mounts = NULL, s0_error **err) {
		s0_template_options to = S0_TEMPLATE_OPTIONS_INIT;
		to.size_bytes = size_bytes;
		to.ephemeral_mounts = (const char *const *)ephemeral_mounts;
		S0PY_LOCAL_CALL($self, s0_local_template_build(l_, name, dir, &to, err));
	}
}

/* ------------------------------------------------------------------ */
/* Module functions                                                    */
/* ------------------------------------------------------------------ */

%rename("%(strip:[s0py_])s") "";

%nothread s0py_code_table;
%nothread s0py_wire_table;
%nothread s0py_reason_table;
%nothread s0py_error_map_wire;
%nothread s0py_error_to_wire;
%nothread s0py_set_main_thread;

%newobject s0py_client_new;
%newobject s0py_local_open;
%newobject s0py_error_new;

%{
/** A client of an HTTP(S) Sandbox0 API; from_env reads SANDBOX0_BASE_URL,
 *  SANDBOX0_TOKEN / SANDBOX0_API_KEY for fields left None. */
CClient *s0py_client_new(const char *base_url, const char *token,
                         const char *user_agent, const char *team_id,
                         char **headers, int64_t connect_timeout_ms,
                         int64_t request_timeout_ms, int insecure_skip_verify,
                         const char *ca_file, const char *proxy, int from_env,
                         s0_error **err)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	s0_cancel_token *tok = NULL;
	s0_client *c = NULL;
	int rc = s0_cancel_token_new(&tok, err);
	if (rc == S0_OK) {
		o.base_url = base_url;
		o.token = token;
		o.user_agent = user_agent;
		o.team_id = team_id;
		o.headers = (const char *const *)headers;
		o.connect_timeout_ms = connect_timeout_ms;
		o.request_timeout_ms = request_timeout_ms;
		o.insecure_skip_verify = insecure_skip_verify;
		o.ca_file = ca_file;
		o.proxy = proxy;
		o.cancel = tok;
		rc = from_env ? s0_client_new_from_env(&o, &c, err) : s0_client_new(&o, &c, err);
	}
	s0py_settle(rc, err);
	if (rc < 0) {
		s0_cancel_token_free(tok);
		return NULL;
	}
	struct s0py_client *cl = s0py_client_wrap(c, tok, NULL);
	if (!cl) {
		s0_client_free(c);
		s0_cancel_token_free(tok);
		*err = s0_error_new(S0_ENOMEM, NULL, NULL);
	}
	return cl;
}

/** Open (creating) an embedded backend on data_dir. */
CLocal *s0py_local_open(const char *data_dir, int manual_clock,
                        int64_t manual_clock_start_unix_ms, int64_t node_cpu_millis,
                        int64_t node_memory_bytes, int32_t warm_carriers,
                        int32_t max_active_runtimes, uint64_t rootfs_size_bytes,
                        const char *team_id, int zero_time_compat,
                        int64_t continuous_run_limit_ms, s0_error **err)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	s0_local *l = NULL;
	o.manual_clock = manual_clock;
	o.manual_clock_start_unix_ms = manual_clock_start_unix_ms;
	o.node_cpu_millis = node_cpu_millis;
	o.node_memory_bytes = node_memory_bytes;
	o.warm_carriers = warm_carriers;
	o.max_active_runtimes = max_active_runtimes;
	o.rootfs_size_bytes = rootfs_size_bytes;
	o.team_id = team_id;
	o.zero_time_compat = zero_time_compat;
	o.continuous_run_limit_ms = continuous_run_limit_ms;
	int rc = s0_local_open(data_dir, &o, &l, err);
	s0py_settle(rc, err);
	if (rc < 0)
		return NULL;
	struct s0py_local *L = calloc(1, sizeof *L);
	if (!L || !(L->path = strdup(data_dir))) {
		free(L);
		s0_local_close(l);
		*err = s0_error_new(S0_ENOMEM, NULL, NULL);
		return NULL;
	}
	pthread_rwlock_init(&L->lock, NULL);
	pthread_mutex_init(&L->mu, NULL);
	L->l = l;
	atomic_init(&L->refs, 1);
	return L;
}

int s0py_version_number(void) { return s0_version_number(); }
const char *s0py_version_string(void) { return s0_version_string(); }
/** Library objects alive in this process (s0_live_objects). */
int64_t s0py_live_objects(void) { return s0_live_objects(); }
const char *s0py_code_name(int code) { return s0_code_name(code); }
const char *s0py_strerror(int code) { return s0_strerror(code); }
int s0py_code_from_name(const char *name) { return s0_code_from_name(name); }
const char *s0py_status_name(int status) { return s0_status_name(status); }
int s0py_status_from_name(const char *name) { return s0_status_from_name(name); }
/** A new error object (for tests and callbacks). */
CError *s0py_error_new(int code, const char *reason, const char *message)
{
	return s0_error_new(code, reason, message);
}

/** (code, reason) for a wire error (s0_error_map_wire). */
PyObject *s0py_error_map_wire(const char *wire_code, int http_status, const char *message)
{
	int code = 0;
	const char *reason = NULL;
	s0_error_map_wire(wire_code, http_status, message, &code, &reason);
	return Py_BuildValue("(is)", code, reason);
}

/** (wire_code, http_status, message or None) for (code, reason) (s0_error_to_wire). */
PyObject *s0py_error_to_wire(int code, const char *reason)
{
	const char *w, *m = NULL;
	int st = 0;
	s0_error_to_wire(code, reason, &w, &st, &m);
	return Py_BuildValue("(siz)", w, st, m);
}

/** S0_CODE_MAP as [(ident, value, name, description)]. */
PyObject *s0py_code_table(void)
{
	PyObject *l = PyList_New(0);
#define S0PY_ROW(id, val, name, desc)                                             \
	if (l) {                                                                      \
		PyObject *t = Py_BuildValue("(siss)", #id, (int)(val), name, desc);        \
		if (!t || PyList_Append(l, t) < 0) {                                      \
			Py_XDECREF(t);                                                        \
			Py_CLEAR(l);                                                          \
		} else {                                                                  \
			Py_DECREF(t);                                                         \
		}                                                                         \
	}
	S0_CODE_MAP(S0PY_ROW)
#undef S0PY_ROW
	return l;
}

/** S0_WIRE_ERROR_MAP as [(wire_code, http_status, code, reason)]. */
PyObject *s0py_wire_table(void)
{
	PyObject *l = PyList_New(0);
#define S0PY_ROW(wire, st, code, reason)                                          \
	if (l) {                                                                      \
		PyObject *t = Py_BuildValue("(siis)", wire, (int)(st), (int)(code), reason); \
		if (!t || PyList_Append(l, t) < 0) {                                      \
			Py_XDECREF(t);                                                        \
			Py_CLEAR(l);                                                          \
		} else {                                                                  \
			Py_DECREF(t);                                                         \
		}                                                                         \
	}
	S0_WIRE_ERROR_MAP(S0PY_ROW)
#undef S0PY_ROW
	return l;
}

/** S0_WIRE_REASON_MAP as [(wire_code, message_substring, reason)]. */
PyObject *s0py_reason_table(void)
{
	PyObject *l = PyList_New(0);
#define S0PY_ROW(wire, msg, reason)                                               \
	if (l) {                                                                      \
		PyObject *t = Py_BuildValue("(sss)", wire, msg, reason);                   \
		if (!t || PyList_Append(l, t) < 0) {                                      \
			Py_XDECREF(t);                                                        \
			Py_CLEAR(l);                                                          \
		} else {                                                                  \
			Py_DECREF(t);                                                         \
		}                                                                         \
	}
	S0_WIRE_REASON_MAP(S0PY_ROW)
#undef S0PY_ROW
	return l;
}

/** Tell the module which thread is Python's main thread (SIGINT handling). */
void s0py_set_main_thread(unsigned long ident) { s0py_main_ident = ident; }
%}

CClient *s0py_client_new(const char *base_url = NULL, const char *token = NULL,
                         const char *user_agent = NULL, const char *team_id = NULL,
                         char **headers = NULL, int64_t connect_timeout_ms = 0,
                         int64_t request_timeout_ms = 0, int insecure_skip_verify = 0,
                         const char *ca_file = NULL, const char *proxy = NULL, int from_env = 0,
                         s0_error **err);
CLocal *s0py_local_open(const char *data_dir, int manual_clock = 0,
                        int64_t manual_clock_start_unix_ms = 0, int64_t node_cpu_millis = 0,
                        int64_t node_memory_bytes = 0, int32_t warm_carriers = 0,
                        int32_t max_active_runtimes = 0, uint64_t rootfs_size_bytes = 0,
                        const char *team_id = NULL, int zero_time_compat = 0,
                        int64_t continuous_run_limit_ms = 0, s0_error **err);
int s0py_version_number(void);
const char *s0py_version_string(void);
int64_t s0py_live_objects(void);
const char *s0py_code_name(int code);
const char *s0py_strerror(int code);
int s0py_code_from_name(const char *name);
const char *s0py_status_name(int status);
int s0py_status_from_name(const char *name);
CError *s0py_error_new(int code, const char *reason = NULL, const char *message = NULL);
PyObject *s0py_error_map_wire(const char *wire_code, int http_status, const char *message = NULL);
PyObject *s0py_error_to_wire(int code, const char *reason = NULL);
PyObject *s0py_code_table(void);
PyObject *s0py_wire_table(void);
PyObject *s0py_reason_table(void);
void s0py_set_main_thread(unsigned long ident);

%constant int STATUS_UNKNOWN = S0_STATUS_UNKNOWN;
%constant int STATUS_STARTING = S0_STATUS_STARTING;
%constant int STATUS_RUNNING = S0_STATUS_RUNNING;
%constant int STATUS_PAUSED = S0_STATUS_PAUSED;
%constant int STATUS_TERMINATING = S0_STATUS_TERMINATING;
%constant int STATUS_FAILED = S0_STATUS_FAILED;
%constant int BOOL_UNSET = S0_BOOL_UNSET;
%constant int BOOL_TRUE = S0_BOOL_TRUE;
%constant int BOOL_FALSE = S0_BOOL_FALSE;
%constant int CONFIG_SET_TTL = S0_CONFIG_SET_TTL;
%constant int CONFIG_SET_HARD_TTL = S0_CONFIG_SET_HARD_TTL;
%constant int WAIT_NO_JITTER = S0_WAIT_NO_JITTER;
%constant int WAIT_NOTFOUND_OK = S0_WAIT_NOTFOUND_OK;
%constant long long WAIT_DEFAULT_TIMEOUT_MS = S0_WAIT_DEFAULT_TIMEOUT_MS;
%constant long long WAIT_DEFAULT_MEMORY_TIMEOUT_MS = S0_WAIT_DEFAULT_MEMORY_TIMEOUT_MS;
%constant long long TIMEOUT_INFINITE = S0_TIMEOUT_INFINITE;
%constant int FAULT_FAIL = S0_FAULT_FAIL;
%constant int FAULT_HOLD = S0_FAULT_HOLD;
%constant int FAULT_DELAY = S0_FAULT_DELAY;
%constant int FAULT_CRASH = S0_FAULT_CRASH;
%constant int FILE_TYPE_UNKNOWN = S0_FILE_TYPE_UNKNOWN;
%constant int FILE_TYPE_FILE = S0_FILE_TYPE_FILE;
%constant int FILE_TYPE_DIR = S0_FILE_TYPE_DIR;
%constant int FILE_TYPE_SYMLINK = S0_FILE_TYPE_SYMLINK;
%constant unsigned long long FILES_MAX_WRITE_BYTES = S0_FILES_MAX_WRITE_BYTES;
%constant const char *DEFAULT_BASE_URL = S0_DEFAULT_BASE_URL;
%constant const char *HEADER_VERSION_STRING = S0_VERSION_STRING;
