/*
 * s0: the command line of libsandbox0 (docs/architecture.md; docs/decisions.md; docs/wire.md §5).
 *
 * `s0 sandbox …` mirrors the official CLI's commands and outputs; `s0
 * serve` runs the local backend over HTTP; `s0 demo` walks through the
 * lifecycle on an embedded backend. With no API URL configured the sandbox
 * commands use a per-user local server, started on first use.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const cli_flag root_flags[] = {
	{"output", 'o', FLAG_STR, "FORMAT", "output format: table, json or yaml (default table)"},
	{"api-url", 0, FLAG_STR, "URL", "API base URL (default: $SANDBOX0_BASE_URL, the profile's, "
	                                "else the per-user local server)"},
	{"token", 0, FLAG_STR, "TOKEN", "API token (default: $SANDBOX0_TOKEN, else the profile's)"},
	{"profile", 'p', FLAG_STR, "NAME", "configuration profile (default: current-profile, "
	                                   "else \"default\")"},
	{"config", 'c', FLAG_STR, "FILE", "configuration file (default ~/.s0/config.yaml)"},
	{"local", 0, FLAG_STR, "DIR", "embed a backend on DIR for this one command (no server)"},
	{"help", 'h', FLAG_BOOL, NULL, "show help"},
	{"version", 0, FLAG_BOOL, NULL, "print the version"},
	{0},
};

static int run_version(cli *c)
{
	(void)c;
	printf("s0 %s (libsandbox0 %s)\n", S0_VERSION_STRING, s0_version_string());
	return CLI_EXIT_OK;
}

static const cli_cmd cmd_version = {
	.name = "version", .summary = "Print the version", .run = run_version,
};

static const cli_cmd cmd_sandbox = {
	.name = "sandbox",
	.summary = "Manage sandboxes",
	.children = (const cli_cmd *const[]){
		&cmd_sandbox_create, &cmd_sandbox_get, &cmd_sandbox_list, &cmd_sandbox_status,
		&cmd_sandbox_update, &cmd_sandbox_delete, &cmd_sandbox_pause, &cmd_sandbox_resume,
		&cmd_sandbox_refresh, &cmd_sandbox_snapshot, &cmd_sandbox_fork, &cmd_sandbox_files,
		&cmd_sandbox_exec, &cmd_sandbox_run, &cmd_sandbox_attach, &cmd_sandbox_service, NULL},
	.details = "Not in this build: context, session, logs, events, metrics and network\n"
	           "commands (contexts and sessions are reachable through exec/run and the API).\n",
};

static int run_help(cli *c);

static const cli_cmd cmd_help = {
	.name = "help", .args = "[command…]", .summary = "Help about any command",
	.max_args = 8, .run = run_help,
};

static const char root_details[] =
	"Connection: --api-url > $SANDBOX0_BASE_URL > the profile's api-url;\n"
	"the token: --token > $SANDBOX0_TOKEN > the profile's token (${VAR} expanded).\n"
	"With no API URL at all, sandbox commands use the per-user local server: data in\n"
	"$S0_DATA_DIR or ~/.local/share/sandbox0, address in <data>/server.json, key in\n"
	"<data>/cli-token; it is started in the background (`s0 serve`) on first use.\n"
	"--local DIR embeds a backend on DIR for one command instead.\n"
	"\n"
	"Exit status: 0 success, 1 the operation failed, 2 bad usage.\n"
	"Not in this build: `s0 sandbox context|session|network` (contexts and sessions\n"
	"are reachable through `exec`/`run` and the API), auth and volumes.\n";

const cli_cmd cmd_root = {
	.name = "s0",
	.summary = "s0 - Sandbox0 command line (libsandbox0)",
	.flags = root_flags,
	.children = (const cli_cmd *const[]){&cmd_sandbox, &cmd_template, &cmd_serve, &cmd_demo,
	                                     &cmd_help, &cmd_version, NULL},
	.details = root_details,
};

static int run_help(cli *c)
{
	cli h = {0};
	h.path[0] = &cmd_root;
	h.depth = 1;
	for (int i = 0; i < c->nargs; i++) {
		const cli_cmd *cur = h.path[h.depth - 1], *next = NULL;
		for (const cli_cmd *const *ch = cur->children; ch && *ch; ch++)
			if (!strcmp((*ch)->name, c->args[i]))
				next = *ch;
		if (!next || h.depth == (int)(sizeof h.path / sizeof h.path[0]))
			return cli_usage_error(c, "unknown help topic \"%s\"", c->args[i]);
		h.path[h.depth++] = next;
	}
	cli_print_help(&h, stdout);
	return CLI_EXIT_OK;
}

int cli_load_config(cli *c);

int main(int argc, char **argv)
{
	static cli c;
	signal(SIGPIPE, SIG_IGN);
	int rc = cli_parse(&c, &cmd_root, argc, argv);
	if (rc)
		return rc;
	c.stdout_tty = isatty(STDOUT_FILENO);
	c.stderr_tty = isatty(STDERR_FILENO);
	const cli_cmd *leaf = c.path[c.depth - 1];
	if (opt_bool(&c, "help")) {
		cli_print_help(&c, stdout);
		return CLI_EXIT_OK;
	}
	if (opt_bool(&c, "version") && c.depth == 1)
		return run_version(&c);
	if (leaf->children && !leaf->run) {
		if (c.depth == 1 && c.nargs == 0) {
			cli_print_help(&c, stdout);
			return CLI_EXIT_OK;
		}
		return cli_usage_error(&c, "missing command for \"%s\"", leaf->name);
	}
	if (c.nargs < leaf->min_args || c.nargs > leaf->max_args) {
		if (leaf->min_args == leaf->max_args)
			return cli_usage_error(&c, "accepts %d arg(s), received %d", leaf->min_args,
			                       c.nargs);
		return cli_usage_error(&c, "accepts between %d and %d arg(s), received %d",
		                       leaf->min_args, leaf->max_args, c.nargs);
	}
	const char *fmt = opt_str(&c, "output");
	if (fmt) {
		if (!strcmp(fmt, "table"))
			c.format = OUT_TABLE;
		else if (!strcmp(fmt, "json"))
			c.format = OUT_JSON;
		else if (!strcmp(fmt, "yaml"))
			c.format = OUT_YAML;
		else
			return cli_usage_error(&c, "invalid output format \"%s\": want table, json or yaml",
			                       fmt);
		c.format_set = true;
	}
	if (opt_has(&c, "local") && opt_has(&c, "api-url"))
		return cli_usage_error(&c, "--local and --api-url cannot be used together");
	rc = cli_load_config(&c);
	if (rc)
		return rc;
	rc = leaf->run(&c);
	cli_disconnect(&c);
	fflush(stdout);
	return rc;
}
