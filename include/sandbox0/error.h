/**
 * @file sandbox0/error.h
 * @brief The one error taxonomy: codes, wire mapping and the error object.
 *
 * Three X-macro tables are the single source of truth (docs/decisions.md "Conventions"):
 *
 * - ::S0_CODE_MAP: the library's closed set of codes (identifier, value,
 *   name, description). Values are never renumbered or reused.
 * - ::S0_WIRE_ERROR_MAP: one row per Sandbox0 wire `error.code` and HTTP
 *   status (docs/wire.md §2.2, §3.10, §8): (wire code, HTTP status, s0 code,
 *   reason). The client maps wire → (code, reason); the server maps
 *   (code, reason) → wire with the same rows, so the two cannot drift. The
 *   first row for a code is that code's default on the wire.
 * - ::S0_WIRE_REASON_MAP: stable reasons derived from a wire message
 *   (for example `unavailable` + "sandbox is waking up" → `waking_up`).
 *
 * Client-only codes (S0_ECANCELED, S0_ETRANSPORT, S0_EPROTOCOL, S0_EINVAL
 * raised before any request, S0_ETIMEDOUT for a wait deadline,
 * S0_ELIFECYCLE) are produced locally and never put on the wire.
 *
 * @threadsafety s0_error objects are immutable once returned and may be read
 * from any thread; free each one exactly once.
 */
#ifndef SANDBOX0_ERROR_H
#define SANDBOX0_ERROR_H

#include <stdbool.h>
#include "sandbox0/common.h"

/**
 * X(IDENT, value, "name", "description") for every ::s0_code.
 * Groups: 0..-9 generic, -10..-19 API outcomes, -20..-29 lifecycle,
 * -30..-39 client/transport, -40..-49 local storage.
 */
#define S0_CODE_MAP(X)                                                               \
	X(OK, 0, "ok", "success")                                                        \
	X(ERROR, -1, "error", "unexpected error")                                        \
	X(ENOMEM, -2, "out_of_memory", "out of memory")                                  \
	X(EINVAL, -3, "invalid_argument", "invalid argument or request")                 \
	X(EUNSUPPORTED, -4, "unsupported", "not supported by this backend or build")     \
	X(ECANCELED, -5, "canceled", "canceled by the caller")                           \
	X(EUSER, -6, "user_abort", "a callback asked to stop")                           \
	X(ITEROVER, -7, "iteration_over", "no more items")                               \
	X(ENOTFOUND, -10, "not_found", "not found")                                      \
	X(ECONFLICT, -11, "conflict", "conflicts with the current state")                \
	X(EUNAVAILABLE, -12, "unavailable", "temporarily unavailable")                   \
	X(ETHROTTLED, -13, "throttled", "rate limited")                                  \
	X(EQUOTA, -14, "quota_exceeded", "quota exceeded")                               \
	X(ETIMEDOUT, -15, "timeout", "timed out")                                        \
	X(EAUTH, -16, "unauthenticated", "missing or invalid credentials")               \
	X(EFORBIDDEN, -17, "forbidden", "not allowed")                                   \
	X(ETOOLARGE, -18, "too_large", "too large")                                      \
	X(EGONE, -19, "gone", "no longer available")                                     \
	X(ELIFECYCLE, -20, "lifecycle_failed", "a lifecycle transition failed")          \
	X(ERESUME, -21, "resume_failed", "sandbox resume failed")                        \
	X(EMEMCAPTURE, -22, "memory_capture_failed", "memory image was not captured")    \
	X(ETRANSPORT, -30, "transport", "transport error")                               \
	X(EPROTOCOL, -31, "protocol", "unexpected response")                             \
	X(EINTERNAL, -32, "internal", "internal server error")                           \
	X(EIO, -40, "io_error", "local storage I/O error")                               \
	X(ECORRUPT, -41, "corrupt", "stored data failed verification")                   \
	X(ENOSPACE, -42, "no_space", "local storage full")

