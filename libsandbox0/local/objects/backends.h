/*
 * The object store backends by name, and opening a store with one of them.
 *
 * One table (backends.c) maps a name to its open function, its ops and a
 * probe; adding a backend (e.g. an S3-compatible one) is its folder
 * (objects/<name>/, implementing objstore.h's duties) plus one row there,
 * and its name in the test runs (tests/unit/objects/meson.build
 * object_store_backends; objenv.c's two backend-specific helpers).
 *
 * The backend a store directory was created with is recorded in
 * <dir>/backend ("pack\n"), written durably at its first open. Reopening it
 * with another backend is refused (S0_EINVAL, reason
 * "object_store_mismatch") rather than showing an empty store. A directory
 * made before the record existed is recognised by the backends' probes.
 */
#ifndef S0_OBJBACKENDS_H
#define S0_OBJBACKENDS_H

#include <stdbool.h>

#include "common/internal.h"
#include "local/objects/objstore.h"

/** The default backend of a new store. */
#define S0__OBJBACKEND_DEFAULT "pack"

/** One backend. */
typedef struct s0__objbackend {
	const char *name; /**< "pack", "files", "s3" */
	/** (nullable) Open (creating if needed) the backend in dir; see s0__objstore_new(). */
	int (*open)(const char *dir, void **ctx_out, s0_error **err);
	const s0__objstore_ops *ops;
	/** Whether dir holds this backend's data (for directories without a record). */
	bool (*present)(const char *dir);
	/** (nullable) URL prefix that selects this backend ("s3://"); its name
	 *  is then the URL, given to open_url with the local dir. */
	const char *scheme;
	int (*open_url)(const char *url, const char *dir, void **ctx_out, s0_error **err);
} s0__objbackend;

/**
 * The backend called name, or whose scheme name starts with (an S3 URL
 * names the "s3" backend).
 * @return (transfer none) static, or NULL when name is unknown (or NULL).
 */
const s0__objbackend *s0__objbackend_find(const char *name);

/** The known names for messages, e.g. "pack, files", into out (cap bytes). */
void s0__objbackend_names(char *out, size_t cap);

/**
 * Open the store in dir with backend name: NULL means the one dir records
 * (S0__OBJBACKEND_DEFAULT for a new dir). Records the choice in a new dir.
 * A backend with a scheme is named by its URL (s3/s3conf.h), every time:
 * dir is then its local directory (cache, temp files), and a dir recording
 * it opened without the URL fails with S0_EINVAL reason
 * "object_store_url_needed".
 * @param key   32-byte installation key (copied).
 * @param opts  (nullable) options.
 * @param[out] out  (transfer full) free with s0__objstore_free().
 * @retval S0_EINVAL     reason "object_store_unknown": no backend called name
 *                       (or the record names none); reason
 *                       "object_store_mismatch": dir was created with another
 *                       backend (both names in the message). Nothing changed.
 * @retval S0_ECONFLICT  another process has it open (reason "store_locked").
 * @retval S0_EIO / S0_ECORRUPT  the store cannot be opened.
 */
int s0__objstore_open_backend(const char *name, const char *dir,
                              const uint8_t key[S0__OBJKEY_BYTES],
                              const s0__objstore_options *opts, s0__objstore **out,
                              s0_error **err);

/**
 * Check, reading only, that s0__objstore_open_backend(name, dir) would not
 * refuse the backend choice: callers that change other stores before
 * opening this one (the engine migrates its metadata) check first, so a
 * refused choice changes nothing. Does not block on the store's lock.
 * @retval S0_EINVAL reason "object_store_unknown" / "object_store_mismatch"
 *                   as s0__objstore_open_backend().
 * @retval S0_EIO    the record cannot be read.
 */
int s0__objstore_check_backend(const char *name, const char *dir, s0_error **err);

#endif
