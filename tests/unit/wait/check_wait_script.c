/*
 * Table-driven scripted server behaviours for pause_and_wait,
 * resume_and_wait and s0_sandbox_wait (docs/behaviours.md CL-01..CL-10).
 *
 * Each row is one scripted server (fake_transport.h) on a manual clock with
 * virtual time, and asserts the exact request sequence, the outcome, and
 * where it matters the clock time of every request. Every row also checks
 * the invariants of every wait:
 *  - CL-09: every POST carries exactly the configured memory body (a memory
 *    wait never sends anything but {"memory":true});
 *  - CL-06: no request starts at or after the deadline, each request's
 *    timeout is capped by the time left, and the call never returns later
 *    than the deadline;
 *  - the script was not overrun, and nothing leaked.
 * Jitter is off in the table (S0_WAIT_NO_JITTER), so the default schedule is
 * 0, 100, 250, 475, 812, 1312, then every 500 ms.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "fake_transport.h"
#include "wait_suites.h"

typedef enum kind { K_PAUSE, K_RESUME, K_WAIT } kind;

/* A connection refused (nothing sent) that takes 5 s of the manual clock. */
#define UNSENT_5S {.kind = FT_FAIL_UNSENT, .delay_ms = 5000}

typedef struct wcase {
	const char *name;       /* behaviour, with the docs/behaviours.md rows */
	kind kind;
	int32_t memory;
	int64_t timeout_ms;     /* 0 = default */
	uint32_t flags;         /* S0_WAIT_NO_JITTER is always added */
	uint32_t until_mask;    /* K_WAIT */
	s0_wait_predicate pred; /* K_WAIT */
	ft_step script[16];     /* zero-filled tail: FT_END */
	const char *requests;   /* exact sequence; "A, B, ..." = A, B, then only GETs */
	size_t nreq;            /* number of requests, 0 skip */
	int rc;
	const char *reason;     /* error reason, or NULL not to check */
	const char *action;     /* error action, or NULL not to check */
	const char *last;       /* out (success) or the error's last sandbox; "(none)"; NULL skip */
	int http_status;        /* the error's HTTP status, 0 skip */
	const char *times;      /* request times, or NULL skip */
	int64_t end_ms;         /* clock at return, 0 skip */
	int cause;              /* the error's cause code, 0 skip */
} wcase;

#define RUNNING_MASK S0_STATUS_MASK(S0_STATUS_RUNNING)

/* K_WAIT predicate: `failed` is a lifecycle failure, running is done. */
static int fail_on_failed(const s0_sandbox_info *i, void *payload)
{
	(void)payload;
	if (s0_sandbox_info_status(i) == S0_STATUS_FAILED)
		return S0_ELIFECYCLE;
	return s0_sandbox_info_status(i) == S0_STATUS_RUNNING;
}

