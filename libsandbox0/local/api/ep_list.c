/* List sandboxes: query validation and paging (docs/wire.md §3.2). */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"

/* A query value, NULL when absent or empty (Go's c.Query(k) != ""). */
static bool param(s0__rctx *c, const char *key, char **out)
{
	bool present;
	if (!s0__query_value(c, key, &present, out))
		return false;
	if (*out && !**out) {
		free(*out);
		*out = NULL;
	}
	return true;
}

static bool bad(s0__rctx *c, const char *msg)
{
	s0__reply_err(c, 400, "bad_request", "%s", msg);
	return false;
}

static bool parse_status_paused(s0__rctx *c, s0__list_filter *f, const char *st, const char *pa)
{
	if (st && (f->status = s0_status_from_name(st)) == S0_STATUS_UNKNOWN)
		return bad(c, "invalid status parameter");
	bool b;
	if (pa && s0__parse_go_bool(pa, &b) < 0)
		return bad(c, "invalid paused parameter");
	f->paused = pa ? b : -1;
	return true;
}

static bool parse_paging(s0__rctx *c, s0__list_filter *f, const char *li, const char *of)
{
	int64_t limit = 50, offset = 0;
	if (li && s0__parse_go_int(li, &limit) < 0)
		return bad(c, "invalid limit parameter");
	if (limit < 1 || limit > 200)
		return bad(c, "limit must be between 1 and 200");
	if (of && s0__parse_go_int(of, &offset) < 0)
		return bad(c, "invalid offset parameter");
	if (offset < 0)
		return bad(c, "offset must be >= 0");
	f->limit = (int32_t)limit;
	f->offset = offset > INT32_MAX ? INT32_MAX : (int32_t)offset;
	return true;
}

static cJSON *render_page(s0__rctx *c, const s0__sandbox_rec *recs, size_t n, int64_t count,
                          const s0__list_filter *f)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *arr = d ? cJSON_AddArrayToObject(d, "sandboxes") : NULL;
	int rc = arr ? 0 : -1;
	for (size_t i = 0; i < n && !rc; i++) {
		cJSON *s = s0__render_summary(&recs[i], c->opts->zero_time_compat);
		rc = s ? 0 : -1;
		if (s)
			cJSON_AddItemToArray(arr, s);
	}
	if (d && !rc) {
		rc |= s0__json_add_i64(d, "count", count);
		rc |= s0__json_add_bool(d, "has_more", (int64_t)f->offset + f->limit < count);
	}
	if (rc) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

static void list(s0__rctx *c, s0__list_filter *f)
{
	s0__sandbox_rec *recs = NULL;
	size_t n = 0;
	int64_t count = 0;
	s0_error *err = NULL;
	if (s0__engine_list(c->e, c->team, f, &recs, &n, &count, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = render_page(c, recs, n, count, f);
	for (size_t i = 0; i < n; i++)
		s0__sandbox_rec_clear(&recs[i]);
	free(recs);
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}

void s0__ep_list(s0__rctx *c)
{
	c->action = "list sandboxes";
	char *st = NULL, *tpl = NULL, *pa = NULL, *li = NULL, *of = NULL;
	s0__list_filter f = {.paused = -1};
	if (param(c, "status", &st) && param(c, "template_id", &tpl) && param(c, "paused", &pa) &&
	    param(c, "limit", &li) && param(c, "offset", &of) &&
	    parse_status_paused(c, &f, st, pa) && parse_paging(c, &f, li, of)) {
		f.template_id = tpl;
		list(c, &f);
	}
	free(st);
	free(tpl);
	free(pa);
	free(li);
	free(of);
}
