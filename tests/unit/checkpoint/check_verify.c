/*
 * Verification and compatibility on restore: damaged or missing manifest,
 * state or chunk objects; a chunk damaged after the guest is running
 * (crash of the toucher, damage callback — docs/decisions.md "Restore of
 * memory"); fingerprint fields (MFB-02; the procd version is not compared,
 * MEM-11); a moved RootFS head (MEM-05); restore hooks (MFB-03's
 * `restore` fault at module level).
 */
#include "cksuites.h"

#include <stdio.h>
#include <stdlib.h>

static ckfix F;
static char *R;

static void setup(void)
{
	ckfix_open(&F, 0, 0);
	R = rtfix_repl(&F.rt);
	free(rtfix_out(&F.rt, R, "V=1; alloc 4M; echo t > /tmp/t"));
}

static void teardown(void)
{
	free(R);
	ckfix_close(&F);
}

typedef struct ids {
	s0__objid v[64];
	int n;
} ids;

static int collect(void *ctx, int kind, const s0__objid *id)
{
	ids *x = ctx;
	(void)kind;
	if (x->n < 64)
		x->v[x->n++] = *id;
	return 0;
}

/* The objects of an image: [0] manifest, [1] state, [2] tmpfs, [3] sessions, [4] the
 * REPL heap's chunk-table page, then its chunks. */
static ids objects_of(const s0__objid *image)
{
	ids x = {.n = 0};
	ck_assert_int_eq(s0__ckpt_image_roots(F.ck, image, collect, &x, NULL), S0_OK);
	return x;
}

static void restore_fails(const s0__objid *id, int code, const char *reason)
{
	ck_restored res = {0};
	s0_error *e = NULL;
	ck_assert_int_eq(ckfix_restore(&F, id, false, &res, &e), code);
	ck_assert_ptr_null(res.guest);
	ck_assert_ptr_null(res.tmpfs);
	if (reason)
		ASSERT_STR(s0_error_reason(e), reason);
	s0_error_free(e);
}

START_TEST(missing_image)
{
	s0__objid nope;
	memset(&nope, 0x42, sizeof nope);
	restore_fails(&nope, S0_ENOTFOUND, NULL);
	s0__ckpt_manifest_info mi;
	ck_assert_int_eq(s0__ckpt_image_read(F.ck, &nope, &mi, NULL), S0_ENOTFOUND);
}
END_TEST

START_TEST(damaged_manifest)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	ckfix_flip(&F, &a.image_id, 0);
	restore_fails(&a.image_id, S0_ECORRUPT, NULL);
	s0__ckpt_manifest_info mi;
	ck_assert_int_eq(s0__ckpt_image_read(F.ck, &a.image_id, &mi, NULL), S0_ECORRUPT);
	ckfix_flip(&F, &a.image_id, 0);
	ck_restored res;
	ck_assert_int_eq(ckfix_restore(&F, &a.image_id, false, &res, NULL), S0_OK);
	ck_restored_clear(&res);
}
END_TEST

START_TEST(damaged_state_and_tmpfs)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	ids x = objects_of(&a.image_id);
	ck_assert_int_eq(x.n, 1 + 3 + 1 + 4);
	for (int k = 1; k <= 3; k++) { /* state, tmpfs, sessions parts */
		ckfix_flip(&F, &x.v[k], -3);
		restore_fails(&a.image_id, S0_ECORRUPT, NULL);
		ckfix_flip(&F, &x.v[k], -3);
	}
}
END_TEST

