/* Opening, closing and restarting the engine (used by local/local.c). */
#ifndef S0_ENGINE_OPEN_H
#define S0_ENGINE_OPEN_H

#include "local/lifecycle/engine_internal.h"

/*
 * Open the engine on a data directory that the caller has locked: stores,
 * metadata, the default template, crash recovery of sandboxes whose
 * runtime died with the previous process, and the controller thread.
 */
int s0__engine_open(const char *dir, const s0__engine_options *opt, s0__engine **out,
                    s0_error **err);
void s0__engine_close(s0__engine *e);
/* Manager restart: drop in-memory lifecycle state, reload, resume operations. */
int s0__engine_restart_manager(s0__engine *e, s0_error **err);
/* Wait until no controller work is runnable (real time). S0_ETIMEDOUT otherwise. */
int s0__engine_quiesce(s0__engine *e, int64_t timeout_ms);
int s0__engine_controller_start(s0__engine *e, s0_error **err);
void s0__engine_controller_stop(s0__engine *e);
/* Build (or rebuild) a template. */
int s0__engine_template_build(s0__engine *e, const char *name, const char *dir,
                              uint64_t size_bytes, const char *const *ephemeral,
                              s0_error **err);
/*
 * Build a template from a spec object (JSON text, nullable) carrying its
 * runtime-only mounts under any accepted spelling (mounts.c; EPH-06).
 * S0_EINVAL bad_request for a bad spec. For a future template endpoint.
 */
int s0__engine_template_build_spec(s0__engine *e, const char *name, const char *dir,
                                   uint64_t size_bytes, const char *spec_json, s0_error **err);
/* Garbage-collect storage against the live generations of the metadata store. */
int s0__engine_gc(s0__engine *e, s0_error **err);
/* Inspection JSON (malloc'd). */
int s0__engine_inspect(s0__engine *e, const char *sandbox_id, char **out, s0_error **err);
/* Export a generation as a raw ext4 image file (tests: e2fsck of heads). */
int s0__engine_export_generation(s0__engine *e, const char *gen, const char *path,
                                 s0_error **err);

#endif
