/*
 * `s0 sandbox create|get|list|status|update|delete|refresh` (docs/wire.md §3.1–3.7, §5):
 * the official CLI's flags and outputs.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "yaml_in.h"

/* ---- shared ---- */

/* Read -f FILE (YAML or JSON, "-" = stdin) as an object. */
static int read_object_file(const char *path, const char *doing, cj **out)
{
	size_t len;
	char *text = read_all(path, &len);
	if (!text)
		return cli_failf(doing, "read %s: %s", path, strerror(errno));
	char *why = NULL;
	cj *v = yaml_load(text, len, &why);
	free(text);
	if (!v) {
		int rc = cli_failf(doing, "parse %s: %s", path, why);
		free(why);
		return rc;
	}
	if (!cJSON_IsObject(v)) {
		cj_free(v);
		return cli_failf(doing, "%s: want a mapping (object) at the top level", path);
	}
	*out = v;
	return CLI_EXIT_OK;
}

/* --ttl/--hard-ttl/--memory into @cfg; returns 2 on a usage error, else 0. */
static int config_flags(cli *c, s0_sandbox_config *cfg, bool *any)
{
	long long v;
	int r;
	if ((r = opt_int(c, "ttl", 0, INT32_MAX, &v)) < 0)
		return CLI_EXIT_USAGE;
	if (r) {
		cfg->set |= S0_CONFIG_SET_TTL;
		cfg->ttl_sec = (int32_t)v;
		*any = true;
	}
	if ((r = opt_int(c, "hard-ttl", 0, INT32_MAX, &v)) < 0)
		return CLI_EXIT_USAGE;
	if (r) {
		cfg->set |= S0_CONFIG_SET_HARD_TTL;
		cfg->hard_ttl_sec = (int32_t)v;
		*any = true;
	}
	if (opt_str(c, "memory")) {
		cfg->memory = opt_str(c, "memory");
		*any = true;
	}
	return 0;
}

static int out_sandbox(cli *c, const s0_sandbox_info *sb)
{
	if (c->format != OUT_TABLE)
		return out_json_text(c, s0_sandbox_info_json(sb));
	print_sandbox_table(sb, stdout);
	return CLI_EXIT_OK;
}

/* ---- create ---- */

static const cli_flag create_flags[] = {
	{"template", 't', FLAG_STR, "ID", "template ID (required unless the config file has one)"},
	{"config-file", 'f', FLAG_STR, "FILE", "sandbox config or claim request, YAML or JSON "
	                                       "(- = stdin)"},
	{"ttl", 0, FLAG_INT, "SEC", "soft TTL in seconds"},
	{"hard-ttl", 0, FLAG_INT, "SEC", "hard TTL in seconds"},
	{"memory", 0, FLAG_STR, "QTY", "memory limit, e.g. 512Mi or 2Gi"},
	{"mount", 0, FLAG_LIST, "VOL:/PATH", "bootstrap volume mount (not in this build)"},
	{"snapshot-id", 0, FLAG_STR, "ID", "RootFS snapshot to initialise the sandbox from"},
	{0},
};

