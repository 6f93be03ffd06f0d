/*
 * Session endpoints of the second tier (docs/wire.md §8.3, §8.4 item 3): replace
 * the spec, start an attempt, inputs, terminal resize (sessions.h), and
 * their state in the registry blob.
 */
#include "local/runtime/sim/ses_int.h"
#include "local/runtime/rtser.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

#define INPUT_ID_MAX 255

int s0__ses_need_running(s0__sessions *s, const ses *x, s0__guest *g, const char *expected, s0_error **err)
{
	if (!s0__ses_host(s, g) || !s0__ses_attempt_live(x))
		return s0__error_set(err, S0_ECONFLICT, "session_conflict",
		                     "session has no running attempt");
	if (expected && strcmp(expected, x->att.id))
		return s0__error_set(err, S0_ECONFLICT, "session_conflict",
		                     "expected attempt is not the current attempt");
	return S0_OK;
}

ses *s0__ses_lock_find(s0__sessions *s, s0__guest *g, const char *id, int *rc, s0_error **err)
{
	pthread_mutex_lock(&s->mu);
	s0__ses_sync_all(s, g);
	ses *x = s0__ses_find(s, id, err);
	*rc = x ? S0_OK : S0_ENOTFOUND;
	return x;
}

/* Only the SDK model's wire keys (CreateExecutionSessionAttemptRequest,
 * ExecutionSessionInputRequest, ExecutionSessionTerminalResizeRequest): a
 * misspelt "data" for "data_base64" is refused, not accepted as no data. */
static int only(const cJSON *b, const char *const *keys, s0_error **err)
{
	return s0__json_check_keys(b, keys, "", "invalid_request", err);
}

/* An optional string member (absent or null: NULL). */
static int opt_str(const cJSON *b, const char *key, const char **out, s0_error **err)
{
	const cJSON *v = cJSON_IsObject(b) ? cJSON_GetObjectItemCaseSensitive(b, key) : NULL;
	*out = cJSON_IsString(v) ? v->valuestring : NULL;
	if (v && !cJSON_IsNull(v) && !cJSON_IsString(v))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "%s must be a string", key);
	return S0_OK;
}

/* An optional boolean member (absent or null: false). */
static int opt_bool(const cJSON *b, const char *key, bool *out, s0_error **err)
{
	const cJSON *v = cJSON_IsObject(b) ? cJSON_GetObjectItemCaseSensitive(b, key) : NULL;
	*out = cJSON_IsTrue(v);
	if (v && !cJSON_IsNull(v) && !cJSON_IsBool(v))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "%s must be a boolean", key);
	return S0_OK;
}

/* ---- PUT /sessions/{id} ---- */

static bool same_member(const ses_spec *a, const ses_spec *b, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(a->json, key);
	const cJSON *y = cJSON_GetObjectItemCaseSensitive(b->json, key);
	return (!x && !y) || (x && y && cJSON_Compare(x, y, true));
}

/* Whether the process an attempt runs differs (command, cwd, env, io, readiness). */
static bool process_changed(const ses_spec *a, const ses_spec *b)
{
	static const char *const keys[] = {"command", "cwd", "env", "io", "readiness"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!same_member(a, b, keys[i]))
			return true;
	return false;
}

static void replace_spec(s0__sessions *s, ses *x, s0__guest *g, ses_spec *sp)
{
	if (!strcmp(x->spec.canon, sp->canon))
		return; /* the same normalised spec: nothing changes */
	bool proc = process_changed(&x->spec, sp), was_running = x->spec.want_running;
	bool stop = sp->want_running ? proc && s0__ses_attempt_live(x) : !s0__ses_terminal(x->phase);
	if (stop) /* under the old spec: its io mode reads the last output */
		s0__ses_stop(s, x, g, sp->want_running ? "spec_changed" : "desired_state");
	s0__ses_spec_clear(&x->spec);
	x->spec = *sp;
	memset(sp, 0, sizeof *sp);
	x->spec_version++;
	bool start = x->spec.want_running && (proc || !was_running || x->phase == SES_PENDING);
	if (start && s0__ses_attempt_live(x)) {
		x->start_after_stop = true; /* the old attempt is in its stop grace period */
	} else if (start) {
		x->nrestarts = 0;
		s0__ses_start_attempt(s, x, g, NULL);
	}
	s0__ses_retain(s, x);
	s0__ses_changed(s, x);
}

