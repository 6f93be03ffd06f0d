/*
 * Lifecycle waits (sandbox0/wait.h; docs/decisions.md "Wait helpers";
 * docs/wire.md §4.2, §6.3–6.6; docs/behaviours.md CL-01..CL-09).
 *
 * One engine runs all three helpers. A wait is a sequence of steps separated
 * by sleeps on the client's clock:
 *
 *   step  = [GET "before" (resume only)] [POST (pause/resume)] GET, judge
 *   sleep = backoff with jitter, or the server's Retry-After when longer,
 *           never past the deadline; over a transport with change
 *           notification (in process) it ends as soon as the sandbox
 *           changes (wait_wake.c), so a wait ends when the work ends
 *
 * The first step runs at once. A step that fails transiently (429, 5xx,
 * transport error on a GET) is simply followed by a sleep and another step.
 * The POST is sent once; only when its outcome is unknown (transport error,
 * 502, 504, 503 "waking up") is the sandbox inspected with GET and, unless
 * that GET shows the goal, the very same request (same memory body) sent
 * again after the next sleep. Every request starts before the deadline and
 * is capped to the time left, so the call ends by the deadline.
 *
 * A pause retires one runtime generation: the one its answer names
 * (`runtime_generation`, docs/wire.md §6.3), else the one the first poll
 * after it shows. A later generation that is not the paused state means
 * that runtime is gone without the pause (a crash recovery superseded the
 * unpublished pause, or another caller resumed): no poll can ever show the
 * goal, so the wait ends with S0_ELIFECYCLE `pause_superseded` at once
 * (docs/decisions.md "Superseded pause").
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/client_internal.h"
#include "client/wait_internal.h"
#include "common/cancel.h"
#include "common/json.h"

/* ---- options ---- */

int s0_wait_options_init(s0_wait_options *opts, uint32_t version)
{
	if (!opts || version != S0_WAIT_OPTIONS_VERSION)
		return S0_EINVAL;
	s0_wait_options d = S0_WAIT_OPTIONS_INIT;
	*opts = d;
	return S0_OK;
}

static int invalid(s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EINVAL, "invalid_argument", "s0_wait_options: %s", what);
}

/* Poll interval pair: unset values follow the other one. */
static int resolve_intervals(const s0_wait_options *o, s0__wait_cfg *cfg, s0_error **err)
{
	if (o->poll_initial_ms < 0 || o->poll_max_ms < 0)
		return invalid(err, "poll intervals must be >= 0");
	if (o->poll_initial_ms && o->poll_max_ms && o->poll_initial_ms > o->poll_max_ms)
		return invalid(err, "poll_initial_ms must not exceed poll_max_ms");
	int64_t max = o->poll_max_ms;
	if (!max)
		max = o->poll_initial_ms > S0__WAIT_POLL_MAX_MS ? o->poll_initial_ms
		                                                : S0__WAIT_POLL_MAX_MS;
	int64_t initial = o->poll_initial_ms;
	if (!initial)
		initial = max < S0__WAIT_POLL_INITIAL_MS ? max : S0__WAIT_POLL_INITIAL_MS;
	cfg->poll_initial_ms = initial;
	cfg->poll_max_ms = max;
	return S0_OK;
}

