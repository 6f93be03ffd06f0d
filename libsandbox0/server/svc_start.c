/* The connect of a public route to its service and the one start in flight
 * of a cmd service's command per sandbox runtime and port (svc_start.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cancel.h"
#include "common/internal.h"
#include "common/json.h"
#include "local/runtime/runtime.h"
#include "server/svc_start.h"

#define LISTEN_POLL_MS 20

/* A start in flight, then (done, rc OK) kept until its starter stops waiting
 * for the port: a request refused while the command starts up finds it and
 * waits for the listener instead of starting the command again. Freed by the
 * last of its starter and waiters. */
typedef struct start_slot {
	char sandbox[S0__ID_MAX];
	int port;
	bool done;
	int rc;
	int users; /* the starter and its waiters */
	char reason[40], msg[200];
	struct start_slot *next;
} start_slot;

static pthread_mutex_t starts_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t starts_cv;
static pthread_once_t starts_once = PTHREAD_ONCE_INIT;
static start_slot *starts;

static void starts_init(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&starts_cv, &ca);
	pthread_condattr_destroy(&ca);
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool reason_is(s0_error *err, const char *reason)
{
	return err && s0_error_reason(err) && !strcmp(s0_error_reason(err), reason);
}

/* Start a cmd runtime's command in the sandbox (a cmd context). */
static int start_service(s0__runtime_access *a, const cJSON *rt, s0_error **err)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *cmd = body ? cJSON_AddObjectToObject(body, "cmd") : NULL;
	cJSON *argv = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(rt, "command"), 1);
	bool ok = cmd && argv && cJSON_AddItemToObject(cmd, "command", argv);
	if (!ok)
		cJSON_Delete(argv);
	const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(rt, "cwd");
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(rt, "env_vars");
	cJSON *env2 = ok && cJSON_IsObject(env) ? cJSON_Duplicate(env, 1) : NULL;
	ok = ok && s0__json_add_str(body, "type", "cmd") == 0 &&
	     (!cJSON_IsString(cwd) || s0__json_add_str(body, "cwd", cwd->valuestring) == 0);
	if (env2 && !(ok && cJSON_AddItemToObject(body, "env_vars", env2))) {
		cJSON_Delete(env2);
		ok = false;
	}
	if (!ok || (cJSON_IsObject(env) && !env2)) {
		cJSON_Delete(body);
		return s0__error_nomem(err);
	}
	s0__rt_proc_call call = {.op = S0__RT_CTX_CREATE, .body = body};
	cJSON *data = NULL;
	int status = 0;
	int rc = s0__runtime_access_proc(a, &call, &data, &status, err);
	/* a command that already failed will not listen: say so now */
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(data, "exit_code");
	if (rc == S0_OK && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(data, "running")) &&
	    cJSON_IsNumber(code) && code->valueint != 0)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "port_not_listening",
		                   "the service's command exited with status %d", code->valueint);
	cJSON_Delete(data);
	cJSON_Delete(body);
	return rc;
}

static int stopping(s0_error **err)
{
	return s0__error_set(err, S0_EUNAVAILABLE, "unavailable", "the server is stopping");
}

/* The server stops: waiters look at their token again. */
static void wake_waiters(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&starts_mu);
	pthread_cond_broadcast(&starts_cv);
	pthread_mutex_unlock(&starts_mu);
}

static void slot_put(start_slot *s)
{
	if (--s->users == 0)
		free(s);
}