START_TEST(damaged_chunk_after_running)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	ids x = objects_of(&a.image_id);
	ckfix_flip(&F, &x.v[5 + 2], 5); /* heap chunk 2 of the REPL */
	ck_restored res;
	ck_assert_int_eq(ckfix_restore(&F, &a.image_id, false, &res, NULL), S0_OK);
	ckfix_adopt(&F, &res);
	char *o = rtfix_out(&F.rt, R, "echo $V");
	ASSERT_STR(o, "1\n");
	free(o);
	ck_assert_int_eq(F.damage_calls, 0);
	cJSON *d = rtfix_exec(&F.rt, R, "memhash; echo never");
	ASSERT_STR(rtfix_str(d, "state"), "crashed");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 139);
	ASSERT_STR(rtfix_str(d, "stdout"), "");
	cJSON_Delete(d);
	int32_t pid;
	ck_assert_int_eq(s0__ctx_pid(F.rt.g, R, &pid, NULL), S0_OK);
	ck_assert_int_eq(F.damage_calls, 1);
	ck_assert_int_eq(F.damage_pid, pid);
	s0__heap_stats hs;
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.damaged, 1);
	/* a capture of a guest holding a damaged chunk fails, never stores garbage */
	s0__ckpt_image_info b;
	s0_error *e = NULL;
	ck_assert_int_eq(ckfix_capture(&F, &b, &e), S0_EMEMCAPTURE);
	ASSERT_STR(s0_error_reason(e), "capture_failed");
	s0_error_free(e);
}
END_TEST

START_TEST(damaged_table_page)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	ids x = objects_of(&a.image_id);
	ckfix_flip(&F, &x.v[4], 0); /* the REPL's chunk-table page: read only on first touch */
	ck_restored res;
	ck_assert_int_eq(ckfix_restore(&F, &a.image_id, false, &res, NULL), S0_OK);
	ckfix_adopt(&F, &res);
	char *o = rtfix_out(&F.rt, R, "echo $V");
	ASSERT_STR(o, "1\n");
	free(o);
	cJSON *d = rtfix_exec(&F.rt, R, "memhash");
	ASSERT_STR(rtfix_str(d, "state"), "crashed");
	cJSON_Delete(d);
	ck_assert_int_eq(F.damage_calls, 1);
	s0__heap_stats hs;
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.damaged, 4);
	s0__ckpt_image_info b;
	s0_error *e = NULL;
	ck_assert_int_eq(ckfix_capture(&F, &b, &e), S0_EMEMCAPTURE);
	s0_error_free(e);
}
END_TEST

START_TEST(damaged_chunk_found_by_prefetch)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	ids x = objects_of(&a.image_id);
	ckfix_flip(&F, &x.v[5 + 1], 0);
	ck_restored res;
	ck_assert_int_eq(ckfix_restore(&F, &a.image_id, true, &res, NULL), S0_OK);
	ckfix_adopt(&F, &res);
	s0__guest_prefetch_wait(F.rt.g);
	ck_assert_int_eq(F.damage_calls, 1);
	int32_t pid;
	ck_assert_int_eq(s0__ctx_pid(F.rt.g, R, &pid, NULL), S0_OK);
	ck_assert_int_eq(F.damage_pid, pid);
}
END_TEST

START_TEST(fingerprint_fields)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	s0__ckpt_fp keep = F.fp;
	const char *fields[] = {"runtime_version", "platform", "cpu_features", "template_image",
	                        "cpu_millis", "memory_bytes"};
	for (int i = 0; i < 6; i++) {
		F.fp = keep;
		switch (i) {
		case 0: snprintf(F.fp.runtime_version, 64, "s0-sim/2"); break;
		case 1: snprintf(F.fp.platform, 64, "linux/aarch64"); break;
		case 2: snprintf(F.fp.cpu_features, 256, "generic"); break;
		case 3: snprintf(F.fp.template_image, 256, "tpl-other"); break;
		case 4: F.fp.cpu_millis = 2000; break;
		default: F.fp.memory_bytes = 2; break;
		}
		ASSERT_STR(s0__ckpt_fp_mismatch(&keep, &F.fp), fields[i]);
		ck_restored res = {0};
		s0_error *e = NULL;
		ck_assert_int_eq(ckfix_restore(&F, &a.image_id, false, &res, &e), S0_ECONFLICT);
		ASSERT_STR(s0_error_reason(e), "image_incompatible");
		ck_assert_ptr_nonnull(strstr(s0_error_message(e), fields[i]));
		s0_error_free(e);
	}
	F.fp = keep;
	snprintf(F.fp.procd_version, 64, "procd-sim/9"); /* MEM-11: recorded, not compared */
	ck_assert_ptr_null(s0__ckpt_fp_mismatch(&keep, &F.fp));
	ck_restored res;
	ck_assert_int_eq(ckfix_restore(&F, &a.image_id, false, &res, NULL), S0_OK);
	ASSERT_STR(res.info.fingerprint.procd_version, "procd-sim/1");
	ASSERT_STR(s0__guest_procd_version(res.guest), "procd-sim/1");
	ck_restored_clear(&res);
}
END_TEST