int s0__wait_resolve(const s0_wait_options *o, bool use_memory, s0__wait_cfg *out,
                     s0_error **err)
{
	s0_wait_options d = S0_WAIT_OPTIONS_INIT;
	if (!o)
		o = &d;
	if (o->version != S0_WAIT_OPTIONS_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_wait_options.version %u is not %u", o->version,
		                     S0_WAIT_OPTIONS_VERSION);
	s0__wait_cfg cfg = {.memory = S0_BOOL_UNSET};
	if (use_memory) {
		if (o->memory != S0_BOOL_UNSET && o->memory != S0_BOOL_TRUE &&
		    o->memory != S0_BOOL_FALSE)
			return invalid(err, "memory must be S0_BOOL_UNSET, S0_BOOL_TRUE or S0_BOOL_FALSE");
		cfg.memory = o->memory;
		cfg.memory_mode = o->memory == S0_BOOL_TRUE;
	}
	if (o->timeout_ms < 0 && o->timeout_ms != S0_TIMEOUT_INFINITE)
		return invalid(err, "timeout_ms must be >= 0 or S0_TIMEOUT_INFINITE");
	if (o->backoff_factor_pct && o->backoff_factor_pct < 100)
		return invalid(err, "backoff_factor_pct must be 0 or >= 100");
	if (o->jitter_pct > 100)
		return invalid(err, "jitter_pct must be <= 100");
	if (o->flags & ~(S0_WAIT_NO_JITTER | S0_WAIT_NOTFOUND_OK))
		return invalid(err, "unknown flags");
	int rc = resolve_intervals(o, &cfg, err);
	if (rc < 0)
		return rc;
	cfg.timeout_ms = o->timeout_ms ? o->timeout_ms
	                 : cfg.memory_mode ? S0_WAIT_DEFAULT_MEMORY_TIMEOUT_MS
	                                   : S0_WAIT_DEFAULT_TIMEOUT_MS;
	cfg.factor_pct = o->backoff_factor_pct ? o->backoff_factor_pct : S0__WAIT_BACKOFF_PCT;
	cfg.jitter_pct = (o->flags & S0_WAIT_NO_JITTER) ? 0
	                 : o->jitter_pct                ? o->jitter_pct
	                                                : S0__WAIT_JITTER_PCT;
	cfg.flags = o->flags;
	*out = cfg;
	return S0_OK;
}

/* ---- schedule ---- */

void s0__backoff_init(s0__backoff *b, int64_t initial_ms, int64_t max_ms, uint32_t factor_pct,
                      uint32_t jitter_pct, uint64_t seed)
{
	b->max_ms = max_ms < 1 ? 1 : max_ms;
	b->base_ms = initial_ms < 1 ? 1 : initial_ms > b->max_ms ? b->max_ms : initial_ms;
	b->factor_pct = factor_pct < 100 ? 100 : factor_pct;
	b->jitter_pct = jitter_pct > 100 ? 100 : jitter_pct;
	b->rng = seed ? seed : UINT64_C(0x9E3779B97F4A7C15);
}

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* pct percent of v without overflow (v >= 0). */
static int64_t percent_of(int64_t v, uint32_t pct)
{
	return (v / 100) * (int64_t)pct + (v % 100) * (int64_t)pct / 100;
}

static void backoff_grow(s0__backoff *b)
{
	if (b->base_ms >= b->max_ms || b->factor_pct == 100)
		return;
	if (b->base_ms > INT64_MAX / (int64_t)b->factor_pct) {
		b->base_ms = b->max_ms;
		return;
	}
	int64_t grown = b->base_ms + percent_of(b->base_ms, b->factor_pct - 100);
	if (grown <= b->base_ms)
		grown = b->base_ms + 1; /* tiny bases must still grow */
	b->base_ms = grown > b->max_ms ? b->max_ms : grown;
}

int64_t s0__backoff_next(s0__backoff *b)
{
	int64_t sleep = b->base_ms;
	int64_t spread = percent_of(sleep, b->jitter_pct);
	if (spread > 0)
		sleep -= (int64_t)(xorshift64(&b->rng) % ((uint64_t)spread + 1));
	if (sleep < 1)
		sleep = 1;
	backoff_grow(b);
	return sleep;
}

int64_t s0__wait_plan_sleep(int64_t backoff_ms, int64_t retry_after_ms, int64_t now_ms,
                            int64_t deadline_ms)
{
	int64_t ms = retry_after_ms > backoff_ms ? retry_after_ms : backoff_ms;
	if (deadline_ms != S0__NO_DEADLINE) {
		int64_t left = deadline_ms - now_ms;
		if (left <= 0)
			return 0;
		if (ms > left)
			ms = left;
	}
	return ms < 0 ? 0 : ms;
}

int64_t s0__wait_deadline(int64_t start_ms, int64_t timeout_ms)
{
	if (timeout_ms < 0 || start_ms > INT64_MAX - timeout_ms)
		return S0__NO_DEADLINE;
	return start_ms + timeout_ms;
}

