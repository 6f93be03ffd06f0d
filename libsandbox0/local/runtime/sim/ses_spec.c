/* ExecutionSessionSpec validation and normalisation (docs/wire.md §8.3). */
#include "local/runtime/sim/ses_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"

/* A reader of one JSON object with the path prefix used in messages (and in
 * `unknown field "lifecycle.restart.polcy"`). */
typedef struct rdr {
	const cJSON *o;
	const char *path;
	s0_error **err;
	int rc;
} rdr;

static int bad(rdr *r, const char *key, const char *what)
{
	if (r->rc == S0_OK)
		r->rc = s0__error_set(r->err, S0_EINVAL, "invalid_request", "%s%s%s %s", r->path,
		                      *r->path ? "." : "", key, what);
	return r->rc;
}

static const cJSON *member(rdr *r, const char *key)
{
	const cJSON *v = r->o ? cJSON_GetObjectItemCaseSensitive(r->o, key) : NULL;
	return cJSON_IsNull(v) ? NULL : v;
}

/* Refuse a member not in keys (the SDK model's wire keys, ExecutionSession*ToJSON):
 * a misspelt "lifecyle" must not pass as an absent lifecycle. */
static void only(rdr *r, const char *const *keys)
{
	if (r->rc == S0_OK)
		r->rc = s0__json_check_keys(r->o, keys, r->path, "invalid_request", r->err);
}

/* The object member key (at path), its members limited to keys. */
static rdr sub(rdr *r, const char *key, const char *path, const char *const *keys)
{
	const cJSON *v = member(r, key);
	if (v && !cJSON_IsObject(v))
		bad(r, key, "must be an object");
	rdr s = {.o = cJSON_IsObject(v) ? v : NULL, .path = path, .err = r->err, .rc = r->rc};
	only(&s, keys);
	return s;
}

static int64_t num(rdr *r, const char *key, int64_t def, int64_t lo, int64_t hi)
{
	const cJSON *v = member(r, key);
	if (!v)
		return def;
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1e300;
	if (d != (double)(int64_t)d || d < (double)lo || d > (double)hi) {
		bad(r, key, lo > 0 ? "must be a positive integer in range" : "must be >= 0");
		return def;
	}
	return (int64_t)d;
}

/* An enum string: the index in names, or def. */
static int pick(rdr *r, const char *key, const char *const *names, int n, int def)
{
	const cJSON *v = member(r, key);
	if (!v)
		return def;
	for (int i = 0; cJSON_IsString(v) && i < n; i++)
		if (!strcmp(v->valuestring, names[i]))
			return i;
	bad(r, key, "is invalid");
	return def;
}