/**
 * X("wire_code", http_status, S0_CODE, "reason"): Sandbox0 wire error codes.
 * Rows with the same wire code differ by HTTP status (502/503/504
 * `unavailable`). The first row of each s0 code is its default on the wire.
 */
#define S0_WIRE_ERROR_MAP(X)                                                   \
	X("bad_request", 400, S0_EINVAL, "bad_request")                           \
	X("invalid_request", 400, S0_EINVAL, "invalid_request")                   \
	X("read_failed", 400, S0_EINVAL, "read_failed")                           \
	X("invalid_paths", 400, S0_EINVAL, "invalid_paths")                       \
	X("unauthorized", 401, S0_EAUTH, "unauthorized")                          \
	X("forbidden", 403, S0_EFORBIDDEN, "forbidden")                           \
	X("admission_restricted", 403, S0_EFORBIDDEN, "admission_restricted")     \
	X("permission_denied", 403, S0_EFORBIDDEN, "permission_denied")           \
	X("feature_not_licensed", 403, S0_EFORBIDDEN, "feature_not_licensed")     \
	X("not_found", 404, S0_ENOTFOUND, "not_found")                            \
	X("file_not_found", 404, S0_ENOTFOUND, "file_not_found")                  \
	X("directory_not_found", 404, S0_ENOTFOUND, "directory_not_found")        \
	X("context_not_found", 404, S0_ENOTFOUND, "context_not_found")            \
	X("session_not_found", 404, S0_ENOTFOUND, "session_not_found")            \
	X("method_not_allowed", 405, S0_EUNSUPPORTED, "method_not_allowed")       \
	X("exec_timeout", 408, S0_ETIMEDOUT, "exec_timeout")                      \
	X("conflict", 409, S0_ECONFLICT, "conflict")                              \
	X("template_not_ready", 409, S0_ECONFLICT, "template_not_ready")          \
	X("path_exists", 409, S0_ECONFLICT, "path_exists")                        \
	X("path_not_directory", 409, S0_ECONFLICT, "path_not_directory")          \
	X("path_not_file", 409, S0_ECONFLICT, "path_not_file")                    \
	X("process_not_running", 409, S0_ECONFLICT, "process_not_running")        \
	X("input_buffer_full", 409, S0_ECONFLICT, "input_buffer_full")            \
	X("pty_unavailable", 409, S0_ECONFLICT, "pty_unavailable")                \
	X("session_conflict", 409, S0_ECONFLICT, "session_conflict")              \
	X("gone", 410, S0_EGONE, "gone")                                          \
	X("process_finished", 410, S0_EGONE, "process_finished")                  \
	X("event_cursor_expired", 410, S0_EGONE, "event_cursor_expired")          \
	X("request_too_large", 413, S0_ETOOLARGE, "request_too_large")            \
	X("file_too_large", 413, S0_ETOOLARGE, "file_too_large")                  \
	X("quota_exceeded", 429, S0_EQUOTA, "quota_exceeded")                     \
	X("claim_start_throttled", 429, S0_ETHROTTLED, "claim_start_throttled")   \
	X("input_buffer_full", 429, S0_ETHROTTLED, "input_buffer_full")           \
	X("internal_error", 500, S0_EINTERNAL, "internal_error")                  \
	X("operation_failed", 500, S0_EINTERNAL, "operation_failed")              \
	X("not_implemented", 501, S0_EUNSUPPORTED, "not_implemented")             \
	X("unavailable", 503, S0_EUNAVAILABLE, "unavailable")                     \
	X("unavailable", 502, S0_EUNAVAILABLE, "bad_gateway")                     \
	X("unavailable", 504, S0_EUNAVAILABLE, "gateway_timeout")                 \
	X("sandbox_resume_failed", 503, S0_ERESUME, "resume_failed")

/**
 * X("wire_code", "message substring", "reason"): reasons refined from the
 * message of a wire error (docs/wire.md §2.2, §6). Matched case-sensitively in
 * order; the server emits the first message listed for a reason.
 */
