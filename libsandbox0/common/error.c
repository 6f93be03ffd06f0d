/* The error object and the code/wire tables of sandbox0/error.h. */
#include "common/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct s0_error {
	int code;
	char *reason;
	char *message;
	char *wire_code;
	int http_status;
	char *request_id;
	int64_t retry_after_ms;
	char *details_json;
	void *body;
	size_t body_len;
	char *sandbox_id;
	char *action;
	s0_sandbox_info *last_sandbox;
	int64_t timeout_ms;
	s0_error *cause;
};

/* ---- code table ---- */

typedef struct code_row {
	int code;
	const char *name;
	const char *desc;
} code_row;

#define S0__CODE_ROW(id, val, name, desc) {val, name, desc},
static const code_row code_rows[] = {S0_CODE_MAP(S0__CODE_ROW)};
#define N_CODES (sizeof code_rows / sizeof code_rows[0])

static const code_row *code_lookup(int code)
{
	for (size_t i = 0; i < N_CODES; i++)
		if (code_rows[i].code == code)
			return &code_rows[i];
	return &code_rows[1]; /* S0_ERROR */
}

const char *s0_code_name(int code)
{
	return code_lookup(code)->name;
}

const char *s0_strerror(int code)
{
	return code_lookup(code)->desc;
}

int s0_code_from_name(const char *name)
{
	if (!name)
		return S0_ERROR;
	for (size_t i = 0; i < N_CODES; i++)
		if (!strcmp(code_rows[i].name, name))
			return code_rows[i].code;
	return S0_ERROR;
}

/* ---- wire tables ---- */

typedef struct wire_row {
	const char *wire;
	int status;
	int code;
	const char *reason;
} wire_row;

#define S0__WIRE_ROW(w, st, c, r) {w, st, c, r},
static const wire_row wire_rows[] = {S0_WIRE_ERROR_MAP(S0__WIRE_ROW)};
#define N_WIRE (sizeof wire_rows / sizeof wire_rows[0])

typedef struct reason_row {
	const char *wire;
	const char *needle;
	const char *reason;
} reason_row;

#define S0__REASON_ROW(w, m, r) {w, m, r},
static const reason_row reason_rows[] = {S0_WIRE_REASON_MAP(S0__REASON_ROW)};
#define N_REASON (sizeof reason_rows / sizeof reason_rows[0])