/* ---- one wait ---- */

typedef enum wait_kind { WAIT_GENERIC, WAIT_PAUSE, WAIT_RESUME } wait_kind;

/*
 * Where the next step starts. BEFORE: resume's first GET; POST: send the
 * lifecycle request; INSPECT: its outcome was unknown, GET before any
 * repeat; POLL: accepted, only GETs from now on.
 */
typedef enum wait_phase { PH_BEFORE, PH_POST, PH_INSPECT, PH_POLL } wait_phase;

/* Result of one GET. */
enum { POLL_RETRY = 0, POLL_SEEN = 1, POLL_GONE = 2 };
/* Result of the POST. */
enum { POST_UNKNOWN = 0, POST_ACCEPTED = 1 };

typedef struct wait_run {
	s0_client *c;
	const char *id;
	wait_kind kind;
	wait_phase phase;
	s0__wait_cfg cfg;
	s0_wait_cb cb;
	void *payload;
	uint32_t until_mask;     /* generic */
	s0_wait_predicate pred;  /* generic, nullable */
	int64_t target_gen;      /* resume */
	int64_t pause_gen;       /* pause: the generation it retires; -1 not known yet */
	s0_cancel_token *cancel; /* the options' token (nullable) */
	s0_cancel_token *tok;    /* it and the client's: what sleeps observe */
	s0__cancel_link link;
	int64_t start_ms, deadline_ms;
	s0__backoff bo;
	int64_t retry_after_ms;  /* longest Retry-After since the last sleep; -1 none */
	s0_sandbox_info *last;   /* last observed sandbox (owned) */
	s0_error *last_err;      /* last transient failure (owned): a timeout's cause */
	bool gone;               /* 404 under S0_WAIT_NOTFOUND_OK */
	bool reached;            /* some request of this wait may have reached the server */
	int64_t unreachable_ms;  /* since when every request was refused unsent; -1 not so */
	uint64_t seen;           /* change version read before the last GET (wait_wake.c) */
	/* long-poll (docs/wire.md "Long-poll"): the last ETag seen, whether the
	 * server honoured `Prefer: wait` on the last GET (then the next GET goes
	 * at once: the server's hold is the pacing), and what the next call sends */
	char etag[128];
	bool held;
	const char *call_inm;
	int32_t call_wait_s;
} wait_run;

static int64_t now_ms(const wait_run *w)
{
	return w->c->clock.monotonic_ms(w->c->clock.ctx);
}

static bool canceled(const wait_run *w)
{
	return s0__canceled(w->cancel, w->c->cancel);
}

static const char *action_verb(const wait_run *w)
{
	return w->kind == WAIT_PAUSE ? "pause" : w->kind == WAIT_RESUME ? "resume" : "wait";
}

/* The caller-facing errors of the wait itself: deadline or cancel. */
static int stop_error(wait_run *w, int code, s0_error **err)
{
	char *msg = code == S0_ETIMEDOUT
	                ? s0__asprintf("timed out waiting for sandbox %s after %" PRId64 "ms",
	                               w->id, w->cfg.timeout_ms)
	                : s0__asprintf("%s of sandbox %s canceled", action_verb(w), w->id);
	s0_error *x = s0__error_make(code, code == S0_ETIMEDOUT ? "wait_deadline" : "canceled", msg);
	free(msg);
	s0__error_set_sandbox(x, w->id, NULL, w->last,
	                      code == S0_ETIMEDOUT ? w->cfg.timeout_ms : 0);
	if (code == S0_ETIMEDOUT && w->last_err) {
		s0__error_set_cause(x, w->last_err);
		w->last_err = NULL;
	}
	return s0__error_put(err, x);
}

