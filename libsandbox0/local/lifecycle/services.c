/* Public services of sandboxes: validation, storage, public ids, the
 * route lookup and the connect through the runtime seam (services.h). */
#include <ctype.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/services.h"
#include "local/runtime/runtime.h"

#define MAX_SERVICES 16
#define MAX_ROUTES 32
#define MAX_PREFIX 1024

/* "invalid services request: <a><b><msg>" */
static int bad(s0_error **err, const char *msg, const char *a, const char *b)
{
	return s0__error_set(err, S0_EINVAL, "bad_request", "invalid services request: %s%s%s", a,
	                     b, msg);
}

static bool name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (!n || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

/* "/x/y": absolute, printable, no dot segments, no query or fragment. */
static bool prefix_ok(const char *p)
{
	size_t n = strlen(p);
	if (!n || p[0] != '/' || n > MAX_PREFIX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= 0x20 || p[i] == 0x7f || p[i] == '?' || p[i] == '#' ||
		    p[i] == '%' || p[i] == '\\')
			return false;
	return !strstr(p, "/./") && !strstr(p, "/../") && strcmp(p + n - (n >= 2 ? 2 : n), "/.") &&
	       (n < 3 || strcmp(p + n - 3, "/.."));
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool present(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return v && !cJSON_IsNull(v);
}

static int check_runtime(const cJSON *rt, const char *sid, s0_error **err)
{
	if (!cJSON_IsObject(rt))
		return bad(err, ": runtime must be an object", "service ", sid);
	const char *type = str_of(rt, "type");
	if (!type || (strcmp(type, "cmd") && strcmp(type, "manual") && strcmp(type, "function")))
		return bad(err, ": runtime.type must be cmd, manual or function", "service ", sid);
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(rt, "command");
	if (present(rt, "command")) {
		if (!cJSON_IsArray(cmd))
			return bad(err, ": runtime.command must be an array of strings", "service ", sid);
		const cJSON *a;
		cJSON_ArrayForEach(a, cmd) if (!cJSON_IsString(a) || !a->valuestring[0]) return bad(
			err, ": runtime.command must be an array of strings", "service ", sid);
	}
	if (!strcmp(type, "cmd") && cJSON_GetArraySize(cmd) < 1)
		return bad(err, ": a cmd runtime needs runtime.command", "service ", sid);
	if (!strcmp(type, "function") && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(rt, "function")))
		return bad(err, ": a function runtime needs runtime.function", "service ", sid);
	if (present(rt, "cwd") && !str_of(rt, "cwd"))
		return bad(err, ": runtime.cwd must be a string", "service ", sid);
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(rt, "env_vars");
	if (present(rt, "env_vars")) {
		const cJSON *v;
		if (!cJSON_IsObject(env))
			return bad(err, ": runtime.env_vars must be an object of strings", "service ", sid);
		cJSON_ArrayForEach(v, env) if (!cJSON_IsString(v)) return bad(
			err, ": runtime.env_vars must be an object of strings", "service ", sid);
	}
	return S0_OK;
}

/* One route: shape, defaults filled in place (resume false, path_prefix "/"). */
static int check_route(cJSON *r, const char *sid, const char *rt_type, bool auto_resume,
                       s0_error **err)
{
	char where[160];
	const char *rid = cJSON_IsObject(r) ? str_of(r, "id") : NULL;
	if (!rid || !name_ok(rid, 63))
		return bad(err, ": every route needs an id of 1-63 letters, digits, '-', '_' or '.'",
		           "service ", sid);
	snprintf(where, sizeof where, "service %s route %s", sid, rid);
	const char *pp = str_of(r, "path_prefix");
	if (present(r, "path_prefix") && (!pp || !prefix_ok(pp)))
		return bad(err, ": path_prefix must be an absolute path without dot segments", where, "");
	const cJSON *rw = cJSON_GetObjectItemCaseSensitive(r, "rewrite_prefix");
	if (present(r, "rewrite_prefix") && (!cJSON_IsString(rw) || !prefix_ok(rw->valuestring)))
		return bad(err, ": rewrite_prefix must be an absolute path without dot segments", where,
		           "");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "methods");
	if (present(r, "methods")) {
		const cJSON *x;
		if (!cJSON_IsArray(m))
			return bad(err, ": methods must be an array of HTTP methods", where, "");
		cJSON_ArrayForEach(x, m)
		{
			bool ok = cJSON_IsString(x) && x->valuestring[0] && strlen(x->valuestring) < 16;
			for (const char *c = ok ? x->valuestring : ""; *c; c++)
				ok = ok && isupper((unsigned char)*c);
			if (!ok)
				return bad(err, ": methods must be upper-case HTTP method names", where, "");
		}
	}
	const cJSON *to = cJSON_GetObjectItemCaseSensitive(r, "timeout_seconds");
	if (present(r, "timeout_seconds") &&
	    (!cJSON_IsNumber(to) || to->valuedouble != (double)(int)to->valuedouble ||
	     to->valuedouble < 1 || to->valuedouble > 3600))
		return bad(err, ": timeout_seconds must be an integer of 1..3600", where, "");
	const cJSON *auth = cJSON_GetObjectItemCaseSensitive(r, "auth");
	const char *mode = cJSON_IsObject(auth) ? str_of(auth, "mode") : NULL;
	if (present(r, "auth") && (!mode || strcmp(mode, "none")))
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "invalid services request: %s: auth modes other than none are "
		                     "not supported by this server",
		                     where);
	if (present(r, "cors") || present(r, "rate_limit"))
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "invalid services request: %s: cors and rate_limit are not "
		                     "supported by this server",
		                     where);
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(r, "resume");
	if (present(r, "resume") && !cJSON_IsBool(res))
		return bad(err, ": resume must be a boolean", where, "");
	if (cJSON_IsTrue(res) && !auto_resume)
		return bad(err, ": resume: true needs the sandbox's auto_resume: true", where, "");
	if (cJSON_IsTrue(res) && (!rt_type || (strcmp(rt_type, "cmd") && strcmp(rt_type, "function"))))
		return bad(err, ": resume: true needs a restartable cmd or function runtime", where, "");
	if (!res && !cJSON_AddBoolToObject(r, "resume", false))
		return s0__error_nomem(err);
	return S0_OK;
}

