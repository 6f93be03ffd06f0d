/*
 * Fuzz target: the checks every piece of hostile JSON and header text goes
 * through before it is believed — s0__json_check and s0__json_parse_arg
 * (common/json.h), the router's duplicate-key check and path decoding
 * (local/api/router.h), RFC 3339 and Retry-After parsing, query lookup
 * (common/http.h) and the public s0_sandbox_info_parse.
 *
 * Input: one selector byte, then the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/http.h"
#include "common/json.h"
#include "local/api/router.h"
#include "sandbox0/sandbox.h"

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	int sel = data[0] % 6;
	char *t = malloc(size);
	if (!t)
		return 0;
	memcpy(t, data + 1, size - 1);
	t[size - 1] = 0;
	size_t len = size - 1;
	switch (sel) {
	case 0: {
		/* the router's order: structural check, parse, duplicate keys */
		const char *bad = s0__json_check(t, len, S0__ROUTER_JSON_DEPTH_MAX);
		if (!bad) {
			cJSON *j = cJSON_ParseWithLength(t, len);
			int rc = S0_OK;
			const char *dup = j ? s0__json_duplicate_key(j, &rc) : NULL;
			if (dup)
				sink += strlen(dup);
			char *back = j ? s0__json_print(j) : NULL;
			free(back);
			cJSON_Delete(j);
		} else {
			sink += strlen(bad);
		}
		break;
	}
	case 1: {
		s0_error *err = NULL;
		cJSON *j = s0__json_parse_arg(t, "arg", &err);
		if (!j && !err)
			abort(); /* a failure must say why */
		if (j) {
			static const char *const keys[] = {"template", "config", "memory", NULL};
			s0_error *e2 = NULL;
			s0__json_check_keys(j, keys, "body", "invalid_argument", &e2);
			s0_error_free(e2);
			sink += (size_t)s0__json_i64(j, "memory", 0) + (size_t)s0__json_time(j, "expires_at");
		}
		cJSON_Delete(j);
		s0_error_free(err);
		break;
	}
	case 2: {
		int64_t ms = 0;
		if (s0__time_parse_rfc3339(t, &ms) == 0) {
			char buf[64];
			s0__time_format_rfc3339(ms, buf, sizeof buf);
			int64_t back = 0;
			/* what we write must read back as the same instant */
			if (ms >= S0__RFC3339_MIN_MS && ms <= S0__RFC3339_MAX_MS &&
			    (s0__time_parse_rfc3339(buf, &back) != 0 || back != ms))
				abort();
		}
		sink += (size_t)s0__retry_after_parse(t, 1767225600000LL);
		break;
	}
	case 3: {
		bool present = false;
		char *v = s0__query_get(t, "path", &present);
		if (v && !present)
			abort();
		free(v);
		v = s0__query_get(t, "recursive", &present);
		free(v);
		break;
	}
	case 4: {
		char *out = NULL;
		int rc = s0__router_decode_path(t, &out);
		if (rc == 0 && (!out || strlen(out) > len))
			abort(); /* decoding never grows a path */
		free(out);
		break;
	}
	default: {
		s0_sandbox_info *i = NULL;
		s0_error *err = NULL;
		if (s0_sandbox_info_parse(t, &i, &err) == S0_OK) {
			const char *id = s0_sandbox_info_id(i);
			sink += id ? strlen(id) : 0;
		}
		s0_sandbox_info_free(i);
		s0_error_free(err);
		break;
	}
	}
	free(t);
	return 0;
}
