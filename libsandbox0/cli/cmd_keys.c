/*
 * `s0 serve keys create|list|revoke` (docs/security.md "API keys"): API keys
 * of teams in a data directory. When a server holds the directory
 * (s0_local_open answers data_dir_locked) the commands go to its admin
 * endpoint (<data>/server.json for the address, <data>/admin-token for the
 * admin credential, which only that server's owner can read); otherwise
 * they open the directory themselves.
 */
#include <stdlib.h>
#include <string.h>

#include <sandbox0/keys.h>

#include "cli.h"

/* The data directory of `s0 serve`'s --data, or the default. */
static char *data_dir(cli *c)
{
	return opt_str(c, "data") ? xstrdup(opt_str(c, "data")) : cli_default_data_dir();
}

/* What one keys command does, on a backend or through a server's admin endpoint. */
typedef struct keys_op {
	const char *doing;
	int (*local)(cli *c, s0_local *l, char **json, s0_error **err);
	int (*remote)(cli *c, s0_client *cl, char **json, s0_error **err);
	int (*print)(cli *c, const cj *v);
} keys_op;

/* A client of the server holding data: its url and admin credential. */
static int admin_client(const char *data, s0_client **out)
{
	char *path = xasprintf("%s/server.json", data), *tpath = xasprintf("%s/admin-token", data);
	size_t len = 0, tlen = 0;
	char *text = read_all(path, &len), *token = read_all(tpath, &tlen);
	cj *v = text ? cj_parse(text, len, NULL) : NULL;
	const char *url = cj_get_str(v, "url");
	int rc = CLI_EXIT_OK;
	while (token && tlen && (token[tlen - 1] == '\n' || token[tlen - 1] == '\r'))
		token[--tlen] = 0;
	if (!url || !token || !*token) {
		rc = cli_failf("reaching the server",
		               "the data directory %s is held by a running server, but %s or %s "
		               "cannot be read (run the command as the server's user)",
		               data, path, tpath);
	} else {
		s0_client_options o = S0_CLIENT_OPTIONS_INIT;
		o.base_url = url;
		o.token = token;
		s0_error *err = NULL;
		int r = s0_client_new(&o, out, &err);
		if (r < 0)
			rc = cli_fail("reaching the server", err, r);
	}
	if (token)
		memset(token, 0, tlen);
	free(token);
	cj_free(v);
	free(text);
	free(path);
	free(tpath);
	return rc;
}

static int run_op(cli *c, const keys_op *op)
{
	char *data = data_dir(c), *json = NULL;
	s0_local *l = NULL;
	s0_client *cl = NULL;
	s0_error *err = NULL;
	int rc = s0_local_open(data, NULL, &l, &err);
	if (rc == S0_ECONFLICT && !strcmp(s0_error_reason(err), "data_dir_locked")) {
		s0_error_free(err);
		err = NULL;
		rc = admin_client(data, &cl);
		if (rc == CLI_EXIT_OK && (rc = op->remote(c, cl, &json, &err)) < 0)
			rc = cli_fail(op->doing, err, rc);
	} else if (rc < 0) {
		rc = cli_fail("opening the data directory", err, rc);
	} else if ((rc = op->local(c, l, &json, &err)) < 0) {
		rc = cli_fail(op->doing, err, rc);
	}
	if (rc == CLI_EXIT_OK) {
		cj *v = json ? cj_parse(json, strlen(json), NULL) : NULL;
		rc = v ? op->print(c, v) : cli_failf(op->doing, "the answer is not JSON");
		cj_free(v);
	}
	if (json)
		memset(json, 0, strlen(json));
	s0_free(json);
	s0_client_free(cl);
	s0_local_close(l);
	free(data);
	return rc;
}

/* RFC 3986 percent-encoding of everything but the unreserved characters. */
static char *pct_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(strlen(s) * 3 + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p)) {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = 0;
	return out;
}

static void key_row(tbl *t, const cj *k)
{
	int64_t created = 0, revoked = 0;
	const char *cs = cj_get_str(k, "created_at"), *rs = cj_get_str(k, "revoked_at");
	char ctext[32], rtext[48];
	if (cs)
		parse_rfc3339(cs, &created);
	if (rs)
		parse_rfc3339(rs, &revoked);
	fmt_time(created, ctext, sizeof ctext);
	char when[32];
	fmt_time(revoked, when, sizeof when);
	snprintf(rtext, sizeof rtext, "revoked %s", when);
	tbl_add(t, cj_get_str(k, "id"), cj_get_str(k, "team_id"), cj_get_str(k, "name"), ctext,
	        revoked ? rtext : "active");
}

/* ---- create ---- */

static const cli_flag create_flags[] = {
	{"team", 0, FLAG_STR, "TEAM", "team of the key (required; made on its first key)"},
	{"name", 0, FLAG_STR, "NAME", "label of the key (default: its id)"},
	{0},
};

static int create_local(cli *c, s0_local *l, char **json, s0_error **err)
{
	return s0_local_api_key_create(l, opt_str(c, "team"), opt_str(c, "name"), json, err);
}

