/*
 * Where the s0 program connects (docs/wire.md §1.2, docs/decisions.md):
 *
 *   --local DIR          an embedded backend on DIR, for this one command;
 *   --api-url URL        > $SANDBOX0_BASE_URL > the profile's `api-url`: that
 *                        API, with --token > $SANDBOX0_TOKEN > the profile's
 *                        `token` (${VAR} expanded);
 *   none of them         the per-user local server (localsrv.c), with the key
 *                        in <data>/cli-token (or --token).
 *
 * The configuration file is the official CLI's ~/.s0/config.yaml
 * (`current-profile`, `profiles.<name>.api-url|token`, `output.format`),
 * read with libyaml; it is optional.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "yaml_in.h"

static cj *config_root;

static char *home_path(const char *rest)
{
	const char *home = getenv("HOME");
	return xasprintf("%s/%s", home && *home ? home : ".", rest);
}

/* Expand ${VAR} (unset = empty), like the official CLI does for profile values. */
static char *expand_env(const char *s)
{
	char *out = xstrdup("");
	while (*s) {
		const char *start = strstr(s, "${"), *end = start ? strchr(start, '}') : NULL;
		if (!start || !end) {
			char *n = xasprintf("%s%s", out, s);
			free(out);
			return n;
		}
		char *name = xasprintf("%.*s", (int)(end - start - 2), start + 2);
		const char *val = getenv(name);
		char *n = xasprintf("%s%.*s%s", out, (int)(start - s), s, val ? val : "");
		free(name);
		free(out);
		out = n;
		s = end + 1;
	}
	return out;
}

int cli_load_config(cli *c);

int cli_load_config(cli *c)
{
	const char *given = opt_str(c, "config");
	char *path = given ? (strncmp(given, "~/", 2) ? xstrdup(given) : home_path(given + 2))
	                   : home_path(".s0/config.yaml");
	size_t len;
	char *text = read_all(path, &len);
	if (!text) {
		int e = errno;
		int rc = CLI_EXIT_OK;
		if (given || e != ENOENT)
			rc = cli_failf("loading config", "%s: %s", path, strerror(e));
		free(path);
		return rc;
	}
	char *why = NULL;
	config_root = yaml_load(text, len, &why);
	free(text);
	if (!config_root) {
		int rc = cli_failf("loading config", "%s: %s", path, why);
		free(why);
		free(path);
		return rc;
	}
	free(path);
	const char *fmt = cj_get_str(cj_get(config_root, "output"), "format");
	if (!c->format_set && fmt) {
		if (!strcmp(fmt, "json"))
			c->format = OUT_JSON;
		else if (!strcmp(fmt, "yaml"))
			c->format = OUT_YAML;
	}
	return CLI_EXIT_OK;
}

/* A string of the active profile, ${VAR} expanded; NULL when absent or blank. */
static char *profile_value(const cli *c, const char *key)
{
	const char *name = opt_str(c, "profile");
	if (!name)
		name = cj_get_str(config_root, "current-profile");
	if (!name || !*name)
		name = "default";
	const char *v = cj_get_str(cj_get(cj_get(config_root, "profiles"), name), key);
	if (!v)
		return NULL;
	char *x = expand_env(v);
	if (!*x) {
		free(x);
		return NULL;
	}
	return x;
}

static const char *nonblank(const char *s)
{
	if (!s)
		return NULL;
	for (const char *p = s; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return s;
	return NULL;
}

char *cli_default_data_dir(void)
{
	const char *d = getenv("S0_DATA_DIR");
	if (d && *d)
		return xstrdup(d);
	return home_path(".local/share/sandbox0");
}

static int new_http_client(cli *c, const char *url, const char *token)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	s0_error *err = NULL;
	o.base_url = url;
	o.token = token;
	o.user_agent = "s0/" S0_VERSION_STRING;
	int rc = s0_client_new(&o, &c->client, &err);
	return rc < 0 ? cli_fail("creating client", err, rc) : CLI_EXIT_OK;
}