static void slot_unlink(start_slot *s)
{
	for (start_slot **p = &starts; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
}

/* Start the command, or wait for the start in flight (or just done) for
 * (sandbox, port) until deadline (monotonic ms): its result is this call's.
 * When this call started it and it succeeded, *held is its slot, kept until
 * start_release() (the caller stops waiting for the port). *fd >= 0: the
 * port accepted this call's connect before a start (nothing started). */
static int start_once(s0__runtime_access *a, const char *sandbox_id, const cJSON *rt, int port,
                      int64_t deadline, s0_cancel_token *stop, start_slot **held, int *fd,
                      s0_error **err)
{
	*held = NULL;
	*fd = -1;
	pthread_once(&starts_once, starts_init);
	pthread_mutex_lock(&starts_mu);
	start_slot *s = starts;
	while (s && !(s->port == port && !strcmp(s->sandbox, sandbox_id)))
		s = s->next;
	if (s) { /* another request starts it: wait for its result */
		s->users++;
		pthread_mutex_unlock(&starts_mu);
		int sub = s0__cancel_subscribe(stop, wake_waiters, NULL);
		pthread_mutex_lock(&starts_mu);
		struct timespec ts = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000L};
		int w = 0;
		while (!s->done && w != ETIMEDOUT && !s0__canceled(stop, NULL))
			w = pthread_cond_timedwait(&starts_cv, &starts_mu, &ts);
		int rc = !s->done && s0__canceled(stop, NULL) ? stopping(err)
		         : !s->done ? s0__error_set(err, S0_ETIMEDOUT, "gateway_timeout",
		                                    "the service's command is still starting")
		         : s->rc < 0 ? s0__error_set(err, s->rc, s->reason, "%s", s->msg)
		                     : S0_OK;
		slot_put(s);
		pthread_mutex_unlock(&starts_mu);
		if (sub)
			s0__cancel_unsubscribe(stop, sub);
		return rc;
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		pthread_mutex_unlock(&starts_mu);
		return s0__error_nomem(err);
	}
	*s = (start_slot){.port = port, .users = 1, .next = starts};
	snprintf(s->sandbox, sizeof s->sandbox, "%s", sandbox_id);
	starts = s;
	pthread_mutex_unlock(&starts_mu);

	/* a start that ended (its starter connected) since this request was
	 * refused: the command listens now, no second start */
	s0_error *e = NULL;
	int rc = s0__runtime_access_connect(a, port, fd, NULL) == S0_OK ? S0_OK
	                                                                : start_service(a, rt, &e);

	pthread_mutex_lock(&starts_mu);
	s->done = true;
	s->rc = rc;
	if (rc < 0) {
		snprintf(s->reason, sizeof s->reason, "%s",
		         e && s0_error_reason(e) ? s0_error_reason(e) : "unavailable");
		snprintf(s->msg, sizeof s->msg, "%s",
		         e && s0_error_message(e) ? s0_error_message(e) : "the start failed");
		slot_unlink(s); /* a failed start may be tried again */
		slot_put(s);
	} else {
		*held = s;
	}
	pthread_cond_broadcast(&starts_cv);
	pthread_mutex_unlock(&starts_mu);
	if (rc < 0) {
		if (err)
			*err = e;
		else
			s0_error_free(e);
	}
	return rc;
}

/* The starter stopped waiting for the port: a later refusal starts again. */
static void start_release(start_slot *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&starts_mu);
	slot_unlink(s);
	slot_put(s);
	pthread_mutex_unlock(&starts_mu);
}

int s0__svc_connect(s0__runtime_access *a, const char *sandbox_id, const cJSON *service,
                    int port, int64_t budget_ms, s0_cancel_token *stop, int *fd,
                    s0_error **err)
{
	int64_t deadline = s0__real_monotonic_ms() + budget_ms;
	s0_error *e = NULL;
	int rc = s0__runtime_access_connect(a, port, fd, &e);
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(service, "runtime");
	const char *type = str_of(rt, "type");
	/* only a refusal says nothing listens: a silent port is never restarted */
	if (rc == S0_EUNAVAILABLE && reason_is(e, "port_not_listening") && type &&
	    !strcmp(type, "cmd")) {
		s0_error_free(e);
		e = NULL;
		start_slot *held;
		rc = start_once(a, sandbox_id, rt, port, deadline, stop, &held, fd, &e);
		while (rc == S0_OK && *fd < 0) {
			rc = s0__runtime_access_connect(a, port, fd, &e);
			if (rc != S0_EUNAVAILABLE || !reason_is(e, "port_not_listening") ||
			    s0__real_monotonic_ms() >= deadline)
				break;
			s0_error_free(e);
			e = NULL;
			rc = s0__cancel_sleep(stop, LISTEN_POLL_MS) == S0_ECANCELED ? stopping(&e) : S0_OK;
		}
		start_release(held);
	}
	if (err)
		*err = e;
	else
		s0_error_free(e);
	return rc;
}
