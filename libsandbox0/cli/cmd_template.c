/*
 * `s0 template build|list|get|delete` (docs/local-backend.md "Templates"):
 * templates of the caller's team through the C client, so against a
 * server (--api-url, the per-user local server) and embedded (--local DIR)
 * alike. `build` sends a tar archive: --from-tar as given, --from-dir
 * archived here (tarball.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sandbox0/templates.h>

#include "cli.h"
#include "tarball.h"

static void template_row(tbl *t, const cj *v)
{
	int64_t created = 0;
	char ctext[32];
	const char *cs = cj_get_str(v, "created_at");
	if (cs)
		parse_rfc3339(cs, &created);
	fmt_time(created, ctext, sizeof ctext);
	tbl_add(t, cj_get_str(v, "template_id"), cj_get_str(v, "scope"), ctext);
}

/* Print a template (JSON text from the library) as -o json/yaml or a table. */
static int out_template(cli *c, const char *json)
{
	if (c->format != OUT_TABLE)
		return out_json_text(c, json);
	cj *v = cj_parse(json, strlen(json), NULL);
	char ctext[32], utext[32];
	int64_t created = 0, updated = 0;
	if (cj_get_str(v, "created_at"))
		parse_rfc3339(cj_get_str(v, "created_at"), &created);
	if (cj_get_str(v, "updated_at"))
		parse_rfc3339(cj_get_str(v, "updated_at"), &updated);
	fmt_time(created, ctext, sizeof ctext);
	fmt_time(updated, utext, sizeof utext);
	tbl t;
	tbl_init(&t, 2);
	kv_add(&t, "Template ID:", cj_get_str(v, "template_id"));
	kv_add(&t, "Scope:", cj_get_str(v, "scope"));
	kv_add(&t, "Team ID:", cj_get_str(v, "team_id") ? cj_get_str(v, "team_id") : "-");
	kv_add(&t, "Created At:", ctext);
	kv_add(&t, "Updated At:", utext);
	tbl_print(&t, stdout);
	tbl_free(&t);
	cj_free(v);
	return CLI_EXIT_OK;
}

/* ---- build ---- */

static const cli_flag build_flags[] = {
	{"from-dir", 0, FLAG_STR, "DIR", "build from this directory tree"},
	{"from-tar", 0, FLAG_STR, "FILE", "build from this tar archive (plain or compressed)"},
	{"name", 0, FLAG_STR, "NAME", "template ID (default: the directory's or file's base name)"},
	{0},
};

/* The base name of path without a trailing '/' or a tar extension. */
static char *default_name(const char *path)
{
	char *copy = xstrdup(path);
	size_t n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = 0;
	const char *slash = strrchr(copy, '/');
	char *base = xstrdup(slash ? slash + 1 : copy);
	static const char *const exts[] = {".tar.gz", ".tar.xz", ".tar.zst", ".tar.bz2",
	                                   ".tgz", ".tar"};
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		size_t bl = strlen(base), el = strlen(exts[i]);
		if (bl > el && !strcmp(base + bl - el, exts[i])) {
			base[bl - el] = 0;
			break;
		}
	}
	free(copy);
	return base;
}

static int run_build(cli *c)
{
	const char *dir = opt_str(c, "from-dir"), *tar = opt_str(c, "from-tar");
	if (!dir == !tar)
		return cli_usage_error(c, "give exactly one of --from-dir DIR and --from-tar FILE");
	char *name = opt_str(c, "name") ? xstrdup(opt_str(c, "name")) : default_name(dir ? dir : tar);
	char *data = NULL, *why = NULL;
	size_t len = 0;
	int rc = CLI_EXIT_OK;
	if (dir && tarball_from_dir(dir, &data, &len, &why) < 0) {
		rc = cli_failf("archiving the directory", "%s", why);
	} else if (tar && !(data = read_all(tar, &len))) {
		rc = cli_failf("reading the tar file", "%s: %s", tar, strerror(errno));
	} else if ((rc = cli_connect(c)) == CLI_EXIT_OK) {
		char *json = NULL;
		s0_error *err = NULL;
		int r = s0_template_create_tar(c->client, name, data, len, &json, &err);
		rc = r < 0 ? cli_fail("building the template", err, r) : out_template(c, json);
		s0_free(json);
	}
	free(why);
	free(data);
	free(name);
	return rc;
}

static const cli_cmd cmd_build = {
	.name = "build", .summary = "Build a template of your team from a directory or a tar file",
	.flags = build_flags, .run = run_build,
	.details = "The tree becomes the RootFS of every sandbox claimed from the template. The\n"
	           "server refuses absolute paths, \"..\", entries through symbolic links, device\n"
	           "nodes, FIFOs and sockets; content over 1 GiB or archives over 256 MiB.\n",
};

/* ---- list, get, delete ---- */

static int run_list(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	char *json = NULL;
	s0_error *err = NULL;
	int r = s0_template_list(c->client, &json, &err);
	if (r < 0)
		return cli_fail("listing templates", err, r);
	tbl t;
	tbl_init(&t, 3);
	tbl_add(&t, "TEMPLATE ID", "SCOPE", "CREATED");
	rc = out_rows(c, json, "templates", &t, template_row);
	s0_free(json);
	return rc;
}

static const cli_cmd cmd_list = {
	.name = "list", .summary = "List the templates your team can use", .run = run_list,
};

static int run_get(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	char *json = NULL;
	s0_error *err = NULL;
	int r = s0_template_get(c->client, c->args[0], &json, &err);
	if (r < 0)
		return cli_fail("getting template", err, r);
	rc = out_template(c, json);
	s0_free(json);
	return rc;
}

static const cli_cmd cmd_get = {
	.name = "get", .args = "<template-id>", .summary = "Show a template",
	.min_args = 1, .max_args = 1, .run = run_get,
};

static int run_delete(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_error *err = NULL;
	int r = s0_template_delete(c->client, c->args[0], &err);
	if (r < 0)
		return cli_fail("deleting template", err, r);
	if (c->format != OUT_TABLE) {
		cj *o = cj_object();
		cj_set(o, "message", cj_str("template deleted"));
		rc = out_value(c, o);
		cj_free(o);
	} else {
		printf("Template %s deleted.\n", c->args[0]);
	}
	return rc;
}

static const cli_cmd cmd_delete = {
	.name = "delete", .args = "<template-id>",
	.summary = "Delete a template of your team (refused while sandboxes use it)",
	.min_args = 1, .max_args = 1, .run = run_delete,
};

const cli_cmd cmd_template = {
	.name = "template",
	.summary = "Manage templates",
	.children = (const cli_cmd *const[]){&cmd_build, &cmd_list, &cmd_get, &cmd_delete, NULL},
};
