/*
 * Fixture of the checkpoint tests: the runtime fixture (RootFS, tmpfs,
 * guest, manual clock), an object store in a scratch directory, an engine
 * with a scriptable fault hook and a budget, and helpers to capture,
 * restore and adopt a restored guest.
 */
#ifndef S0_TEST_CKFIX_H
#define S0_TEST_CKFIX_H

#include "rtfix.h"
#include "local/checkpoint/ckpt.h"
#include "local/runtime/sim/image.h"

/* A restored image rebuilt as the simulated runtime does (each transfer full). */
typedef struct ck_restored {
	s0__guest *guest;
	s0__tmpfs *tmpfs;       /* NULL when none was captured */
	s0__sessions *sessions; /* NULL unless carried */
	s0__ckpt_manifest_info info;
} ck_restored;

/* Free what a restore made. NULL-safe. */
void ck_restored_clear(ck_restored *r);

typedef struct ckfix {
	rtfix rt;
	char *dir;
	s0__objstore *os;
	s0__ckpt *ck;
	s0__ckpt_budget *budget;
	s0__ckpt_fp fp;
	s0__sessions *ses;
	s0__sim_image_ref ref; /* the fixture's guest and tmpfs as an image source */
	s0__rt_image_src src;
	/* hook script: verdict per phase, and HOLD until this many prepare calls */
	int verdict[8];
	int calls[8];
	int hold_prepare_until;
	uint64_t unhold_at_call; /* release the budget hold at this prepare call */
	int damage_calls;
	int32_t damage_pid;
} ckfix;

/* budget_total 0: no budget. */
void ckfix_open(ckfix *f, uint64_t budget_total, uint64_t image_limit);
void ckfix_close(ckfix *f);

/* Capture the fixture's guest (tmpfs and sessions included). */
int ckfix_capture(ckfix *f, s0__ckpt_image_info *out, s0_error **err);
/* Capture asserting success. */
s0__ckpt_image_info ckfix_capture_ok(ckfix *f);
/* Restore image into r with the fixture's fingerprint and generation "gen-1"
 * (checkpoint engine read + the simulated runtime's rebuild). */
int ckfix_restore(ckfix *f, const s0__objid *image, bool prefetch, ck_restored *r,
                  s0_error **err);
/* The fixture's image source (its current guest and tmpfs). */
const s0__rt_image_src *ckfix_src(ckfix *f);
/* Make a restored guest, tmpfs and sessions the fixture's (r is emptied). */
void ckfix_adopt(ckfix *f, ck_restored *r);
/* Flip one byte at offset `at` of object id's stored record (+ delta). */
void ckfix_flip(ckfix *f, const s0__objid *id, int64_t delta);

#endif