static int lifecycle_error(wait_run *w, const char *action, const char *reason,
                           const s0_sandbox_info *info, s0_error **err)
{
	char *msg = s0__asprintf("%s of sandbox %s failed: status %s, paused %s, "
	                         "runtime_generation %" PRId64,
	                         action ? action : "wait", w->id,
	                         s0_status_name(s0_sandbox_info_status(info)),
	                         s0_sandbox_info_paused(info) ? "true" : "false",
	                         s0_sandbox_info_runtime_generation(info));
	s0_error *x = s0__error_make(S0_ELIFECYCLE, reason, msg);
	free(msg);
	s0__error_set_sandbox(x, w->id, action, info, 0);
	return s0__error_put(err, x);
}

/* Hand a request's error (rc, detail x) to the caller, with the last observation attached. */
static int fatal(wait_run *w, int rc, s0_error *x, s0_error **err)
{
	if (!x) /* a layer that failed without detail */
		x = s0__error_make(rc, NULL, NULL);
	if (s0_error_code(x) == S0_ECANCELED) {
		s0_error_free(x);
		return stop_error(w, S0_ECANCELED, err);
	}
	if (!s0_error_last_sandbox(x)) /* (our own errors already carry theirs) */
		s0__error_set_sandbox(x, w->id, s0_error_action(x), w->last, s0_error_timeout_ms(x));
	return s0__error_put(err, x);
}

/* Keep a transient failure: its Retry-After shapes the next sleep. */
static void remember(wait_run *w, s0_error *x)
{
	int64_t ra = s0_error_retry_after_ms(x);
	if (ra > w->retry_after_ms)
		w->retry_after_ms = ra;
	s0_error_free(w->last_err);
	w->last_err = x;
}

/* Whether a failed GET is worth another poll (429, 408, 5xx, transport). */
static bool poll_error_transient(const s0_error *x)
{
	int code = s0_error_code(x), st = s0_error_http_status(x);
	if (code == S0_ETRANSPORT)
		return true;
	if (code == S0_ERESUME) /* 503 sandbox_resume_failed is an answer */
		return false;
	return st == 408 || st == 429 || st >= 500;
}

/*
 * Whether the POST may or may not have taken effect: transport error (sent
 * or not: repeating is safe either way), 502, 504, or 503 "waking up" (a
 * resume is in flight; the request itself was not decided).
 */
static bool post_outcome_unknown(const s0_error *x)
{
	int st = s0_error_http_status(x);
	if (s0_error_code(x) == S0_ETRANSPORT)
		return true;
	if (st == 502 || st == 504)
		return true;
	return st == 503 && !strcmp(s0_error_reason(x), "waking_up");
}

/* One exchange on /sandboxes/{id}<suffix>, started before the deadline and capped by it. */
static int exchange(wait_run *w, const char *method, const char *suffix, const cJSON *body,
                    s0__reply *reply, s0_error **x, bool *sent)
{
	*sent = false;
	if (canceled(w))
		return stop_error(w, S0_ECANCELED, x);
	int64_t now = now_ms(w);
	if (now >= w->deadline_ms)
		return stop_error(w, S0_ETIMEDOUT, x);
	char *path = s0__sandbox_path(w->id, suffix);
	if (!path)
		return s0__error_nomem(x);
	s0__call call = {
		.method = method,
		.path = path,
		.json = body,
		.sandbox_id = w->id,
		.cancel = w->cancel,
		.timeout_ms = w->deadline_ms == S0__NO_DEADLINE ? 0 : w->deadline_ms - now,
		.if_none_match = w->call_inm,
		.prefer_wait_s = w->call_wait_s,
	};
	int rc = s0__client_call(w->c, &call, reply, sent, x);
	if (rc != S0_ETRANSPORT)
		*sent = rc != S0_ECANCELED && rc != S0_ETIMEDOUT;
	if (*sent)
		w->reached = true;
	free(path);
	return rc;
}

/*
 * A transport failure before anything of this wait reached the server
 * (connection refused, DNS, TLS): nothing was started, so the wait reports
 * it at once instead of retrying until the deadline.
 */
static bool never_reached(const wait_run *w, int rc, bool sent)
{
	return rc == S0_ETRANSPORT && !sent && !w->reached;
}

