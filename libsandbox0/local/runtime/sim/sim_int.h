/* Internals of the simulated runtime's driver (driver.c, procs.c). */
#ifndef S0_RUNTIME_SIM_SIM_INT_H
#define S0_RUNTIME_SIM_SIM_INT_H

#include "local/runtime/sim/guest.h"
#include "local/runtime/sim/sim.h"

/** The guest of a generation. @return (transfer none) */
s0__guest *s0__sim_guest(s0__rt_gen *g);

/** runtime.h proc_call() of the simulated runtime. */
int s0__sim_proc_call(s0__rt_gen *gen, const s0__rt_proc_call *c, cJSON **data_out,
                      int *status_out, s0_error **err);

#endif