static int run_create(cli *c)
{
	const char *doing = "building sandbox create request";
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cj *file = NULL, *file_config = NULL;
	char *extra = NULL;
	bool any = false;
	int rc = config_flags(c, &cfg, &any);
	if (rc)
		return rc;
	if (opt_has(c, "mount"))
		return cli_failf(doing, "--mount needs sandbox volumes, which this build does not have");
	const char *tmpl = NULL, *snapshot = NULL;
	if (opt_str(c, "config-file")) {
		rc = read_object_file(opt_str(c, "config-file"), doing, &file);
		if (rc)
			return rc;
		bool is_claim = cj_get(file, "template") || cj_get(file, "config") ||
		                cj_get(file, "snapshot_id") || cj_get(file, "mounts");
		if (is_claim) {
			tmpl = cj_get_str(file, "template");
			snapshot = cj_get_str(file, "snapshot_id");
			const cj *mounts = cj_get(file, "mounts");
			if (cJSON_IsArray(mounts) && mounts->child) {
				cj_free(file);
				return cli_failf(doing, "mounts need sandbox volumes, which this build does "
				                        "not have");
			}
			file_config = cj_take(file, "config");
		} else {
			file_config = cj_dup(file);
		}
		if (file_config && !cJSON_IsObject(file_config)) {
			rc = cli_failf(doing, "config: want a mapping (object)");
			goto out;
		}
		if (file_config && file_config->child) {
			extra = cj_compact(file_config);
			cfg.extra_json = extra;
			any = true;
		}
	}
	if (opt_str(c, "template"))
		tmpl = opt_str(c, "template");
	if (opt_str(c, "snapshot-id"))
		snapshot = opt_str(c, "snapshot-id");
	if (!tmpl || !*tmpl) {
		rc = cli_failf(doing, "--template is required unless provided in config file");
		goto out;
	}
	if ((rc = cli_connect(c)))
		goto out;
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	int r = s0_sandbox_claim(c->client, tmpl, snapshot, any ? &cfg : NULL, &sb, &err);
	if (r < 0) {
		rc = cli_fail("creating sandbox", err, r);
		goto out;
	}
	const char *json = s0_sandbox_info_json(sb);
	cj *raw = cj_parse(json, strlen(json), NULL);
	if (c->format != OUT_TABLE) {
		/* the official CLI's create output: {id, template, cluster_id?, pod_name, status,
		 * bootstrap_mounts} */
		cj *o = cj_object();
		cj_set(o, "id", cj_str(s0_sandbox_info_id(sb)));
		cj_set(o, "template", cj_str(s0_sandbox_info_template_id(sb)));
		const cj *cluster = cj_get(raw, "cluster_id");
		if (!cj_is_null(cluster))
			cj_set(o, "cluster_id", cj_dup(cluster));
		cj_set(o, "pod_name", cj_str(s0_sandbox_info_pod_name(sb)));
		cj_set(o, "status", cj_str(s0_status_name(s0_sandbox_info_status(sb))));
		const cj *mounts = cj_get(raw, "bootstrap_mounts");
		cj_set(o, "bootstrap_mounts", mounts ? cj_dup(mounts) : cj_null());
		rc = out_value(c, o);
		cj_free(o);
	} else {
		tbl t;
		tbl_init(&t, 2);
		kv_add(&t, "ID:", s0_sandbox_info_id(sb));
		kv_add(&t, "Template:", s0_sandbox_info_template_id(sb));
		kv_add(&t, "Status:", s0_status_name(s0_sandbox_info_status(sb)));
		if (cj_get_str(raw, "cluster_id"))
			kv_add(&t, "Cluster ID:", cj_get_str(raw, "cluster_id"));
		if (*s0_sandbox_info_pod_name(sb))
			kv_add(&t, "Pod Name:", s0_sandbox_info_pod_name(sb));
		tbl_print(&t, stdout);
		tbl_free(&t);
	}
	cj_free(raw);
	s0_sandbox_info_free(sb);
out:
	free(extra);
	cj_free(file_config);
	cj_free(file);
	return rc;
}

const cli_cmd cmd_sandbox_create = {
	.name = "create", .summary = "Create (claim) a new sandbox", .flags = create_flags,
	.run = run_create,
};

/* ---- get ---- */

static int run_get(cli *c)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	int rc = cli_connect(c);
	if (rc)
		return rc;
	rc = s0_sandbox_get(c->client, c->args[0], &sb, &err);
	if (rc < 0)
		return cli_fail("getting sandbox", err, rc);
	rc = out_sandbox(c, sb);
	s0_sandbox_info_free(sb);
	return rc;
}

const cli_cmd cmd_sandbox_get = {
	.name = "get", .args = "<sandbox-id>", .summary = "Get sandbox details",
	.min_args = 1, .max_args = 1, .run = run_get,
};

/* ---- list ---- */

static const cli_flag list_flags[] = {
	{"status", 0, FLAG_STR, "STATUS", "filter by status (starting, running, paused, "
	                                  "terminating, failed)"},
	{"template-id", 0, FLAG_STR, "ID", "filter by template ID"},
	{"paused", 0, FLAG_STR, "BOOL", "filter by paused state (true/false)"},
	{"limit", 0, FLAG_INT, "N", "maximum number of results, 1..200 (default 50)"},
	{"offset", 0, FLAG_INT, "N", "pagination offset"},
	{0},
};

