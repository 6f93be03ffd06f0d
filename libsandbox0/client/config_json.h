#ifndef S0_CLIENT_CONFIG_JSON_H
#define S0_CLIENT_CONFIG_JSON_H

#include <cjson/cJSON.h>

#include "common/internal.h"

/* Render a config to a new JSON object (caller deletes). S0_EINVAL on bad input. */
int s0__config_to_json(const s0_sandbox_config *c, cJSON **out, s0_error **err);

#endif
