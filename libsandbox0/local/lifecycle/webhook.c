/*
 * Webhook outbox (docs/behaviours.md stand-in "Webhook outbox"; MFB-15; docs/wire.md §3.1
 * `config.webhook {url, secret, watch_dir}`, claim-time only).
 *
 * Lifecycle events of a sandbox whose config has a webhook are appended to
 * a durable outbox (local/meta/outbox.h, the metadata implementation's;
 * SQLite: `<data>/webhook-outbox.db` next to meta.db), so an
 * event recorded before a capture survives a manager restart and is
 * delivered again until acknowledged. One delivery worker posts the oldest
 * unacknowledged event (JSON body; headers X-S0-Event, X-S0-Delivery and
 * X-S0-Signature: sha256=<hex HMAC-SHA256(secret, body)>) with libcurl and
 * records its acknowledgement on a 2xx; anything else is retried after a
 * short real-time back-off. Fewest attempts first, then oldest: a receiver
 * that keeps failing does not hold back other sandboxes' events (order
 * between events is therefore not guaranteed).
 *
 * A memory pause of a webhook sandbox appends `sandbox.pausing` and waits,
 * within its preparation deadline, until every event of that sandbox is
 * delivered and acknowledged; only then is capture authorised. Without a
 * durable outbox (s0_local_options.disable_webhook_outbox) that memory
 * pause is refused with 503 `unavailable` and the sandbox keeps running.
 *
 * Inspection orders acknowledgements and capture starts on one logical
 * tick counter (durable with the outbox).
 *
 * Fault point: `webhook_ack_delay` is passed after a 2xx and before the
 * acknowledgement is recorded (HOLD holds acknowledgements until released;
 * DELAY waits on the backend clock).
 */
#include <curl/curl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/deadline.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/webhook.h"
#include "local/meta/outbox.h"

#define DRAIN_REAL_MAX_MS 30000
#define RETRY_MS 100

struct s0__webhooks {
	s0__engine *e;
	s0__outbox *box;
	bool durable;
	pthread_mutex_t mu; /* box, tick, flags */
	pthread_cond_t cv;  /* outbox changed / stop */
	pthread_t worker;
	bool running, stopping;
	int64_t tick;
	int64_t posts, failures;
};

static void real_deadline(struct timespec *ts, int ms)
{
	*ts = s0__deadline_after_ms(CLOCK_REALTIME, ms);
}

/* ---- delivery ---- */

static size_t discard(char *ptr, size_t size, size_t n, void *ud)
{
	(void)ptr;
	(void)ud;
	return size * n;
}

/* POST one event; the HTTP status, or 0 on a transport failure. */
static long post(const s0__outbox_event *p)
{
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state hs;
	crypto_auth_hmacsha256_init(&hs, (const unsigned char *)p->secret, strlen(p->secret));
	crypto_auth_hmacsha256_update(&hs, (const unsigned char *)p->body, strlen(p->body));
	crypto_auth_hmacsha256_final(&hs, mac);
	char hex[2 * sizeof mac + 1];
	sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
	char h_sig[128], h_ev[160], h_id[64];
	snprintf(h_sig, sizeof h_sig, "X-S0-Signature: sha256=%s", hex);
	snprintf(h_ev, sizeof h_ev, "X-S0-Event: %s", p->event);
	snprintf(h_id, sizeof h_id, "X-S0-Delivery: %lld", (long long)p->seq);
	CURL *c = curl_easy_init();
	if (!c)
		return 0;
	struct curl_slist *hd = NULL;
	hd = curl_slist_append(hd, "Content-Type: application/json");
	hd = curl_slist_append(hd, h_sig);
	hd = curl_slist_append(hd, h_ev);
	hd = curl_slist_append(hd, h_id);
	hd = curl_slist_append(hd, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, p->body);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	long status = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hd);
	curl_easy_cleanup(c);
	return status;
}

