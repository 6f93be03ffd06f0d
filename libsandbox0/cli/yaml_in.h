/* Reading YAML (and JSON, a subset of it) into the CLI's JSON tree. */
#ifndef S0_CLI_YAML_IN_H
#define S0_CLI_YAML_IN_H

#include "json.h"

/* Parse one YAML document; NULL and a malloc'd reason on failure. */
cj *yaml_load(const char *text, size_t len, char **why_out);

#endif