/* Fallback when the body names no known wire code. */
static void status_fallback(int status, int *code, const char **reason)
{
	static const struct {
		int status;
		int code;
		const char *reason;
	} rows[] = {
		{400, S0_EINVAL, "bad_request"},       {401, S0_EAUTH, "unauthorized"},
		{403, S0_EFORBIDDEN, "forbidden"},     {404, S0_ENOTFOUND, "not_found"},
		{405, S0_EUNSUPPORTED, "method_not_allowed"},
		{408, S0_ETIMEDOUT, "request_timeout"}, {409, S0_ECONFLICT, "conflict"},
		{410, S0_EGONE, "gone"},               {413, S0_ETOOLARGE, "request_too_large"},
		{429, S0_ETHROTTLED, "rate_limited"},  {500, S0_EINTERNAL, "internal_error"},
		{501, S0_EUNSUPPORTED, "not_implemented"},
		{502, S0_EUNAVAILABLE, "bad_gateway"}, {503, S0_EUNAVAILABLE, "unavailable"},
		{504, S0_EUNAVAILABLE, "gateway_timeout"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (rows[i].status == status) {
			*code = rows[i].code;
			*reason = rows[i].reason;
			return;
		}
	}
	if (status >= 500) {
		*code = S0_EINTERNAL;
		*reason = "internal_error";
	} else {
		*code = S0_EPROTOCOL;
		*reason = "unexpected_response";
	}
}

void s0_error_map_wire(const char *wire_code, int http_status, const char *message,
                       int *code_out, const char **reason_out)
{
	int code = S0_ERROR;
	const char *reason = NULL;
	const wire_row *by_code = NULL;
	if (wire_code) {
		for (size_t i = 0; i < N_WIRE; i++) {
			if (strcmp(wire_rows[i].wire, wire_code))
				continue;
			if (!by_code)
				by_code = &wire_rows[i];
			if (wire_rows[i].status == http_status) {
				by_code = &wire_rows[i];
				break;
			}
		}
	}
	if (by_code) {
		code = by_code->code;
		reason = by_code->reason;
		if (message) {
			for (size_t i = 0; i < N_REASON; i++) {
				if (!strcmp(reason_rows[i].wire, wire_code) &&
				    strstr(message, reason_rows[i].needle)) {
					reason = reason_rows[i].reason;
					break;
				}
			}
		}
	} else {
		status_fallback(http_status, &code, &reason);
	}
	if (code_out)
		*code_out = code;
	if (reason_out)
		*reason_out = reason;
}

void s0_error_to_wire(int code, const char *reason, const char **wire_code_out,
                      int *http_status_out, const char **message_out)
{
	const wire_row *row = NULL;
	const char *message = NULL;
	if (reason) {
		for (size_t i = 0; i < N_WIRE && !row; i++)
			if (wire_rows[i].code == code && !strcmp(wire_rows[i].reason, reason))
				row = &wire_rows[i];
		for (size_t i = 0; i < N_REASON && !row; i++) {
			if (strcmp(reason_rows[i].reason, reason))
				continue;
			for (size_t j = 0; j < N_WIRE; j++) {
				if (wire_rows[j].code == code &&
				    !strcmp(wire_rows[j].wire, reason_rows[i].wire)) {
					row = &wire_rows[j];
					message = reason_rows[i].needle;
					break;
				}
			}
		}
	}
	for (size_t i = 0; i < N_WIRE && !row; i++)
		if (wire_rows[i].code == code)
			row = &wire_rows[i];
	if (wire_code_out)
		*wire_code_out = row ? row->wire : "internal_error";
	if (http_status_out)
		*http_status_out = row ? row->status : 500;
	if (message_out)
		*message_out = message;
}

/* ---- the object ---- */

/* Returned when even the error cannot be allocated. Never freed. */
static s0_error nomem_error = {S0_ENOMEM, "out_of_memory", "out of memory", NULL, 0, NULL,
                               -1,        NULL,            NULL,            0,    NULL, NULL,
                               NULL,      0,               NULL};

s0_error *s0__error_make(int code, const char *reason, const char *message)
{
	s0_error *e = calloc(1, sizeof *e);
	if (!e)
		return &nomem_error;
	e->code = code;
	e->retry_after_ms = -1;
	e->reason = s0__strdup(reason ? reason : s0_code_name(code));
	e->message = s0__strdup(message ? message : s0_strerror(code));
	if (!e->reason || !e->message) {
		free(e->reason);
		free(e->message);
		free(e);
		return &nomem_error;
	}
	s0__obj_inc();
	return e;
}

s0_error *s0_error_new(int code, const char *reason, const char *message)
{
	s0_error *e = s0__error_make(code, reason, message);
	return e == &nomem_error ? NULL : e;
}

void s0_error_free(s0_error *e)
{
	if (!e || e == &nomem_error)
		return;
	free(e->reason);
	free(e->message);
	free(e->wire_code);
	free(e->request_id);
	free(e->details_json);
	free(e->body);
	free(e->sandbox_id);
	free(e->action);
	s0_sandbox_info_free(e->last_sandbox);
	s0_error_free(e->cause);
	free(e);
	s0__obj_dec();
}

int s0__error_put(s0_error **err, s0_error *e)
{
	int code = e ? e->code : S0_ERROR;
	if (err && !*err)
		*err = e;
	else
		s0_error_free(e);
	return code;
}

int s0__error_set(s0_error **err, int code, const char *reason, const char *fmt, ...)
{
	if (!err)
		return code;
	char *msg = NULL;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		msg = s0__vasprintf(fmt, ap);
		va_end(ap);
	}
	s0_error *e = s0__error_make(code, reason, msg);
	free(msg);
	return s0__error_put(err, e);
}

int s0__error_nomem(s0_error **err)
{
	if (err && !*err)
		*err = &nomem_error;
	return S0_ENOMEM;
}

