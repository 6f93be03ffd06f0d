/* Output of the s0 program: -o json|yaml, tables, error lines (docs/wire.md §5). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int out_value(const cli *c, const cj *v)
{
	if (c->format == OUT_YAML)
		return out_yaml(v, stdout);
	char *text = cj_pretty(v);
	fputs(text, stdout);
	free(text);
	return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int out_json_text(const cli *c, const char *json)
{
	const char *why = NULL;
	cj *v = cj_parse(json, strlen(json), &why);
	if (!v)
		return cli_failf("formatting output", "the library returned malformed JSON (%s)", why);
	int rc = out_value(c, v);
	cj_free(v);
	return rc;
}

char *cli_error_text(const s0_error *err, int rc)
{
	if (!err)
		return xstrdup(s0_strerror(rc));
	const char *msg = s0_error_message(err);
	int status = s0_error_http_status(err);
	const char *wire = s0_error_wire_code(err);
	int code = s0_error_code(err);
	/* API errors read like the Go SDK's APIError, as the official CLI prints them */
	if (status > 0 && code != S0_ETIMEDOUT && code != S0_ELIFECYCLE)
		return xasprintf("sandbox0 API error (%d): %s - %s", status,
		                 wire && *wire ? wire : s0_code_name(code), msg);
	const s0_error *cause = s0_error_cause(err);
	if (code == S0_ETRANSPORT && cause)
		return xasprintf("%s: %s", msg, s0_error_message(cause));
	if (code == S0_ETIMEDOUT && cause) {
		/* a wait that ran out while requests failed: say how they failed */
		char *why = cli_error_text(cause, s0_error_code(cause));
		char *text = xasprintf("%s (last error: %s)", msg, why);
		free(why);
		return text;
	}
	return xstrdup(msg);
}

int cli_fail(const char *doing, s0_error *err, int rc)
{
	char *text = cli_error_text(err, rc);
	fflush(stdout);
	fprintf(stderr, "Error %s: %s\n", doing, text);
	if (err && s0_error_is_claim_start_throttled(err) && s0_error_retry_after_ms(err) >= 0)
		fprintf(stderr, "Retry after %lld second(s).\n",
		        (long long)((s0_error_retry_after_ms(err) + 999) / 1000));
	free(text);
	s0_error_free(err);
	return CLI_EXIT_FAIL;
}

int cli_failf(const char *doing, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "Error %s: ", doing);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_EXIT_FAIL;
}

/* ---- tables ---- */

void tbl_init(tbl *t, size_t ncols)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
}

void tbl_add(tbl *t, ...)
{
	va_list ap;
	if ((t->nrows + 1) * t->ncols > t->cap) {
		t->cap = t->cap ? t->cap * 2 : t->ncols * 16;
		while (t->cap < (t->nrows + 1) * t->ncols)
			t->cap *= 2;
		t->cells = xrealloc(t->cells, t->cap * sizeof *t->cells);
	}
	va_start(ap, t);
	for (size_t i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);
		t->cells[t->nrows * t->ncols + i] = xstrdup(s ? s : "");
	}
	va_end(ap);
	t->nrows++;
}

int out_rows(const cli *c, const char *json, const char *key, tbl *t,
             void (*row)(tbl *t, const cj *item))
{
	if (c->format != OUT_TABLE) {
		tbl_free(t);
		return out_json_text(c, json);
	}
	cj *v = cj_parse(json, strlen(json), NULL);
	const cj *arr = cj_get(v, key);
	int n = cJSON_GetArraySize(arr);
	for (int i = 0; i < n; i++)
		row(t, cJSON_GetArrayItem(arr, i));
	tbl_print(t, stdout);
	tbl_free(t);
	printf("Total: %d\n", n);
	cj_free(v);
	return CLI_EXIT_OK;
}

void kv_add(tbl *t, const char *key, const char *value)
{
	tbl_add(t, key, value);
}

/* Display width: UTF-8 code points (good enough for ids, paths and times). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void tbl_print(tbl *t, FILE *f)
{
	size_t *w = calloc(t->ncols, sizeof *w);
	if (!w)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t col = 0; col < t->ncols; col++) {
			size_t cw = width(t->cells[r * t->ncols + col]);
			if (cw > w[col])
				w[col] = cw;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		size_t used = t->ncols; /* no padding after the last non-empty cell */
		while (used > 1 && !*t->cells[r * t->ncols + used - 1])
			used--;
		for (size_t col = 0; col < used; col++) {
			const char *cell = t->cells[r * t->ncols + col];
			bool last = col + 1 == used;
			fputs(cell, f);
			if (!last)
				fprintf(f, "%*s", (int)(w[col] - width(cell) + 2), "");
		}
		fputc('\n', f);
	}
	free(w);
}

