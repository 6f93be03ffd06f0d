/*
 * The simulated node (docs/architecture.md "Runtime"): CPU and
 * memory capacity with per-runtime leases, a warm pool of carriers, a pool
 * of block-device attach slots ("NBD devices"), and the runtimes running on
 * it, each a generation of the engine's runtime driver (runtime/runtime.h).
 *
 * Not thread-safe by itself: the engine guards it with engine->mu.
 */
#ifndef S0_NODE_H
#define S0_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/lifecycle/engine.h"
#include "local/lifecycle/storage.h"
#include "local/runtime/runtime.h"

typedef struct s0__runtime {
	char id[S0__ID_MAX];
	char sandbox_id[S0__ID_MAX];
	int64_t generation;
	int carrier;
	int64_t cpu_millis, memory_bytes;
	s0__volume *volume; /* writable branch + ext4 */
	char attached[S0__GEN_MAX]; /* the committed generation it started on (RTX-02) */
	/* what runs on the volume (runtime/runtime.h): the engine's driver and
	 * host, and this generation's handle (NULL once halted) */
	const struct s0__rt_driver *drv;
	struct s0__rt_host *host;
	struct s0__rt_gen *gen;
	char restored_image[160]; /* memory image this generation was restored from ("" none) */
	int pins;           /* runtime requests in flight */
	bool fenced;        /* retirement began: no new requests */
	bool barrier;       /* a snapshot or fork is checkpointing: requests wait */
	/* a memory pause is preparing its capture without the sandbox lock
	 * (it holds a pin); a delete fires this to cancel it (MFB-13) */
	struct s0_cancel_token *prep_cancel;
	/* a memory pause holds this from its preparation until its intent is
	 * recorded or it failed: other pauses wait for it and then join the
	 * recorded operation (PTX-07; docs/decisions.md "Concurrent pauses") */
	bool pause_pending;
	bool ready;         /* set (under the engine lock) once fully started; until
	                     * then only the lease fields may be read by others */
	bool halted;        /* process, writer and mount gone; leases held until proof */
	bool crashed;       /* halted by an unplanned failure (branch abandoned) */
	bool lease_fenced;  /* halted because this node's lease could not be renewed in
	                     * time (lease.c): recovered or given up once it is back */
	/* The allocation: a scheduler record (in memory) and a directory on the
	 * node (<data>/allocs/<runtime_id>), removed separately (REC-07). */
	bool sched_record;
	char *alloc_dir;
	int64_t started_at_ms;
	int64_t requests;   /* requests served (inspection) */
	struct s0__runtime *next;
} s0__runtime;

typedef struct s0__node {
	int64_t cpu_total, cpu_used;
	int64_t memory_total, memory_used;
	int carriers_total, carriers_used;
	int nbd_total, nbd_used;
	int64_t runtimes_started, runtimes_stopped;
	int64_t runtimes_crashed;
	int64_t driver_stops;     /* stops acknowledged by the driver call */
	int64_t reconciled_stops; /* stops proven from node state, no driver reply (REC-02) */
	bool down; /* rebooted; awaiting an authenticated successor boot (REC-06) */
	s0__runtime *runtimes;
} s0__node;

void s0__node_init(s0__node *n, int64_t cpu, int64_t mem, int carriers);

/*
 * Lease a carrier, an attach slot and (cpu, mem) atomically for a new
 * runtime (not yet attached). S0_EUNAVAILABLE reason carrier / capacity /
 * nbd_device when the pool or capacity is short; nothing is leased then.
 */
int s0__node_lease(s0__node *n, const char *sandbox_id, int64_t cpu, int64_t mem,
                   s0__runtime **out, s0_error **err);
/* Return a runtime's leases and unlink it (its volume must be gone). */
void s0__node_release(s0__node *n, s0__runtime *rt);
s0__runtime *s0__node_find(s0__node *n, const char *runtime_id);
s0__runtime *s0__node_find_sandbox(s0__node *n, const char *sandbox_id);
/*
 * Copy the sandbox ids of the runtimes `pick` accepts, so the caller can
 * work on each after letting go of the engine's lock (which it holds here).
 * *out is a calloc'd array of *k ids the caller frees (NULL when there are
 * no runtimes). S0_ENOMEM with *out NULL and *k 0 when memory ran out.
 */
int s0__node_pick_ids(s0__node *n, bool (*pick)(const s0__runtime *rt),
                      char (**out)[S0__ID_MAX], size_t *k);
/*
 * Terminal proof (PTX-06): the runtime
 * process, writer, mount, network state, allocation directory and lease
 * cgroup are all absent. The allocation directory of rt (nullable) is
 * checked on disk — a purged scheduler record proves nothing (REC-07); a
 * `resource_leak:<kind>` fault keeps one resource present. S0_EUNAVAILABLE
 * with the kind: capacity must stay fenced.
 */
struct s0__faults;
int s0__node_terminal_proof(struct s0__faults *f, const s0__runtime *rt, s0_error **err);
/* Parse a resources.memory quantity ("512Mi", "1Gi", "1G", bytes). -1 if bad. */
int64_t s0__parse_memory(const char *q);

#endif
