/* Small immutable results: lifecycle results, list pages, snapshots. */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "client/results.h"
#include "common/json.h"

struct s0_lifecycle_result {
	char *json, *sandbox_id, *snapshot_id;
	int status, http_status;
	bool paused, resumed;
};

int s0__lifecycle_result_from_json(const cJSON *o, int http_status, s0_lifecycle_result **out,
                                   s0_error **err)
{
	if (!cJSON_IsObject(o))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "expected an object in the response data");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "paused");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "resumed");
	if ((p && !cJSON_IsBool(p) && !cJSON_IsNull(p)) || (r && !cJSON_IsBool(r) && !cJSON_IsNull(r)))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "\"paused\"/\"resumed\" must be booleans");
	s0_lifecycle_result *x = calloc(1, sizeof *x);
	if (!x)
		return s0__error_nomem(err);
	s0__obj_inc();
	x->json = s0__json_print(o);
	x->sandbox_id = s0__strdup(s0__json_str0(o, "sandbox_id"));
	x->snapshot_id = s0__strdup(s0__json_str(o, "snapshot_id"));
	x->status = s0_status_from_name(s0__json_str(o, "status"));
	x->paused = s0__json_bool(o, "paused", false);
	x->resumed = s0__json_bool(o, "resumed", false);
	x->http_status = http_status;
	if (!x->json || !x->sandbox_id) {
		s0_lifecycle_result_free(x);
		return s0__error_nomem(err);
	}
	*out = x;
	return S0_OK;
}

void s0_lifecycle_result_free(s0_lifecycle_result *x)
{
	if (!x)
		return;
	free(x->json);
	free(x->sandbox_id);
	free(x->snapshot_id);
	free(x);
	s0__obj_dec();
}

const char *s0_lifecycle_result_sandbox_id(const s0_lifecycle_result *r) { return r->sandbox_id; }
int s0_lifecycle_result_status(const s0_lifecycle_result *r) { return r->status; }
bool s0_lifecycle_result_paused(const s0_lifecycle_result *r) { return r->paused; }
bool s0_lifecycle_result_resumed(const s0_lifecycle_result *r) { return r->resumed; }
const char *s0_lifecycle_result_snapshot_id(const s0_lifecycle_result *r)
{
	return r->snapshot_id;
}
int s0_lifecycle_result_http_status(const s0_lifecycle_result *r) { return r->http_status; }
const char *s0_lifecycle_result_json(const s0_lifecycle_result *r) { return r->json; }

/* ---- arrays of results ---- */

void s0__items_free(void **items, size_t len, s0__item_free_fn fr)
{
	for (size_t i = 0; i < len; i++)
		fr(items[i]);
	free(items);
}

int s0__items_from_json(const cJSON *o, const char *key, s0__item_fn fn, s0__item_free_fn fr,
                        void ***items, size_t *len, s0_error **err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsObject(o) || (arr && !cJSON_IsArray(arr) && !cJSON_IsNull(arr)))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "response has no \"%s\" array", key);
	size_t n = cJSON_IsArray(arr) ? (size_t)cJSON_GetArraySize(arr) : 0, got = 0;
	void **v = n ? calloc(n, sizeof *v) : NULL;
	if (n && !v)
		return s0__error_nomem(err);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		int rc = fn(it, &v[got], err);
		if (rc < 0) {
			s0__items_free(v, got, fr);
			return rc;
		}
		got++;
	}
	*items = v;
	*len = got;
	return S0_OK;
}

/* ---- sandbox page ---- */

struct s0_sandbox_page {
	s0_sandbox_info **items;
	size_t len;
	int64_t count;
	bool has_more;
};

void s0_sandbox_page_free(s0_sandbox_page *p)
{
	if (!p)
		return;
	s0__items_free((void **)p->items, p->len, (s0__item_free_fn)s0_sandbox_info_free);
	free(p);
	s0__obj_dec();
}

int s0__sandbox_page_from_json(const cJSON *o, s0_sandbox_page **out, s0_error **err)
{
	s0_sandbox_page *p = calloc(1, sizeof *p);
	if (!p)
		return s0__error_nomem(err);
	int rc = s0__items_from_json(o, "sandboxes", (s0__item_fn)s0__sandbox_info_from_json,
	                             (s0__item_free_fn)s0_sandbox_info_free, (void ***)&p->items,
	                             &p->len, err);
	if (rc < 0) {
		free(p);
		return rc;
	}
	s0__obj_inc();
	p->count = s0__json_i64(o, "count", (int64_t)p->len);
	p->has_more = s0__json_bool(o, "has_more", false);
	*out = p;
	return S0_OK;
}