/*
 * A server that refuses connections (nothing sent) for S0__WAIT_UNREACHABLE_MS
 * in a row, after this wait reached it, is gone rather than restarting (a
 * `kill -9` with nobody to start it again): the wait ends with that transport
 * error instead of retrying until its deadline (a memory wait's is 360 s).
 */
static bool unreachable_too_long(wait_run *w, int rc, bool sent)
{
	if (rc != S0_ETRANSPORT || sent) {
		w->unreachable_ms = -1;
		return false;
	}
	int64_t now = now_ms(w);
	if (w->unreachable_ms < 0)
		w->unreachable_ms = now;
	return now - w->unreachable_ms >= S0__WAIT_UNREACHABLE_MS;
}

static bool same_state(const s0_sandbox_info *a, const s0_sandbox_info *b)
{
	return s0_sandbox_info_status(a) == s0_sandbox_info_status(b) &&
	       s0_sandbox_info_paused(a) == s0_sandbox_info_paused(b) &&
	       s0_sandbox_info_runtime_generation(a) == s0_sandbox_info_runtime_generation(b) &&
	       !strcmp(s0_sandbox_info_runtime_id(a), s0_sandbox_info_runtime_id(b));
}

/* Keep info (owned) as the last observation; report a change to the callback. */
static int observe(wait_run *w, s0_sandbox_info *info, s0_error **err)
{
	bool changed = !w->last || !same_state(w->last, info);
	s0_sandbox_info_free(w->last);
	w->last = info;
	s0_error_free(w->last_err);
	w->last_err = NULL;
	if (!changed || !w->cb || w->cb(info, now_ms(w) - w->start_ms, w->payload) == 0)
		return S0_OK;
	s0_error *x = s0__error_make(S0_EUSER, "callback_abort",
	                             "the progress callback stopped the wait");
	s0__error_set_sandbox(x, w->id, NULL, info, 0);
	return s0__error_put(err, x);
}

/*
 * The `Prefer: wait` to send: whole seconds up to S0__WAIT_LONGPOLL_MAX_S, 1 s
 * inside both the wait's deadline and the request timeout; 0 (none) when
 * less than 2 s are left.
 */
static int32_t longpoll_seconds(const wait_run *w)
{
	int64_t s = S0__WAIT_LONGPOLL_MAX_S;
	if (w->deadline_ms != S0__NO_DEADLINE) {
		int64_t left = (w->deadline_ms - now_ms(w)) / 1000 - 1;
		s = left < s ? left : s;
	}
	int64_t rt = w->c->request_timeout_ms;
	if (rt > 0 && rt / 1000 - 1 < s)
		s = rt / 1000 - 1;
	return s >= 1 ? (int32_t)s : 0;
}

/* What the server said of the long-poll; true for a 304 (unchanged). */
static bool longpoll_seen(wait_run *w, const s0__reply *r, int32_t asked_s)
{
	const char *pa = s0__headers_get(&r->http.headers, "Preference-Applied");
	const char *etag = s0__headers_get(&r->http.headers, "ETag");
	if (r->status != 304) {
		w->etag[0] = '\0';
		if (etag && strlen(etag) < sizeof w->etag)
			s0__strlcpy(w->etag, etag, sizeof w->etag);
	}
	/* only with a tag to send back does going at once not spin */
	w->held = asked_s > 0 && pa && !strncasecmp(pa, "wait", 4) && w->etag[0];
	return r->status == 304;
}