static int check_service(cJSON *s, bool auto_resume, s0_error **err)
{
	const char *sid = cJSON_IsObject(s) ? str_of(s, "id") : NULL;
	if (!sid || !name_ok(sid, 63))
		return bad(err, "every service needs an id of 1-63 letters, digits, '-', '_' or '.'",
		           "", "");
	if (present(s, "display_name") && !str_of(s, "display_name"))
		return bad(err, ": display_name must be a string", "service ", sid);
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(s, "port");
	if (present(s, "port") && (!cJSON_IsNumber(port) || port->valuedouble < 1 ||
	                           port->valuedouble > 65535 ||
	                           port->valuedouble != (double)(int)port->valuedouble))
		return bad(err, ": port must be an integer of 1..65535", "service ", sid);
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(s, "runtime");
	int rc = present(s, "runtime") ? check_runtime(rt, sid, err) : S0_OK;
	const char *rt_type = rc == S0_OK && present(s, "runtime") ? str_of(rt, "type") : NULL;
	const cJSON *hc = cJSON_GetObjectItemCaseSensitive(s, "health_check");
	if (rc == S0_OK && present(s, "health_check") &&
	    (!cJSON_IsObject(hc) || (present(hc, "path") && !str_of(hc, "path"))))
		rc = bad(err, ": health_check must be an object with a path string", "service ", sid);
	cJSON *in = cJSON_GetObjectItemCaseSensitive(s, "ingress");
	if (rc == S0_OK && (!cJSON_IsObject(in) ||
	                    !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(in, "public"))))
		rc = bad(err, ": ingress with a boolean public is required", "service ", sid);
	cJSON *routes = rc == S0_OK ? cJSON_GetObjectItemCaseSensitive(in, "routes") : NULL;
	if (rc == S0_OK && present(in, "routes") &&
	    (!cJSON_IsArray(routes) || cJSON_GetArraySize(routes) > MAX_ROUTES))
		rc = bad(err, ": ingress.routes must be an array of at most 32 routes", "service ",
		         sid);
	cJSON *r;
	int i = 0;
	cJSON_ArrayForEach(r, (rc == S0_OK && cJSON_IsArray(routes) ? routes : NULL))
	{
		if ((rc = check_route(r, sid, rt_type, auto_resume, err)) < 0)
			break;
		for (int j = 0; j < i; j++)
			if (!strcmp(str_of(cJSON_GetArrayItem(routes, j), "id"), str_of(r, "id")))
				return bad(err, ": route ids must be unique", "service ", sid);
		i++;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(s, "public_id"); /* ours to give */
	return rc;
}

