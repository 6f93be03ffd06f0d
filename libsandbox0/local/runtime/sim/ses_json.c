/* Session endpoints in docs/wire.md §8.3 shapes (sessions.h). */
#include "local/runtime/sim/ses_int.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

const char *s0__ses_phase_name(int phase)
{
	static const char *const n[] = {"pending", "starting", "running", "backoff", "stopping",
	                                "stopped", "exited",   "failed",  "paused",  "suspended"};
	return phase >= 0 && phase <= SES_SUSPENDED ? n[phase] : "failed";
}

static int add_time(cJSON *o, const char *k, int64_t ms)
{
	char ts[40];
	s0__time_format_rfc3339(ms, ts, sizeof ts);
	return s0__json_add_str(o, k, ts);
}

static cJSON *render_attempt(const ses_attempt *a)
{
	cJSON *o = cJSON_CreateObject();
	int rc = !o;
	if (o) {
		rc |= s0__json_add_str(o, "id", a->id);
		rc |= s0__json_add_i64(o, "number", a->number);
		rc |= s0__json_add_i64(o, "runtime_generation", a->generation);
		if (a->pid)
			rc |= s0__json_add_i64(o, "pid", a->pid);
		rc |= add_time(o, "started_at", a->started_at_ms);
		if (a->finished)
			rc |= add_time(o, "finished_at", a->finished_at_ms);
		if (a->has_exit)
			rc |= s0__json_add_i64(o, "exit_code", a->exit_code);
		if (a->reason[0])
			rc |= s0__json_add_str(o, "reason", a->reason);
	}
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *s0__ses_render(const ses *x)
{
	cJSON *o = cJSON_CreateObject(), *spec = cJSON_Duplicate(x->spec.json, true);
	cJSON *att = x->has_attempt ? render_attempt(&x->att) : NULL;
	int64_t earliest, latest;
	s0__ses_cursor(x, &earliest, &latest);
	int rc = !o || !spec || (x->has_attempt && !att);
	if (!rc) {
		rc |= s0__json_add_str(o, "id", x->id);
		cJSON_AddItemToObject(o, "spec", spec);
		spec = NULL;
		rc |= s0__json_add_i64(o, "spec_version", x->spec_version);
		rc |= s0__json_add_str(o, "phase", s0__ses_phase_name(x->phase));
		rc |= s0__json_add_i64(o, "runtime_generation", x->generation);
		if (att)
			cJSON_AddItemToObject(o, "attempt", att);
		att = NULL;
		rc |= s0__json_add_i64(o, "restart_count", x->restart_count);
		cJSON *cur = cJSON_AddObjectToObject(o, "cursor");
		rc |= !cur || s0__json_add_i64(cur, "earliest", earliest) |
		              s0__json_add_i64(cur, "latest", latest);
		rc |= add_time(o, "created_at", x->created_ms) | add_time(o, "updated_at", x->updated_ms) |
		      add_time(o, "last_activity_at", x->activity_ms);
	}
	cJSON_Delete(spec);
	cJSON_Delete(att);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int s0__ses_done(int rc, cJSON *data, cJSON **data_out, s0_error **err)
{
	if (rc == S0_OK && !data)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		*data_out = data;
	else
		cJSON_Delete(data);
	return rc;
}

/* Finish an endpoint: data or OOM. */
static int done(int rc, cJSON *data, cJSON **data_out, s0_error **err)
{
	return s0__ses_done(rc, data, data_out, err);
}

cJSON *s0__ses_flag(const char *key)
{
	cJSON *o = cJSON_CreateObject();
	if (o && s0__json_add_bool(o, key, true)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static ses *new_session(s0__sessions *s, ses_spec *sp, const char *key)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		ses **v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	ses *x = calloc(1, sizeof *x);
	if (!x || (key && !(x->idem_key = s0__strdup(key)))) {
		free(x);
		return NULL;
	}
	uint8_t r[8];
	randombytes_buf(r, sizeof r);
	memcpy(x->id, "ses_", 4);
	sodium_bin2hex(x->id + 4, sizeof x->id - 4, r, sizeof r);
	x->spec = *sp;
	memset(sp, 0, sizeof *sp);
	x->spec_version = 1;
	x->generation = s->generation;
	x->created_ms = x->updated_ms = x->activity_ms = s0__ses_now(s);
	x->next_seq = 1;
	x->created_vt = x->att_start_vt = -1;
	s->v[s->n++] = x;
	return x;
}

static ses *by_key(s0__sessions *s, const char *key)
{
	for (size_t i = 0; key && i < s->n; i++)
		if (s->v[i]->idem_key && !strcmp(s->v[i]->idem_key, key))
			return s->v[i];
	return NULL;
}

int s0__sessions_create_json(s0__sessions *s, s0__guest *g, const cJSON *spec,
                             const char *idempotency_key, cJSON **data_out, int *status_out,
                             s0_error **err)
{
	ses_spec sp;
	int rc = s0__ses_spec_parse(spec, &sp, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&s->mu);
	s0__ses_sync_all(s, g);
	ses *x = by_key(s, idempotency_key);
	cJSON *data = NULL;
	int status = 201;
	if (x && strcmp(x->spec.canon, sp.canon)) {
		rc = s0__error_set(err, S0_ECONFLICT, "session_conflict",
		                   "idempotency key was used with a different spec");
	} else if (x) {
		status = 200;
	} else if (!(x = new_session(s, &sp, idempotency_key))) {
		rc = s0__error_nomem(err);
	} else {
		x->created_vt = s0__ses_host(s, g) ? s0__ses_p_vtime(s, g) : -1; /* -1: at the first attempt */
		s0__ses_event(s, x, "session.created", NULL, NULL, 0, NULL, NULL);
		if (x->spec.want_running)
			s0__ses_start_attempt(s, x, g, NULL);
		else
			x->phase = SES_STOPPED;
		s0__ses_changed(s, x);
	}
	if (rc == S0_OK)
		data = s0__ses_render(x);
	pthread_mutex_unlock(&s->mu);
	s0__ses_spec_clear(&sp);
	rc = done(rc, data, data_out, err);
	if (rc == S0_OK)
		*status_out = status;
	return rc;
}

int s0__sessions_list_json(s0__sessions *s, s0__guest *g, cJSON **data_out, s0_error **err)
{
	pthread_mutex_lock(&s->mu);
	s0__ses_sync_all(s, g);
	cJSON *o = cJSON_CreateObject();
	cJSON *a = o ? cJSON_AddArrayToObject(o, "sessions") : NULL;
	bool ok = a != NULL;
	for (size_t i = 0; ok && i < s->n; i++)
		ok = cJSON_AddItemToArray(a, s0__ses_render(s->v[i]));
	pthread_mutex_unlock(&s->mu);
	if (!ok) {
		cJSON_Delete(o);
		o = NULL;
	}
	return done(S0_OK, o, data_out, err);
}

int s0__sessions_get_json(s0__sessions *s, s0__guest *g, const char *id, cJSON **data_out,
                          s0_error **err)
{
	pthread_mutex_lock(&s->mu);
	s0__ses_sync_all(s, g);
	ses *x = s0__ses_find(s, id, err);
	cJSON *data = x ? s0__ses_render(x) : NULL;
	pthread_mutex_unlock(&s->mu);
	return done(x ? S0_OK : S0_ENOTFOUND, data, data_out, err);
}

int s0__sessions_delete_json(s0__sessions *s, s0__guest *g, const char *id, cJSON **data_out,
                             s0_error **err)
{
	pthread_mutex_lock(&s->mu);
	ses *x = s0__ses_find(s, id, err);
	bool found = x != NULL;
	if (x) {
		if (s0__ses_host(s, g) && s0__ses_attempt_live(x)) /* TERM, KILL after the grace; nobody reaps it now */
			s0__ses_p_stop(s, g, x->att.pid, x->spec.grace_s * 1000, true, NULL);
		size_t i = 0;
		while (s->v[i] != x)
			i++;
		memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
		s->n--;
		if (s->sink.session)
			s->sink.session(s->sink.payload, x->id, NULL);
		s0__ses_free(x);
	}
	pthread_mutex_unlock(&s->mu);
	return done(found ? S0_OK : S0_ENOTFOUND, found ? s0__ses_flag("deleted") : NULL, data_out, err);
}