/* GET the sandbox: POLL_SEEN (w->last updated), POLL_RETRY, POLL_GONE or an error. */
static int poll_once(wait_run *w, s0_error **err)
{
	s0__reply r;
	s0_error *x = NULL;
	s0_sandbox_info *info = NULL;
	bool sent;
	w->seen = s0__wait_version(w->c, w->id); /* before the read: no change is missed */
	w->call_wait_s = longpoll_seconds(w);
	w->call_inm = w->etag[0] && w->last ? w->etag : NULL;
	int32_t asked = w->call_wait_s;
	int rc = exchange(w, "GET", NULL, NULL, &r, &x, &sent);
	w->call_inm = NULL;
	w->call_wait_s = 0;
	w->held = false;
	if (never_reached(w, rc, sent) || unreachable_too_long(w, rc, sent))
		return fatal(w, rc, x, err);
	if (rc == S0_OK && longpoll_seen(w, &r, asked)) {
		s0__reply_free(&r);
		return POLL_SEEN; /* w->last stands */
	}
	if (rc == S0_OK) {
		rc = s0__sandbox_info_from_json(r.data, &info, &x);
		s0__reply_free(&r);
	}
	if (rc == S0_OK) {
		rc = observe(w, info, err);
		return rc < 0 ? rc : POLL_SEEN;
	}
	if (rc == S0_ENOTFOUND && w->kind == WAIT_GENERIC && (w->cfg.flags & S0_WAIT_NOTFOUND_OK)) {
		s0_error_free(x);
		w->gone = true;
		return POLL_GONE;
	}
	if (!x || !poll_error_transient(x))
		return fatal(w, rc, x, err);
	remember(w, x);
	return POLL_RETRY;
}

/* The generation an accepted pause retires, from its answer (-1 when absent). */
static int64_t pause_generation(const cJSON *data)
{
	const cJSON *g = data ? cJSON_GetObjectItemCaseSensitive(data, "runtime_generation") : NULL;
	return cJSON_IsNumber(g) && g->valuedouble >= 0 ? (int64_t)g->valuedouble : -1;
}

/* The lifecycle POST, body exactly as configured: POST_ACCEPTED, POST_UNKNOWN or an error. */
static int post_once(wait_run *w, s0_error **err)
{
	cJSON *body = NULL;
	if (w->cfg.memory != S0_BOOL_UNSET) {
		body = cJSON_CreateObject();
		if (!body || s0__json_add_bool(body, "memory", w->cfg.memory == S0_BOOL_TRUE) < 0) {
			cJSON_Delete(body);
			return s0__error_nomem(err);
		}
	}
	s0__reply r;
	s0_error *x = NULL;
	bool sent;
	w->etag[0] = '\0'; /* the GET after a POST is unconditional: it may have changed nothing */
	int rc = exchange(w, "POST", w->kind == WAIT_PAUSE ? "/pause" : "/resume", body, &r, &x,
	                  &sent);
	cJSON_Delete(body);
	if (never_reached(w, rc, sent) || unreachable_too_long(w, rc, sent))
		return fatal(w, rc, x, err);
	if (rc == S0_OK) {
		if (w->kind == WAIT_PAUSE)
			w->pause_gen = pause_generation(r.data);
		s0__reply_free(&r);
		return POST_ACCEPTED;
	}
	if (!x || !post_outcome_unknown(x))
		return fatal(w, rc, x, err);
	remember(w, x);
	return POST_UNKNOWN;
}

/* The pause's runtime generation was replaced without the pause (see the top). */
static int superseded_error(wait_run *w, const s0_sandbox_info *i, s0_error **err)
{
	const char *action = w->cfg.memory_mode ? "memory pause" : "pause";
	char *msg = s0__asprintf(
	    "%s of sandbox %s superseded: runtime generation %" PRId64 " was replaced without "
	    "the pause (now status %s, paused %s, runtime_generation %" PRId64 "): a crash "
	    "recovery restarted it from the last committed RootFS head, whose later writes may be "
	    "lost, or it was resumed; pause again to checkpoint the sandbox as it is now",
	    action, w->id, w->pause_gen, s0_status_name(s0_sandbox_info_status(i)),
	    s0_sandbox_info_paused(i) ? "true" : "false", s0_sandbox_info_runtime_generation(i));
	s0_error *x = s0__error_make(S0_ELIFECYCLE, "pause_superseded", msg);
	free(msg);
	s0__error_set_sandbox(x, w->id, action, i, 0);
	return s0__error_put(err, x);
}