/* A fresh public id: 20 lowercase letters and digits (~103 bits). */
static void new_public_id(char out[S0__PUBLIC_ID_MAX])
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	out[0] = abc[randombytes_uniform(26)]; /* a DNS label starts with a letter */
	for (int i = 1; i < 20; i++)
		out[i] = abc[randombytes_uniform(36)];
	out[20] = 0;
}

static int stored(s0__engine *e, const char *id, cJSON **out, s0_error **err)
{
	char *text = NULL;
	int rc = s0__meta_services_get(e->meta, id, &text, err);
	if (rc == S0_ENOTFOUND) {
		*out = cJSON_CreateArray();
		return *out ? S0_OK : s0__error_nomem(err);
	}
	if (rc < 0)
		return rc;
	*out = cJSON_Parse(text);
	free(text);
	if (!cJSON_IsArray(*out)) {
		cJSON_Delete(*out);
		*out = NULL;
		return s0__error_set(err, S0_ECORRUPT, "internal_error", "stored services are damaged");
	}
	return S0_OK;
}

int s0__engine_services_get(s0__engine *e, const char *team, const char *id, cJSON **out,
                            s0_error **err)
{
	s0__sandbox_row row = {0};
	int rc = s0__engine_load_live(e, team, id, &row, err);
	s0__sandbox_rec_clear(&row.rec);
	return rc < 0 ? rc : stored(e, id, out, err);
}

/* The public id the old services gave service sid, or a new one. */
static int give_id(const cJSON *old, cJSON *s, s0_error **err)
{
	const char *sid = str_of(s, "id"), *pid = NULL;
	const cJSON *o;
	cJSON_ArrayForEach(o, old) if (!strcmp(str_of(o, "id") ? str_of(o, "id") : "", sid)) pid =
		str_of(o, "public_id");
	char fresh[S0__PUBLIC_ID_MAX];
	if (!pid) {
		new_public_id(fresh);
		pid = fresh;
	}
	return s0__json_add_str(s, "public_id", pid) < 0 ? s0__error_nomem(err) : S0_OK;
}

int s0__engine_services_put(s0__engine *e, const char *team, const char *id,
                            const cJSON *services, cJSON **out, s0_error **err)
{
	if (!cJSON_IsArray(services) || cJSON_GetArraySize(services) > MAX_SERVICES)
		return bad(err, "services must be an array of at most 16 services", "", "");
	cJSON *next = cJSON_Duplicate(services, 1), *old = NULL;
	if (!next)
		return s0__error_nomem(err);
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0};
	int rc = s0__engine_load_live(e, team, id, &row, err);
	if (rc == S0_OK)
		rc = stored(e, id, &old, err);
	cJSON *s;
	int n = 0;
	const char *ids[MAX_SERVICES];
	cJSON_ArrayForEach(s, (rc == S0_OK ? next : NULL))
	{
		if ((rc = check_service(s, row.rec.auto_resume, err)) < 0)
			break;
		for (int j = 0; j < n; j++)
			if (!strcmp(str_of(cJSON_GetArrayItem(next, j), "id"), str_of(s, "id"))) {
				rc = bad(err, "service ids must be unique", "", "");
				break;
			}
		if (rc < 0 || (rc = give_id(old, s, err)) < 0)
			break;
		ids[n++] = str_of(s, "public_id");
	}
	char *text = rc == S0_OK ? cJSON_PrintUnformatted(next) : NULL;
	if (rc == S0_OK && !text)
		rc = s0__error_nomem(err);
	if (rc == S0_OK && (rc = s0__meta_begin(e->meta, err)) == S0_OK) {
		rc = s0__meta_services_put(e->meta, id, n ? text : NULL, ids, (size_t)n, err);
		if (rc == S0_OK)
			rc = s0__meta_commit(e->meta, err);
		else
			s0__meta_rollback(e->meta);
	}
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	free(text);
	cJSON_Delete(old);
	if (rc < 0) {
		cJSON_Delete(next);
		return rc;
	}
	*out = next;
	return S0_OK;
}