int s0__sessions_replace_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *spec,
                              cJSON **data_out, s0_error **err)
{
	ses_spec sp;
	int rc = s0__ses_spec_parse(spec, &sp, err);
	if (rc < 0)
		return rc;
	ses *x = s0__ses_lock_find(s, g, id, &rc, err);
	if (x && x->phase == SES_STOPPING)
		rc = s0__error_set(err, S0_ECONFLICT, "session_conflict", "session is stopping");
	else if (x)
		replace_spec(s, x, g, &sp);
	cJSON *data = rc == S0_OK ? s0__ses_render(x) : NULL;
	pthread_mutex_unlock(&s->mu);
	s0__ses_spec_clear(&sp);
	return s0__ses_done(rc, data, data_out, err);
}

/* ---- POST /sessions/{id}/attempts ---- */

int s0__sessions_attempt_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                              cJSON **data_out, s0_error **err)
{
	static const char *const keys[] = {"replace_current", NULL};
	bool replace;
	int rc = only(body, keys, err);
	if (rc == S0_OK)
		rc = opt_bool(body, "replace_current", &replace, err);
	if (rc < 0)
		return rc;
	ses *x = s0__ses_lock_find(s, g, id, &rc, err);
	if (x && s0__ses_attempt_live(x) && !replace) {
		rc = s0__error_set(err, S0_ECONFLICT, "session_conflict",
		                   "session has a running attempt (replace_current replaces it)");
	} else if (x && s0__ses_host(s, g) && s0__ses_lifetime_over(x, s0__ses_p_vtime(s, g))) {
		rc = s0__error_set(err, S0_ECONFLICT, "session_conflict",
		                   "session reached lifecycle.max_lifetime_seconds");
	} else if (x) {
		if (s0__ses_attempt_live(x))
			s0__ses_stop(s, x, g, "replaced");
		x->nrestarts = 0;
		if (s0__ses_attempt_live(x)) /* in its stop grace period: replaced once it exits */
			x->start_after_stop = true;
		else
			s0__ses_start_attempt(s, x, g, NULL);
		s0__ses_changed(s, x);
	}
	cJSON *data = rc == S0_OK ? s0__ses_render(x) : NULL;
	pthread_mutex_unlock(&s->mu);
	return s0__ses_done(rc, data, data_out, err);
}

/* ---- POST /sessions/{id}/inputs ---- */

typedef struct input_req {
	const char *id, *expected;
	unsigned char *data;
	size_t len;
	bool eof;
	uint8_t digest[16];
} input_req;

static int parse_input(const cJSON *b, input_req *q, s0_error **err)
{
	static const char *const keys[] = {"input_id", "expected_attempt_id", "data_base64", "eof",
	                                   NULL};
	const char *b64 = NULL;
	int rc = only(b, keys, err);
	if (rc == S0_OK)
		rc = opt_str(b, "input_id", &q->id, err);
	if (rc == S0_OK && (!q->id || !*q->id || strlen(q->id) > INPUT_ID_MAX))
		rc = s0__error_set(err, S0_EINVAL, "invalid_request",
		                   "input_id is required (1..%d bytes)", INPUT_ID_MAX);
	if (rc == S0_OK)
		rc = opt_str(b, "expected_attempt_id", &q->expected, err);
	if (rc == S0_OK)
		rc = opt_str(b, "data_base64", &b64, err);
	if (rc == S0_OK)
		rc = opt_bool(b, "eof", &q->eof, err);
	size_t n = b64 ? strlen(b64) : 0;
	if (rc == S0_OK && n && !(q->data = malloc(n / 4 * 3 + 3)))
		rc = s0__error_nomem(err);
	const char *end = NULL;
	if (rc == S0_OK && n &&
	    (sodium_base642bin(q->data, n / 4 * 3 + 3, b64, n, NULL, &q->len, &end,
	                       sodium_base64_VARIANT_ORIGINAL) < 0 || end != b64 + n))
		rc = s0__error_set(err, S0_EINVAL, "invalid_request", "data_base64 must be valid base64");
	if (rc < 0)
		return rc;
	crypto_generichash_state st;
	uint8_t e = q->eof;
	crypto_generichash_init(&st, NULL, 0, sizeof q->digest);
	crypto_generichash_update(&st, &e, 1);
	crypto_generichash_update(&st, q->data ? q->data : (unsigned char *)"", q->len);
	crypto_generichash_final(&st, q->digest, sizeof q->digest);
	return S0_OK;
}