static int judge_pause(wait_run *w, const s0_sandbox_info *i, s0_error **err)
{
	int st = s0_sandbox_info_status(i);
	int64_t gen = s0_sandbox_info_runtime_generation(i);
	if (st == S0_STATUS_PAUSED && s0_sandbox_info_paused(i))
		return 1;
	if (w->phase == PH_POLL && w->pause_gen < 0)
		w->pause_gen = gen; /* the server did not say: the first look after acceptance */
	if (w->phase == PH_POLL && gen > w->pause_gen)
		return superseded_error(w, i, err);
	if (w->cfg.memory_mode && st == S0_STATUS_FAILED)
		return lifecycle_error(w, "memory pause", "memory_pause_failed", i, err);
	return 0;
}

static int judge_resume(wait_run *w, const s0_sandbox_info *i, s0_error **err)
{
	int st = s0_sandbox_info_status(i);
	int64_t gen = s0_sandbox_info_runtime_generation(i);
	if (gen < w->target_gen)
		return 0; /* stale: an old generation, running or failed */
	if (st == S0_STATUS_RUNNING && !s0_sandbox_info_paused(i))
		return 1;
	if (w->cfg.memory_mode && st == S0_STATUS_FAILED)
		return lifecycle_error(w, "memory resume", "memory_resume_failed", i, err);
	return 0;
}

static int judge_generic(wait_run *w, const s0_sandbox_info *i, s0_error **err)
{
	int p = w->pred ? w->pred(i, w->payload) : 1;
	if (p < 0) {
		if (p == S0_ELIFECYCLE)
			return lifecycle_error(w, NULL, "predicate_failed", i, err);
		s0_error *x = s0__error_make(p, "predicate", "the wait predicate stopped the wait");
		s0__error_set_sandbox(x, w->id, NULL, i, 0);
		return s0__error_put(err, x);
	}
	bool in_mask = !w->until_mask ||
	               (w->until_mask & S0_STATUS_MASK(s0_sandbox_info_status(i)));
	return p > 0 && in_mask;
}

/* 1 when the observation ends the wait, 0 to go on, or an error. */
static int judge(wait_run *w, const s0_sandbox_info *i, s0_error **err)
{
	switch (w->kind) {
	case WAIT_PAUSE:
		return judge_pause(w, i, err);
	case WAIT_RESUME:
		return judge_resume(w, i, err);
	default:
		return judge_generic(w, i, err);
	}
}

/* Resume's goal from the first read (docs/wire.md §4.2, CL-04). */
static int64_t resume_target(const s0_sandbox_info *before)
{
	int64_t g = s0_sandbox_info_runtime_generation(before);
	bool paused = s0_sandbox_info_paused(before) ||
	              s0_sandbox_info_status(before) == S0_STATUS_PAUSED;
	return paused ? g + 1 : g;
}

/* One step: 1 done, 0 sleep and step again, or an error. */
static int step(wait_run *w, s0_error **err)
{
	int rc;
	if (w->phase == PH_BEFORE) {
		rc = poll_once(w, err);
		if (rc <= POLL_RETRY)
			return rc;
		w->target_gen = resume_target(w->last);
		w->phase = PH_POST;
	}
	if (w->phase == PH_POST) {
		rc = post_once(w, err);
		if (rc < 0)
			return rc;
		w->phase = rc == POST_ACCEPTED ? PH_POLL : PH_INSPECT;
	}
	rc = poll_once(w, err);
	if (rc <= POLL_RETRY)
		return rc;
	if (rc == POLL_GONE)
		return 1;
	rc = judge(w, w->last, err);
	if (rc == 0 && w->phase == PH_INSPECT)
		w->phase = PH_POST; /* not at the goal: repeat the same request */
	return rc;
}

/* Sleep before the next step: backoff or Retry-After, never past the deadline. */
static int sleep_between(wait_run *w, s0_error **err)
{
	int64_t now = now_ms(w);
	if (now >= w->deadline_ms)
		return stop_error(w, S0_ETIMEDOUT, err);
	if (w->held && w->retry_after_ms < 0) { /* the server held the last GET */
		w->held = false;
		return canceled(w) ? stop_error(w, S0_ECANCELED, err) : S0_OK;
	}
	int64_t ms = s0__wait_plan_sleep(s0__backoff_next(&w->bo), w->retry_after_ms, now,
	                                 w->deadline_ms);
	w->retry_after_ms = -1;
	int rc = s0__wait_sleep(w->c, w->id, w->seen, ms, w->tok);
	if (rc < 0 || canceled(w))
		return stop_error(w, S0_ECANCELED, err);
	return S0_OK;
}