START_TEST(generation_mismatch)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	s0__ckpt_restore_opts o = {.rootfs_generation = "gen-2"};
	s0__ckpt_restored res = {0};
	s0_error *e = NULL;
	ck_assert_int_eq(s0__ckpt_restore(F.ck, &a.image_id, &o, &res, &e), S0_ECONFLICT);
	ASSERT_STR(s0_error_reason(e), "generation_mismatch");
	s0_error_free(e);
	o.rootfs_generation = NULL; /* unchecked: restores, sessions left out */
	ck_assert_int_eq(s0__ckpt_restore(F.ck, &a.image_id, &o, &res, NULL), S0_OK);
	ck_assert_ptr_null(res.sessions);
	ck_assert_ptr_nonnull(res.data.tmpfs);
	s0__ckpt_restored_clear(&res);
}
END_TEST

/* fuzz_router/fuzz_reopen finding (UBSan): a restored process whose heap is
 * empty arrives with no table pages (pages NULL, npages 0); the lazy heap
 * copied them with memcpy(dst, NULL, 0), undefined behaviour. It is an
 * empty heap, and a table with pages still needs a pager. */
START_TEST(empty_lazy_heap_without_table)
{
	s0__heap *h = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__heap_new_lazy(64 * 1024, 0, NULL, 0, NULL, &h, &err), S0_OK);
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(s0__heap_size(h), 0);
	s0__heap_unref(h);
	ck_assert_int_eq(s0__heap_new_lazy(64 * 1024, 1, NULL, 1, NULL, &h, &err), S0_EINVAL);
	s0_error_free(err);
}
END_TEST

START_TEST(restore_hooks)
{
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	for (int ph = S0__CKPT_RESTORE_AUTHORIZE; ph <= S0__CKPT_RESTORE; ph++) {
		F.verdict[ph] = S0__HOOK_FAIL;
		restore_fails(&a.image_id, S0_ERESUME, "restore_failed");
		F.verdict[ph] = S0__HOOK_PROCEED;
	}
	ck_assert_int_eq(F.calls[S0__CKPT_RESTORE_AUTHORIZE], 2);
	ck_assert_int_eq(F.calls[S0__CKPT_RESTORE], 1);
	s0__ckpt_stats st;
	s0__ckpt_stats_get(F.ck, &st);
	ck_assert_uint_eq(st.restores, 0);
}
END_TEST

Suite *ck_verify_suite(void)
{
	Suite *s = suite_create("checkpoint-verify");
	TCase *t = tcase_create("verify");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, missing_image);
	tcase_add_test(t, damaged_manifest);
	tcase_add_test(t, damaged_state_and_tmpfs);
	tcase_add_test(t, damaged_chunk_after_running);
	tcase_add_test(t, damaged_table_page);
	tcase_add_test(t, damaged_chunk_found_by_prefetch);
	tcase_add_test(t, fingerprint_fields);
	tcase_add_test(t, generation_mismatch);
	tcase_add_test(t, restore_hooks);
	tcase_add_test(t, empty_lazy_heap_without_table);
	suite_add_tcase(s, t);
	return s;
}
