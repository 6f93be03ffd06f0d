/* Runtime test fixture (rtfix.h). */
#include "rtfix.h"

#include <stdio.h>
#include <stdlib.h>

void rtfix_open(rtfix *f, const s0__guest_opts *o)
{
	memset(f, 0, sizeof *f);
	rt_open_fresh(&f->fs, 64 * MiB);
	ck_assert_int_eq(s0__tmpfs_new_runtime(NULL, 0, &f->tmp, NULL), S0_OK);
	ck_assert_int_eq(s0__files_ns_init(&f->ns, f->fs.fs, f->tmp, NULL, 0, NULL), S0_OK);
	ck_assert_int_eq(s0__files_mkdir(&f->ns, "/workspace", 10, true, NULL), S0_OK);
	ck_assert_int_eq(s0_manual_clock_new(1700000000000, S0_MANUAL_CLOCK_AUTO_ADVANCE, &f->mc,
	                                     NULL),
	                 S0_OK);
	s0_manual_clock_get(f->mc, &f->clock);
	s0__guest_opts go = o ? *o : (s0__guest_opts){0};
	go.clock = &f->clock;
	s0_error *e = NULL;
	int rc = s0__guest_new(&go, &f->g, &e);
	ck_assert_msg(rc == S0_OK, "guest: %s", e ? s0_error_message(e) : "?");
	s0__guest_bind_files(f->g, &f->ns);
}

void rtfix_set_guest(rtfix *f, s0__guest *g)
{
	s0__guest_free(f->g);
	f->g = g;
	if (g)
		s0__guest_bind_files(g, &f->ns);
}

void rtfix_roundtrip(rtfix *f)
{
	void *blob = NULL;
	size_t len = 0;
	s0__guest_lock(f->g);
	int rc = s0__guest_state_locked(f->g, &blob, &len, NULL, NULL);
	s0__guest_unlock(f->g);
	ck_assert_int_eq(rc, S0_OK);
	s0__guest_opts o = {.clock = &f->clock};
	s0__guest *g = NULL;
	s0_error *e = NULL;
	rc = s0__guest_restore(blob, len, &o, NULL, 0, NULL, &g, &e);
	ck_assert_msg(rc == S0_OK, "restore: %s", e ? s0_error_message(e) : "?");
	free(blob);
	rtfix_set_guest(f, g);
}

void rtfix_close(rtfix *f)
{
	s0__guest_free(f->g);
	s0__files_ns_clear(&f->ns);
	s0__tmpfs_free(f->tmp);
	rt_close(&f->fs);
	s0_manual_clock_free(f->mc);
}

cJSON *rtfix_json(const char *text)
{
	cJSON *j = cJSON_Parse(text);
	ck_assert_msg(j != NULL, "bad JSON: %s", text);
	return j;
}

char *rtfix_repl(rtfix *f)
{
	cJSON *body = rtfix_json("{\"type\":\"repl\"}"), *data = NULL;
	s0_error *e = NULL;
	int rc = s0__ctx_create_json(f->g, body, &data, &e);
	ck_assert_msg(rc == S0_OK, "create: %s", e ? s0_error_message(e) : "?");
	char *id = strdup(rtfix_str(data, "id"));
	cJSON_Delete(body);
	cJSON_Delete(data);
	return id;
}

cJSON *rtfix_exec(rtfix *f, const char *id, const char *cmd)
{
	cJSON *body = cJSON_CreateObject(), *data = NULL;
	cJSON_AddStringToObject(body, "data", cmd);
	s0_error *e = NULL;
	int rc = s0__ctx_exec_json(f->g, id, body, &data, &e);
	ck_assert_msg(rc == S0_OK, "exec %s: %s", cmd, e ? s0_error_message(e) : "?");
	cJSON_Delete(body);
	return data;
}

static char *member_copy(cJSON *d, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, key);
	char *s = strdup(cJSON_IsString(v) ? v->valuestring : "");
	cJSON_Delete(d);
	return s;
}

char *rtfix_out(rtfix *f, const char *id, const char *cmd)
{
	return member_copy(rtfix_exec(f, id, cmd), "stdout");
}

char *rtfix_err(rtfix *f, const char *id, const char *cmd)
{
	return member_copy(rtfix_exec(f, id, cmd), "stderr");
}

int rtfix_exec_fail(rtfix *f, const char *id, const char *cmd, char reason[64])
{
	cJSON *body = cJSON_CreateObject(), *data = NULL;
	cJSON_AddStringToObject(body, "data", cmd);
	s0_error *e = NULL;
	int rc = s0__ctx_exec_json(f->g, id, body, &data, &e);
	ck_assert_int_lt(rc, 0);
	ck_assert_ptr_null(data);
	if (reason)
		snprintf(reason, 64, "%s", s0_error_reason(e));
	s0_error_free(e);
	cJSON_Delete(body);
	return rc;
}

const char *rtfix_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	ck_assert_msg(cJSON_IsString(v), "missing string %s", key);
	return v->valuestring;
}

int64_t rtfix_int(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	ck_assert_msg(cJSON_IsNumber(v), "missing number %s", key);
	return (int64_t)v->valuedouble;
}

void rtfix_put(rtfix *f, const char *path, const char *data)
{
	s0_error *e = NULL;
	int rc = s0__files_write(&f->ns, path, strlen(path), data, strlen(data), &e);
	ck_assert_msg(rc == S0_OK, "write %s: %s", path, e ? s0_error_message(e) : "?");
}

char *rtfix_get(rtfix *f, const char *path)
{
	void *d = NULL;
	size_t n;
	s0_error *e = NULL;
	int rc = s0__files_read(&f->ns, path, strlen(path), 0, -1, &d, &n, &e);
	ck_assert_msg(rc == S0_OK, "read %s: %s", path, e ? s0_error_message(e) : "?");
	return d;
}
