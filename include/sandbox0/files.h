/**
 * @file sandbox0/files.h
 * @brief The sandbox files API (docs/wire.md §3.9, §3.10).
 *
 * Paths are absolute, or relative to the workspace root (`/workspace`).
 * A request to a paused sandbox with `auto_resume` wakes it first; while the
 * wake has not committed the call fails with S0_EUNAVAILABLE, reason
 * `waking_up`; a failed wake gives S0_ERESUME; with auto_resume disabled,
 * S0_EUNAVAILABLE reason `auto_resume_disabled`.
 *
 * Every call blocks for one exchange and is safe on a shared client.
 */
#ifndef SANDBOX0_FILES_H
#define SANDBOX0_FILES_H

#include <stdbool.h>
#include "sandbox0/client.h"

/** Largest file the files API writes (100 MiB, docs/wire.md §3.9). */
#define S0_FILES_MAX_WRITE_BYTES (100ull * 1024 * 1024)

/** FileInfo types. */
typedef enum s0_file_type {
	S0_FILE_TYPE_UNKNOWN = 0,
	S0_FILE_TYPE_FILE = 1,    /**< "file" */
	S0_FILE_TYPE_DIR = 2,     /**< "dir" */
	S0_FILE_TYPE_SYMLINK = 3  /**< "symlink" */
} s0_file_type;

/** @brief One FileInfo (immutable). */
typedef struct s0_file_info s0_file_info;
/** @brief A directory listing (immutable). */
typedef struct s0_file_list s0_file_list;

S0_BEGIN_DECLS

/** `name`. @since 0.1 */
S0_API const char *s0_file_info_name(const s0_file_info *fi);
/** `path` (as requested for stat; `<dir>/<name>` for list entries). @since 0.1 */
S0_API const char *s0_file_info_path(const s0_file_info *fi);
/** ::s0_file_type. @since 0.1 */
S0_API int s0_file_info_type(const s0_file_info *fi);
/** `size` in bytes. @since 0.1 */
S0_API int64_t s0_file_info_size_bytes(const s0_file_info *fi);
/** Permission bits parsed from the 4-digit octal `mode`, e.g. 0644. @since 0.1 */
S0_API uint32_t s0_file_info_mode(const s0_file_info *fi);
/** `mod_time` in ms since the epoch, 0 when unset. @since 0.1 */
S0_API int64_t s0_file_info_mod_time_unix_ms(const s0_file_info *fi);
/** `is_link`. @since 0.1 */
S0_API bool s0_file_info_is_link(const s0_file_info *fi);
/** `link_target` of a stat'ed symlink, else NULL. @since 0.1 */
S0_API const char *s0_file_info_link_target(const s0_file_info *fi);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_file_info_free(s0_file_info *fi);

/** Number of entries. @since 0.1 */
S0_API size_t s0_file_list_length(const s0_file_list *l);
/** Entry @p i (borrowed; NULL when out of range). @since 0.1 */
S0_API const s0_file_info *s0_file_list_at(const s0_file_list *l, size_t i);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_file_list_free(s0_file_list *l);

/**
 * Read a whole file (`GET …/files?path=`). Accepts the raw octet-stream
 * reply and the `{content, encoding:"base64"}` JSON form.
 * @param[out] data_out (transfer full) the bytes, NUL-terminated for
 *             convenience (the NUL is not counted); free with s0_free().
 * @param[out] len_out length in bytes.
 * @retval S0_ENOTFOUND `file_not_found`. S0_ECONFLICT `path_not_file`.
 * @retval S0_EINVAL bad path (`invalid_request`).
 * @since 0.1
 */
S0_API int s0_files_read(s0_client *c, const char *sandbox_id, const char *path,
                         void **data_out, size_t *len_out, s0_error **err);

/**
 * Write a whole file atomically (`POST …/files?path=`, octet-stream body);
 * parents are created, mode 0644.
 * @param[in] data (nullable when len is 0) bytes, borrowed for the call.
 * @retval S0_ETOOLARGE over ::S0_FILES_MAX_WRITE_BYTES (`file_too_large`);
 *         nothing written.
 * @retval S0_ECONFLICT `path_not_file` / `path_not_directory`.
 * @since 0.1
 */
S0_API int s0_files_write(s0_client *c, const char *sandbox_id, const char *path,
                          const void *data, size_t len, s0_error **err);

/**
 * Make a directory (`POST …/files?path=&mkdir=true[&recursive=true]`) → 201.
 * @retval S0_ECONFLICT `path_exists` when not recursive and it exists.
 * @since 0.1
 */
S0_API int s0_files_mkdir(s0_client *c, const char *sandbox_id, const char *path,
                          bool recursive, s0_error **err);

/**
 * Delete a file or a tree (`DELETE …/files?path=`); a missing path succeeds.
 * @since 0.1
 */
S0_API int s0_files_delete(s0_client *c, const char *sandbox_id, const char *path,
                           s0_error **err);

/**
 * lstat a path (`GET …/files/stat?path=`); symlinks are reported, not followed.
 * @param[out] out (transfer full) the FileInfo.
 * @retval S0_ENOTFOUND `file_not_found`.
 * @since 0.1
 */
S0_API int s0_files_stat(s0_client *c, const char *sandbox_id, const char *path,
                         s0_file_info **out, s0_error **err);

/**
 * List a directory (`GET …/files/list?path=`).
 * @param[out] out (transfer full) entries (possibly none).
 * @retval S0_ENOTFOUND `directory_not_found`. S0_ECONFLICT `path_not_directory`.
 * @since 0.1
 */
S0_API int s0_files_list(s0_client *c, const char *sandbox_id, const char *path,
                         s0_file_list **out, s0_error **err);

/**
 * Move/rename (`POST …/files/move`, `{source, destination}`); destination
 * parents are created.
 * @retval S0_ENOTFOUND source missing. S0_EINVAL empty paths (no request).
 * @since 0.1
 */
S0_API int s0_files_move(s0_client *c, const char *sandbox_id, const char *source,
                         const char *destination, s0_error **err);

S0_END_DECLS

#endif
