/*
 * A deterministic stand-in for the lifecycle engine (engine.h), for router
 * tests that need exact control: canned records, and the next call failing
 * with a chosen (code, reason, message, retry-after, details).
 */
#ifndef S0_FAKE_ENGINE_H
#define S0_FAKE_ENGINE_H

#include "local/lifecycle/engine.h"

s0__engine *fake_engine_new(void);
void fake_engine_free(s0__engine *e);
/* The next engine call fails with this error (retry_after_ms -1 = none). */
void fake_fail_next(s0__engine *e, int code, const char *reason, const char *message,
                    int64_t retry_after_ms, const char *details_json);
/* The next pause reports accepted (202). */
void fake_pause_accepted(s0__engine *e);
/* The files namespace runtime access hands out (borrowed). */
struct s0__files_ns;
void fake_set_files(s0__engine *e, const struct s0__files_ns *ns);
/* Last arguments the fake saw (runtime_begin's wake budget goes to duration). */
typedef struct fake_seen {
	char team[96];
	char id[256];
	char template_id[300];
	char snapshot_id[128];
	bool memory;
	bool has_duration;
	int64_t duration;
	s0__list_filter filter;
	char filter_template[300];
	s0__fork_req fork;
	char idem[300];
	char name[300], description[1100];
	int64_t expires_at_ms;
	char *config_json;
	int calls;
} fake_seen;
const fake_seen *fake_last(s0__engine *e);

#endif
