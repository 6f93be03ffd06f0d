/**
 * @file sandbox0/common.h
 * @brief Export macros, versions, memory release and global initialisation.
 *
 * Conventions of the whole API (docs/decisions.md "Conventions"):
 * - every fallible function returns `S0_OK` (0) or a negative ::s0_code and
 *   takes an optional trailing `s0_error **err` (NULL allowed);
 * - outputs are left untouched on failure and always set on success;
 * - objects returned through `**out` belong to the caller and are released
 *   with the matching NULL-safe `_free`; plain strings and bytes returned by
 *   the library are released with s0_free();
 * - times are `int64_t` milliseconds: durations end in `_ms`, wall-clock
 *   instants in `_unix_ms`; sizes end in `_bytes`.
 */
#ifndef SANDBOX0_COMMON_H
#define SANDBOX0_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define S0_BEGIN_DECLS extern "C" {
#define S0_END_DECLS }
#else
#define S0_BEGIN_DECLS
#define S0_END_DECLS
#endif

#if defined(_WIN32)
#if defined(S0_BUILDING_LIBRARY)
#define S0__API_ATTR __declspec(dllexport)
#else
#define S0__API_ATTR __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(S0_BUILDING_LIBRARY)
#define S0__API_ATTR __attribute__((visibility("default")))
#else
#define S0__API_ATTR
#endif

/** Marks a public function of libsandbox0 (exported from the shared library). */
#define S0_API S0__API_ATTR

#include "sandbox0/version.h"

/** @brief An error; see sandbox0/error.h. */
typedef struct s0_error s0_error;
/** @brief A sandbox snapshot result; see sandbox0/sandbox.h. */
typedef struct s0_sandbox_info s0_sandbox_info;
/** @brief A cancel token; see sandbox0/clock.h. */
typedef struct s0_cancel_token s0_cancel_token;

/** A timeout value that means "no deadline". */
#define S0_TIMEOUT_INFINITE (-1)

S0_BEGIN_DECLS

/**
 * Run-time version of the library, to compare with ::S0_VERSION_NUMBER.
 *
 * @return MAJOR * 1000000 + MINOR * 1000 + PATCH of the linked library.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_version_number(void);

/**
 * Run-time version string of the library, for example "0.1.0".
 *
 * @return (transfer none) static string.
 * @threadsafety safe
 * @since 0.1
 */
S0_API const char *s0_version_string(void);

/**
 * Release a string or byte buffer the library returned (a `char **` or
 * `void **` output). Never use it on objects that have their own `_free`.
 *
 * @param[in] ptr (nullable) memory from the library; NULL is a no-op.
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_free(void *ptr);

/**
 * Initialise process-wide state (libcurl, libsodium). Idempotent and
 * reference-counted; every other entry point calls it implicitly, so calling
 * it is only needed to control when the one-time work happens (for example
 * before starting threads).
 *
 * @param[out] err (nullable) error detail on failure.
 * @return S0_OK, or a negative ::s0_code.
 * @retval S0_ERROR  libcurl or libsodium could not be initialised.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_global_init(s0_error **err);

/**
 * Drop one reference taken by s0_global_init(). The library keeps its
 * process-wide state until exit (libcurl cleanup is not safe while other
 * users of libcurl may exist), so this only balances the count.
 *
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_global_shutdown(void);

/**
 * Number of library objects (clients, results, errors, backends…) alive in
 * this process. Tests and bindings use it to prove that nothing leaks.
 *
 * @return count of live objects.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int64_t s0_live_objects(void);

S0_END_DECLS

#endif
