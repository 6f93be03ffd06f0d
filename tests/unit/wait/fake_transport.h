/*
 * A scripted fake server for the wait tests: an s0__transport_ops that pops
 * one scripted step per request and records every request (method, path
 * suffix, body, the clock time it arrived, the timeout it was given).
 */
#ifndef S0_TEST_FAKE_TRANSPORT_H
#define S0_TEST_FAKE_TRANSPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "client/client_internal.h"

#define FT_SANDBOX_ID "sb_1"
#define FT_MAX_RECORDS 4096

typedef enum ft_kind {
	FT_END = 0,     /* terminates a script array */
	FT_RESPOND,     /* answer with status, header and body */
	FT_FAIL_SENT,   /* transport error after sending (reply lost) */
	FT_FAIL_UNSENT, /* transport error before sending (connect refused) */
	FT_CANCEL,      /* fire the fixture's cancel token, then fail as canceled */
	FT_BLOCK,       /* hang until the request's token fires (real clock) */
	FT_LOOP         /* marker: at FT_END, start again from here */
} ft_kind;

typedef struct ft_step {
	ft_kind kind;
	int status;          /* HTTP status for FT_RESPOND */
	const char *body;    /* raw JSON body, or NULL */
	const char *sb;      /* "status,paused,gen": a Sandbox success envelope */
	const char *header;  /* one "Name: value" header, or NULL */
	int64_t delay_ms;    /* the exchange takes this long on the manual clock */
} ft_step;

/* Script building blocks; a script array ends with END. */
#define END {.kind = FT_END}
#define SB(spec) {.kind = FT_RESPOND, .status = 200, .sb = (spec)}
#define LOOP {.kind = FT_LOOP}
#define SB_FOREVER(spec) LOOP, SB(spec)
#define OK_BODY(st, data) \
	{.kind = FT_RESPOND, .status = (st), .body = "{\"success\":true,\"data\":" data "}"}
#define PAUSE_OK(st, paused, status) \
	OK_BODY(st, "{\"sandbox_id\":\"sb_1\",\"paused\":" paused ",\"status\":\"" status "\"}")
/* A pause answer naming the runtime generation its operation retires (docs/wire.md §6.3). */
#define PAUSE_OK_GEN(st, gen) \
	OK_BODY(st, "{\"sandbox_id\":\"sb_1\",\"paused\":false,\"status\":\"running\"," \
	            "\"operation_id\":7,\"runtime_generation\":" gen "}")
#define RESUME_OK(resumed) OK_BODY(200, "{\"sandbox_id\":\"sb_1\",\"resumed\":" resumed "}")
#define ERR(st, code, msg)                                                                  \
	{.kind = FT_RESPOND, .status = (st),                                                   \
	 .body = "{\"success\":false,\"error\":{\"code\":\"" code "\",\"message\":\"" msg "\"}}"}
#define ERR_H(st, code, msg, hdr)                                                           \
	{.kind = FT_RESPOND, .status = (st), .header = (hdr),                                  \
	 .body = "{\"success\":false,\"error\":{\"code\":\"" code "\",\"message\":\"" msg "\"}}"}
#define RAW(st, text) {.kind = FT_RESPOND, .status = (st), .body = (text)}
#define FAIL_SENT {.kind = FT_FAIL_SENT}
#define FAIL_UNSENT {.kind = FT_FAIL_UNSENT}
#define CANCEL_NOW {.kind = FT_CANCEL}
#define BLOCK {.kind = FT_BLOCK}
#define WAKING_UP ERR(503, "unavailable", "sandbox is waking up")

typedef struct ft_record {
	char method[8];
	char path[64]; /* after /api/v1/sandboxes/sb_1: "" or "/pause"… */
	char *body;    /* NULL when the request had none */
	int64_t at_ms; /* clock time since the fixture started */
	int64_t timeout_ms;
} ft_record;

typedef struct ft {
	pthread_mutex_t mu;
	const ft_step *steps;
	size_t pos;
	size_t loop;           /* index after the last FT_LOOP marker, or SIZE_MAX */
	ft_record rec[FT_MAX_RECORDS];
	size_t nrec;
	bool overrun;          /* a request arrived after the script ended */
	s0_manual_clock *mc;   /* NULL: real clock */
	int64_t t0;
	s0_cancel_token *fire; /* fired by FT_CANCEL (nullable) */
	s0_client *client;
	s0_cancel_token *client_cancel; /* the client's own token */
} ft;

extern const s0__transport_ops ft_ops;

/*
 * Make a fixture and its client. manual: a manual clock with auto-advance
 * (virtual time); otherwise the real clock. steps ends with FT_END; the
 * steps after an FT_LOOP marker repeat forever. The client gets its own
 * cancel token (client_cancel).
 */
ft *ft_new(const ft_step *steps, bool manual);
void ft_free(ft *f);
/* Clock time since the fixture started. */
int64_t ft_now(ft *f);
/* "POST /pause {memory:true}, GET, …" (quotes dropped from bodies). */
void ft_log(ft *f, char *buf, size_t n);
/* Request times "0,0,100,250". */
void ft_times(ft *f, char *buf, size_t n);
/* A sandbox info from "status,paused,gen" (test-side expectations). */
s0_sandbox_info *ft_sandbox(const char *spec);
/* "status,paused,gen" of an info (paused as 0/1). */
void ft_spec_of(const s0_sandbox_info *i, char *buf, size_t n);

#endif