static const wcase cases[] = {
	/* ---- pause: acceptance and completion (CL-01, CL-02) ---- */
	{.name = "CL-01/CL-02 pause commits after 3 polls",
	 .script = {PAUSE_OK(200, "false", "running"), SB("running,0,1"), SB("running,0,1"),
	            SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET, GET", .last = "paused,1,1", .times = "0,0,100,250"},
	{.name = "CL-01 202 Accepted then commit",
	 .script = {PAUSE_OK(202, "false", "running"), SB("running,0,1"), SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET", .last = "paused,1,1"},
	{.name = "CL-01 already paused: 200 paused:true, one confirming GET",
	 .script = {PAUSE_OK(200, "true", "paused"), SB("paused,1,1")},
	 .requests = "POST /pause, GET", .last = "paused,1,1", .times = "0,0"},
	{.name = "CL-02 repeated pause stays paused:false until cleanup",
	 .script = {PAUSE_OK(200, "false", "paused"), SB("paused,0,1"), SB("paused,0,1"),
	            SB("paused,0,1"), SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET, GET, GET", .last = "paused,1,1",
	 .times = "0,0,100,250,475"},
	{.name = "CL-02 status paused with paused:false never ends the wait",
	 .timeout_ms = 1000,
	 .script = {PAUSE_OK(200, "false", "running"), SB_FOREVER("paused,0,1")},
	 .requests = "POST /pause, GET, GET, GET, GET, GET", .rc = S0_ETIMEDOUT,
	 .reason = "wait_deadline", .last = "paused,0,1", .times = "0,0,100,250,475,812",
	 .end_ms = 1000},
	{.name = "CL-02 paused:true with status running never ends the wait",
	 .timeout_ms = 500,
	 .script = {PAUSE_OK(200, "false", "running"), SB_FOREVER("running,1,1")},
	 .requests = "POST /pause, GET, GET, GET, GET", .rc = S0_ETIMEDOUT,
	 .reason = "wait_deadline", .last = "running,1,1", .end_ms = 500},
	{.name = "CL-02 filesystem pause: failed is not a stop condition (runs to the deadline)",
	 .timeout_ms = 1000,
	 .script = {PAUSE_OK(200, "false", "running"), SB_FOREVER("failed,1,1")},
	 .requests = "POST /pause, GET, GET, GET, GET, GET", .rc = S0_ETIMEDOUT,
	 .reason = "wait_deadline", .last = "failed,1,1", .end_ms = 1000},
	{.name = "CL-02 filesystem pause: failed, then paused, succeeds",
	 .script = {PAUSE_OK(200, "false", "running"), SB("failed,1,1"), SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET", .last = "paused,1,1"},

	/* ---- a pause whose runtime was replaced without it (CL-19) ---- */
	{.name = "CL-19 pause superseded: the answer's generation replaced, ends at once",
	 .script = {PAUSE_OK_GEN(200, "1"), SB("running,0,1"), SB("starting,0,1"),
	            SB("running,0,2")},
	 .requests = "POST /pause, GET, GET, GET", .rc = S0_ELIFECYCLE,
	 .reason = "pause_superseded", .action = "pause", .last = "running,0,2",
	 .times = "0,0,100,250", .end_ms = 250},
	{.name = "CL-19 pause superseded before the first poll (the answer names the generation)",
	 .script = {PAUSE_OK_GEN(202, "3"), SB("failed,0,4")},
	 .requests = "POST /pause, GET", .rc = S0_ELIFECYCLE, .reason = "pause_superseded",
	 .last = "failed,0,4", .end_ms = 0},
	{.name = "CL-19 no generation in the answer: the first poll's is the pause's",
	 .script = {PAUSE_OK(200, "false", "running"), SB("running,0,5"), SB("running,0,6")},
	 .requests = "POST /pause, GET, GET", .rc = S0_ELIFECYCLE, .reason = "pause_superseded",
	 .last = "running,0,6"},
	{.name = "CL-19 memory pause superseded: not a capture failure",
	 .memory = S0_BOOL_TRUE,
	 .script = {PAUSE_OK_GEN(200, "1"), SB("running,0,1"), SB("failed,0,2")},
	 .requests = "POST /pause {memory:true}, GET, GET", .rc = S0_ELIFECYCLE,
	 .reason = "pause_superseded", .action = "memory pause", .last = "failed,0,2"},
	{.name = "CL-19 the pause's own generation paused: success",
	 .script = {PAUSE_OK_GEN(200, "2"), SB("running,0,2"), SB("starting,0,2"),
	            SB("paused,1,2")},
	 .requests = "POST /pause, GET, GET, GET", .last = "paused,1,2"},
	{.name = "CL-19 unknown POST outcome: a newer generation is inspected, the POST repeated",
	 .script = {FAIL_SENT, SB("running,0,2"), PAUSE_OK_GEN(200, "2"), SB("paused,1,2")},
	 .requests = "POST /pause, GET, POST /pause, GET", .last = "paused,1,2"},

	/* ---- memory pause (CL-03, CL-09) ---- */
	{.name = "CL-03 memory pause ends failed with paused:true: lifecycle error, one POST",
	 .memory = S0_BOOL_TRUE,
	 .script = {PAUSE_OK(200, "false", "running"), SB("running,0,1"), SB("failed,1,1")},
	 .requests = "POST /pause {memory:true}, GET, GET", .rc = S0_ELIFECYCLE,
	 .reason = "memory_pause_failed", .action = "memory pause", .last = "failed,1,1"},
	{.name = "CL-03 memory pause: failed on the first poll after a 202",
	 .memory = S0_BOOL_TRUE,
	 .script = {PAUSE_OK(202, "false", "running"), SB("failed,1,1")},
	 .requests = "POST /pause {memory:true}, GET", .rc = S0_ELIFECYCLE,
	 .action = "memory pause", .last = "failed,1,1"},
	{.name = "CL-03 memory pause commits",
	 .memory = S0_BOOL_TRUE,
	 .script = {PAUSE_OK(200, "false", "running"), SB("running,0,1"), SB("paused,1,1")},
	 .requests = "POST /pause {memory:true}, GET, GET", .last = "paused,1,1"},
	{.name = "CL-09 memory:false is sent as is and keeps the filesystem rules",
	 .memory = S0_BOOL_FALSE,
	 .script = {PAUSE_OK(200, "false", "running"), SB("failed,1,1"), SB("paused,1,1")},
	 .requests = "POST /pause {memory:false}, GET, GET", .last = "paused,1,1"},

	/* ---- unknown POST outcome (CL-08) ---- */
	{.name = "CL-08 POST reply lost (sent), server committed: GET shows paused, no 2nd POST",
	 .memory = S0_BOOL_TRUE,
	 .script = {FAIL_SENT, SB("paused,1,1")},
	 .requests = "POST /pause {memory:true}, GET", .last = "paused,1,1"},
	{.name = "CL-08 POST reply lost (sent), GET still running: the same POST repeated",
	 .memory = S0_BOOL_TRUE,
	 .script = {FAIL_SENT, SB("running,0,1"), PAUSE_OK(200, "false", "running"),
	            SB("running,0,1"), SB("paused,1,1")},
	 .requests = "POST /pause {memory:true}, GET, POST /pause {memory:true}, GET, GET",
	 .last = "paused,1,1", .times = "0,0,100,100,250"},
	{.name = "CL-08 connect refused before anything reached the server: reported at once",
	 .script = {FAIL_UNSENT},
	 .requests = "POST /pause", .rc = S0_ETRANSPORT},
	{.name = "CL-08 connect refused after a POST that may have landed: inspected, repeated",
	 .script = {FAIL_SENT, FAIL_UNSENT, SB("running,0,1"), PAUSE_OK(200, "false", "running"),
	            SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET, POST /pause, GET", .last = "paused,1,1"},
	{.name = "CL-08 server gone (connections refused 15 s in a row after the POST): ends with "
	         "the transport error, not at the 360 s deadline",
	 .memory = S0_BOOL_TRUE,
	 .script = {FAIL_SENT, UNSENT_5S, UNSENT_5S, UNSENT_5S, UNSENT_5S},
	 .requests = "POST /pause {memory:true}, ...", .nreq = 5, .rc = S0_ETRANSPORT,
	 .last = "(none)", .times = "0,0,5100,10250,15475", .end_ms = 20475},
	{.name = "CL-08 server restarting (refused 10 s, then answers): the wait goes on",
	 .memory = S0_BOOL_TRUE,
	 .script = {FAIL_SENT, UNSENT_5S, UNSENT_5S, SB("running,0,1"),
	            PAUSE_OK(200, "false", "running"), SB("paused,1,1")},
	 .requests = "POST /pause {memory:true}, GET, GET, GET, POST /pause {memory:true}, GET",
	 .last = "paused,1,1"},
	{.name = "CL-08 POST 502 then 504: repeated with the same memory body",
	 .memory = S0_BOOL_TRUE,
	 .script = {ERR(502, "unavailable", "cluster gateway unavailable"), SB("running,0,1"),
	            ERR(504, "unavailable", "timed out waiting for sandbox to pause"),
	            SB("running,0,1"), PAUSE_OK(202, "false", "running"), SB("paused,1,1")},
	 .requests = "POST /pause {memory:true}, GET, POST /pause {memory:true}, GET, "
	             "POST /pause {memory:true}, GET",
	 .last = "paused,1,1"},
	{.name = "CL-08 inspection GET fails: no repeat until a GET has inspected",
	 .script = {FAIL_SENT, FAIL_UNSENT, SB("running,0,1"), PAUSE_OK(200, "false", "running"),
	            SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET, POST /pause, GET", .last = "paused,1,1",
	 .times = "0,0,100,250,250"},
	{.name = "CL-08 POST outcome never known: memory POSTs repeat until the deadline",
	 .memory = S0_BOOL_TRUE, .timeout_ms = 1000,
	 .script = {LOOP, FAIL_SENT, SB("running,0,1")},
	 .requests = "POST /pause {memory:true}, GET, POST /pause {memory:true}, GET, "
	             "POST /pause {memory:true}, GET, POST /pause {memory:true}, GET, "
	             "POST /pause {memory:true}, GET",
	 .rc = S0_ETIMEDOUT, .reason = "wait_deadline", .last = "running,0,1",
	 .times = "0,0,100,100,250,250,475,475,812,812", .end_ms = 1000},
	{.name = "CL-08 POST 503 waking up: outcome unknown, inspected and repeated",
	 .script = {WAKING_UP, SB("running,0,1"), PAUSE_OK(200, "false", "running"),
	            SB("paused,1,1")},
	 .requests = "POST /pause, GET, POST /pause, GET", .last = "paused,1,1"},

	/* ---- definite POST errors are returned as is ---- */
	{.name = "memory POST definite 503 (reservation full) returned, no retry",
	 .memory = S0_BOOL_TRUE,
	 .script = {ERR(503, "unavailable", "memory checkpoint reservation unavailable")},
	 .requests = "POST /pause {memory:true}", .rc = S0_EUNAVAILABLE,
	 .reason = "reservation_unavailable", .http_status = 503, .last = "(none)"},
	{.name = "409 on POST pause returned",
	 .script = {ERR(409, "conflict", "sandbox pause conflicts with another lifecycle operation")},
	 .requests = "POST /pause", .rc = S0_ECONFLICT, .reason = "lifecycle_conflict",
	 .http_status = 409},
	{.name = "404 on POST pause returned",
	 .script = {ERR(404, "not_found", "sandbox not found")},
	 .requests = "POST /pause", .rc = S0_ENOTFOUND, .http_status = 404},
	{.name = "429 on POST pause returned (no automatic retry, CL-10)",
	 .script = {ERR_H(429, "quota_exceeded", "sandbox quota exceeded", "Retry-After: 3")},
	 .requests = "POST /pause", .rc = S0_EQUOTA, .http_status = 429},
	{.name = "400 on POST pause returned",
	 .script = {ERR(400, "bad_request", "invalid request: bad body")},
	 .requests = "POST /pause", .rc = S0_EINVAL, .http_status = 400},
	{.name = "500 on POST pause (intent not recorded) returned",
	 .script = {ERR(500, "internal_error", "failed to pause sandbox: db")},
	 .requests = "POST /pause", .rc = S0_EINTERNAL, .http_status = 500},

	/* ---- polling errors ---- */
	{.name = "CL-10 waking-up 503s on polls, then success",
	 .script = {PAUSE_OK(200, "false", "running"), WAKING_UP, WAKING_UP, SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET, GET", .last = "paused,1,1", .times = "0,0,100,250"},
	{.name = "poll 429 Retry-After: 2 honoured on the clock",
	 .script = {PAUSE_OK(200, "false", "running"),
	            ERR_H(429, "quota_exceeded", "request quota exceeded", "Retry-After: 2"),
	            SB("running,0,1"), SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET, GET", .last = "paused,1,1", .times = "0,0,2000,2150"},
	{.name = "poll 429 rate-limit body (not an envelope) retry_after honoured",
	 .kind = K_WAIT, .until_mask = RUNNING_MASK,
	 .script = {RAW(429, "{\"error\":\"rate limit exceeded\",\"retry_after\":1}"),
	            SB("running,0,1")},
	 .requests = "GET, GET", .last = "running,0,1", .times = "0,1000"},
	{.name = "poll 503 Retry-After as an HTTP date honoured",
	 .kind = K_WAIT, .until_mask = RUNNING_MASK,
	 .script = {ERR_H(503, "unavailable", "sandbox unavailable",
	                  "Retry-After: Tue, 14 Nov 2023 22:13:23 GMT"),
	            SB("running,0,1")},
	 .requests = "GET, GET", .last = "running,0,1", .times = "0,3000"},
	{.name = "polls ride out 500, 502, transport errors and a non-JSON 504",
	 .script = {PAUSE_OK(200, "false", "running"), ERR(500, "internal_error", "db"),
	            ERR(502, "unavailable", "cluster gateway unavailable"), FAIL_SENT, FAIL_UNSENT,
	            RAW(504, "<html>gateway timeout</html>"), SB("paused,1,1")},
	 .requests = "POST /pause, GET, GET, GET, GET, GET, GET", .last = "paused,1,1",
	 .times = "0,0,100,250,475,812,1312"},
	{.name = "404 mid-wait returns not found with the last sandbox",
	 .script = {PAUSE_OK(200, "false", "running"), SB("running,0,1"),
	            ERR(404, "not_found", "sandbox not found")},
	 .requests = "POST /pause, GET, GET", .rc = S0_ENOTFOUND, .http_status = 404,
	 .last = "running,0,1"},
	{.name = "malformed poll response (no envelope) returned as protocol error",
	 .script = {PAUSE_OK(200, "false", "running"), RAW(200, "{\"id\":\"sb_1\"}")},
	 .requests = "POST /pause, GET", .rc = S0_EPROTOCOL},
	{.name = "malformed poll response (paused is a string) returned as protocol error",
	 .script = {PAUSE_OK(200, "false", "running"), SB("running,0,1"),
	            OK_BODY(200, "{\"id\":\"sb_1\",\"status\":\"paused\",\"paused\":\"yes\"}")},
	 .requests = "POST /pause, GET, GET", .rc = S0_EPROTOCOL, .last = "running,0,1"},

	/* ---- deadlines (CL-06) ---- */
	{.name = "CL-06 deadline hit mid-backoff: last sleep shortened, no sleep past it",
	 .timeout_ms = 300,
	 .script = {PAUSE_OK(200, "false", "running"), SB_FOREVER("running,0,1")},
	 .requests = "POST /pause, GET, GET, GET", .rc = S0_ETIMEDOUT, .reason = "wait_deadline",
	 .last = "running,0,1", .times = "0,0,100,250", .end_ms = 300},
	{.name = "CL-06 Retry-After past the deadline: sleep to the deadline, no further poll",
	 .timeout_ms = 1000,
	 .script = {PAUSE_OK(200, "false", "running"), SB("running,0,1"),
	            ERR_H(429, "quota_exceeded", "request quota exceeded", "Retry-After: 5")},
	 .requests = "POST /pause, GET, GET", .rc = S0_ETIMEDOUT, .reason = "wait_deadline",
	 .last = "running,0,1", .times = "0,0,100", .end_ms = 1000, .cause = S0_EQUOTA},
	{.name = "CL-06 a POST taking most of the budget leaves only the rest to the polls",
	 .timeout_ms = 1000,
	 .script = {{.kind = FT_RESPOND, .status = 200, .delay_ms = 900,
	             .body = "{\"success\":true,\"data\":{\"sandbox_id\":\"sb_1\",\"paused\":false}}"},
	            SB_FOREVER("running,0,1")},
	 .requests = "POST /pause, GET", .rc = S0_ETIMEDOUT, .times = "0,900", .end_ms = 1000},

	/* ---- generic wait ---- */
	{.name = "CL-06 generic wait until running",
	 .kind = K_WAIT, .until_mask = RUNNING_MASK,
	 .script = {SB("starting,0,2"), SB("starting,0,2"), SB("running,0,2")},
	 .requests = "GET, GET, GET", .last = "running,0,2", .times = "0,100,250"},
	{.name = "generic wait: 404 with S0_WAIT_NOTFOUND_OK is success without a sandbox",
	 .kind = K_WAIT, .until_mask = S0_STATUS_MASK(S0_STATUS_TERMINATING),
	 .flags = S0_WAIT_NOTFOUND_OK,
	 .script = {SB("running,0,1"), ERR(404, "not_found", "sandbox not found")},
	 .requests = "GET, GET", .last = "(none)"},
	{.name = "generic wait: 404 without the flag is not found",
	 .kind = K_WAIT, .until_mask = RUNNING_MASK,
	 .script = {SB("starting,0,1"), ERR(404, "not_found", "sandbox not found")},
	 .requests = "GET, GET", .rc = S0_ENOTFOUND, .last = "starting,0,1"},
	{.name = "generic wait: predicate returning S0_ELIFECYCLE stops with the sandbox",
	 .kind = K_WAIT, .pred = fail_on_failed,
	 .script = {SB("starting,0,2"), SB("failed,0,2")},
	 .requests = "GET, GET", .rc = S0_ELIFECYCLE, .last = "failed,0,2"},
	{.name = "generic wait: predicate and mask must both agree",
	 .kind = K_WAIT, .pred = fail_on_failed, .until_mask = RUNNING_MASK,
	 .script = {SB("starting,0,2"), SB("running,0,2")},
	 .requests = "GET, GET", .last = "running,0,2"},

	/* ---- resume (CL-04, CL-05) ---- */
	{.name = "CL-04 filesystem resume: GET, one POST, new generation running",
	 .kind = K_RESUME,
	 .script = {SB("paused,1,3"), RESUME_OK("true"), SB("running,0,4")},
	 .requests = "GET, POST /resume, GET", .last = "running,0,4", .times = "0,0,0"},
	{.name = "CL-04 first poll shows the old generation still running",
	 .kind = K_RESUME,
	 .script = {SB("paused,1,3"), RESUME_OK("true"), SB("running,0,3"), SB("running,0,4")},
	 .requests = "GET, POST /resume, GET, GET", .last = "running,0,4", .times = "0,0,0,100"},
	{.name = "CL-04 paused:true alone (status running) sets the target to gen+1",
	 .kind = K_RESUME,
	 .script = {SB("running,1,3"), RESUME_OK("true"), SB("running,0,3"), SB("running,0,4")},
	 .requests = "GET, POST /resume, GET, GET", .last = "running,0,4"},
	{.name = "CL-04/CL-05 memory resume: resumed:false, starting, running at gen+2 after fallback",
	 .kind = K_RESUME, .memory = S0_BOOL_TRUE,
	 .script = {SB("paused,1,3"), RESUME_OK("false"), SB("starting,1,4"), SB("starting,1,5"),
	            SB("running,0,5")},
	 .requests = "GET, POST /resume {memory:true}, GET, GET, GET", .last = "running,0,5"},
	{.name = "CL-05 memory resume failed at the new generation: lifecycle error",
	 .kind = K_RESUME, .memory = S0_BOOL_TRUE,
	 .script = {SB("paused,1,3"), RESUME_OK("true"), SB("starting,1,4"), SB("failed,1,4")},
	 .requests = "GET, POST /resume {memory:true}, GET, GET", .rc = S0_ELIFECYCLE,
	 .reason = "memory_resume_failed", .action = "memory resume", .last = "failed,1,4"},
	{.name = "CL-05 a failed at a lower generation is stale and ignored",
	 .kind = K_RESUME, .memory = S0_BOOL_TRUE,
	 .script = {SB("failed,1,3"), RESUME_OK("false"), SB("failed,1,3"), SB("starting,1,4"),
	            SB("running,0,4")},
	 .requests = "GET, POST /resume {memory:true}, GET, GET, GET", .last = "running,0,4"},
	{.name = "CL-05 filesystem resume: failed is not a stop condition",
	 .kind = K_RESUME, .timeout_ms = 500,
	 .script = {SB("paused,1,3"), RESUME_OK("true"), SB_FOREVER("failed,0,4")},
	 .requests = "GET, POST /resume, GET, GET, GET, GET", .rc = S0_ETIMEDOUT,
	 .last = "failed,0,4", .end_ms = 500},
	{.name = "CL-04 resume of a running sandbox succeeds without a new generation",
	 .kind = K_RESUME,
	 .script = {SB("running,0,7"), RESUME_OK("true"), SB("running,0,7")},
	 .requests = "GET, POST /resume, GET", .last = "running,0,7"},
	{.name = "CL-10 resume polls ride out waking up",
	 .kind = K_RESUME,
	 .script = {SB("paused,1,3"), RESUME_OK("true"), WAKING_UP, WAKING_UP, SB("running,0,4")},
	 .requests = "GET, POST /resume, GET, GET, GET", .last = "running,0,4",
	 .times = "0,0,0,100,250"},
	{.name = "CL-10 503 sandbox_resume_failed on a poll is returned",
	 .kind = K_RESUME,
	 .script = {SB("paused,1,3"), RESUME_OK("true"),
	            ERR(503, "sandbox_resume_failed", "sandbox resume failed")},
	 .requests = "GET, POST /resume, GET", .rc = S0_ERESUME, .reason = "resume_failed",
	 .last = "paused,1,3", .http_status = 503},
	{.name = "CL-08 resume POST lost, new generation running: no second POST",
	 .kind = K_RESUME, .memory = S0_BOOL_TRUE,
	 .script = {SB("paused,1,3"), FAIL_SENT, SB("running,0,4")},
	 .requests = "GET, POST /resume {memory:true}, GET", .last = "running,0,4"},
	{.name = "CL-08 resume POST 504, still paused: the same memory POST repeated",
	 .kind = K_RESUME, .memory = S0_BOOL_TRUE,
	 .script = {SB("paused,1,3"), ERR(504, "unavailable", "timed out waiting for sandbox to resume"),
	            SB("paused,1,3"), RESUME_OK("false"), SB("starting,1,4"), SB("running,0,4")},
	 .requests = "GET, POST /resume {memory:true}, GET, POST /resume {memory:true}, GET, GET",
	 .last = "running,0,4", .times = "0,0,0,100,100,250"},
	{.name = "resume POST 409 returned",
	 .kind = K_RESUME,
	 .script = {SB("paused,1,3"),
	            ERR(409, "conflict", "sandbox resume conflicts with another lifecycle operation")},
	 .requests = "GET, POST /resume", .rc = S0_ECONFLICT, .reason = "lifecycle_conflict"},
	{.name = "resume POST 429 quota returned",
	 .kind = K_RESUME,
	 .script = {SB("paused,1,3"),
	            ERR_H(429, "quota_exceeded", "sandbox quota exceeded", "Retry-After: 1")},
	 .requests = "GET, POST /resume", .rc = S0_EQUOTA, .http_status = 429},
	{.name = "resume POST 503 (no carrier) returned: sandbox stays paused",
	 .kind = K_RESUME, .memory = S0_BOOL_TRUE,
	 .script = {SB("paused,1,3"), ERR(503, "unavailable", "no compatible carrier")},
	 .requests = "GET, POST /resume {memory:true}", .rc = S0_EUNAVAILABLE,
	 .last = "paused,1,3"},
	{.name = "resume POST 503 sandbox_resume_failed returned",
	 .kind = K_RESUME,
	 .script = {SB("paused,1,3"), ERR(503, "sandbox_resume_failed", "sandbox resume failed")},
	 .requests = "GET, POST /resume", .rc = S0_ERESUME},
	{.name = "resume: first GET rides out a 503, then POSTs",
	 .kind = K_RESUME,
	 .script = {ERR(503, "unavailable", "manager service unavailable"), SB("paused,1,3"),
	            RESUME_OK("true"), SB("running,0,4")},
	 .requests = "GET, GET, POST /resume, GET", .last = "running,0,4", .times = "0,100,100,100"},
	{.name = "resume: first GET 404, no POST",
	 .kind = K_RESUME,
	 .script = {ERR(404, "not_found", "sandbox not found")},
	 .requests = "GET", .rc = S0_ENOTFOUND},
	{.name = "CL-09 resume memory:false is sent as is",
	 .kind = K_RESUME, .memory = S0_BOOL_FALSE,
	 .script = {SB("paused,1,3"), RESUME_OK("true"), SB("running,0,4")},
	 .requests = "GET, POST /resume {memory:false}, GET", .last = "running,0,4"},

	/* ---- default budgets (CL-06), observed on the manual clock ---- */
	{.name = "CL-06 default deadline 60 s (filesystem pause)",
	 .script = {PAUSE_OK(200, "false", "running"), SB_FOREVER("running,0,1")},
	 .requests = "POST /pause, GET, ...", .nreq = 1 + 5 + 118, .rc = S0_ETIMEDOUT, .reason = "wait_deadline", .end_ms = 60000},
	{.name = "CL-06 default deadline 360 s (memory pause)",
	 .memory = S0_BOOL_TRUE,
	 .script = {PAUSE_OK(200, "false", "running"), SB_FOREVER("running,0,1")},
	 .requests = "POST /pause {memory:true}, GET, ...", .nreq = 1 + 5 + 718, .rc = S0_ETIMEDOUT, .reason = "wait_deadline", .end_ms = 360000},
	{.name = "CL-06 default deadline 360 s (memory resume)",
	 .kind = K_RESUME, .memory = S0_BOOL_TRUE,
	 .script = {SB("paused,1,3"), RESUME_OK("false"), SB_FOREVER("starting,1,4")},
	 .requests = "GET, POST /resume {memory:true}, GET, ...", .nreq = 2 + 5 + 718,
	 .rc = S0_ETIMEDOUT, .last = "starting,1,4", .end_ms = 360000},
	{.name = "CL-06 generic wait ignores memory: default 60 s",
	 .kind = K_WAIT, .memory = S0_BOOL_TRUE, .until_mask = RUNNING_MASK,
	 .script = {SB_FOREVER("starting,0,1")},
	 .requests = "GET, ...", .nreq = 5 + 118, .rc = S0_ETIMEDOUT, .end_ms = 60000},
};

#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

static int64_t resolved_timeout(const wcase *w)
{
	if (w->timeout_ms)
		return w->timeout_ms;
	if (w->kind != K_WAIT && w->memory == S0_BOOL_TRUE)
		return S0_WAIT_DEFAULT_MEMORY_TIMEOUT_MS;
	return S0_WAIT_DEFAULT_TIMEOUT_MS;
}

/* CL-09: every POST carries the configured body, nothing else. */
static void check_bodies(const wcase *w, ft *f)
{
	const char *want = w->memory == S0_BOOL_TRUE    ? "{\"memory\":true}"
	                   : w->memory == S0_BOOL_FALSE ? "{\"memory\":false}"
	                                                : NULL;
	for (size_t i = 0; i < f->nrec; i++) {
		const ft_record *r = &f->rec[i];
		if (strcmp(r->method, "POST") != 0) {
			ck_assert_msg(!r->body, "%s: GET with a body", w->name);
			continue;
		}
		if (!want)
			ck_assert_msg(!r->body, "%s: POST %zu has body %s", w->name, i, r->body);
		else
			ck_assert_msg(r->body && !strcmp(r->body, want), "%s: POST %zu body %s", w->name,
			              i, r->body ? r->body : "(none)");
	}
}

/* CL-06: requests start before the deadline, capped by the time left. */
static void check_deadline(const wcase *w, ft *f, int64_t end)
{
	int64_t budget = resolved_timeout(w);
	for (size_t i = 0; i < f->nrec; i++) {
		const ft_record *r = &f->rec[i];
		ck_assert_msg(r->at_ms < budget, "%s: request %zu at %" PRId64 " >= deadline", w->name,
		              i, r->at_ms);
		int64_t want = budget - r->at_ms < 120000 ? budget - r->at_ms : 120000;
		ck_assert_msg(r->timeout_ms == want, "%s: request %zu timeout %" PRId64 " want %" PRId64,
		              w->name, i, r->timeout_ms, want);
	}
	ck_assert_msg(end <= budget, "%s: returned at %" PRId64 " past the deadline", w->name, end);
}

static void check_error(const wcase *w, const s0_error *err)
{
	ck_assert_msg(err != NULL, "%s: no error object", w->name);
	ck_assert_int_eq(s0_error_code(err), w->rc);
	if (w->reason)
		ck_assert_msg(!strcmp(s0_error_reason(err), w->reason), "%s: reason %s", w->name,
		              s0_error_reason(err));
	if (w->action)
		ck_assert_msg(s0_error_action(err) && !strcmp(s0_error_action(err), w->action),
		              "%s: action %s", w->name, s0_error_action(err));
	if (w->http_status)
		ck_assert_int_eq(s0_error_http_status(err), w->http_status);
	ck_assert_str_eq(s0_error_sandbox_id(err), FT_SANDBOX_ID);
	if (w->rc == S0_ETIMEDOUT && w->reason && !strcmp(w->reason, "wait_deadline"))
		ck_assert_int_eq(s0_error_timeout_ms(err), resolved_timeout(w));
	if (w->cause)
		ck_assert_msg(s0_error_cause(err) && s0_error_code(s0_error_cause(err)) == w->cause,
		              "%s: cause %d", w->name, s0_error_code(s0_error_cause(err)));
}

/* The exact sequence, or with a trailing "..." a prefix followed by GETs only. */
static void check_requests(const wcase *w, const char *log)
{
	size_t n = strlen(w->requests);
	if (n < 3 || strcmp(w->requests + n - 3, "...") != 0) {
		ck_assert_msg(!strcmp(log, w->requests), "%s:\n  got  %s\n  want %s", w->name, log,
		              w->requests);
		return;
	}
	size_t head = n - 3; /* "A, B, " */
	ck_assert_msg(!strncmp(log, w->requests, head), "%s: got %.200s", w->name, log);
	for (const char *p = log + head; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 2 : 0))
		ck_assert_msg(!strncmp(p, "GET", 3) && (p[3] == ',' || !p[3]),
		              "%s: a non-GET after the prefix: %.40s", w->name, p);
}

static int run_case(const wcase *w, ft *f, s0_sandbox_info **out, s0_error **err)
{
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.memory = w->memory;
	o.timeout_ms = w->timeout_ms;
	o.flags = w->flags | S0_WAIT_NO_JITTER;
	switch (w->kind) {
	case K_PAUSE:
		return s0_sandbox_pause_and_wait(f->client, FT_SANDBOX_ID, &o, out, err);
	case K_RESUME:
		return s0_sandbox_resume_and_wait(f->client, FT_SANDBOX_ID, &o, out, err);
	default:
		return s0_sandbox_wait(f->client, FT_SANDBOX_ID, w->until_mask, w->pred, &o, out, err);
	}
}

START_TEST(test_scripted)
{
	const wcase *w = &cases[_i];
	int64_t live = s0_live_objects();
	ft *f = ft_new(w->script, true);
	ck_assert_ptr_nonnull(f);
	s0_sandbox_info *out = NULL;
	s0_error *err = NULL;
	int rc = run_case(w, f, &out, &err);
	int64_t end = ft_now(f);

	char log[8192], buf[64];
	ft_log(f, log, sizeof log);
	ck_assert_msg(rc == w->rc, "%s: rc %s (%s), want %s; requests: %s", w->name,
	              s0_code_name(rc), s0_error_message(err), s0_code_name(w->rc), log);
	if (w->requests)
		check_requests(w, log);
	if (w->nreq)
		ck_assert_msg(f->nrec == w->nreq, "%s: %zu requests, want %zu", w->name, f->nrec,
		              w->nreq);
	ck_assert_msg(!f->overrun, "%s: script overrun: %s", w->name, log);
	if (w->times) {
		char times[1024];
		ft_times(f, times, sizeof times);
		ck_assert_msg(!strcmp(times, w->times), "%s: times %s want %s", w->name, times,
		              w->times);
	}
	if (w->end_ms)
		ck_assert_msg(end == w->end_ms, "%s: ended at %" PRId64 " want %" PRId64, w->name, end,
		              w->end_ms);
	if (rc == S0_OK) {
		ck_assert_ptr_null(err);
		ft_spec_of(out, buf, sizeof buf);
	} else {
		check_error(w, err);
		ck_assert_ptr_null(out); /* untouched on failure */
		ft_spec_of(s0_error_last_sandbox(err), buf, sizeof buf);
	}
	if (w->last)
		ck_assert_msg(!strcmp(buf, w->last), "%s: last %s want %s", w->name, buf, w->last);
	check_bodies(w, f);
	check_deadline(w, f, end);

	s0_sandbox_info_free(out);
	s0_error_free(err);
	ft_free(f);
	ck_assert_int_eq(s0_live_objects(), live);
}
END_TEST

Suite *s0_wait_script_suite(void)
{
	Suite *s = suite_create("wait_script");
	TCase *tc = tcase_create("scripted_server");
	tcase_add_loop_test(tc, test_scripted, 0, N_CASES);
	suite_add_tcase(s, tc);
	return s;
}
