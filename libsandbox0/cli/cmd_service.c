/*
 * `s0 sandbox service list|apply|clear` (docs/wire.md "Public routes"): a
 * sandbox's public services, as the SDKs' getServices / updateServices /
 * clearServices; -o json|yaml prints the API's data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sandbox0/services.h>

#include "cli.h"
#include "yaml_in.h"

static void service_row(tbl *t, const cj *s)
{
	char port[16] = "-";
	const cj *p = cj_get(s, "port");
	if (cJSON_IsNumber(p))
		snprintf(port, sizeof port, "%d", p->valueint);
	const cj *in = cj_get(s, "ingress");
	const cj *url = cj_get(s, "public_url");
	int routes = cJSON_GetArraySize(cj_get(in, "routes"));
	char nroutes[16];
	snprintf(nroutes, sizeof nroutes, "%d", routes);
	tbl_add(t, cJSON_IsString(cj_get(s, "id")) ? cj_get(s, "id")->valuestring : "", port,
	        cJSON_IsTrue(cj_get(in, "public")) ? "yes" : "no", nroutes,
	        cJSON_IsString(url) ? url->valuestring : "-");
}

/* The answer as -o asks, or a table of its services. */
static int out_services(cli *c, const char *json)
{
	tbl t;
	tbl_init(&t, 5);
	tbl_add(&t, "SERVICE", "PORT", "PUBLIC", "ROUTES", "PUBLIC URL");
	return out_rows(c, json, "services", &t, service_row);
}

static int run_list(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	char *json = NULL;
	s0_error *err = NULL;
	int r = s0_sandbox_services_get(c->client, c->args[0], &json, &err);
	if (r < 0)
		return cli_fail("listing services", err, r);
	rc = out_services(c, json);
	s0_free(json);
	return rc;
}

static const cli_cmd cmd_list = {
	.name = "list", .args = "<sandbox-id>", .summary = "List a sandbox's services and public URLs",
	.min_args = 1, .max_args = 1, .run = run_list,
};

/* Replace the services with services_json (a JSON array text). */
static int replace(cli *c, const char *services_json, const char *doing)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	char *json = NULL;
	s0_error *err = NULL;
	int r = s0_sandbox_services_update(c->client, c->args[0], services_json, &json, &err);
	if (r < 0)
		return cli_fail(doing, err, r);
	rc = out_services(c, json);
	s0_free(json);
	return rc;
}

static const cli_flag apply_flags[] = {
	{"file", 'f', FLAG_STR, "FILE", "the services, YAML or JSON (- = stdin): a list, or a "
	                                "mapping with a `services` list"},
	{0},
};

static int run_apply(cli *c)
{
	const char *path = opt_str(c, "file");
	if (!path)
		return cli_usage_error(c, "--file is required");
	size_t len;
	char *text = read_all(path, &len);
	if (!text)
		return cli_failf("reading services", "read %s: %s", path, strerror(errno));
	char *why = NULL;
	cj *v = yaml_load(text, len, &why);
	free(text);
	if (!v) {
		int rc = cli_failf("reading services", "parse %s: %s", path, why);
		free(why);
		return rc;
	}
	const cj *list = cJSON_IsObject(v) ? cj_get(v, "services") : v;
	if (!cJSON_IsArray(list)) {
		cj_free(v);
		return cli_failf("reading services", "%s: want a list of services", path);
	}
	char *json = cj_compact(list);
	int rc = replace(c, json, "applying services");
	free(json);
	cj_free(v);
	return rc;
}

static const cli_cmd cmd_apply = {
	.name = "apply", .args = "<sandbox-id>",
	.summary = "Replace a sandbox's services (PUT …/services)", .flags = apply_flags,
	.min_args = 1, .max_args = 1, .run = run_apply,
	.details = "A service: id, port, runtime {type: cmd|manual|function, command: [...]},\n"
	           "ingress {public, routes: [{id, path_prefix, methods, rewrite_prefix,\n"
	           "timeout_seconds, resume}]}. A route with resume: true wakes the paused\n"
	           "sandbox on inbound HTTP; it needs auto_resume and a cmd or function runtime.\n",
};

static int run_clear(cli *c)
{
	return replace(c, "[]", "clearing services");
}

static const cli_cmd cmd_clear = {
	.name = "clear", .args = "<sandbox-id>", .summary = "Remove a sandbox's services",
	.min_args = 1, .max_args = 1, .run = run_clear,
};

const cli_cmd cmd_sandbox_service = {
	.name = "service",
	.summary = "Manage a sandbox's public services (exposed ports and routes)",
	.children = (const cli_cmd *const[]){&cmd_list, &cmd_apply, &cmd_clear, NULL},
};