static int create_remote(cli *c, s0_client *cl, char **json, s0_error **err)
{
	cj *b = cj_object();
	cj_set(b, "team_id", cj_str(opt_str(c, "team")));
	if (opt_str(c, "name"))
		cj_set(b, "name", cj_str(opt_str(c, "name")));
	char *body = cj_compact(b);
	int rc = s0_client_admin_request(cl, "POST", "/admin/v1/api-keys", body, json, err);
	free(body);
	cj_free(b);
	return rc;
}

static int create_print(cli *c, const cj *v)
{
	if (c->format != OUT_TABLE)
		return out_value(c, v);
	tbl t;
	tbl_init(&t, 2);
	kv_add(&t, "ID:", cj_get_str(v, "id"));
	kv_add(&t, "Team:", cj_get_str(v, "team_id"));
	kv_add(&t, "Name:", cj_get_str(v, "name"));
	kv_add(&t, "Key:", cj_get_str(v, "key"));
	tbl_print(&t, stdout);
	tbl_free(&t);
	printf("The key is shown only now; the server keeps only a hash of it.\n");
	return CLI_EXIT_OK;
}

static int run_create(cli *c)
{
	const char *team = opt_str(c, "team");
	if (!team || !*team)
		return cli_usage_error(c, "--team is required");
	static const keys_op op = {"creating the API key", create_local, create_remote,
	                           create_print};
	return run_op(c, &op);
}

static const cli_cmd cmd_keys_create = {
	.name = "create", .summary = "Make an API key of a team (printed once)",
	.flags = create_flags, .run = run_create,
};

/* ---- list ---- */

static const cli_flag list_flags[] = {
	{"team", 0, FLAG_STR, "TEAM", "only this team's keys"},
	{0},
};

static int list_local(cli *c, s0_local *l, char **json, s0_error **err)
{
	return s0_local_api_key_list(l, opt_str(c, "team"), json, err);
}

static int list_remote(cli *c, s0_client *cl, char **json, s0_error **err)
{
	char *path = NULL;
	if (opt_str(c, "team")) {
		char *esc = pct_encode(opt_str(c, "team"));
		path = xasprintf("/admin/v1/api-keys?team_id=%s", esc);
		free(esc);
	} else {
		path = xstrdup("/admin/v1/api-keys");
	}
	int rc = s0_client_admin_request(cl, "GET", path, NULL, json, err);
	free(path);
	return rc;
}

static int list_print(cli *c, const cj *v)
{
	if (c->format != OUT_TABLE)
		return out_value(c, v);
	const cj *arr = cj_get(v, "api_keys");
	int n = cJSON_GetArraySize(arr);
	if (!n) {
		printf("No API keys found.\n");
		return CLI_EXIT_OK;
	}
	tbl t;
	tbl_init(&t, 5);
	tbl_add(&t, "ID", "TEAM", "NAME", "CREATED", "STATUS");
	for (int i = 0; i < n; i++)
		key_row(&t, cJSON_GetArrayItem(arr, i));
	tbl_print(&t, stdout);
	tbl_free(&t);
	printf("Total: %d\n", n);
	return CLI_EXIT_OK;
}

static int run_list(cli *c)
{
	static const keys_op op = {"listing API keys", list_local, list_remote, list_print};
	return run_op(c, &op);
}

static const cli_cmd cmd_keys_list = {
	.name = "list", .summary = "List API keys (no secrets)", .flags = list_flags,
	.run = run_list,
};

/* ---- revoke ---- */

static int revoke_local(cli *c, s0_local *l, char **json, s0_error **err)
{
	return s0_local_api_key_revoke(l, c->args[0], json, err);
}

static int revoke_remote(cli *c, s0_client *cl, char **json, s0_error **err)
{
	char *esc = pct_encode(c->args[0]);
	char *path = xasprintf("/admin/v1/api-keys/%s", esc);
	free(esc);
	int rc = s0_client_admin_request(cl, "DELETE", path, NULL, json, err);
	free(path);
	return rc;
}

static int revoke_print(cli *c, const cj *v)
{
	if (c->format != OUT_TABLE)
		return out_value(c, v);
	printf("API key %s (team %s) revoked.\n", cj_get_str(v, "id"), cj_get_str(v, "team_id"));
	return CLI_EXIT_OK;
}

static int run_revoke(cli *c)
{
	static const keys_op op = {"revoking the API key", revoke_local, revoke_remote,
	                           revoke_print};
	return run_op(c, &op);
}

static const cli_cmd cmd_keys_revoke = {
	.name = "revoke", .args = "<key-id>", .summary = "Revoke an API key (401 from then on)",
	.min_args = 1, .max_args = 1, .run = run_revoke,
};

const cli_cmd cmd_serve_keys = {
	.name = "keys",
	.summary = "Manage the API keys of teams of a data directory",
	.children = (const cli_cmd *const[]){&cmd_keys_create, &cmd_keys_list, &cmd_keys_revoke,
	                                     NULL},
	.details = "Each key belongs to one team; a team sees only its own sandboxes, snapshots and\n"
	           "templates. Keys are stored hashed in the data directory's metadata store and\n"
	           "shown only when made. While `s0 serve` holds the directory the commands go to\n"
	           "its admin endpoint (address in <data>/server.json, admin credential in\n"
	           "<data>/admin-token, 0600); otherwise they open the directory like --local\n"
	           "DIR does (recovery and due TTLs run; a server started meanwhile exits 3).\n"
	           "The key in <data>/cli-token (and --token) belongs to team \"team_local\".\n",
};