static int run_init(wait_run *w, s0_client *c, const char *id, wait_kind kind,
                    const s0_wait_options *opts, s0_error **err)
{
	memset(w, 0, sizeof *w);
	if (!c)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "client is NULL");
	int rc = s0__check_id("sandbox_id", id, err);
	if (rc == S0_OK)
		rc = s0__wait_resolve(opts, kind != WAIT_GENERIC, &w->cfg, err);
	if (rc < 0)
		return rc;
	w->c = c;
	w->id = id;
	w->kind = kind;
	w->phase = kind == WAIT_PAUSE ? PH_POST : kind == WAIT_RESUME ? PH_BEFORE : PH_POLL;
	w->cb = opts ? opts->progress_cb : NULL;
	w->payload = opts ? opts->payload : NULL;
	w->cancel = opts ? opts->cancel : NULL;
	w->tok = w->cancel ? w->cancel : c->cancel;
	if (w->cancel && c->cancel) {
		if ((rc = s0__cancel_link_init(&w->link, w->cancel, c->cancel, err)) < 0)
			return rc;
		w->tok = w->link.token;
	}
	w->retry_after_ms = -1;
	w->pause_gen = -1;
	w->unreachable_ms = -1;
	w->start_ms = now_ms(w);
	w->deadline_ms = s0__wait_deadline(w->start_ms, w->cfg.timeout_ms);
	uint64_t seed = (uint64_t)s0__real_monotonic_ms() ^ (uint64_t)(uintptr_t)w;
	s0__backoff_init(&w->bo, w->cfg.poll_initial_ms, w->cfg.poll_max_ms, w->cfg.factor_pct,
	                 w->cfg.jitter_pct, seed);
	return S0_OK;
}

static void run_free(wait_run *w)
{
	if (w->link.token)
		s0__cancel_link_free(&w->link);
	s0_sandbox_info_free(w->last);
	s0_error_free(w->last_err);
}

/* Steps and sleeps until done, then hand the final sandbox over. */
static int run(wait_run *w, s0_sandbox_info **out, s0_error **err)
{
	int rc;
	while ((rc = step(w, err)) == 0 && (rc = sleep_between(w, err)) == 0)
		;
	if (rc > 0) {
		rc = S0_OK;
		if (out) {
			*out = w->gone ? NULL : w->last;
			w->last = w->gone ? w->last : NULL;
		}
	}
	run_free(w);
	return rc;
}

int s0_sandbox_wait(s0_client *c, const char *sandbox_id, uint32_t until_mask,
                    s0_wait_predicate predicate, const s0_wait_options *opts,
                    s0_sandbox_info **out, s0_error **err)
{
	if (!until_mask && !predicate)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "until_mask or predicate is required");
	wait_run w;
	int rc = run_init(&w, c, sandbox_id, WAIT_GENERIC, opts, err);
	if (rc < 0) {
		run_free(&w);
		return rc;
	}
	w.until_mask = until_mask;
	w.pred = predicate;
	return run(&w, out, err);
}

int s0_sandbox_pause_and_wait(s0_client *c, const char *sandbox_id, const s0_wait_options *opts,
                              s0_sandbox_info **out, s0_error **err)
{
	wait_run w;
	int rc = run_init(&w, c, sandbox_id, WAIT_PAUSE, opts, err);
	if (rc < 0) {
		run_free(&w);
		return rc;
	}
	return run(&w, out, err);
}

int s0_sandbox_resume_and_wait(s0_client *c, const char *sandbox_id,
                               const s0_wait_options *opts, s0_sandbox_info **out,
                               s0_error **err)
{
	wait_run w;
	int rc = run_init(&w, c, sandbox_id, WAIT_RESUME, opts, err);
	if (rc < 0) {
		run_free(&w);
		return rc;
	}
	return run(&w, out, err);
}
