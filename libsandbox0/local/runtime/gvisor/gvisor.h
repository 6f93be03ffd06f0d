/*
 * The gvisor runtime driver (runtime.h; docs/local-backend.md "Runtime
 * gvisor"): each generation is a runsc sandbox (systrap platform, its
 * own network namespace on the hub of gv_net.h, `--overlay2=none` so
 * writes reach the root tree) on the sandbox's root tree, made from an
 * OCI bundle this driver writes, with /tmp and the template's ephemeral
 * mounts as tmpfs inside gVisor and a
 * cgroup (v1: memory, pids, cpu) per generation holding the limits of the
 * sandbox's resources. PID 1 is a shell from the root tree that reaps its
 * children; contexts run real programs through `runsc exec` (a REPL is one
 * long-lived shell keeping its state).
 *
 * Requirements (probe): root, a runsc binary (S0_RUNSC, else the cache of
 * scripts/install-runsc.sh, else runsc on PATH), /dev/fuse, loop control,
 * cgroup v1 memory/pids/cpu hierarchies. The process becomes a child
 * subreaper when a host opens: runsc daemonises its sandbox processes.
 *
 * @threadsafety as runtime.h.
 */
#ifndef S0_RUNTIME_GVISOR_GVISOR_H
#define S0_RUNTIME_GVISOR_GVISOR_H

#include "local/runtime/runtime.h"

/** The pinned runsc version scripts/install-runsc.sh builds. */
#define S0__GV_RUNSC_VERSION "go-20260905-160fafc42237"
/** Where scripts/install-runsc.sh puts it (unless S0_RUNSC_CACHE moved it). */
#define S0__GV_RUNSC_CACHE "/var/cache/libsandbox0/runsc/" S0__GV_RUNSC_VERSION "/runsc"

/** The driver (registry row "gvisor"). */
extern const s0__rt_driver s0__rt_gvisor_driver;

/**
 * The runsc binary this driver would use: $S0_RUNSC, else the install
 * cache (S0__GV_RUNSC_CACHE, or $S0_RUNSC_CACHE/<version>/runsc), else
 * `runsc` on PATH; only an executable regular file counts.
 * @param[out] out (transfer full) its absolute path.
 * @retval S0_EUNAVAILABLE `runtime_unavailable` naming where it looked.
 * @threadsafety safe
 */
int s0__gv_find_runsc(char **out, s0_error **err);

/**
 * Make a minimal root tree at @p dir (absent; made in a temporary sibling
 * and renamed): the static /bin/busybox (busybox-static) with a symlink per
 * applet, /etc/passwd and /etc/group for root, the usual empty
 * directories. A template for this runtime (s0_local_template_build).
 * @retval S0_EUNAVAILABLE no /bin/busybox. @retval S0_EIO
 * @threadsafety safe for distinct @p dir
 */
int s0__gv_busybox_tree(const char *dir, s0_error **err);

#endif