#define S0_WIRE_REASON_MAP(X)                                                         \
	X("unavailable", "sandbox is waking up", "waking_up")                            \
	X("unavailable", "sandbox is not running and auto_resume is disabled",           \
	  "auto_resume_disabled")                                                        \
	X("unavailable", "memory fork capture is pending", "capture_pending")            \
	X("unavailable", "memory checkpoint reservation unavailable",                    \
	  "reservation_unavailable")                                                     \
	X("unavailable", "memory unavailable", "memory_unavailable")                     \
	X("conflict", "conflicts with another lifecycle operation", "lifecycle_conflict") \
	X("conflict", "memory checkpoint exceeds reservation limit", "image_too_large")  \
	X("conflict", "requires a paused sandbox", "not_paused")                         \
	X("conflict", "requires a running or paused sandbox", "not_running_or_paused")

/** @cond */
#define S0__CODE_ENUM(id, val, name, desc) S0_##id = (val),
/** @endcond */

/**
 * Result codes. Functions return S0_OK or one of the negative values; treat
 * an unknown negative value as S0_ERROR (values are append-only).
 */
typedef enum s0_code { S0_CODE_MAP(S0__CODE_ENUM) } s0_code;

S0_BEGIN_DECLS

/**
 * Stable snake_case name of a code, e.g. "not_found" for S0_ENOTFOUND.
 *
 * @param code any int; unknown values give "error".
 * @return (transfer none) static string.
 * @threadsafety safe
 * @since 0.1
 */
S0_API const char *s0_code_name(int code);

/**
 * One-line English description of a code.
 *
 * @param code any int; unknown values describe S0_ERROR.
 * @return (transfer none) static string.
 * @threadsafety safe
 * @since 0.1
 */
S0_API const char *s0_strerror(int code);

/**
 * Code for a name produced by s0_code_name().
 *
 * @param name (nullable) code name.
 * @return the code, or S0_ERROR when the name is unknown or NULL.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_code_from_name(const char *name);

/**
 * Map a wire error (Sandbox0 `error.code`, HTTP status, message) to a code
 * and a stable reason, using ::S0_WIRE_ERROR_MAP and ::S0_WIRE_REASON_MAP.
 * An unknown or absent wire code falls back on the HTTP status.
 *
 * @param[in] wire_code (nullable) the envelope's `error.code`.
 * @param[in] http_status HTTP status of the response.
 * @param[in] message (nullable) the envelope's `error.message`.
 * @param[out] code_out (nullable) receives the ::s0_code.
 * @param[out] reason_out (nullable) (transfer none) receives a static reason
 *             string, never NULL.
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_error_map_wire(const char *wire_code, int http_status, const char *message,
                              int *code_out, const char **reason_out);

/**
 * The reverse mapping used by the server: the wire code, HTTP status and
 * canonical message fragment for (code, reason). A reason listed in
 * ::S0_WIRE_REASON_MAP gives its message; otherwise message_out is NULL.
 * Codes with no wire row (client-only codes) map to `internal_error`/500.
 *
 * @param[in] code an ::s0_code.
 * @param[in] reason (nullable) a reason; NULL picks the code's default row.
 * @param[out] wire_code_out (nullable) (transfer none) static wire code.
 * @param[out] http_status_out (nullable) HTTP status.
 * @param[out] message_out (nullable) (transfer none) static canonical message
 *             for reasons of ::S0_WIRE_REASON_MAP, else NULL.
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_error_to_wire(int code, const char *reason, const char **wire_code_out,
                             int *http_status_out, const char **message_out);

/**
 * Make an error object (for callbacks and bindings that report errors
 * through the same type).
 *
 * @param code a negative ::s0_code.
 * @param reason (nullable) stable reason; NULL uses s0_code_name(code).
 * @param message (nullable) message; NULL uses s0_strerror(code).
 * @return (transfer full) the error, or NULL when out of memory.
 * @threadsafety safe
 * @since 0.1
 */