static void *worker(void *arg)
{
	s0__webhooks *w = arg;
	pthread_mutex_lock(&w->mu);
	while (!w->stopping) {
		s0__outbox_event p = {0};
		if (s0__outbox_next(w->box, &p, NULL) != 1) {
			struct timespec ts;
			real_deadline(&ts, 500);
			pthread_cond_timedwait(&w->cv, &w->mu, &ts);
			continue;
		}
		pthread_mutex_unlock(&w->mu);
		long status = post(&p);
		bool ok = status >= 200 && status < 300;
		if (ok) /* delivered: the acknowledgement may be held (MFB-15) */
			s0__fault_pass(w->e->faults, "webhook_ack_delay", NULL);
		pthread_mutex_lock(&w->mu);
		w->posts++;
		if (ok) {
			s0__outbox_attempted(w->box, p.seq, true, ++w->tick, NULL);
			pthread_cond_broadcast(&w->cv);
		} else {
			w->failures++;
			s0__outbox_attempted(w->box, p.seq, false, 0, NULL);
			if (!w->stopping) {
				struct timespec ts;
				real_deadline(&ts, RETRY_MS);
				pthread_cond_timedwait(&w->cv, &w->mu, &ts);
			}
		}
		s0__outbox_event_clear(&p);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* ---- lifetime ---- */

int s0__webhooks_new(s0__engine *e, bool durable, s0__webhooks **out, s0_error **err)
{
	*out = NULL;
	s0__webhooks *w = calloc(1, sizeof *w);
	if (!w)
		return s0__error_nomem(err);
	w->e = e;
	w->durable = durable;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	/* the outbox of the metadata implementation the engine uses */
	int rc = s0__outbox_open(s0__meta_backend_name(e->meta), durable ? e->dir : NULL, &w->box,
	                         err);
	int64_t a = 0, c = 0;
	if (rc == S0_OK && (rc = s0__outbox_max_ticks(w->box, &a, &c, err)) == S0_OK) {
		w->tick = a > c ? a : c;
		if (pthread_create(&w->worker, NULL, worker, w) == 0)
			w->running = true;
		else
			rc = s0__error_set(err, S0_EINTERNAL, NULL, "webhook worker: thread");
	}
	if (rc != S0_OK) {
		s0__webhooks_free(w);
		return rc;
	}
	*out = w;
	return S0_OK;
}

void s0__webhooks_free(s0__webhooks *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (w->running) {
		s0__faults_release(w->e->faults, "webhook_ack_delay"); /* a held ack ends */
		pthread_join(w->worker, NULL);
	}
	s0__outbox_close(w->box);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* ---- events ---- */

/* The sandbox's webhook {url, secret} (copies), or false when none. */
static bool sandbox_hook(s0__engine *e, const char *id, char **url, char **secret)
{
	s0__sandbox_row row = {0};
	if (s0__meta_sandbox_get(e->meta, NULL, id, &row, NULL) < 0)
		return false;
	bool found = false;
	cJSON *cfg = row.rec.config_json ? cJSON_Parse(row.rec.config_json) : NULL;
	const cJSON *hook = cJSON_GetObjectItemCaseSensitive(cfg, "webhook");
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(hook, "url");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(hook, "secret");
	if (cJSON_IsString(u) && u->valuestring[0]) {
		*url = strdup(u->valuestring);
		*secret = strdup(cJSON_IsString(s) ? s->valuestring : "");
		found = *url && *secret;
		if (!found) {
			free(*url);
			free(*secret);
		}
	}
	cJSON_Delete(cfg);
	s0__sandbox_rec_clear(&row.rec);
	return found;
}

static int append(s0__webhooks *w, const char *id, const char *event, const char *url,
                  const char *secret, int64_t now)
{
	cJSON *b = cJSON_CreateObject();
	if (!b)
		return S0_ENOMEM;
	cJSON_AddStringToObject(b, "event", event);
	cJSON_AddStringToObject(b, "sandbox_id", id);
	cJSON_AddNumberToObject(b, "timestamp_ms", (double)now);
	char *body = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	if (!body)
		return S0_ENOMEM;
	s0__outbox_event ev = {.sandbox_id = (char *)id, .event = (char *)event, .url = (char *)url,
	                       .secret = (char *)secret, .body = body};
	pthread_mutex_lock(&w->mu);
	int rc = s0__outbox_append(w->box, &ev, now, NULL) == S0_OK ? S0_OK : S0_EINTERNAL;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	free(body);
	return rc;
}

int s0__webhook_event(s0__engine *e, const char *id, const char *event)
{
	s0__webhooks *w = e->webhooks;
	char *url = NULL, *secret = NULL;
	if (!w || !sandbox_hook(e, id, &url, &secret))
		return 0;
	int rc = append(w, id, event, url, secret, s0__engine_now(e));
	free(url);
	free(secret);
	return rc == S0_OK ? 1 : rc;
}

int s0__webhook_before_capture(s0__engine *e, const char *id, int64_t deadline_ms,
                               s0_cancel_token *cancel, s0_error **err)
{
	s0__webhooks *w = e->webhooks;
	char *url = NULL, *secret = NULL;
	if (!w || !sandbox_hook(e, id, &url, &secret))
		return S0_OK; /* no webhook: nothing to drain */
	int rc = S0_OK;
	if (!w->durable)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "webhook_outbox_unavailable",
		                   "memory pause unavailable: the sandbox has a webhook and this "
		                   "deployment has no durable webhook outbox");
	else if (append(w, id, "sandbox.pausing", url, secret, s0__engine_now(e)) != S0_OK)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "webhook_outbox_unavailable",
		                   "memory pause unavailable: the webhook outbox refused the event");
	free(url);
	free(secret);
	if (rc != S0_OK)
		return rc;
	/* drain: every event of this sandbox delivered and acknowledged */
	struct timespec real_end;
	real_deadline(&real_end, DRAIN_REAL_MAX_MS);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		int64_t unacked = 1;
		if (s0__outbox_count(w->box, id, false, &unacked, NULL) == S0_OK && unacked == 0)
			break;
		if (cancel && s0_cancel_token_is_canceled(cancel)) {
			rc = s0__error_set(err, S0_ECANCELED, NULL, "memory pause cancelled");
			break;
		}
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (w->stopping || s0__engine_now(e) >= deadline_ms ||
		    now.tv_sec > real_end.tv_sec ||
		    (now.tv_sec == real_end.tv_sec && now.tv_nsec >= real_end.tv_nsec)) {
			rc = s0__error_set(err, S0_EUNAVAILABLE, "webhook_drain_timeout",
			                   "memory pause unavailable: webhook deliveries did not drain "
			                   "within the preparation deadline");
			break;
		}
		struct timespec ts;
		real_deadline(&ts, 50);
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

void s0__webhook_capture_started(s0__engine *e, const char *id)
{
	s0__webhooks *w = e->webhooks;
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	s0__outbox_capture_put(w->box, id, ++w->tick, NULL);
	pthread_mutex_unlock(&w->mu);
}

static void add_event(const s0__outbox_event *ev, void *ud)
{
	cJSON *r = cJSON_CreateObject();
	if (!r)
		return;
	cJSON_AddNumberToObject(r, "seq", (double)ev->seq);
	cJSON_AddStringToObject(r, "sandbox_id", ev->sandbox_id);
	cJSON_AddStringToObject(r, "event", ev->event);
	cJSON_AddNumberToObject(r, "attempts", (double)ev->attempts);
	cJSON_AddBoolToObject(r, "acked", ev->acked);
	cJSON_AddNumberToObject(r, "ack_tick", (double)ev->ack_tick);
	cJSON_AddItemToArray(ud, r);
}

static void add_capture(const char *sandbox_id, int64_t tick, void *ud)
{
	cJSON_AddNumberToObject(ud, sandbox_id, (double)tick);
}

cJSON *s0__webhooks_inspect(s0__engine *e)
{
	s0__webhooks *w = e->webhooks;
	cJSON *o = cJSON_CreateObject();
	if (!o || !w)
		return o;
	pthread_mutex_lock(&w->mu);
	cJSON_AddBoolToObject(o, "durable", w->durable);
	cJSON_AddNumberToObject(o, "tick", (double)w->tick);
	cJSON_AddNumberToObject(o, "posts", (double)w->posts);
	cJSON_AddNumberToObject(o, "failures", (double)w->failures);
	int64_t pending = 0, acked = 0, last_ack = 0, last_capture = 0;
	s0__outbox_count(w->box, NULL, false, &pending, NULL);
	s0__outbox_count(w->box, NULL, true, &acked, NULL);
	s0__outbox_max_ticks(w->box, &last_ack, &last_capture, NULL);
	cJSON_AddNumberToObject(o, "pending", (double)pending);
	cJSON_AddNumberToObject(o, "acked", (double)acked);
	cJSON_AddNumberToObject(o, "last_ack_tick", (double)last_ack);
	cJSON *ev = cJSON_AddArrayToObject(o, "events");
	if (ev)
		s0__outbox_each_event(w->box, add_event, ev, NULL);
	cJSON *cap = cJSON_AddObjectToObject(o, "capture_started_tick");
	if (cap)
		s0__outbox_each_capture(w->box, add_capture, cap, NULL);
	pthread_mutex_unlock(&w->mu);
	return o;
}
