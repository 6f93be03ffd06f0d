/*
 * Template sources from a tar stream (docs/local-backend.md "Templates"):
 * a tar archive (ustar, pax or GNU; plain, gzip, bzip2, xz or zstd)
 * held in memory is checked entry by entry and extracted into an empty
 * directory with libarchive, which then feeds the template builder
 * (template.h, `mke2fs -d`).
 *
 * Hostile archives are refused before anything escapes the directory:
 * absolute paths, `..` components, entries (or hard link targets) through
 * a symbolic link, device nodes, FIFOs and sockets, more content than the
 * caller allows. Symbolic links themselves are kept as they are (their
 * targets are read inside the sandbox, never followed while extracting).
 * Set-user-ID and set-group-ID bits are dropped; owners are not restored
 * (files belong to the extracting process, as with `mke2fs -d`).
 */
#ifndef S0_ROOTFS_TARIN_H
#define S0_ROOTFS_TARIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/**
 * Extract the archive in @p data (@p len bytes, borrowed) into @p dest,
 * an existing directory that should be empty.
 *
 * @param[in] max_bytes most bytes of regular-file content in all.
 * @param[in] max_entries most entries.
 * @retval S0_EINVAL reason `bad_template_tar`: not a tar archive, or an
 *         entry refused (its name and why in the message); @p dest may
 *         hold the entries before it (the caller removes it).
 * @retval S0_ETOOLARGE reason `template_too_large`: past max_bytes or
 *         max_entries.
 * @retval S0_EIO an entry could not be written.
 * Blocks on file I/O; thread-safe (no shared state).
 */
int s0__tar_extract(const void *data, size_t len, const char *dest, uint64_t max_bytes,
                    uint64_t max_entries, s0_error **err);

#endif
