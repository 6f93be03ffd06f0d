/* A real S3 outage (tests/s3server/s3ctl.sh stops and restarts the server of
 * scripts/test.d/48-s3.sh) gives the behaviour the object_store fault point
 * stands for: a pause whose upload finds the server down stays retryable
 * (not shown paused, writer grant held, capacity fenced) and completes once
 * it is back, with nothing lost (PTX-09); a resume that must read objects
 * from the bucket answers 503 and keeps the paused state, then resumes
 * (RTX-06). Run alone (meson is_parallel false): it stops the shared server. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "lt.h"

/* Run the server control command (kill: SIGKILL, an outage; start). */
static void s3ctl(const char *cmd)
{
	const char *ctl = getenv("S0_TEST_S3_CTL");
	ck_assert_msg(ctl && *ctl, "S0_TEST_S3_CTL is set by scripts/test.d/48-s3.sh");
	char line[4096];
	snprintf(line, sizeof line, "%s %s", ctl, cmd);
	ck_assert_msg(system(line) == 0, "%s failed", line);
}

/* Remove every entry of the data dir's S3 read cache, as on a node that
 * never held these objects. */
static void drop_cache(lt *t)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/objects/cache", t->dir);
	DIR *d = opendir(path);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && !unlinkat(dirfd(d), e->d_name, 0))
			n++;
	closedir(d);
	ck_assert_int_gt(n, 0);
}

static void assert_not_paused(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_int_ne(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);
}

/* PTX-09 on a real outage: the server is down when the pause uploads. */
START_TEST(s3_outage_mid_pause_is_retryable_then_completes)
{
	LT_ROW("PTX-09");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/w", "dirty");
	double cpu = lt_inum(&t, NULL, "node.cpu_used_millis");
	double pub0 = lt_inum(&t, NULL, "storage.publications");
	s3ctl("kill");
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_)); /* accepted */
	s0_lifecycle_result_free(lr);
	for (int i = 0; i < 3; i++) {
		lt_quiesce(&t);
		lt_advance(&t, 2000);
	}
	assert_not_paused(&t, id);
	cJSON *j = lt_inspect(&t, id);
	cJSON *rts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes");
	ck_assert_int_eq(cJSON_GetArraySize(rts), 1); /* writer grant held */
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(rts, 0), "fenced")));
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), cpu); /* capacity fenced */
	ck_assert_double_eq(lt_num(j, "storage.publications"), pub0);
	cJSON_Delete(j);
	s3ctl("start");
	/* the controller retries the step on its schedule (manual clock) */
	for (int i = 0; i < 30 && lt_status(&t, id) != S0_STATUS_PAUSED; i++) {
		lt_advance(&t, 2000);
		lt_quiesce(&t);
	}
	lt_assert_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, NULL, "storage.publications"), pub0 + 1);
	char *head = lt_head(&t, id);
	char *w = lt_gen_cat(&t, head, "/workspace/w");
	ck_assert_str_eq(w, "dirty");
	free(w);
	free(head);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-06 on a real outage: the objects are only in the bucket (cache
 * emptied) and the server is down when the resume attaches. */
START_TEST(s3_outage_mid_resume_keeps_paused_then_resumes)
{
	LT_ROW("RTX-06");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/k", "kept");
	lt_pause(&t, id);
	char *head = lt_head(&t, id);
	int64_t g = lt_generation(&t, id);
	lt_shutdown(&t); /* a node restart: no object stays in memory */
	lt_reopen(&t);
	drop_cache(&t);
	s3ctl("kill");
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	int rc = s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err);
	ck_assert_msg(rc == S0_EUNAVAILABLE && s0_error_http_status(err) == 503, "%s %d: %s",
	              s0_code_name(rc), err ? s0_error_http_status(err) : 0,
	              err ? s0_error_message(err) : "");
	s0_error_free(err);
	s0_lifecycle_result_free(lr);
	lt_assert_paused(&t, id);
	char *head1 = lt_head(&t, id);
	ck_assert_str_eq(head1, head);
	ck_assert_int_eq(lt_generation(&t, id), g);
	s3ctl("start");
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/k", "kept"));
	free(head1);
	free(head);
	free(id);
	lt_close(&t);
}
END_TEST

static Suite *s3_outage_suite(void)
{
	Suite *s = suite_create("s3_outage");
	TCase *tc = tcase_create("outage");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, s3_outage_mid_pause_is_retryable_then_completes);
	tcase_add_test(tc, s3_outage_mid_resume_keeps_paused_then_resumes);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(s3_outage_suite)
