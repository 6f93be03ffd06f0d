/*
 * The one durable step of a lifecycle operation (pause, resume fallback,
 * recover, delete): record intent → side effect → commit the new state, or
 * roll back. Every transition of an operation row goes through
 * s0__op_advance, so each is one metadata transaction with the writes that
 * belong to it (meta.h crash-safety contract): a crash before the commit
 * leaves the operation in its previous state with nothing of the step
 * visible, a crash after it finds the step done. The crash points the
 * crash suite arms stay with the callers, right after the call returns.
 */
#ifndef S0_LIFECYCLE_OPTXN_H
#define S0_LIFECYCLE_OPTXN_H

#include "local/meta/meta.h"

struct s0__engine;

/* What one step does besides writing the operation row; every field may be
 * NULL. Callbacks run on the calling thread with the sandbox lock held. */
typedef struct s0__op_step {
	/* The side effect, before anything is written (start a runtime…). A
	 * negative return ends the step with that code: nothing is written and
	 * op keeps its state. */
	int (*effect)(struct s0__engine *e, s0__op_row *op, void *ctx);
	/* Writes that commit together with the new state, inside the
	 * transaction and before the operation row (supersede older operations,
	 * delete the sandbox row…). A negative return rolls the step back. */
	int (*write)(struct s0__engine *e, s0__op_row *op, void *ctx, s0_error **err);
	/* Undo the side effect after the transaction failed (stop the runtime
	 * the effect started). */
	void (*undo)(struct s0__engine *e, s0__op_row *op, void *ctx);
	/* A sandbox row saved (s0__engine_save: updated_at = now) in the
	 * transaction, after write and before the operation row. */
	s0__sandbox_row *row;
	void *ctx;
} s0__op_step;

/*
 * Advance op to state `to` through step (NULL = just the state): run the
 * effect, then in one transaction the writes, the row and the operation
 * (inserted when op->id is 0 — the intent, created_at = updated_at = now;
 * updated otherwise, updated_at = now), and commit. On success op holds
 * the committed state (and its new id). On failure op keeps its previous
 * state and id, nothing is written, and undo runs if the effect ran.
 * Advancing an existing operation (op->id set) first runs the fencing
 * check (s0__engine_fence_check on op->generation) in the transaction:
 * S0_ECONFLICT node_lease_lost/generation_owned, nothing written, when
 * another node took the sandbox over.
 * Returns S0_OK, the effect's code, or the store's (S0_EIO…, with err).
 * Not inside another metadata transaction.
 */
int s0__op_advance(struct s0__engine *e, s0__op_row *op, s0__op_state to,
                   const s0__op_step *step, s0_error **err);

#endif
