/* Sessions: registry, attempts, reconciliation, restart policy (sessions.h). */
#include "local/runtime/sim/ses_int.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

int64_t s0__ses_now(s0__sessions *s)
{
	return s->clock.now_unix_ms(s->clock.ctx);
}

bool s0__ses_terminal(int phase)
{
	return phase == SES_EXITED || phase == SES_STOPPED || phase == SES_FAILED;
}

ses *s0__ses_find(s0__sessions *s, const char *id, s0_error **err)
{
	for (size_t i = 0; id && i < s->n; i++)
		if (!strcmp(s->v[i]->id, id))
			return s->v[i];
	s0__error_set(err, S0_ENOTFOUND, "session_not_found", "session not found");
	return NULL;
}

void s0__ses_changed(s0__sessions *s, ses *x)
{
	x->updated_ms = s0__ses_now(s);
	if (!s->sink.session)
		return;
	cJSON *j = s0__ses_render(x);
	char *text = j ? cJSON_PrintUnformatted(j) : NULL;
	if (text)
		s->sink.session(s->sink.payload, x->id, text);
	free(text);
	cJSON_Delete(j);
}

void s0__ses_free(ses *x)
{
	if (!x)
		return;
	s0__ses_spec_clear(&x->spec);
	s0__ses_events_free(x);
	s0__ses_t2_free(x);
	free(x->restarts_vt);
	free(x->idem_key);
	free(x);
}

static void new_id(char out[S0__SES_ID_MAX], const char *prefix)
{
	uint8_t rnd[8];
	randombytes_buf(rnd, sizeof rnd);
	size_t n = strlen(prefix);
	memcpy(out, prefix, n);
	sodium_bin2hex(out + n, S0__SES_ID_MAX - n, rnd, sizeof rnd);
}

bool s0__ses_attempt_live(const ses *x)
{
	return x->has_attempt && !x->att.finished;
}

bool s0__ses_lifetime_over(const ses *x, int64_t vt)
{
	return x->spec.max_life_s > 0 && x->created_vt >= 0 &&
	       vt - x->created_vt >= x->spec.max_life_s * 1000;
}

static const char *end_reason(int ending)
{
	return ending == END_IDLE       ? "idle_timeout"
	       : ending == END_LIFETIME ? "max_lifetime"
	                                : "readiness_timeout";
}

/* The session's max lifetime has passed with no attempt to end: it expires. */
static void expire_lifetime(s0__sessions *s, ses *x)
{
	x->phase = SES_EXITED;
	s0__ses_event(s, x, "session.expired", NULL, NULL, 0, NULL, "max_lifetime");
	s0__ses_changed(s, x);
}

static int spawn_attempt(s0__sessions *s, ses *x, s0__guest *g, int64_t vt, int32_t *pid, s0_error **err)
{
	const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(x->spec.json, "cwd");
	int64_t life = x->spec.max_life_s * 1000; /* counted from the session's creation */
	s0__spawn_req r = {.argv = (const char *const *)x->spec.argv, .argc = x->spec.argc,
	                   .cwd = cJSON_IsString(cwd) ? cwd->valuestring : NULL,
	                   .env = cJSON_GetObjectItemCaseSensitive(x->spec.json, "env"),
	                   .owner = S0__OWN_SESSION,
	                   .ttl_ms = life ? x->created_vt + life - vt : 0,
	                   .idle_timeout_ms = x->spec.idle_s * 1000,
	                   .expire_signal = 15, /* an expiry is a stop: TERM, KILL after the grace */
	                   .stop_grace_ms = x->spec.grace_s * 1000};
	return s0__ses_p_spawn(s, g, &r, pid, err);
}

/* Readiness is met: the session is ready (phase running unless stopping). */
static void mark_ready(s0__sessions *s, ses *x)
{
	x->ready = true;
	if (x->phase == SES_STARTING)
		x->phase = SES_RUNNING;
	s0__ses_event(s, x, "session.ready", NULL, NULL, 0, NULL, NULL);
}

