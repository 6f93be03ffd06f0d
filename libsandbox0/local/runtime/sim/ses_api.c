/* Session endpoints that act: desired state, signals, the events page (sessions.h). */
#include "local/runtime/sim/ses_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"

/* Record a new desired state in the spec (a new spec_version when it changes). */
static void set_desired(s0__sessions *s, ses *x, bool running)
{
	(void)s;
	if (x->spec.want_running == running)
		return;
	x->spec.want_running = running;
	cJSON *lc = cJSON_GetObjectItemCaseSensitive(x->spec.json, "lifecycle");
	cJSON_ReplaceItemInObjectCaseSensitive(lc, "desired_state",
	                                       cJSON_CreateString(running ? "running" : "stopped"));
	char *canon = cJSON_PrintUnformatted(x->spec.json);
	if (canon) {
		free(x->spec.canon);
		x->spec.canon = canon;
	}
	x->spec_version++;
}

int s0__sessions_desired_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                              cJSON **data_out, s0_error **err)
{
	static const char *const keys[] = {"state", NULL}; /* ExecutionSessionDesiredStateRequest */
	const char *st = cJSON_IsObject(body) ? s0__json_str(body, "state") : NULL;
	if (s0__json_check_keys(body, keys, "", "invalid_request", err) < 0)
		return S0_EINVAL;
	if (!st || (strcmp(st, "running") && strcmp(st, "stopped")))
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "state is required and must be running or stopped");
	bool run = !strcmp(st, "running");
	pthread_mutex_lock(&s->mu);
	s0__ses_sync_all(s, g);
	ses *x = s0__ses_find(s, id, err);
	if (x) {
		set_desired(s, x, run);
		if (!run && !s0__ses_terminal(x->phase))
			s0__ses_stop(s, x, g, "desired_state");
		else if (run && (s0__ses_terminal(x->phase) || x->phase == SES_PENDING)) {
			x->nrestarts = 0;
			s0__ses_start_attempt(s, x, g, NULL);
		} else if (run && x->phase == SES_STOPPING && !x->ending) {
			x->start_after_stop = true; /* a stop in its grace period: start once it exits */
		}
		s0__ses_changed(s, x);
	}
	cJSON *data = x ? s0__ses_render(x) : NULL;
	pthread_mutex_unlock(&s->mu);
	return s0__ses_done(x ? S0_OK : S0_ENOTFOUND, data, data_out, err);
}

static int do_signal(s0__sessions *s, ses *x, s0__guest *g, int sig, const char *name,
                     const char *expected, s0_error **err)
{
	int rc = s0__ses_need_running(s, x, g, expected, err);
	if (rc == S0_OK)
		rc = s0__ses_p_signal(s, g, x->att.pid, sig, err);
	if (rc < 0)
		return rc;
	s0__ses_event(s, x, "signal.sent", NULL, NULL, 0, NULL, name);
	s0__ses_sync_one(s, x, g);
	return S0_OK;
}

int s0__sessions_signal_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                             cJSON **data_out, s0_error **err)
{
	const char *name = cJSON_IsObject(body) ? s0__json_str(body, "signal") : NULL;
	const char *expected = cJSON_IsObject(body) ? s0__json_str(body, "expected_attempt_id") : NULL;
	static const char *const keys[] = {"signal", "expected_attempt_id", NULL};
	int sig;
	if (s0__json_check_keys(body, keys, "", "invalid_request", err) < 0)
		return S0_EINVAL;
	if (!name || !*name)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "signal is required");
	int rc = s0__signal_parse(name, &sig, err);
	if (rc < 0)
		return rc;
	ses *x = s0__ses_lock_find(s, g, id, &rc, err);
	if (x)
		rc = do_signal(s, x, g, sig, name, expected, err);
	pthread_mutex_unlock(&s->mu);
	return s0__ses_done(rc, rc == S0_OK ? s0__ses_flag("accepted") : NULL, data_out, err);
}

/* A query integer in [lo, hi] (digits only); def when absent. -1 when bad. */
static int query_int(const char *v, int64_t def, int64_t lo, int64_t hi, int64_t *out)
{
	if (!v) {
		*out = def;
		return 0;
	}
	char *end;
	if (!*v || *v == '-' || *v == '+')
		return -1;
	long long n = strtoll(v, &end, 10);
	if (*end || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

static cJSON *events_page(const ses *x, int64_t after, int64_t limit)
{
	int64_t earliest, latest;
	s0__ses_cursor(x, &earliest, &latest);
	cJSON *o = cJSON_CreateObject();
	cJSON *a = o ? cJSON_AddArrayToObject(o, "events") : NULL;
	bool ok = a != NULL;
	for (size_t i = 0; ok && i < x->nev && limit > 0; i++) {
		if (x->ev[i].seq <= after)
			continue;
		ok = cJSON_AddItemToArray(a, cJSON_Parse(x->ev[i].json));
		limit--;
	}
	cJSON *cur = ok ? cJSON_AddObjectToObject(o, "cursor") : NULL;
	ok = cur && !s0__json_add_i64(cur, "earliest", earliest) &&
	     !s0__json_add_i64(cur, "latest", latest);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int s0__sessions_events_json(s0__sessions *s, s0__guest *g, const char *id, const char *after,
                             const char *limit, cJSON **data_out, s0_error **err)
{
	int64_t a, l;
	if (query_int(after, 0, 0, INT64_MAX, &a) < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "after must be a non-negative integer");
	if (query_int(limit, 1000, 1, 10000, &l) < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "limit must be between 1 and 10000");
	int rc;
	ses *x = s0__ses_lock_find(s, g, id, &rc, err);
	cJSON *data = NULL;
	if (x) {
		s0__ses_retain(s, x);
		int64_t earliest, latest;
		s0__ses_cursor(x, &earliest, &latest);
		if (a < earliest - 1)
			rc = s0__error_set(err, S0_EGONE, "event_cursor_expired",
			                   "event cursor %lld is older than the retained events (earliest %lld)",
			                   (long long)a, (long long)earliest);
		else
			data = events_page(x, a, l);
	}
	pthread_mutex_unlock(&s->mu);
	return s0__ses_done(rc, data, data_out, err);
}
