/*
 * Steps of the suites that drive this library's client against a real
 * backend (local_fixture.h), in process or through s0_server: a server with
 * the test keys, clients of it, claims, contexts, stream messages, expected
 * errors. Every step asserts (check) that it worked; none is thread-safe.
 */
#ifndef S0_CLIENT_STEPS_H
#define S0_CLIENT_STEPS_H

#include <cjson/cJSON.h>

#include "sandbox0/sandbox0.h"
#include "local_fixture.h"
#include "sandbox0/server.h"

/* A server over local (borrowed; it must outlive the server) taking KEY_A
 * for team_a and KEY_B for team_b (server_test.h); the caller frees it. */
s0_server *cs_serve_keys(s0_local *local);
/* The same on a given TCP port (0: an ephemeral one), e.g. the port of a
 * server that was just freed, so that its clients reach the restarted one. */
s0_server *cs_serve_keys_on(s0_local *local, int port);

/* The fixture of the suites over s0_server: a backend (lf_open, not
 * zero_time) with a cs_serve_keys() server on it and the server's port.
 * cs_served_setup / cs_served_teardown fill and empty cs_sv (pass them to
 * tcase_add_checked_fixture); one fixture per process at a time. */
typedef struct cs_served {
	lf f;
	s0_server *srv;
	int port;
} cs_served;
extern cs_served cs_sv;
void cs_served_setup(void);
void cs_served_teardown(void);

/* An HTTP client of srv's port as token, with X-Team-ID team (nullable:
 * none); the caller frees it. */
s0_client *cs_client(s0_server *srv, const char *token, const char *team);

/* Claim a sandbox from template tpl on c; its id (the caller's, free()). */
char *cs_claim(s0_client *c, const char *tpl);

/* Create a context from request (JSON text) in sandbox sb on c; its id (the
 * caller's, free()). */
char *cs_context(s0_client *c, const char *sb, const char *request);

/* The next message of st as JSON (the caller's, cJSON_Delete); asserts one
 * comes within 5 s (real time). */
cJSON *cs_next(s0_stream *st);

/* The string member k of o, "" when absent or not a string (borrowed). */
const char *cs_str(const cJSON *o, const char *k);

/* Assert rc is want, err's HTTP status is status and its message holds
 * msg_part; frees err. */
void cs_expect_err(int rc, s0_error *err, int want, int status, const char *msg_part);

/* Run call (which fills the local err), check it failed as told, reset err. */
#define EXPECT(call, want, status, part)                                               \
	do {                                                                           \
		int rc_ = (call);                                                      \
		cs_expect_err(rc_, err, want, status, part);                           \
		err = NULL;                                                            \
	} while (0)

#endif
