/*
 * The simulated runtime as a driver of the runtime seam (runtime/runtime.h):
 * a guest (guest.h) with procd as PID 1 and the built-in shell (shell.h),
 * a runtime tmpfs, contexts (contexts.h) and supervised sessions
 * (sessions.h). No host process exists; the RootFS and tmpfs are real data.
 *
 * Capabilities: memory (unless the host was opened with no_memory),
 * virtual time, network (simulated enforcement), contexts, sessions; no
 * real processes.
 */
#ifndef S0_RUNTIME_SIM_SIM_H
#define S0_RUNTIME_SIM_SIM_H

#include "local/runtime/runtime.h"

/** The driver (registry name "sim"). */
extern const s0__rt_driver s0__rt_sim_driver;

#endif