static const ses_input *find_input(const ses *x, const char *id)
{
	for (size_t i = 0; i < x->ninputs; i++)
		if (!strcmp(x->inputs[i].id, id))
			return &x->inputs[i];
	return NULL;
}

/* Remember an accepted input (the oldest goes past S0__SES_INPUTS_KEEP). */
static void remember_input(ses *x, const input_req *q)
{
	char *id = s0__strdup(q->id);
	if (!id)
		return; /* out of memory: a replay is then taken as new */
	if (x->ninputs == S0__SES_INPUTS_KEEP) {
		free(x->inputs[0].id);
		memmove(x->inputs, x->inputs + 1, --x->ninputs * sizeof *x->inputs);
	}
	ses_input *v = realloc(x->inputs, (x->ninputs + 1) * sizeof *v);
	if (!v) {
		free(id);
		return;
	}
	x->inputs = v;
	ses_input *in = &v[x->ninputs++];
	in->id = id;
	snprintf(in->attempt, sizeof in->attempt, "%s", x->att.id);
	memcpy(in->digest, q->digest, sizeof in->digest);
}

/* Queue the input on the running attempt's stdin (which may run it at once);
 * @p attempt receives the attempt's id. */
static int deliver(s0__sessions *s, ses *x, s0__guest *g, const input_req *q,
                   char attempt[S0__SES_ID_MAX], s0_error **err)
{
	int rc = s0__ses_need_running(s, x, g, q->expected, err);
	s0__proc_info pi;
	if (rc == S0_OK)
		rc = s0__ses_p_get(s, g, x->att.pid, &pi, err);
	if (rc < 0)
		return rc;
	if (pi.stdin_closed)
		return s0__error_set(err, S0_ECONFLICT, "session_conflict",
		                     "stdin of the attempt is closed (eof was sent)");
	if (pi.stdin_bytes + q->len > S0__SES_STDIN_MAX)
		return s0__error_set(err, S0_ETHROTTLED, "input_buffer_full",
		                     "input buffer is full (%zu bytes pending, limit %zu)",
		                     pi.stdin_bytes, S0__SES_STDIN_MAX);
	rc = s0__ses_p_input(s, g, x->att.pid, q->data, q->len, q->eof, err);
	if (rc < 0)
		return rc;
	memcpy(attempt, x->att.id, S0__SES_ID_MAX);
	remember_input(x, q);
	s0__ses_event(s, x, "input.accepted", NULL, NULL, 0, NULL, q->id);
	s0__ses_sync_one(s, x, g); /* what the input made it print, or its exit */
	s0__ses_changed(s, x);
	return S0_OK;
}

