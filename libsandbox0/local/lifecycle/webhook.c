/*
 * Webhook outbox (behaviours.md stand-in "Webhook outbox"; MFB-15; seed
 * "Explicit Memory Pause And Resume", webhook paragraph; api.md §3.1
 * `config.webhook {url, secret, watch_dir}`, claim-time only).
 *
 * Lifecycle events of a sandbox whose config has a webhook are appended to
 * a durable outbox: a SQLite file `<data>/webhook-outbox.db` next to the
 * metadata store (kept apart from its schema), WAL, synchronous=FULL, so an
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
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/webhook.h"

#define DRAIN_REAL_MAX_MS 30000
#define RETRY_MS 100

struct s0__webhooks {
	s0__engine *e;
	sqlite3 *db;
	bool durable;
	pthread_mutex_t mu; /* db, tick, flags */
	pthread_cond_t cv;  /* outbox changed / stop */
	pthread_t worker;
	bool running, stopping;
	int64_t tick;
	int64_t posts, failures;
};

static void real_deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static int64_t scalar(sqlite3 *db, const char *sql, const char *arg)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---- delivery ---- */

typedef struct pending {
	int64_t seq;
	char *url, *secret, *event, *body;
} pending;

static void pending_clear(pending *p)
{
	free(p->url);
	free(p->secret);
	free(p->event);
	free(p->body);
	memset(p, 0, sizeof *p);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return strdup(s ? (const char *)s : "");
}

