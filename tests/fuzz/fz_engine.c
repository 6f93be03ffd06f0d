/* The fuzz targets' real local backend (see fz_engine.h). */
#include "fz_engine.h"

#include <cjson/cJSON.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local/local_internal.h"

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "fz_engine: %s: %s\n", what, detail ? detail : "?");
	abort();
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

long fz_rss_kib(void)
{
	FILE *fp = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;
	if (!fp)
		return -1;
	if (fscanf(fp, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(fp);
	return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void check_response(const s0__http_request *req, const s0__http_response *resp)
{
	if (resp->status < 100 || resp->status > 599)
		die("status out of range", req->path);
	const char *ct = s0__headers_get(&resp->headers, "Content-Type");
	if (!ct || !s0__headers_get(&resp->headers, "X-Request-ID"))
		die("response without Content-Type or X-Request-ID", req->path);
	if (!strstr(ct, "json"))
		return;
	cJSON *j = cJSON_ParseWithLength(resp->body.data, resp->body.len);
	if (!j || !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(j, "success")))
		die("JSON response without a boolean success", resp->body.data);
	cJSON_Delete(j);
}

int fz_route(fz_engine *f, const char *team, const s0__http_request *req)
{
	s0__router_opts ro = {.team_id = team ? (*team ? team : NULL) : "team_a",
	                      .wake_budget_ms = 2000};
	s0__http_response resp = {0};
	if (s0__router_handle_raw(f->engine, &ro, req, &resp) != S0_OK)
		die("router", "S0_ENOMEM");
	check_response(req, &resp);
	int st = resp.status;
	s0__http_response_free(&resp);
	fz_engine_tick(f);
	return st;
}

char *fz_substitute(const fz_engine *f, const char *s, size_t n, size_t *out_len)
{
	size_t cap = n * 64 / 2 + 1, len = 0; /* each 2-byte placeholder may grow to 63 */
	char *o = malloc(cap);
	if (!o)
		die("fz_substitute", "out of memory");
	for (size_t i = 0; i < n; i++) {
		int k = -1;
		if (s[i] == '@' && i + 1 < n)
			k = s[i + 1] == '0' ? 0 : s[i + 1] == '1' ? 1 : s[i + 1] == 'S' ? 2 : -1;
		if (k >= 0) {
			size_t l = strlen(f->ids[k]);
			memcpy(o + len, f->ids[k], l);
			len += l;
			i++;
		} else {
			o[len++] = s[i];
		}
	}
	o[len] = 0;
	if (out_len)
		*out_len = len;
	return o;
}

/* Route a fixture request and return its parsed body (caller frees). */
static cJSON *call_json(fz_engine *f, const char *method, const char *path, const char *body,
                        int *status)
{
	size_t n;
	char *p = fz_substitute(f, path, strlen(path), &n);
	char *q = strchr(p, '?');
	if (q)
		*q++ = 0;
	s0__http_request req = {.method = method, .path = p, .query = q};
	if (body) {
		req.body = body;
		req.body_len = strlen(body);
		req.has_body = true;
	}
	s0__router_opts ro = {.team_id = "team_a", .wake_budget_ms = 2000};
	s0__http_response resp = {0};
	if (s0__router_handle_raw(f->engine, &ro, &req, &resp) != S0_OK)
		die("router", "S0_ENOMEM");
	check_response(&req, &resp);
	*status = resp.status;
	cJSON *j = cJSON_ParseWithLength(resp.body.data, resp.body.len);
	s0__http_response_free(&resp);
	free(p);
	return j;
}

int fz_call(fz_engine *f, const char *method, const char *path, const char *body)
{
	int st;
	cJSON_Delete(call_json(f, method, path, body, &st));
	fz_engine_tick(f);
	return st;
}

int fz_call_get(fz_engine *f, const char *method, const char *path, const char *body,
                const char *key, char out[64])
{
	int st;
	cJSON *j = call_json(f, method, path, body, &st);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "data"),
	                                                  key);
	out[0] = 0;
	if (cJSON_IsString(v) && strlen(v->valuestring) < 64)
		strcpy(out, v->valuestring);
	cJSON_Delete(j);
	fz_engine_tick(f);
	return st;
}

/* A fixture step that must succeed; copies data.<key> into dst when given. */
static void fixture(fz_engine *f, const char *method, const char *path, const char *body,
                    const char *key, char dst[64])
{
	int st;
	cJSON *j = call_json(f, method, path, body, &st);
	if (st < 200 || st > 299)
		die("fixture request failed", path);
	if (key) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(j, "data"), key);
		if (!cJSON_IsString(v) || strlen(v->valuestring) >= 64)
			die("fixture without an id", path);
		strcpy(dst, v->valuestring);
	}
	cJSON_Delete(j);
}

static void open_backend(fz_engine *f)
{
	const char *base = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof tmpl, "%s/s0-fuzz-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpl))
		die("mkdtemp", tmpl);
	f->dir = strdup(tmpl);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.manual_clock_start_unix_ms = 1767225600000LL;
	o.rootfs_size_bytes = 64ull << 20;
	s0_error *err = NULL;
	if (s0_local_open(f->dir, &o, &f->local, &err) != S0_OK)
		die("s0_local_open", err ? s0_error_message(err) : NULL);
	f->engine = s0__local_engine(f->local);
	f->since_reset = 0;
	memset(f->ids, 0, sizeof f->ids);
	fixture(f, "POST", "/api/v1/sandboxes", "{\"template\":\"default\"}", "sandbox_id", f->ids[0]);
	fixture(f, "POST", "/api/v1/sandboxes", "{\"template\":\"default\"}", "sandbox_id", f->ids[1]);
	fixture(f, "POST", "/api/v1/sandboxes/@0/files?path=/workspace/a.txt", "fuzz\n", NULL, NULL);
	fixture(f, "POST", "/api/v1/sandboxes/@0/snapshots", "{\"name\":\"fz\"}", "id", f->ids[2]);
	fixture(f, "POST", "/api/v1/sandboxes/@1/pause", "{}", NULL, NULL);
	if (s0_local_quiesce(f->local, 30000, &err) != S0_OK)
		die("quiesce", err ? s0_error_message(err) : NULL);
}

void fz_engine_open(fz_engine *f, long reset_every)
{
	memset(f, 0, sizeof *f);
	f->reset_every = reset_every;
	open_backend(f);
}

void fz_engine_close(fz_engine *f)
{
	if (!f->local)
		return;
	s0_local_close(f->local);
	f->local = NULL;
	f->engine = NULL;
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f->dir);
	f->dir = NULL;
}

void fz_engine_tick(fz_engine *f)
{
	f->since_reset++;
	if (f->reset_every > 0 && f->since_reset >= f->reset_every) {
		long every = f->reset_every;
		fz_engine_close(f);
		fz_engine_open(f, every);
	}
}

void fz_engine_adopt(fz_engine *f, s0_local *local)
{
	memset(f, 0, sizeof *f);
	f->local = local;
	f->engine = s0__local_engine(local);
}
