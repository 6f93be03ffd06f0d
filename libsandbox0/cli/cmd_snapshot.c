/* `s0 sandbox snapshot create|list|get|delete|restore` (docs/wire.md §3.8, §5). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void snapshot_row(tbl *t, const s0_snapshot_info *s)
{
	char created[32], expires[32];
	const char *name = s0_snapshot_info_name(s);
	fmt_time(s0_snapshot_info_created_at_unix_ms(s), created, sizeof created);
	fmt_time(s0_snapshot_info_expires_at_unix_ms(s), expires, sizeof expires);
	tbl_add(t, s0_snapshot_info_id(s), s0_snapshot_info_sandbox_id(s), *name ? name : "-",
	        created, expires);
}

static int out_snapshot(cli *c, const s0_snapshot_info *s)
{
	if (c->format != OUT_TABLE)
		return out_json_text(c, s0_snapshot_info_json(s));
	tbl t;
	char created[32], expires[32];
	const char *name = s0_snapshot_info_name(s), *desc = s0_snapshot_info_description(s);
	fmt_time(s0_snapshot_info_created_at_unix_ms(s), created, sizeof created);
	fmt_time(s0_snapshot_info_expires_at_unix_ms(s), expires, sizeof expires);
	tbl_init(&t, 2);
	kv_add(&t, "ID:", s0_snapshot_info_id(s));
	kv_add(&t, "Sandbox ID:", s0_snapshot_info_sandbox_id(s));
	kv_add(&t, "Name:", *name ? name : "-");
	kv_add(&t, "Description:", *desc ? desc : "-");
	kv_add(&t, "Created At:", created);
	kv_add(&t, "Expires At:", expires);
	tbl_print(&t, stdout);
	tbl_free(&t);
	return CLI_EXIT_OK;
}

/* ---- create ---- */

static const cli_flag create_flags[] = {
	{"name", 'n', FLAG_STR, "NAME", "snapshot name"},
	{"description", 'd', FLAG_STR, "TEXT", "snapshot description"},
	{"expires-at", 0, FLAG_STR, "TIME", "expiry, RFC 3339 (e.g. 2030-01-02T15:04:05Z)"},
	{0},
};

static int run_create(cli *c)
{
	int64_t expires = 0;
	const char *exp = opt_str(c, "expires-at");
	if (exp && parse_rfc3339(exp, &expires) < 0)
		return cli_failf("building sandbox rootfs snapshot request",
		                 "invalid --expires-at \"%s\": expected RFC3339 timestamp", exp);
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_snapshot_info *s = NULL;
	s0_error *err = NULL;
	rc = s0_snapshot_create(c->client, c->args[0], opt_str(c, "name"),
	                        opt_str(c, "description"), expires, &s, &err);
	if (rc < 0)
		return cli_fail("creating sandbox rootfs snapshot", err, rc);
	rc = out_snapshot(c, s);
	s0_snapshot_info_free(s);
	return rc;
}

static const cli_cmd cmd_create = {
	.name = "create", .args = "<sandbox-id>",
	.summary = "Create a RootFS snapshot of a running or paused sandbox",
	.flags = create_flags, .min_args = 1, .max_args = 1, .run = run_create,
};

/* ---- list ---- */

static int run_list(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_snapshot_list *l = NULL;
	s0_error *err = NULL;
	rc = s0_snapshot_list_get(c->client, c->args[0], &l, &err);
	if (rc < 0)
		return cli_fail("listing sandbox rootfs snapshots", err, rc);
	size_t n = s0_snapshot_list_length(l);
	if (c->format != OUT_TABLE) {
		cj *o = cj_object(), *arr = cj_array();
		for (size_t i = 0; i < n; i++) {
			const char *json = s0_snapshot_info_json(s0_snapshot_list_at(l, i));
			cj *item = cj_parse(json, strlen(json), NULL);
			cj_push(arr, item ? item : cj_null());
		}
		cj_set(o, "snapshots", arr);
		cj_set(o, "count", cj_int(s0_snapshot_list_count(l)));
		rc = out_value(c, o);
		cj_free(o);
	} else if (!n) {
		printf("No sandbox rootfs snapshots found.\n");
	} else {
		tbl t;
		tbl_init(&t, 5);
		tbl_add(&t, "ID", "SANDBOX ID", "NAME", "CREATED", "EXPIRES");
		for (size_t i = 0; i < n; i++)
			snapshot_row(&t, s0_snapshot_list_at(l, i));
		tbl_print(&t, stdout);
		tbl_free(&t);
		printf("Total: %lld\n", (long long)s0_snapshot_list_count(l));
	}
	s0_snapshot_list_free(l);
	return rc;
}

static const cli_cmd cmd_list = {
	.name = "list", .args = "<sandbox-id>", .summary = "List a sandbox's RootFS snapshots",
	.min_args = 1, .max_args = 1, .run = run_list,
};

/* ---- get ---- */

static int run_get(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_snapshot_info *s = NULL;
	s0_error *err = NULL;
	rc = s0_snapshot_get(c->client, c->args[0], &s, &err);
	if (rc < 0)
		return cli_fail("getting sandbox rootfs snapshot", err, rc);
	rc = out_snapshot(c, s);
	s0_snapshot_info_free(s);
	return rc;
}

static const cli_cmd cmd_get = {
	.name = "get", .args = "<snapshot-id>", .summary = "Get RootFS snapshot details",
	.min_args = 1, .max_args = 1, .run = run_get,
};

/* ---- delete ---- */

static int run_delete(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_error *err = NULL;
	rc = s0_snapshot_delete(c->client, c->args[0], &err);
	if (rc < 0)
		return cli_fail("deleting sandbox rootfs snapshot", err, rc);
	printf("Sandbox rootfs snapshot %s deleted successfully\n", c->args[0]);
	return CLI_EXIT_OK;
}

static const cli_cmd cmd_delete = {
	.name = "delete", .args = "<snapshot-id>", .summary = "Delete a RootFS snapshot",
	.min_args = 1, .max_args = 1, .run = run_delete,
};

/* ---- restore ---- */

static int run_restore(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_lifecycle_result *res = NULL;
	s0_error *err = NULL;
	rc = s0_sandbox_restore(c->client, c->args[0], c->args[1], &res, &err);
	if (rc < 0)
		return cli_fail("restoring sandbox rootfs snapshot", err, rc);
	if (c->format != OUT_TABLE) {
		rc = out_json_text(c, s0_lifecycle_result_json(res));
	} else {
		tbl t;
		const char *snap = s0_lifecycle_result_snapshot_id(res);
		tbl_init(&t, 2);
		kv_add(&t, "Sandbox ID:", s0_lifecycle_result_sandbox_id(res));
		kv_add(&t, "Snapshot ID:", snap ? snap : c->args[1]);
		kv_add(&t, "Status:", s0_status_name(s0_lifecycle_result_status(res)));
		tbl_print(&t, stdout);
		tbl_free(&t);
	}
	s0_lifecycle_result_free(res);
	return rc;
}

static const cli_cmd cmd_restore = {
	.name = "restore", .args = "<sandbox-id> <snapshot-id>",
	.summary = "Restore a paused sandbox's RootFS from a snapshot",
	.min_args = 2, .max_args = 2, .run = run_restore,
};

const cli_cmd cmd_sandbox_snapshot = {
	.name = "snapshot",
	.summary = "Manage sandbox RootFS snapshots",
	.children = (const cli_cmd *const[]){&cmd_list, &cmd_get, &cmd_create, &cmd_delete,
	                                     &cmd_restore, NULL},
};