static cJSON *input_reply(const char *input_id, const char *attempt, bool duplicate)
{
	cJSON *o = cJSON_CreateObject();
	if (o && (s0__json_add_str(o, "input_id", input_id) |
	          s0__json_add_str(o, "attempt_id", attempt) | s0__json_add_bool(o, "accepted", true) |
	          s0__json_add_bool(o, "duplicate", duplicate))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int s0__sessions_input_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                            cJSON **data_out, s0_error **err)
{
	input_req q = {0};
	char attempt[S0__SES_ID_MAX];
	int rc = parse_input(body, &q, err);
	if (rc < 0) {
		free(q.data);
		return rc;
	}
	ses *x = s0__ses_lock_find(s, g, id, &rc, err);
	const ses_input *prev = x ? find_input(x, q.id) : NULL;
	cJSON *data = NULL;
	if (prev && memcmp(prev->digest, q.digest, sizeof q.digest))
		rc = s0__error_set(err, S0_ECONFLICT, "session_conflict",
		                   "input_id was used with different content");
	else if (prev)
		data = input_reply(q.id, prev->attempt, true);
	else if (x && (rc = deliver(s, x, g, &q, attempt, err)) == S0_OK)
		data = input_reply(q.id, attempt, false);
	pthread_mutex_unlock(&s->mu);
	free(q.data);
	return s0__ses_done(rc, data, data_out, err);
}

/* ---- PUT /sessions/{id}/terminal ---- */

static int dimension(const cJSON *b, const char *key, int32_t *out)
{
	const cJSON *v = cJSON_IsObject(b) ? cJSON_GetObjectItemCaseSensitive(b, key) : NULL;
	double d = cJSON_IsNumber(v) ? v->valuedouble : 0;
	if (d < 1 || d > 65535 || d != (double)(int32_t)d)
		return -1;
	*out = (int32_t)d;
	return 0;
}

static int resize(s0__sessions *s, ses *x, s0__guest *g, int32_t rows, int32_t cols,
                  const char *expected, s0_error **err)
{
	int rc = s0__ses_need_running(s, x, g, expected, err);
	if (rc < 0)
		return rc;
	if (!x->spec.pty)
		return s0__error_set(err, S0_ECONFLICT, "pty_unavailable",
		                     "session io.mode is pipes: it has no terminal");
	x->term_rows = rows;
	x->term_cols = cols;
	int winch;
	if (s0__signal_parse("WINCH", &winch, NULL) == S0_OK)
		s0__ses_p_signal(s, g, x->att.pid, winch, NULL); /* the shell ignores it */
	char size[32];
	snprintf(size, sizeof size, "%dx%d", (int)rows, (int)cols);
	s0__ses_event(s, x, "terminal.resized", NULL, NULL, 0, NULL, size);
	s0__ses_sync_one(s, x, g);
	s0__ses_changed(s, x);
	return S0_OK;
}

int s0__sessions_terminal_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                               cJSON **data_out, s0_error **err)
{
	static const char *const keys[] = {"rows", "cols", "expected_attempt_id", NULL};
	int32_t rows, cols;
	const char *expected;
	if (only(body, keys, err) < 0)
		return S0_EINVAL;
	if (dimension(body, "rows", &rows) < 0 || dimension(body, "cols", &cols) < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "rows and cols are required and must be between 1 and 65535");
	int rc = opt_str(body, "expected_attempt_id", &expected, err);
	if (rc < 0)
		return rc;
	ses *x = s0__ses_lock_find(s, g, id, &rc, err);
	if (x)
		rc = resize(s, x, g, rows, cols, expected, err);
	pthread_mutex_unlock(&s->mu);
	return s0__ses_done(rc, rc == S0_OK ? s0__ses_flag("resized") : NULL, data_out, err);
}

/* ---- state ---- */

void s0__ses_t2_free(ses *x)
{
	for (size_t i = 0; i < x->ninputs; i++)
		free(x->inputs[i].id);
	free(x->inputs);
	x->inputs = NULL;
	x->ninputs = 0;
}

void s0__ses_t2_put(s0__ser *w, const ses *x)
{
	s0__ser_u32(w, (uint32_t)x->ninputs);
	for (size_t i = 0; i < x->ninputs; i++) {
		s0__ser_str(w, x->inputs[i].id);
		s0__ser_str(w, x->inputs[i].attempt);
		s0__ser_raw(w, x->inputs[i].digest, sizeof x->inputs[i].digest);
	}
	s0__ser_u32(w, (uint32_t)x->term_rows);
	s0__ser_u32(w, (uint32_t)x->term_cols);
}

void s0__ses_t2_get(s0__de *d, ses *x, bool *oom)
{
	uint32_t n = s0__de_u32(d);
	if (n > S0__SES_INPUTS_KEEP) {
		s0__de_fail(d);
		return;
	}
	if (n && !(x->inputs = calloc(n, sizeof *x->inputs))) {
		*oom = true;
		return;
	}
	for (uint32_t i = 0; i < n && !d->bad; i++) {
		ses_input *in = &x->inputs[i];
		if (!(in->id = s0__de_str(d, INPUT_ID_MAX, oom)))
			break;
		x->ninputs++;
		size_t len;
		const char *a = s0__de_bytes(d, sizeof in->attempt - 1, &len);
		if (a)
			memcpy(in->attempt, a, len);
		s0__de_raw(d, in->digest, sizeof in->digest);
	}
	x->term_rows = (int32_t)s0__de_u32(d);
	x->term_cols = (int32_t)s0__de_u32(d);
	if (x->term_rows < 0 || x->term_rows > 65535 || x->term_cols < 0 || x->term_cols > 65535)
		s0__de_fail(d);
}