int s0__ses_start_attempt(s0__sessions *s, ses *x, s0__guest *g, s0_error **err)
{
	(void)err;
	if (!s0__ses_host(s, g)) {
		x->phase = SES_PENDING;
		return S0_OK;
	}
	int64_t vt = s0__ses_p_vtime(s, g);
	if (x->created_vt < 0)
		x->created_vt = vt;
	x->ending = END_NONE;
	x->start_after_stop = false;
	if (s0__ses_lifetime_over(x, vt)) {
		expire_lifetime(s, x);
		return S0_OK;
	}
	int32_t number = x->has_attempt ? x->att.number + 1 : 1;
	memset(&x->att, 0, sizeof x->att);
	x->has_attempt = true;
	new_id(x->att.id, "att_");
	x->att.number = number;
	x->att.generation = s->generation;
	x->att.started_at_ms = s0__ses_now(s);
	x->att_start_vt = vt;
	x->ready = false;
	x->phase = SES_STARTING;
	s0__ses_event(s, x, "attempt.starting", NULL, NULL, 0, NULL, NULL);
	s0_error *e = NULL;
	if (spawn_attempt(s, x, g, vt, &x->att.pid, &e) < 0) {
		x->att.finished = true;
		x->att.finished_at_ms = s0__ses_now(s);
		snprintf(x->att.reason, sizeof x->att.reason, "start_failed");
		x->phase = SES_FAILED;
		s0__ses_event(s, x, "session.failed", NULL, NULL, 0, NULL, s0_error_message(e));
		s0_error_free(e);
		s0__ses_changed(s, x);
		return S0_OK;
	}
	s0__ses_event(s, x, "attempt.started", NULL, NULL, 0, NULL, NULL);
	if (x->spec.readiness == 0 || (x->spec.readiness == 1 && !x->spec.ready_delay_ms))
		mark_ready(s, x);
	s0__ses_sync_one(s, x, g);
	s0__ses_changed(s, x);
	return S0_OK;
}

/* Output of the attempt becomes events; readiness by output. */
static void take_output(s0__sessions *s, ses *x, s0__guest *g)
{
	s0__buf out = S0__BUF_INIT, er = S0__BUF_INIT, raw = S0__BUF_INIT;
	if (s0__ses_p_output(s, g, x->att.pid, x->spec.pty ? NULL : &out, x->spec.pty ? NULL : &er,
	                          x->spec.pty ? &raw : NULL, NULL) == S0_OK) {
		if (raw.len)
			s0__ses_event(s, x, "output", "pty", raw.data, raw.len, NULL, NULL);
		if (out.len)
			s0__ses_event(s, x, "output", "stdout", out.data, out.len, NULL, NULL);
		if (er.len)
			s0__ses_event(s, x, "output", "stderr", er.data, er.len, NULL, NULL);
		const char *w = x->spec.ready_output;
		bool seen = w && ((out.data && strstr(out.data, w)) || (er.data && strstr(er.data, w)) ||
		                  (raw.data && strstr(raw.data, w)));
		if (!x->ready && !x->ending && seen)
			mark_ready(s, x);
	}
	s0__buf_free(&out);
	s0__buf_free(&er);
	s0__buf_free(&raw);
}

/* Readiness by delay (alive delay_ms after the start; a tie with the
 * timeout is ready), else the readiness timeout: the attempt is stopped. */
static void check_readiness(s0__sessions *s, ses *x, s0__guest *g, int64_t vt)
{
	const ses_spec *sp = &x->spec;
	if (x->ready || x->ending || x->phase == SES_STOPPING)
		return;
	int64_t age = vt - x->att_start_vt;
	if (sp->readiness == 1 && age >= sp->ready_delay_ms &&
	    (!sp->ready_timeout_ms || sp->ready_delay_ms <= sp->ready_timeout_ms)) {
		mark_ready(s, x);
	} else if (sp->ready_timeout_ms && age >= sp->ready_timeout_ms) {
		x->ending = END_READINESS;
		x->phase = SES_STOPPING;
		s0__ses_event(s, x, "attempt.stopping", NULL, NULL, 0, NULL, end_reason(x->ending));
		s0__ses_p_stop(s, g, x->att.pid, sp->grace_s * 1000, false, NULL);
	}
}

