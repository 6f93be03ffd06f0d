/*
 * The regional upload reservation of memory captures, shared with
 * migration (MFB-10, MFB-12; docs/behaviours.md
 * stand-in `upload_budget_hold`): a byte budget that captures reserve for
 * their upload, a per-image limit enforced at admission, and a hold by
 * which something else (the migration stand-in) occupies part of it.
 *
 * Admission: an image over the per-image limit — or whose upload could
 * never fit the whole budget — is refused at once (S0_ECONFLICT
 * `image_too_large`, MFB-11). A reservation that does not fit now is
 * retried by the capture's preparation until its deadline (ckpt.h).
 *
 * @threadsafety every function is safe from any thread.
 */
#ifndef S0_CHECKPOINT_BUDGET_H
#define S0_CHECKPOINT_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

typedef struct s0__ckpt_budget s0__ckpt_budget;

/**
 * A budget.
 * @param total_bytes       bytes all reservations and holds may occupy together (> 0).
 * @param image_limit_bytes largest image admitted (0: total_bytes).
 * @param[out] out (transfer full) free with s0__ckpt_budget_free().
 * @retval S0_EINVAL total 0. @retval S0_ENOMEM
 */
int s0__ckpt_budget_new(uint64_t total_bytes, uint64_t image_limit_bytes,
                        s0__ckpt_budget **out, s0_error **err);
/** Free (no reservation may be outstanding). NULL-safe. */
void s0__ckpt_budget_free(s0__ckpt_budget *b);

/**
 * Admission of an image of @p image_bytes needing @p upload_bytes of
 * reservation.
 * @retval S0_ECONFLICT `image_too_large` ("memory checkpoint exceeds
 *         reservation limit …").
 */
int s0__ckpt_budget_admit(s0__ckpt_budget *b, uint64_t image_bytes, uint64_t upload_bytes,
                          s0_error **err);

/** Reserve @p bytes if they fit now. @return whether they were reserved. */
bool s0__ckpt_budget_try(s0__ckpt_budget *b, uint64_t bytes);
/** Return a reservation made by s0__ckpt_budget_try(). */
void s0__ckpt_budget_put(s0__ckpt_budget *b, uint64_t bytes);

/**
 * Hold @p bytes of the budget (the migration stand-in; may exceed what is
 * free: reservations then wait). Holds add up.
 */
void s0__ckpt_budget_hold(s0__ckpt_budget *b, uint64_t bytes);
/** Release @p bytes of holds (clamped to what is held). */
void s0__ckpt_budget_unhold(s0__ckpt_budget *b, uint64_t bytes);

/** Usage for inspection (MFB-12: back to baseline after a pause). */
typedef struct s0__ckpt_budget_usage {
	uint64_t total_bytes, image_limit_bytes;
	uint64_t reserved_bytes; /**< by captures */
	uint64_t held_bytes;     /**< by holds */
	uint64_t reservations;   /**< outstanding */
	uint64_t refused;        /**< admissions refused */
} s0__ckpt_budget_usage;

/** Read the usage counters. */
void s0__ckpt_budget_usage_get(s0__ckpt_budget *b, s0__ckpt_budget_usage *out);

#endif