/* The oldest unacknowledged event (under mu). */
static bool next_pending(s0__webhooks *w, pending *p)
{
	sqlite3_stmt *st = NULL;
	bool found = false;
	if (sqlite3_prepare_v2(w->db,
	                       "SELECT seq, url, secret, event, body FROM outbox WHERE acked = 0 "
	                       "ORDER BY attempts, seq LIMIT 1",
	                       -1, &st, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_step(st) == SQLITE_ROW) {
		p->seq = sqlite3_column_int64(st, 0);
		p->url = col_dup(st, 1);
		p->secret = col_dup(st, 2);
		p->event = col_dup(st, 3);
		p->body = col_dup(st, 4);
		found = p->url && p->secret && p->event && p->body;
		if (!found)
			pending_clear(p);
	}
	sqlite3_finalize(st);
	return found;
}

static size_t discard(char *ptr, size_t size, size_t n, void *ud)
{
	(void)ptr;
	(void)ud;
	return size * n;
}

/* POST one event; the HTTP status, or 0 on a transport failure. */
static long post(const pending *p)
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
		pending p = {0};
		if (!next_pending(w, &p)) {
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
			sqlite3_stmt *st = NULL;
			if (sqlite3_prepare_v2(w->db,
			                       "UPDATE outbox SET acked = 1, attempts = attempts + 1, "
			                       "ack_tick = ? WHERE seq = ?",
			                       -1, &st, NULL) == SQLITE_OK) {
				sqlite3_bind_int64(st, 1, ++w->tick);
				sqlite3_bind_int64(st, 2, p.seq);
				sqlite3_step(st);
				sqlite3_finalize(st);
			}
			pthread_cond_broadcast(&w->cv);
		} else {
			w->failures++;
			sqlite3_stmt *st = NULL;
			if (sqlite3_prepare_v2(w->db,
			                       "UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?",
			                       -1, &st, NULL) == SQLITE_OK) {
				sqlite3_bind_int64(st, 1, p.seq);
				sqlite3_step(st);
				sqlite3_finalize(st);
			}
			if (!w->stopping) {
				struct timespec ts;
				real_deadline(&ts, RETRY_MS);
				pthread_cond_timedwait(&w->cv, &w->mu, &ts);
			}
		}
		pending_clear(&p);
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
	char *path = NULL;
	if (durable) {
		size_t n = strlen(e->dir) + 32;
		path = malloc(n);
		if (path)
			snprintf(path, n, "%s/webhook-outbox.db", e->dir);
	}
	int rc = S0_OK;
	if (durable && !path)
		rc = s0__error_nomem(err);
	else if (sqlite3_open_v2(durable ? path : ":memory:", &w->db,
	                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
	                         NULL) != SQLITE_OK ||
	         (durable && exec_sql(w->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;")) ||
	         exec_sql(w->db, "CREATE TABLE IF NOT EXISTS outbox ("
	                         " seq INTEGER PRIMARY KEY AUTOINCREMENT, sandbox_id TEXT NOT NULL,"
	                         " event TEXT NOT NULL, url TEXT NOT NULL, secret TEXT NOT NULL,"
	                         " body TEXT NOT NULL, created_ms INTEGER NOT NULL,"
	                         " attempts INTEGER NOT NULL DEFAULT 0,"
	                         " acked INTEGER NOT NULL DEFAULT 0, ack_tick INTEGER);"
	                         "CREATE TABLE IF NOT EXISTS captures ("
	                         " sandbox_id TEXT PRIMARY KEY, tick INTEGER NOT NULL);"))
		rc = s0__error_set(err, S0_EINTERNAL, "webhook_outbox",
		                   "webhook outbox: %s", w->db ? sqlite3_errmsg(w->db) : "open failed");
	free(path);
	if (rc == S0_OK) {
		int64_t a = scalar(w->db, "SELECT COALESCE(MAX(ack_tick), 0) FROM outbox", NULL);
		int64_t c = scalar(w->db, "SELECT COALESCE(MAX(tick), 0) FROM captures", NULL);
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
	if (w->db)
		sqlite3_close(w->db);
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
	int rc = S0_EINTERNAL;
	sqlite3_stmt *st = NULL;
	pthread_mutex_lock(&w->mu);
	if (sqlite3_prepare_v2(w->db,
	                       "INSERT INTO outbox (sandbox_id, event, url, secret, body, created_ms) "
	                       "VALUES (?, ?, ?, ?, ?, ?)",
	                       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, event, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, url, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, secret, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 5, body, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 6, now);
		if (sqlite3_step(st) == SQLITE_DONE)
			rc = S0_OK;
	}
	sqlite3_finalize(st);
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
		if (scalar(w->db, "SELECT COUNT(*) FROM outbox WHERE sandbox_id = ? AND acked = 0",
		           id) == 0)
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
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO captures (sandbox_id, tick) VALUES (?, ?)",
	                       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, ++w->tick);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&w->mu);
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
	cJSON_AddNumberToObject(o, "pending",
	                        (double)scalar(w->db, "SELECT COUNT(*) FROM outbox WHERE acked = 0",
	                                       NULL));
	cJSON_AddNumberToObject(o, "acked",
	                        (double)scalar(w->db, "SELECT COUNT(*) FROM outbox WHERE acked = 1",
	                                       NULL));
	cJSON_AddNumberToObject(o, "last_ack_tick",
	                        (double)scalar(w->db, "SELECT COALESCE(MAX(ack_tick), 0) FROM outbox",
	                                       NULL));
	cJSON *ev = cJSON_AddArrayToObject(o, "events");
	sqlite3_stmt *st = NULL;
	if (ev && sqlite3_prepare_v2(w->db,
	                             "SELECT seq, sandbox_id, event, attempts, acked, "
	                             "COALESCE(ack_tick, 0) FROM outbox ORDER BY seq",
	                             -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			cJSON *r = cJSON_CreateObject();
			if (!r)
				break;
			cJSON_AddNumberToObject(r, "seq", (double)sqlite3_column_int64(st, 0));
			cJSON_AddStringToObject(r, "sandbox_id", (const char *)sqlite3_column_text(st, 1));
			cJSON_AddStringToObject(r, "event", (const char *)sqlite3_column_text(st, 2));
			cJSON_AddNumberToObject(r, "attempts", (double)sqlite3_column_int64(st, 3));
			cJSON_AddBoolToObject(r, "acked", sqlite3_column_int64(st, 4) != 0);
			cJSON_AddNumberToObject(r, "ack_tick", (double)sqlite3_column_int64(st, 5));
			cJSON_AddItemToArray(ev, r);
		}
	}
	sqlite3_finalize(st);
	cJSON *cap = cJSON_AddObjectToObject(o, "capture_started_tick");
	st = NULL;
	if (cap && sqlite3_prepare_v2(w->db, "SELECT sandbox_id, tick FROM captures", -1, &st,
	                              NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW)
			cJSON_AddNumberToObject(cap, (const char *)sqlite3_column_text(st, 0),
			                        (double)sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&w->mu);
	return o;
}