/* The restart policy after an ended attempt (@p failed: not a clean exit). */
static void apply_policy(s0__sessions *s, ses *x, s0__guest *g, bool failed, const char *why)
{
	const ses_spec *sp = &x->spec;
	bool restart = sp->restart == RESTART_ALWAYS || (sp->restart == RESTART_ON_FAILURE && failed);
	if (!restart) {
		x->phase = why ? SES_FAILED : SES_EXITED;
		if (why)
			s0__ses_event(s, x, "session.failed", NULL, NULL, 0, NULL, why);
		return;
	}
	int64_t vt = s0__ses_p_vtime(s, g), w = sp->window_s * 1000;
	size_t keep = 0;
	for (size_t i = 0; i < x->nrestarts; i++)
		if (!w || vt - x->restarts_vt[i] < w)
			x->restarts_vt[keep++] = x->restarts_vt[i];
	x->nrestarts = keep;
	if ((int64_t)x->nrestarts >= sp->max_restarts) {
		x->phase = SES_FAILED;
		s0__ses_event(s, x, "session.failed", NULL, NULL, 0, NULL, "restart_limit");
		return;
	}
	int64_t *v = realloc(x->restarts_vt, (x->nrestarts + 1) * sizeof *v);
	if (v) {
		x->restarts_vt = v;
		v[x->nrestarts++] = vt;
	}
	int64_t backoff = sp->backoff0_ms;
	for (size_t i = 1; i < x->nrestarts && backoff < sp->backoff_max_ms; i++)
		backoff *= 2;
	x->next_start_vt = vt + (backoff < sp->backoff_max_ms ? backoff : sp->backoff_max_ms);
	x->restart_count++;
	x->phase = SES_BACKOFF;
	s0__ses_event(s, x, "session.backoff", NULL, NULL, 0, NULL, NULL);
}

/* After an attempt ended: stopped, expired, failed readiness, a replacement
 * waiting for the stop, or the restart policy. */
static void after_exit(s0__sessions *s, ses *x, s0__guest *g)
{
	int ending = x->ending;
	bool again = x->start_after_stop;
	x->ending = END_NONE;
	x->start_after_stop = false;
	if (!x->spec.want_running) {
		x->phase = SES_STOPPED;
	} else if (ending == END_IDLE || ending == END_LIFETIME) {
		/* an expiry is not a failure to restart from (sessions.h) */
		x->phase = SES_EXITED;
		s0__ses_event(s, x, "session.expired", NULL, NULL, 0, NULL, end_reason(ending));
	} else if (ending == END_READINESS) {
		/* a readiness failure is an attempt failure (docs/wire.md §8.3 phase `failed`) */
		apply_policy(s, x, g, true, end_reason(ending));
	} else if (x->phase == SES_STOPPING) {
		x->phase = SES_STOPPED;
		if (again) {
			x->nrestarts = 0;
			s0__ses_start_attempt(s, x, g, NULL);
		}
	} else {
		apply_policy(s, x, g, x->att.exit_code != 0, NULL);
	}
}

