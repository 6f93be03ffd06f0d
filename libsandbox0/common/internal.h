/*
 * Internal helpers shared by every component: allocation with the live
 * object counter, error construction, string helpers.
 * Cross-file internal symbols use the s0__ prefix.
 */
#ifndef S0_INTERNAL_H
#define S0_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox0/sandbox0.h"

#if defined(__GNUC__)
#define S0__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define S0__UNUSED __attribute__((unused))
#else
#define S0__PRINTF(a, b)
#define S0__UNUSED
#endif

/* Count of live public objects (s0_live_objects). Call on make / free. */
void s0__obj_inc(void);
void s0__obj_dec(void);

/* strdup that returns NULL for NULL input. */
char *s0__strdup(const char *s);
char *s0__strndup(const char *s, size_t n);
/* malloc'd printf. */
char *s0__asprintf(const char *fmt, ...) S0__PRINTF(1, 2);
char *s0__vasprintf(const char *fmt, va_list ap);
/* Whether s is NULL or only blanks. */
bool s0__is_blank(const char *s);
/* Copy src into dst of size n, always NUL-terminated. */
void s0__strlcpy(char *dst, const char *src, size_t n);

/*
 * Error construction. s0__error_set(err, code, reason, fmt, ...) makes an
 * error with a formatted message and stores it in *err when err is non-NULL
 * (freeing nothing: callers pass a slot that holds NULL). Returns code so
 * callers can write `return s0__error_set(err, S0_EINVAL, NULL, "...")`.
 */
int s0__error_set(s0_error **err, int code, const char *reason, const char *fmt, ...)
	S0__PRINTF(4, 5);
/* Same with an existing error object (takes ownership); returns its code. */
int s0__error_put(s0_error **err, s0_error *e);
/* ENOMEM without allocating a message when allocation fails. */
int s0__error_nomem(s0_error **err);

/* Mutable construction of an s0_error before it is handed out. */
s0_error *s0__error_make(int code, const char *reason, const char *message);
void s0__error_set_http(s0_error *e, int http_status, const char *wire_code,
                        const char *request_id, int64_t retry_after_ms);
void s0__error_set_details(s0_error *e, const char *details_json);
void s0__error_set_body(s0_error *e, const void *body, size_t len);
void s0__error_set_sandbox(s0_error *e, const char *sandbox_id, const char *action,
                           const s0_sandbox_info *last, int64_t timeout_ms);
void s0__error_set_cause(s0_error *e, s0_error *cause);
/* Replace the message and reason (used when wrapping). */
void s0__error_set_reason(s0_error *e, const char *reason);

/* Monotonic and wall clocks of the real machine, ms. */
int64_t s0__real_monotonic_ms(void);
int64_t s0__real_unix_ms(void);

/* Ensure process-wide init (curl, sodium); returns S0_OK or S0_ERROR. */
int s0__global_ensure(void);

#endif