static void replace_str(char **slot, const char *v)
{
	char *d = s0__strdup(v);
	if (v && !d)
		return; /* keep the old value rather than lose it */
	free(*slot);
	*slot = d;
}

void s0__error_set_http(s0_error *e, int http_status, const char *wire_code,
                        const char *request_id, int64_t retry_after_ms)
{
	if (e == &nomem_error)
		return;
	e->http_status = http_status;
	replace_str(&e->wire_code, wire_code);
	replace_str(&e->request_id, request_id);
	e->retry_after_ms = retry_after_ms;
}

void s0__error_set_details(s0_error *e, const char *details_json)
{
	if (e != &nomem_error)
		replace_str(&e->details_json, details_json);
}

void s0__error_set_body(s0_error *e, const void *body, size_t len)
{
	if (e == &nomem_error)
		return;
	free(e->body);
	e->body = NULL;
	e->body_len = 0;
	if (!body)
		return;
	e->body = malloc(len + 1);
	if (e->body) {
		memcpy(e->body, body, len);
		((char *)e->body)[len] = '\0';
		e->body_len = len;
	}
}

void s0__error_set_sandbox(s0_error *e, const char *sandbox_id, const char *action,
                           const s0_sandbox_info *last, int64_t timeout_ms)
{
	if (e == &nomem_error)
		return;
	replace_str(&e->sandbox_id, sandbox_id);
	replace_str(&e->action, action);
	s0_sandbox_info_free(e->last_sandbox);
	e->last_sandbox = NULL;
	if (last)
		s0_sandbox_info_dup(last, &e->last_sandbox, NULL);
	e->timeout_ms = timeout_ms;
}

void s0__error_set_cause(s0_error *e, s0_error *cause)
{
	if (e == &nomem_error) {
		s0_error_free(cause);
		return;
	}
	s0_error_free(e->cause);
	e->cause = cause;
}

void s0__error_set_reason(s0_error *e, const char *reason)
{
	if (e != &nomem_error && reason)
		replace_str(&e->reason, reason);
}

int s0_error_code(const s0_error *e)
{
	return e ? e->code : S0_OK;
}
const char *s0_error_reason(const s0_error *e)
{
	return e && e->reason ? e->reason : "";
}
const char *s0_error_message(const s0_error *e)
{
	return e && e->message ? e->message : "";
}
const char *s0_error_wire_code(const s0_error *e)
{
	return e ? e->wire_code : NULL;
}
int s0_error_http_status(const s0_error *e)
{
	return e ? e->http_status : 0;
}
const char *s0_error_request_id(const s0_error *e)
{
	return e ? e->request_id : NULL;
}
int64_t s0_error_retry_after_ms(const s0_error *e)
{
	return e ? e->retry_after_ms : -1;
}
const char *s0_error_details_json(const s0_error *e)
{
	return e ? e->details_json : NULL;
}
const void *s0_error_body(const s0_error *e, size_t *len_out)
{
	if (len_out)
		*len_out = e ? e->body_len : 0;
	return e ? e->body : NULL;
}
const char *s0_error_sandbox_id(const s0_error *e)
{
	return e ? e->sandbox_id : NULL;
}
const char *s0_error_action(const s0_error *e)
{
	return e ? e->action : NULL;
}
const s0_sandbox_info *s0_error_last_sandbox(const s0_error *e)
{
	return e ? e->last_sandbox : NULL;
}
int64_t s0_error_timeout_ms(const s0_error *e)
{
	return e ? e->timeout_ms : 0;
}
const s0_error *s0_error_cause(const s0_error *e)
{
	return e ? e->cause : NULL;
}

bool s0_error_is_retryable(const s0_error *e)
{
	if (!e)
		return false;
	switch (e->code) {
	case S0_EUNAVAILABLE:
	case S0_ETHROTTLED:
	case S0_ETRANSPORT:
		return true;
	case S0_EQUOTA:
		return e->retry_after_ms >= 0;
	default:
		return e->http_status == 502 || e->http_status == 504;
	}
}

bool s0_error_is_claim_start_throttled(const s0_error *e)
{
	return e && e->http_status == 429 && e->wire_code &&
	       !strcmp(e->wire_code, "claim_start_throttled");
}