void s0__ses_sync_one(s0__sessions *s, ses *x, s0__guest *g)
{
	if (!s0__ses_host(s, g))
		return;
	int64_t vt = s0__ses_p_vtime(s, g);
	if (x->created_vt < 0)
		x->created_vt = vt;
	if (x->phase == SES_BACKOFF && x->spec.want_running) {
		if (s0__ses_lifetime_over(x, vt))
			expire_lifetime(s, x);
		else if (vt >= x->next_start_vt)
			s0__ses_start_attempt(s, x, g, NULL);
		return;
	}
	if (!s0__ses_attempt_live(x))
		return;
	if (x->att_start_vt < 0)
		x->att_start_vt = vt;
	int phase0 = x->phase;
	take_output(s, x, g);
	s0__proc_info pi;
	if (s0__ses_p_get(s, g, x->att.pid, &pi, NULL) < 0)
		return;
	if (!pi.ended) {
		check_readiness(s, x, g, vt);
		if (s0__ses_p_get(s, g, x->att.pid, &pi, NULL) < 0)
			return;
	}
	if (pi.expired && !x->ending && x->phase != SES_STOPPING) {
		/* the guest stopped it at its deadline (sessions.h) */
		x->ending = pi.expired == S0__EXPIRY_TTL ? END_LIFETIME : END_IDLE;
		x->phase = SES_STOPPING;
		s0__ses_event(s, x, "attempt.stopping", NULL, NULL, 0, NULL, end_reason(x->ending));
	}
	if (!pi.ended) {
		if (x->phase != phase0)
			s0__ses_changed(s, x);
		return;
	}
	x->att.finished = true;
	x->att.finished_at_ms = s0__ses_now(s);
	x->att.has_exit = true;
	x->att.exit_code = pi.exit_code;
	snprintf(x->att.reason, sizeof x->att.reason, "%s",
	         x->ending                   ? end_reason(x->ending)
	         : x->phase == SES_STOPPING  ? "stopped"
	         : pi.state == S0__PS_KILLED ? "killed"
	                                     : "exited");
	s0__ses_event(s, x, "attempt.exited", NULL, NULL, 0, &x->att.exit_code, x->att.reason);
	s0__ses_p_reap(s, g, x->att.pid);
	after_exit(s, x, g);
	s0__ses_changed(s, x);
	if (x->phase == SES_BACKOFF && x->next_start_vt <= s0__ses_p_vtime(s, g))
		s0__ses_sync_one(s, x, g);
}

void s0__ses_sync_all(s0__sessions *s, s0__guest *g)
{
	s0__proc_info procd;
	if (!s0__ses_host(s, g) || s0__ses_p_get(s, g, 1, &procd, NULL) < 0 || procd.ended)
		return; /* no guest, or one being torn down: nothing is an exit */
	for (size_t i = 0; i < s->n; i++)
		s0__ses_sync_one(s, s->v[i], g);
}

void s0__ses_stop(s0__sessions *s, ses *x, s0__guest *g, const char *reason)
{
	if (s0__ses_attempt_live(x) && s0__ses_host(s, g)) {
		x->ending = END_NONE; /* a request overrides an expiry in progress */
		if (x->phase != SES_STOPPING) {
			x->phase = SES_STOPPING;
			s0__ses_event(s, x, "attempt.stopping", NULL, NULL, 0, NULL, reason);
			s0__ses_p_stop(s, g, x->att.pid, x->spec.grace_s * 1000, false, NULL);
		}
		s0__ses_sync_one(s, x, g);
	}
	if ((!s0__ses_host(s, g) || !s0__ses_attempt_live(x)) && !s0__ses_terminal(x->phase))
		x->phase = SES_STOPPED;
	s0__ses_changed(s, x);
}

int s0__sessions_new(const s0__sessions_opts *o, s0__sessions **out, s0_error **err)
{
	if (s0__global_ensure() < 0)
		return s0__error_set(err, S0_ERROR, NULL, "library initialisation failed");
	s0__sessions *s = calloc(1, sizeof *s);
	if (!s)
		return s0__error_nomem(err);
	pthread_mutex_init(&s->mu, NULL);
	if (o && o->clock)
		s->clock = *o->clock;
	else
		s0_clock_real(&s->clock);
	if (o) {
		s->generation = o->generation;
		s->sink = o->sink;
	}
	*out = s;
	return S0_OK;
}

void s0__sessions_free(s0__sessions *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		s0__ses_free(s->v[i]);
	free(s->v);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int s0__sessions_sync(s0__sessions *s, s0__guest *g, s0_error **err)
{
	(void)err;
	pthread_mutex_lock(&s->mu);
	s0__ses_sync_all(s, g);
	pthread_mutex_unlock(&s->mu);
	return S0_OK;
}

int s0__sessions_pid(s0__sessions *s, const char *id, int32_t *pid_out, s0_error **err)
{
	pthread_mutex_lock(&s->mu);
	ses *x = s0__ses_find(s, id, err);
	if (x)
		*pid_out = x->has_attempt && !x->att.finished ? x->att.pid : 0;
	pthread_mutex_unlock(&s->mu);
	return x ? S0_OK : S0_ENOTFOUND;
}