int s0__services_validate(const cJSON *services, bool auto_resume, s0_error **err)
{
	if (!cJSON_IsArray(services) || cJSON_GetArraySize(services) > MAX_SERVICES)
		return bad(err, "services must be an array of at most 16 services", "", "");
	cJSON *copy = cJSON_Duplicate(services, 1), *s;
	if (!copy)
		return s0__error_nomem(err);
	int rc = S0_OK, n = 0;
	cJSON_ArrayForEach(s, copy)
	{
		if ((rc = check_service(s, auto_resume, err)) < 0)
			break;
		for (int j = 0; j < n && rc == S0_OK; j++)
			if (!strcmp(str_of(cJSON_GetArrayItem(copy, j), "id"), str_of(s, "id")))
				rc = bad(err, "service ids must be unique", "", "");
		if (rc < 0)
			break;
		n++;
	}
	cJSON_Delete(copy);
	return rc;
}

int s0__services_allow_auto_resume_off(s0__engine *e, const char *id, s0_error **err)
{
	cJSON *all = NULL;
	int rc = stored(e, id, &all, err);
	const cJSON *s, *r;
	cJSON_ArrayForEach(s, (rc == S0_OK ? all : NULL))
	{
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(s, "ingress");
		cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(in, "routes"))
		{
			if (rc == S0_OK && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "resume")))
				rc = s0__error_set(err, S0_ECONFLICT, "conflict",
				                   "auto_resume cannot be turned off while service %s route "
				                   "%s has resume: true",
				                   str_of(s, "id"), str_of(r, "id"));
		}
	}
	cJSON_Delete(all);
	return rc;
}

int s0__engine_route_resolve(s0__engine *e, const char *public_id, s0__route_target *out,
                             s0_error **err)
{
	memset(out, 0, sizeof *out);
	int rc = s0__meta_route_find(e->meta, public_id, out->sandbox_id, err);
	if (rc == S0_ENOTFOUND)
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "route not found");
	s0__sandbox_row row = {0};
	if (rc == S0_OK)
		rc = s0__engine_load(e, NULL, out->sandbox_id, &row, err);
	if (rc == S0_OK && row.rec.status == S0_STATUS_TERMINATING)
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "route not found");
	if (rc == S0_OK) {
		s0__strlcpy(out->team, row.rec.team_id, sizeof out->team);
		out->paused = row.rec.paused || row.rec.status != S0_STATUS_RUNNING;
	}
	s0__sandbox_rec_clear(&row.rec);
	cJSON *all = NULL;
	if (rc == S0_OK)
		rc = stored(e, out->sandbox_id, &all, err);
	cJSON *s;
	cJSON_ArrayForEach(s, (rc == S0_OK ? all : NULL))
	{
		const char *pid = str_of(s, "public_id");
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(s, "ingress");
		if (pid && !strcmp(pid, public_id) &&
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "public")))
			out->service = cJSON_DetachItemViaPointer(all, s);
	}
	cJSON_Delete(all);
	if (rc == S0_OK && !out->service)
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "route not found");
	return rc;
}

void s0__route_target_clear(s0__route_target *t)
{
	cJSON_Delete(t->service);
	t->service = NULL;
}

const char *s0__engine_routeless_runtime(s0__engine *e)
{
	return e->rt_drv && !e->rt_drv->connect_port ? e->rt_drv->name : NULL;
}

int s0__runtime_access_connect(s0__runtime_access *a, int port, int *fd_out, s0_error **err)
{
	s0__runtime *rt = s0__runtime_access_runtime(a);
	if (!rt->drv->connect_port)
		return s0__error_set(err, S0_EUNAVAILABLE, "unsupported",
		                     "the %s runtime cannot connect to a sandbox port", rt->drv->name);
	s0__engine *e = s0__runtime_access_engine(a);
	if (s0__fault_hit(e->faults, "port_no_answer", NULL) == S0__FAULT_FAIL)
		return s0__error_set(err, S0_EUNAVAILABLE, "port_no_answer",
		                     "port %d of the sandbox does not answer a connect", port);
	s0__engine_guest_sync(e, rt); /* a listener the guest started since the pin */
	return rt->drv->connect_port(rt->gen, port, fd_out, err);
}