static const char *opt_string(rdr *r, const char *key)
{
	const cJSON *v = member(r, key);
	if (v && !cJSON_IsString(v))
		bad(r, key, "must be a string");
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void add_num(cJSON *o, const char *k, int64_t v)
{
	cJSON_AddNumberToObject(o, k, (double)v);
}

/* command, cwd, env, name */
static void top_fields(rdr *r, ses_spec *sp, cJSON *out)
{
	const char *name = opt_string(r, "name");
	if (name)
		cJSON_AddStringToObject(out, "name", name);
	const cJSON *c = member(r, "command");
	int n = cJSON_IsArray(c) ? cJSON_GetArraySize(c) : 0;
	if (c && !cJSON_IsArray(c)) {
		bad(r, "command", "must be an array of strings");
		return;
	}
	if (n < 1) {
		bad(r, "command", "is required");
		return;
	}
	cJSON *cmd = cJSON_AddArrayToObject(out, "command");
	sp->argv = calloc((size_t)n + 1, sizeof *sp->argv);
	const cJSON *it;
	cJSON_ArrayForEach(it, c)
	{
		if (!cJSON_IsString(it) || (!sp->argc && !it->valuestring[0])) {
			bad(r, "command", "must be non-empty strings");
			return;
		}
		if (!sp->argv || !cmd)
			return;
		sp->argv[sp->argc++] = s0__strdup(it->valuestring);
		cJSON_AddItemToArray(cmd, cJSON_CreateString(it->valuestring));
	}
	const char *cwd = opt_string(r, "cwd");
	if (cwd)
		cJSON_AddStringToObject(out, "cwd", cwd);
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static void env_field(rdr *r, cJSON *out)
{
	const cJSON *e = member(r, "env");
	if (!e)
		return;
	if (!cJSON_IsObject(e)) {
		bad(r, "env", "must be an object");
		return;
	}
	int n = cJSON_GetArraySize(e);
	const cJSON **keys = calloc((size_t)n + 1, sizeof *keys);
	const cJSON *it;
	int k = 0;
	cJSON_ArrayForEach(it, e)
	{
		if (!cJSON_IsString(it) || !s0__var_name_ok(it->string, strlen(it->string)))
			bad(r, "env", "must map variable names to strings");
		else if (keys)
			keys[k++] = it;
	}
	qsort(keys, (size_t)k, sizeof *keys, by_key); /* a canonical form for idempotency */
	cJSON *env = cJSON_AddObjectToObject(out, "env");
	for (int i = 0; env && i < k; i++)
		cJSON_AddStringToObject(env, keys[i]->string, keys[i]->valuestring);
	free(keys);
}

static void io_fields(rdr *r, ses_spec *sp, cJSON *out)
{
	static const char *const modes[] = {"pipes", "pty"};
	static const char *const io_keys[] = {"mode", "terminal", NULL};
	static const char *const term_keys[] = {"rows", "cols", "term", NULL};
	rdr io = sub(r, "io", "io", io_keys);
	sp->pty = pick(&io, "mode", modes, 2, 0) == 1;
	rdr t = sub(&io, "terminal", "io.terminal", term_keys);
	cJSON *o = cJSON_AddObjectToObject(out, "io"), *term = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "mode", modes[sp->pty]);
	add_num(term, "rows", num(&t, "rows", 24, 1, 65535));
	add_num(term, "cols", num(&t, "cols", 80, 1, 65535));
	const char *tn = opt_string(&t, "term");
	cJSON_AddStringToObject(term, "term", tn ? tn : "xterm-256color");
	cJSON_AddItemToObject(o, "terminal", term);
	r->rc = t.rc ? t.rc : io.rc ? io.rc : r->rc;
}

static void restart_fields(rdr *l, ses_spec *sp, cJSON *lo)
{
	static const char *const pol[] = {"never", "on_failure", "always"};
	static const char *const keys[] = {"policy", "max_restarts", "window_seconds",
	                                   "initial_backoff_ms", "max_backoff_ms", NULL};
	rdr rs = sub(l, "restart", "lifecycle.restart", keys);
	cJSON *o = cJSON_AddObjectToObject(lo, "restart");
	sp->restart = pick(&rs, "policy", pol, 3, RESTART_NEVER);
	cJSON_AddStringToObject(o, "policy", pol[sp->restart]);
	add_num(o, "max_restarts", sp->max_restarts = num(&rs, "max_restarts", 5, 0, INT32_MAX));
	add_num(o, "window_seconds", sp->window_s = num(&rs, "window_seconds", 60, 0, INT32_MAX));
	add_num(o, "initial_backoff_ms", sp->backoff0_ms = num(&rs, "initial_backoff_ms", 250, 0, INT32_MAX));
	add_num(o, "max_backoff_ms", sp->backoff_max_ms = num(&rs, "max_backoff_ms", 5000, 0, INT32_MAX));
	l->rc = rs.rc ? rs.rc : l->rc;
}

static void lifecycle_fields(rdr *r, ses_spec *sp, cJSON *out)
{
	static const char *const desired[] = {"running", "stopped"}, *const rec[] = {"restart", "stop"};
	static const char *const keys[] = {"desired_state",        "restart",
	                                   "runtime_recovery",     "idle_timeout_seconds",
	                                   "max_lifetime_seconds", "stop_grace_period_seconds",
	                                   NULL};
	rdr l = sub(r, "lifecycle", "lifecycle", keys);
	cJSON *o = cJSON_AddObjectToObject(out, "lifecycle");
	int d = pick(&l, "desired_state", desired, 2, 0);
	sp->want_running = d == 0;
	cJSON_AddStringToObject(o, "desired_state", desired[d]);
	restart_fields(&l, sp, o);
	int rr = pick(&l, "runtime_recovery", rec, 2, 0);
	sp->recover_restart = rr == 0;
	cJSON_AddStringToObject(o, "runtime_recovery", rec[rr]);
	add_num(o, "idle_timeout_seconds",
	        sp->idle_s = num(&l, "idle_timeout_seconds", 0, 0, INT64_MAX / 1000));
	add_num(o, "max_lifetime_seconds",
	        sp->max_life_s = num(&l, "max_lifetime_seconds", 0, 0, INT64_MAX / 1000));
	add_num(o, "stop_grace_period_seconds",
	        sp->grace_s = num(&l, "stop_grace_period_seconds", 10, 0, INT32_MAX));
	r->rc = l.rc ? l.rc : r->rc;
}

static void readiness_fields(rdr *r, ses_spec *sp, cJSON *out)
{
	static const char *const types[] = {"process", "delay", "output"};
	static const char *const keys[] = {"type", "delay_ms", "output", "timeout_ms", NULL};
	static const char *const er_keys[] = {"max_bytes", "max_age_seconds", NULL};
	rdr rd = sub(r, "readiness", "readiness", keys);
	cJSON *o = cJSON_AddObjectToObject(out, "readiness");
	sp->readiness = pick(&rd, "type", types, 3, 0);
	cJSON_AddStringToObject(o, "type", types[sp->readiness]);
	if (sp->readiness == 1)
		add_num(o, "delay_ms", sp->ready_delay_ms = num(&rd, "delay_ms", 0, 0, INT32_MAX));
	const char *want = opt_string(&rd, "output");
	if (sp->readiness == 2 && (!want || !*want))
		bad(&rd, "output", "is required for readiness type output");
	if (sp->readiness == 2 && want) {
		sp->ready_output = s0__strdup(want);
		cJSON_AddStringToObject(o, "output", want);
	}
	add_num(o, "timeout_ms", sp->ready_timeout_ms = num(&rd, "timeout_ms", 30000, 0, INT32_MAX));
	rdr er = sub(r, "event_retention", "event_retention", er_keys);
	cJSON *e = cJSON_AddObjectToObject(out, "event_retention");
	add_num(e, "max_bytes", sp->keep_bytes = num(&er, "max_bytes", 67108864, 1, INT64_MAX));
	add_num(e, "max_age_seconds", sp->keep_age_s = num(&er, "max_age_seconds", 86400, 1, INT64_MAX / 1000));
	r->rc = rd.rc ? rd.rc : er.rc ? er.rc : r->rc;
}

int s0__ses_spec_parse(const cJSON *body, ses_spec *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	rdr r = {.o = body, .path = "", .err = err};
	if (!cJSON_IsObject(body))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "session spec is required");
	static const char *const keys[] = {"name", "command",   "cwd",       "env",
	                                   "io",   "lifecycle", "readiness", "event_retention",
	                                   NULL};
	only(&r, keys);
	if (r.rc < 0)
		return r.rc;
	cJSON *n = cJSON_CreateObject();
	if (!n)
		return s0__error_nomem(err);
	top_fields(&r, out, n);
	env_field(&r, n);
	io_fields(&r, out, n);
	lifecycle_fields(&r, out, n);
	readiness_fields(&r, out, n);
	out->json = n;
	if (r.rc == S0_OK && (!out->argv || !(out->canon = cJSON_PrintUnformatted(n))))
		r.rc = s0__error_nomem(err);
	for (size_t i = 0; r.rc == S0_OK && i < out->argc; i++)
		if (!out->argv[i])
			r.rc = s0__error_nomem(err);
	if (r.rc < 0)
		s0__ses_spec_clear(out);
	return r.rc;
}

int s0__ses_spec_from_canon(const char *canon, ses_spec *out, s0_error **err)
{
	cJSON *j = cJSON_Parse(canon);
	if (!j)
		return s0__error_set(err, S0_ECORRUPT, "corrupt", "stored session spec is damaged");
	s0_error *e = NULL;
	int rc = s0__ses_spec_parse(j, out, &e);
	cJSON_Delete(j);
	if (rc == S0_EINVAL) {
		s0_error_free(e);
		return s0__error_set(err, S0_ECORRUPT, "corrupt", "stored session spec is invalid");
	}
	return rc < 0 ? s0__error_put(err, e) : rc;
}

void s0__ses_spec_clear(ses_spec *sp)
{
	cJSON_Delete(sp->json);
	free(sp->canon);
	for (size_t i = 0; i < sp->argc; i++)
		free(sp->argv[i]);
	free(sp->argv);
	free(sp->ready_output);
	memset(sp, 0, sizeof *sp);
}