S0_API s0_error *s0_error_new(int code, const char *reason, const char *message);

/**
 * Free an error. NULL is a no-op.
 * @threadsafety one thread per object
 * @since 0.1
 */
S0_API void s0_error_free(s0_error *err);

/** The ::s0_code (negative). @since 0.1 */
S0_API int s0_error_code(const s0_error *err);

/**
 * Stable reason, a snake_case string from an open set: the wire reason
 * (`not_found`, `template_not_ready`, `waking_up`, `auto_resume_disabled`,
 * `lifecycle_conflict`…) or a local one (`wait_deadline`, `data_dir_locked`,
 * `curl:28`…). Never NULL.
 * @return (transfer none) valid while @p err lives.
 * @since 0.1
 */
S0_API const char *s0_error_reason(const s0_error *err);

/** Human-readable message; never NULL. (transfer none) @since 0.1 */
S0_API const char *s0_error_message(const s0_error *err);

/**
 * Raw wire `error.code` as the server sent it, or the client's substitute
 * for a non-envelope body (`unexpected_response`, `unknown_error` for an
 * empty body); NULL for errors that did not come from an HTTP response.
 * (transfer none) @since 0.1
 */
S0_API const char *s0_error_wire_code(const s0_error *err);

/** HTTP status of the failing response, or 0 when not from HTTP. @since 0.1 */
S0_API int s0_error_http_status(const s0_error *err);

/**
 * Request id from the response headers (`X-Request-Id`, `X-Request-ID`,
 * `Request-Id`, `Request-ID`, `X-RequestId`), or NULL. (transfer none)
 * @since 0.1
 */
S0_API const char *s0_error_request_id(const s0_error *err);

/**
 * Retry-After in milliseconds (from seconds or an HTTP date, RFC 9110, or a
 * non-envelope `retry_after` body field), or -1 when absent or invalid.
 * @since 0.1
 */
S0_API int64_t s0_error_retry_after_ms(const s0_error *err);

/** The envelope's `error.details` as compact JSON, or NULL. (transfer none) @since 0.1 */
S0_API const char *s0_error_details_json(const s0_error *err);

/** The raw response body (may be binary, not NUL-terminated), or NULL. @since 0.1 */
S0_API const void *s0_error_body(const s0_error *err, size_t *len_out);

/** Sandbox id the failing call was about, or NULL. (transfer none) @since 0.1 */
S0_API const char *s0_error_sandbox_id(const s0_error *err);

/**
 * For S0_ELIFECYCLE: the action that failed, "memory pause" or
 * "memory resume" (the official SDKs' `SandboxLifecycleFailedError.action`);
 * otherwise NULL. (transfer none) @since 0.1
 */
S0_API const char *s0_error_action(const s0_error *err);

/**
 * For S0_ETIMEDOUT and S0_ELIFECYCLE raised by a wait: the last sandbox the
 * wait observed (NULL if none was observed). (transfer none) valid while
 * @p err lives. @since 0.1
 */
S0_API const s0_sandbox_info *s0_error_last_sandbox(const s0_error *err);

/** For wait timeouts: the caller's budget in ms, else 0. @since 0.1 */
S0_API int64_t s0_error_timeout_ms(const s0_error *err);

/** Wrapped lower-level error, or NULL. (transfer none) @since 0.1 */
S0_API const s0_error *s0_error_cause(const s0_error *err);

/**
 * Whether repeating the same request later may succeed: S0_EUNAVAILABLE,
 * S0_ETHROTTLED, S0_ETRANSPORT, S0_EQUOTA with a Retry-After, and 502/504.
 * @since 0.1
 */
S0_API bool s0_error_is_retryable(const s0_error *err);

/**
 * True for HTTP 429 with wire code `claim_start_throttled` (the official
 * SDKs' `is_claim_start_throttled`). @since 0.1
 */
S0_API bool s0_error_is_claim_start_throttled(const s0_error *err);

S0_END_DECLS

#endif