static int run_list(cli *c)
{
	s0_list_options lo = S0_LIST_OPTIONS_INIT;
	long long v;
	const char *st = opt_str(c, "status"), *paused = opt_str(c, "paused");
	if (st) {
		lo.status = s0_status_from_name(st);
		if (lo.status == S0_STATUS_UNKNOWN)
			return cli_usage_error(c, "invalid --status \"%s\": want starting, running, "
			                          "paused, terminating or failed", st);
	}
	if (paused) {
		if (strcmp(paused, "true") && strcmp(paused, "false"))
			return cli_usage_error(c, "invalid --paused \"%s\": want true or false", paused);
		lo.paused = !strcmp(paused, "true") ? S0_BOOL_TRUE : S0_BOOL_FALSE;
	}
	lo.template_id = opt_str(c, "template-id");
	lo.limit = 50;
	int r = opt_int(c, "limit", 1, 200, &v);
	if (r < 0)
		return CLI_EXIT_USAGE;
	if (r)
		lo.limit = (int32_t)v;
	if ((r = opt_int(c, "offset", 0, INT32_MAX, &v)) < 0)
		return CLI_EXIT_USAGE;
	if (r)
		lo.offset = (int32_t)v;
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_sandbox_page *page = NULL;
	s0_error *err = NULL;
	rc = s0_sandbox_list(c->client, &lo, &page, &err);
	if (rc < 0)
		return cli_fail("listing sandboxes", err, rc);
	size_t n = s0_sandbox_page_length(page);
	if (c->format != OUT_TABLE) {
		/* the Go SDK's ListSandboxesResponse, which the official CLI prints as is */
		cj *o = cj_object(), *arr = cj_array();
		for (size_t i = 0; i < n; i++) {
			const char *json = s0_sandbox_info_json(s0_sandbox_page_at(page, i));
			cj *item = cj_parse(json, strlen(json), NULL);
			cj_push(arr, item ? item : cj_null());
		}
		cj_set(o, "Sandboxes", arr);
		cj_set(o, "Count", cj_int(s0_sandbox_page_count(page)));
		cj_set(o, "HasMore", cj_bool(s0_sandbox_page_has_more(page)));
		rc = out_value(c, o);
		cj_free(o);
	} else if (!n) {
		printf("No sandboxes found.\n");
	} else {
		tbl t;
		tbl_init(&t, 6);
		tbl_add(&t, "ID", "TEMPLATE ID", "STATUS", "PAUSED", "CREATED AT", "HARD EXPIRES AT");
		for (size_t i = 0; i < n; i++) {
			const s0_sandbox_info *sb = s0_sandbox_page_at(page, i);
			char created[32], hard[32];
			fmt_time(s0_sandbox_info_created_at_unix_ms(sb), created, sizeof created);
			fmt_time(s0_sandbox_info_hard_expires_at_unix_ms(sb), hard, sizeof hard);
			tbl_add(&t, s0_sandbox_info_id(sb), s0_sandbox_info_template_id(sb),
			        s0_status_name(s0_sandbox_info_status(sb)),
			        s0_sandbox_info_paused(sb) ? "true" : "false", created, hard);
		}
		tbl_print(&t, stdout);
		tbl_free(&t);
		printf("Total: %lld%s\n", (long long)s0_sandbox_page_count(page),
		       s0_sandbox_page_has_more(page) ? " (more available)" : "");
	}
	s0_sandbox_page_free(page);
	return rc;
}

const cli_cmd cmd_sandbox_list = {
	.name = "list", .summary = "List sandboxes", .flags = list_flags, .run = run_list,
};

/* ---- status ---- */

static int run_status(cli *c)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	int rc = cli_connect(c);
	if (rc)
		return rc;
	rc = s0_sandbox_status(c->client, c->args[0], &sb, &err);
	if (rc < 0)
		return cli_fail("getting sandbox status", err, rc);
	if (c->format != OUT_TABLE) {
		rc = out_json_text(c, s0_sandbox_info_json(sb));
	} else {
		tbl t;
		char claimed[32], soft[32], hard[32], created[32];
		fmt_time(s0_sandbox_info_claimed_at_unix_ms(sb), claimed, sizeof claimed);
		fmt_time(s0_sandbox_info_expires_at_unix_ms(sb), soft, sizeof soft);
		fmt_time(s0_sandbox_info_hard_expires_at_unix_ms(sb), hard, sizeof hard);
		fmt_time(s0_sandbox_info_created_at_unix_ms(sb), created, sizeof created);
		tbl_init(&t, 2);
		kv_add(&t, "Status:", s0_status_name(s0_sandbox_info_status(sb)));
		kv_add(&t, "Claimed At:", claimed);
		kv_add(&t, "Soft Expires At:", soft);
		kv_add(&t, "Hard Expires At:", hard);
		kv_add(&t, "Created At:", created);
		tbl_print(&t, stdout);
		tbl_free(&t);
	}
	s0_sandbox_info_free(sb);
	return rc;
}

const cli_cmd cmd_sandbox_status = {
	.name = "status", .args = "<sandbox-id>", .summary = "Get sandbox status",
	.min_args = 1, .max_args = 1, .run = run_status,
};