int cli_connect(cli *c)
{
	s0_error *err = NULL;
	int rc;
	if (c->client)
		return CLI_EXIT_OK;
	const char *dir = opt_str(c, "local");
	if (dir) {
		rc = s0_local_open(dir, NULL, &c->local, &err);
		if (rc < 0)
			return cli_fail("creating client", err, rc);
		rc = s0_client_new_local(c->local, NULL, &c->client, &err);
		return rc < 0 ? cli_fail("creating client", err, rc) : CLI_EXIT_OK;
	}
	char *prof_url = NULL, *prof_token = NULL;
	const char *url = nonblank(opt_str(c, "api-url"));
	if (!url)
		url = nonblank(getenv("SANDBOX0_BASE_URL"));
	if (!url)
		url = prof_url = profile_value(c, "api-url");
	if (url) {
		const char *token = nonblank(opt_str(c, "token"));
		if (!token)
			token = nonblank(getenv("SANDBOX0_TOKEN"));
		if (!token)
			token = prof_token = profile_value(c, "token");
		if (!token)
			rc = cli_failf("creating client",
			               "no API token configured. Set SANDBOX0_TOKEN environment "
			               "variable or use --token flag");
		else
			rc = new_http_client(c, url, token);
		free(prof_url);
		free(prof_token);
		return rc;
	}
	/* local mode: the per-user server */
	char *data = cli_default_data_dir(), *srv_url = NULL, *srv_token = NULL, *why = NULL;
	if (localsrv_ensure(data, &srv_url, &srv_token, &why) < 0) {
		rc = cli_failf("creating client", "%s", why);
	} else {
		const char *token = nonblank(opt_str(c, "token"));
		rc = new_http_client(c, srv_url, token ? token : srv_token);
	}
	free(why);
	free(srv_url);
	free(srv_token);
	free(data);
	return rc;
}

int cli_pause_running(s0_local *local, bool only_auto_resume, int64_t timeout_ms, FILE *log)
{
	if (!local)
		return 0;
	s0_client *client = NULL;
	s0_sandbox_iter *it = NULL;
	s0_error *err = NULL;
	char **ids = NULL;
	size_t n = 0, cap = 0;
	int failed = 0;
	/* every key of `s0 serve` and every --local client is in the local team */
	if (s0_client_new_local(local, NULL, &client, &err) < 0)
		goto fail;
	s0_list_options lo = S0_LIST_OPTIONS_INIT;
	lo.status = S0_STATUS_RUNNING;
	lo.limit = 200;
	if (s0_sandbox_iter_new(client, &lo, &it, &err) < 0)
		goto fail;
	/* collect first: pausing changes the filtered list under the iterator */
	for (;;) {
		const s0_sandbox_info *info = NULL;
		int rc = s0_sandbox_iter_next(it, &info, &err);
		if (rc == S0_ITEROVER)
			break;
		if (rc < 0)
			goto fail;
		if (only_auto_resume && !s0_sandbox_info_auto_resume(info))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			ids = xrealloc(ids, cap * sizeof *ids);
		}
		ids[n++] = xstrdup(s0_sandbox_info_id(info));
	}
	for (size_t i = 0; i < n; i++) {
		s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
		wo.timeout_ms = timeout_ms;
		double t0 = mono_now_s();
		int rc = s0_sandbox_pause_and_wait(client, ids[i], &wo, NULL, &err);
		if (rc < 0 && rc != S0_ENOTFOUND) {
			failed++;
			fprintf(stderr, "warning: could not pause %s before closing (%s); its changes "
			                "since the last pause are lost\n",
			        ids[i], s0_error_message(err) ? s0_error_message(err) : "error");
		} else if (log && rc == 0) {
			fprintf(log, "Paused %s (filesystem, %.0f ms)\n", ids[i],
			        (mono_now_s() - t0) * 1000);
		}
		s0_error_free(err);
		err = NULL;
	}
	goto out;
fail:
	failed++;
	fprintf(stderr, "warning: could not list running sandboxes before closing (%s); their "
	                "changes since the last pause are lost\n",
	        err && s0_error_message(err) ? s0_error_message(err) : "error");
out:
	s0_error_free(err);
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	s0_sandbox_iter_free(it);
	s0_client_free(client);
	if (log)
		fflush(log);
	return failed;
}

void cli_disconnect(cli *c)
{
	s0_client_free(c->client);
	c->client = NULL;
	if (c->local)
		/* the next command's request resumes them; one with auto-resume off would
		 * stay paused, so it keeps the old behaviour (recovered on the next open) */
		cli_pause_running(c->local, true, 30000, NULL);
	s0_local_close(c->local);
	c->local = NULL;
	cj_free(config_root);
	config_root = NULL;
}