void tbl_free(tbl *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

void print_sandbox_table(const s0_sandbox_info *sb, FILE *f)
{
	tbl t;
	char claimed[32], soft[32], hard[32], gen[32];
	cj *raw = cj_parse(s0_sandbox_info_json(sb), strlen(s0_sandbox_info_json(sb)), NULL);
	tbl_init(&t, 2);
	kv_add(&t, "ID:", s0_sandbox_info_id(sb));
	kv_add(&t, "Template ID:", s0_sandbox_info_template_id(sb));
	kv_add(&t, "Team ID:", s0_sandbox_info_team_id(sb));
	if (cj_get_str(raw, "user_id"))
		kv_add(&t, "User ID:", cj_get_str(raw, "user_id"));
	kv_add(&t, "Status:", s0_status_name(s0_sandbox_info_status(sb)));
	kv_add(&t, "Paused:", s0_sandbox_info_paused(sb) ? "true" : "false");
	const char *mem = cj_get_str(cj_get(raw, "resources"), "memory");
	if (mem)
		kv_add(&t, "Memory:", mem);
	kv_add(&t, "Pod Name:", s0_sandbox_info_pod_name(sb));
	/* additions of this implementation (INS-02) */
	kv_add(&t, "Runtime ID:", *s0_sandbox_info_runtime_id(sb) ? s0_sandbox_info_runtime_id(sb)
	                                                           : "-");
	snprintf(gen, sizeof gen, "%lld", (long long)s0_sandbox_info_runtime_generation(sb));
	kv_add(&t, "Runtime Generation:", gen);
	kv_add(&t, "Auto Resume:", s0_sandbox_info_auto_resume(sb) ? "true" : "false");
	fmt_time(s0_sandbox_info_claimed_at_unix_ms(sb), claimed, sizeof claimed);
	fmt_time(s0_sandbox_info_expires_at_unix_ms(sb), soft, sizeof soft);
	fmt_time(s0_sandbox_info_hard_expires_at_unix_ms(sb), hard, sizeof hard);
	kv_add(&t, "Claimed At:", claimed);
	kv_add(&t, "Soft Expires At:", soft);
	kv_add(&t, "Hard Expires At:", hard);
	const cj *ssh = cj_get(raw, "ssh");
	if (cJSON_IsObject(ssh)) {
		const cj *port = cj_get(ssh, "port");
		const char *host = cj_get_str(ssh, "host"), *user = cj_get_str(ssh, "username");
		kv_add(&t, "SSH Host:", host && *host ? host : "-");
		char num[32];
		kv_add(&t, "SSH Port:", cJSON_IsNumber(port) && port->valuedouble != 0
		                             ? cj_num_text(port, num) : "-");
		kv_add(&t, "SSH Username:", user && *user ? user : "-");
	}
	tbl_print(&t, f);
	tbl_free(&t);
	cj_free(raw);
}

cj *file_info_json(const s0_file_info *fi)
{
	static const char *const types[] = {"", "file", "dir", "symlink"};
	int type = s0_file_info_type(fi);
	char mode[16], mtime[40];
	cj *o = cj_object();
	cj_set(o, "name", cj_str(s0_file_info_name(fi)));
	cj_set(o, "path", cj_str(s0_file_info_path(fi)));
	cj_set(o, "type", cj_str(type >= 0 && type <= 3 ? types[type] : ""));
	cj_set(o, "size", cj_int(s0_file_info_size_bytes(fi)));
	snprintf(mode, sizeof mode, "%04o", (unsigned)s0_file_info_mode(fi));
	cj_set(o, "mode", cj_str(mode));
	fmt_rfc3339(s0_file_info_mod_time_unix_ms(fi), mtime, sizeof mtime);
	cj_set(o, "mod_time", cj_str(*mtime ? mtime : "0001-01-01T00:00:00Z"));
	cj_set(o, "is_link", cj_bool(s0_file_info_is_link(fi)));
	if (s0_file_info_link_target(fi))
		cj_set(o, "link_target", cj_str(s0_file_info_link_target(fi)));
	return o;
}