/* ---- update ---- */

static const cli_flag update_flags[] = {
	{"config-file", 'f', FLAG_STR, "FILE", "sandbox update config, YAML or JSON (- = stdin)"},
	{"ttl", 0, FLAG_INT, "SEC", "soft TTL in seconds (0 disables)"},
	{"hard-ttl", 0, FLAG_INT, "SEC", "hard TTL in seconds (0 disables)"},
	{"memory", 0, FLAG_STR, "QTY", "memory limit, e.g. 512Mi or 2Gi"},
	{"auto-resume", 0, FLAG_STR, "BOOL", "wake on access (true/false)"},
	{0},
};

static int run_update(cli *c)
{
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	bool any = false;
	cj *file = NULL;
	char *extra = NULL;
	int rc = config_flags(c, &cfg, &any);
	if (rc)
		return rc;
	const char *ar = opt_str(c, "auto-resume");
	if (ar) {
		if (strcmp(ar, "true") && strcmp(ar, "false"))
			return cli_usage_error(c, "invalid --auto-resume \"%s\": want true or false", ar);
		cfg.auto_resume = !strcmp(ar, "true") ? S0_BOOL_TRUE : S0_BOOL_FALSE;
		any = true;
	}
	if (opt_str(c, "config-file")) {
		rc = read_object_file(opt_str(c, "config-file"), "building sandbox update config",
		                      &file);
		if (rc)
			return rc;
		cj *inner = cj_take(file, "config");
		if (inner) {
			cj_free(file);
			file = inner;
		}
		if (cJSON_IsObject(file) && file->child) {
			extra = cj_compact(file);
			cfg.extra_json = extra;
			any = true;
		}
	}
	if (!any) {
		cj_free(file);
		return cli_usage_error(c, "at least one update input is required (--config-file, "
		                          "--ttl, --hard-ttl, --memory, --auto-resume)");
	}
	rc = cli_connect(c);
	if (!rc) {
		s0_sandbox_info *sb = NULL;
		s0_error *err = NULL;
		int r = s0_sandbox_update(c->client, c->args[0], &cfg, &sb, &err);
		if (r < 0) {
			rc = cli_fail("updating sandbox", err, r);
		} else {
			rc = out_sandbox(c, sb);
			s0_sandbox_info_free(sb);
		}
	}
	free(extra);
	cj_free(file);
	return rc;
}

const cli_cmd cmd_sandbox_update = {
	.name = "update", .args = "<sandbox-id>", .summary = "Update sandbox configuration",
	.flags = update_flags, .min_args = 1, .max_args = 1, .run = run_update,
};

/* ---- delete ---- */

static int run_delete(cli *c)
{
	s0_error *err = NULL;
	int rc = cli_connect(c);
	if (rc)
		return rc;
	rc = s0_sandbox_delete(c->client, c->args[0], &err);
	if (rc < 0)
		return cli_fail("deleting sandbox", err, rc);
	printf("Sandbox %s deleted successfully\n", c->args[0]);
	return CLI_EXIT_OK;
}

const cli_cmd cmd_sandbox_delete = {
	.name = "delete", .args = "<sandbox-id>", .summary = "Delete a sandbox",
	.min_args = 1, .max_args = 1, .run = run_delete,
};

/* ---- refresh ---- */

static int run_refresh(cli *c)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	int rc = cli_connect(c);
	if (rc)
		return rc;
	rc = s0_sandbox_refresh(c->client, c->args[0], 0, &sb, &err);
	if (rc < 0)
		return cli_fail("refreshing sandbox", err, rc);
	if (c->format != OUT_TABLE) {
		rc = out_json_text(c, s0_sandbox_info_json(sb));
	} else {
		tbl t;
		char soft[32], hard[32];
		fmt_time(s0_sandbox_info_expires_at_unix_ms(sb), soft, sizeof soft);
		fmt_time(s0_sandbox_info_hard_expires_at_unix_ms(sb), hard, sizeof hard);
		tbl_init(&t, 2);
		kv_add(&t, "Sandbox ID:", s0_sandbox_info_id(sb));
		kv_add(&t, "Soft Expires At:", soft);
		kv_add(&t, "Hard Expires At:", hard);
		tbl_print(&t, stdout);
		tbl_free(&t);
	}
	s0_sandbox_info_free(sb);
	return rc;
}

const cli_cmd cmd_sandbox_refresh = {
	.name = "refresh", .args = "<sandbox-id>", .summary = "Refresh sandbox TTL",
	.min_args = 1, .max_args = 1, .run = run_refresh,
};