int64_t s0_sandbox_page_count(const s0_sandbox_page *p) { return p->count; }
bool s0_sandbox_page_has_more(const s0_sandbox_page *p) { return p->has_more; }
size_t s0_sandbox_page_length(const s0_sandbox_page *p) { return p->len; }
const s0_sandbox_info *s0_sandbox_page_at(const s0_sandbox_page *p, size_t i)
{
	return i < p->len ? p->items[i] : NULL;
}

/* ---- snapshots ---- */

struct s0_snapshot_info {
	char *json, *id, *sandbox_id, *name, *description;
	int64_t created_at, expires_at;
};

void s0_snapshot_info_free(s0_snapshot_info *s)
{
	if (!s)
		return;
	free(s->json);
	free(s->id);
	free(s->sandbox_id);
	free(s->name);
	free(s->description);
	free(s);
	s0__obj_dec();
}

int s0__snapshot_info_from_json(const cJSON *o, s0_snapshot_info **out, s0_error **err)
{
	if (!cJSON_IsObject(o) || !s0__json_str(o, "id"))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "expected a snapshot object with an \"id\"");
	s0_snapshot_info *s = calloc(1, sizeof *s);
	if (!s)
		return s0__error_nomem(err);
	s0__obj_inc();
	s->json = s0__json_print(o);
	s->id = s0__strdup(s0__json_str0(o, "id"));
	s->sandbox_id = s0__strdup(s0__json_str0(o, "sandbox_id"));
	s->name = s0__strdup(s0__json_str0(o, "name"));
	s->description = s0__strdup(s0__json_str0(o, "description"));
	s->created_at = s0__json_time(o, "created_at");
	s->expires_at = s0__json_time(o, "expires_at");
	if (!s->json || !s->id || !s->sandbox_id || !s->name || !s->description) {
		s0_snapshot_info_free(s);
		return s0__error_nomem(err);
	}
	*out = s;
	return S0_OK;
}

const char *s0_snapshot_info_id(const s0_snapshot_info *s) { return s->id; }
const char *s0_snapshot_info_sandbox_id(const s0_snapshot_info *s) { return s->sandbox_id; }
const char *s0_snapshot_info_name(const s0_snapshot_info *s) { return s->name; }
const char *s0_snapshot_info_description(const s0_snapshot_info *s) { return s->description; }
int64_t s0_snapshot_info_created_at_unix_ms(const s0_snapshot_info *s) { return s->created_at; }
int64_t s0_snapshot_info_expires_at_unix_ms(const s0_snapshot_info *s) { return s->expires_at; }
const char *s0_snapshot_info_json(const s0_snapshot_info *s) { return s->json; }

struct s0_snapshot_list {
	s0_snapshot_info **items;
	size_t len;
	int64_t count;
};

void s0_snapshot_list_free(s0_snapshot_list *l)
{
	if (!l)
		return;
	s0__items_free((void **)l->items, l->len, (s0__item_free_fn)s0_snapshot_info_free);
	free(l);
	s0__obj_dec();
}

int s0__snapshot_list_from_json(const cJSON *o, s0_snapshot_list **out, s0_error **err)
{
	s0_snapshot_list *l = calloc(1, sizeof *l);
	if (!l)
		return s0__error_nomem(err);
	int rc = s0__items_from_json(o, "snapshots", (s0__item_fn)s0__snapshot_info_from_json,
	                             (s0__item_free_fn)s0_snapshot_info_free, (void ***)&l->items,
	                             &l->len, err);
	if (rc < 0) {
		free(l);
		return rc;
	}
	s0__obj_inc();
	l->count = s0__json_i64(o, "count", (int64_t)l->len);
	*out = l;
	return S0_OK;
}

int64_t s0_snapshot_list_count(const s0_snapshot_list *l) { return l->count; }
size_t s0_snapshot_list_length(const s0_snapshot_list *l) { return l->len; }
const s0_snapshot_info *s0_snapshot_list_at(const s0_snapshot_list *l, size_t i)
{
	return i < l->len ? l->items[i] : NULL;
}
