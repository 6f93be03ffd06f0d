/*
 * The `--runtime` option of `s0 serve` and `s0 demo` (docs/local-backend.md
 * "Runtime gvisor"): which runtime they ask the backend for, and the line
 * saying which one it chose and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "runtime_opt.h"

const char *cli_runtime_wanted(const cli *c)
{
	const char *name = opt_str(c, "runtime");
	if (!name || !*name)
		name = getenv("S0_RUNTIME");
	return name && *name ? name : "auto";
}

char *cli_runtime_chosen(s0_local *local, char **reason_out)
{
	char *json = NULL;
	char *name = NULL;
	*reason_out = NULL;
	if (s0_local_inspect(local, NULL, &json, NULL) == S0_OK && json) {
		cj *v = cj_parse(json, strlen(json), NULL);
		const cj *rt = cj_get(cj_get(v, "node"), "runtime");
		const char *n = cj_get_str(rt, "name");
		const char *why = cj_get_str(rt, "reason");
		name = xstrdup(n ? n : "sim");
		if (why && *why)
			*reason_out = xstrdup(why);
		cj_free(v);
	}
	s0_free(json);
	return name ? name : xstrdup("sim");
}

void cli_runtime_say(const char *prog, const char *wanted, s0_local *local)
{
	char *why = NULL;
	char *name = cli_runtime_chosen(local, &why);
	if (!strcmp(wanted, "auto"))
		fprintf(stderr, "%s: runtime auto: %s%s%s%s\n", prog, name, why ? " (" : "",
		        why ? why : "", why ? ")" : "");
	free(name);
	free(why);
}
