/*
 * Bad input through the public API: unknown ids, wrong states, deleted
 * sandboxes, hostile ids and file paths through the client, bad backend
 * options and fault names, and a second opener of a data directory
 * (docs/decisions.md "One opener per data directory": data_dir_locked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "lt.h"
#include "suites.h"

/* A second s0_local_open of a held data directory: S0_ECONFLICT
 * data_dir_locked with the holder's pid; after close it opens again. */
START_TEST(bad_second_opener_is_data_dir_locked)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	s0_local *second = NULL;
	s0_error *err = NULL;
	int rc = s0_local_open(t.dir, &t.opts, &second, &err);
	ck_assert_int_eq(rc, S0_ECONFLICT);
	ck_assert_ptr_null(second);
	ck_assert_str_eq(s0_error_reason(err), "data_dir_locked");
	char pid[32];
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	ck_assert_msg(strstr(s0_error_message(err), pid), "message %s lacks pid %s",
	              s0_error_message(err), pid);
	s0_error_free(err);
	lt_assert_running(&t, id); /* the holder is unaffected */
	lt_reopen(&t);
	lt_assert_running(&t, id);
	free(id);
	lt_close(&t);
}
END_TEST

START_TEST(bad_backend_options_and_faults)
{
	s0_local *l = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_local_open(NULL, NULL, &l, &err), err, S0_EINVAL, NULL);
	LT_EXPECT(s0_local_open("", NULL, &l, &err), err, S0_EINVAL, NULL);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.version = 99;
	char *dir = s0_test_tmpdir("localbad");
	LT_EXPECT(s0_local_open(dir, &o, &l, &err), err, S0_EINVAL, NULL);
	char *file = NULL;
	ck_assert_int_ge(asprintf(&file, "%s/not-a-dir", dir), 0);
	FILE *f = fopen(file, "w");
	fclose(f);
	LT_EXPECT(s0_local_open(file, NULL, &l, &err), err, S0_EIO, NULL);
	ck_assert_ptr_null(l);
	ck_assert_int_eq(s0_local_options_init(&o, 7), S0_EINVAL);

	/* a real-clock backend: no manual advance */
	lt t;
	s0_local_options real = S0_LOCAL_OPTIONS_INIT;
	lt_open(&t, &real);
	LT_EXPECT(s0_local_clock_advance(t.local, 1000, &err), err, S0_EUNSUPPORTED, NULL);
	static const char *const bad_names[] = {"", "Node_Channel", "a b", "x/y", "../etc"};
	for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
		LT_EXPECT(s0_local_fault_arm(t.local, bad_names[i], S0_FAULT_FAIL, 1, 0, &err), err,
		          S0_EINVAL, NULL);
	LT_EXPECT(s0_local_fault_arm(t.local, "capacity", 0, 1, 0, &err), err, S0_EINVAL, NULL);
	LT_EXPECT(s0_local_fault_arm(t.local, "capacity", 9, 1, 0, &err), err, S0_EINVAL, NULL);
	LT_EXPECT(s0_local_fault_arm(t.local, "capacity", S0_FAULT_FAIL, -1, 0, &err), err,
	          S0_EINVAL, NULL);
	LT_OK(s0_local_fault_release(t.local, "never-armed", &e_));
	static const char *const bad_templates[] = {"", "Upper", "a/b"};
	for (size_t i = 0; i < 3; i++)
		LT_EXPECT(s0_local_template_build(t.local, bad_templates[i], NULL, NULL, &err), err,
		          S0_EINVAL, NULL);
	s0_sandbox_info *sb = NULL;
	LT_EXPECT(s0_sandbox_claim(t.c, "nosuchtemplate", NULL, NULL, &sb, &err), err, S0_ENOTFOUND,
	          NULL);
	LT_EXPECT(s0_sandbox_claim(t.c, "default", "snap_nosuch", NULL, &sb, &err), err,
	          S0_ENOTFOUND, NULL);
	lt_close(&t);
	s0_test_rmrf(dir);
	free(file);
	free(dir);
}
END_TEST

/* An unknown runtime or object store name is refused before anything is
 * made: a new data directory is not created (it was, with a lock file), an
 * existing empty one stays empty. */
START_TEST(bad_unknown_backend_names_make_nothing)
{
	char *root = s0_test_tmpdir("localnames"), *dir;
	ck_assert_int_ge(asprintf(&dir, "%s/data", root), 0);
	s0_local *l = NULL;
	s0_error *err = NULL;
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.runtime = "gvisor-someday";
	LT_EXPECT(s0_local_open(dir, &o, &l, &err), err, S0_EINVAL, NULL);
	ck_assert_int_eq(access(dir, F_OK), -1);
	o.runtime = NULL;
	o.object_store = "s3-someday";
	LT_EXPECT(s0_local_open(dir, &o, &l, &err), err, S0_EINVAL, "object_store_unknown");
	ck_assert_int_eq(access(dir, F_OK), -1);
	ck_assert_ptr_null(l);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	LT_EXPECT(s0_local_open(dir, &o, &l, &err), err, S0_EINVAL, "object_store_unknown");
	o.object_store = NULL;
	o.runtime = "SIM";
	LT_EXPECT(s0_local_open(dir, &o, &l, &err), err, S0_EINVAL, NULL);
	ck_assert_int_eq(rmdir(dir), 0); /* still empty */
	s0_test_rmrf(root);
	free(dir);
	free(root);
}
END_TEST

/* A manual clock only moves forward: a negative advance is refused with
 * S0_EINVAL (it returned S0_OK and did nothing), the clock unchanged; 0 is
 * a no-op that still succeeds. */
START_TEST(bad_negative_clock_advance)
{
	lt t;
	lt_open(&t, NULL);
	s0_error *err = NULL;
	int64_t t0 = s0_local_now_unix_ms(t.local);
	LT_EXPECT(s0_local_clock_advance(t.local, -1, &err), err, S0_EINVAL, "invalid_argument");
	LT_EXPECT(s0_local_clock_advance(t.local, INT64_MIN, &err), err, S0_EINVAL,
	          "invalid_argument");
	ck_assert_int_eq(s0_local_now_unix_ms(t.local), t0);
	LT_OK(s0_local_clock_advance(t.local, 0, &e_));
	ck_assert_int_eq(s0_local_now_unix_ms(t.local), t0);
	LT_OK(s0_local_clock_advance(t.local, 1500, &e_));
	ck_assert_int_eq(s0_local_now_unix_ms(t.local), t0 + 1500);
	lt_close(&t);
}
END_TEST

/* Every sandbox-scoped call on an id that does not (or no longer) exist. */
static void all_calls_not_found(lt *t, const char *id, bool left_snapshots)
{
	s0_sandbox_info *sb = NULL;
	s0_lifecycle_result *lr = NULL;
	s0_snapshot_info *snap = NULL;
	s0_snapshot_list *sl = NULL;
	s0_error *err = NULL;
	void *d = NULL;
	size_t n = 0;
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.auto_resume = S0_BOOL_TRUE;
	LT_EXPECT(s0_sandbox_get(t->c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_sandbox_status(t->c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_sandbox_update(t->c, id, &cfg, &sb, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_sandbox_pause(t->c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_sandbox_resume(t->c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_sandbox_refresh(t->c, id, 0, &sb, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_snapshot_create(t->c, id, NULL, NULL, 0, &snap, &err), err, S0_ENOTFOUND, NULL);
	if (left_snapshots) {
		/* FS-07: snapshots outlive their sandbox and stay listable under its id */
		LT_OK(s0_snapshot_list_get(t->c, id, &sl, &err));
		ck_assert_uint_eq(s0_snapshot_list_length(sl), 1);
		s0_snapshot_list_free(sl);
		sl = NULL;
	} else {
		LT_EXPECT(s0_snapshot_list_get(t->c, id, &sl, &err), err, S0_ENOTFOUND, NULL);
	}
	LT_EXPECT(s0_sandbox_restore(t->c, id, "snap_x", &lr, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_sandbox_fork(t->c, id, NULL, &sb, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_files_read(t->c, id, "/workspace/x", &d, &n, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_files_write(t->c, id, "/workspace/x", "x", 1, &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_sandbox_delete(t->c, id, &err), err, S0_ENOTFOUND, NULL);
}

/* Unknown, hostile and deleted ids: 404 everywhere, nothing created. */
/* Fault names outside the table of points are refused with S0_EINVAL and a
 * message naming them, and arm nothing (a misspelt fault in a test must not
 * pass silently); every kind of known name and step is accepted. */
static void expect_unknown_fault(lt *t, const char *name, const char *named)
{
	s0_error *err = NULL;
	ck_assert_int_eq(s0_local_fault_arm(t->local, name, S0_FAULT_FAIL, 1, 0, &err), S0_EINVAL);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(s0_error_message(err), named), "%s: message \"%s\" does not name %s",
	              name, s0_error_message(err), named);
	s0_error_free(err);
}

START_TEST(bad_unknown_fault_names_are_refused)
{
	lt t;
	lt_open(&t, NULL);
	expect_unknown_fault(&t, "node_chanel", "node_chanel");             /* misspelt point */
	expect_unknown_fault(&t, "node_chanel@pause", "node_chanel");       /* misspelt, step */
	expect_unknown_fault(&t, "node_channel@paused", "paused");          /* misspelt step */
	expect_unknown_fault(&t, "network_policy@apply", "network_policy"); /* point has no steps */
	expect_unknown_fault(&t, "runtime_crash@", "runtime_crash");        /* empty step */
	expect_unknown_fault(&t, "resource_leak:disk", "resource_leak:disk");
	expect_unknown_fault(&t, "manager_restart@committed@x", "committed@x");
	/* nothing of the above is armed */
	char *json = NULL;
	LT_OK(s0_local_inspect(t.local, NULL, &json, &e_));
	ck_assert_msg(!strstr(json, "node_chan") && !strstr(json, "resource_leak"), "%s", json);
	s0_free(json);
	static const char *const known[] = {
		"node_channel", "node_channel@pause", "capture@before-record",
		"manager_restart@fallback-recorded", "runtime_crash@sb_any", "resource_leak:lease_cgroup",
		"carrier_fingerprint@cpu_features", "webhook_ack_delay"};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		LT_OK(s0_local_fault_arm(t.local, known[i], S0_FAULT_HOLD, 0, 0, &e_));
		LT_OK(s0_local_fault_release(t.local, known[i], &e_));
	}
	lt_close(&t);
}
END_TEST

START_TEST(bad_unknown_hostile_and_deleted_ids)
{
	lt t;
	lt_open(&t, NULL);
	static const char *const ids[] = {
		"sb_doesnotexist", "../etc", "..", "sb_%2e%2e", "a/b", "sb_x?y=1", "sb_x#frag",
		"sb_\xc3\xa9", "sb_with space",
		"sb_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		all_calls_not_found(&t, ids[i], false);
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_get(t.c, "", &sb, &err), err, S0_EINVAL, NULL);
	LT_EXPECT(s0_sandbox_get(t.c, NULL, &sb, &err), err, S0_EINVAL, NULL);

	/* a deleted sandbox; its snapshot stays readable */
	char *id = lt_claim(&t, NULL, NULL);
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, id, "kept", NULL, 0, &snap, &e_));
	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	all_calls_not_found(&t, id, true);
	s0_snapshot_info *again = NULL;
	LT_OK(s0_snapshot_get(t.c, s0_snapshot_info_id(snap), &again, &e_));
	s0_snapshot_info_free(again);
	LT_OK(s0_snapshot_delete(t.c, s0_snapshot_info_id(snap), &e_));
	LT_EXPECT(s0_snapshot_delete(t.c, s0_snapshot_info_id(snap), &err), err, S0_ENOTFOUND, NULL);
	LT_EXPECT(s0_snapshot_get(t.c, "../../x", &again, &err), err, S0_ENOTFOUND, NULL);
	s0_snapshot_info_free(snap);
	s0_sandbox_page *page = NULL;
	LT_OK(s0_sandbox_list(t.c, NULL, &page, &e_));
	ck_assert_int_eq(s0_sandbox_page_count(page), 0);
	s0_sandbox_page_free(page);
	free(id);
	lt_close(&t);
}
END_TEST

/* Wrong states for restore, snapshot, fork and refresh. */
START_TEST(bad_wrong_states)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, id, NULL, NULL, 0, &snap, &e_));
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	/* restore needs a paused target */
	LT_EXPECT(s0_sandbox_restore(t.c, id, s0_snapshot_info_id(snap), &lr, &err), err,
	          S0_ECONFLICT, "not_paused");
	LT_EXPECT(s0_sandbox_restore(t.c, id, "", &lr, &err), err, S0_EINVAL, NULL);
	lt_pause(&t, id);
	LT_EXPECT(s0_sandbox_restore(t.c, id, "snap_nosuch", &lr, &err), err, S0_ENOTFOUND, NULL);
	LT_OK(s0_sandbox_restore(t.c, id, s0_snapshot_info_id(snap), &lr, &e_));
	ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_PAUSED);
	s0_lifecycle_result_free(lr);
	/* snapshot expiry in the past */
	s0_snapshot_info *bad = NULL;
	LT_EXPECT(s0_snapshot_create(t.c, id, NULL, NULL, s0_local_now_unix_ms(t.local) - 1000, &bad,
	                             &err), err, S0_EINVAL, NULL);
	/* refresh of a paused sandbox */
	s0_sandbox_info *sb = NULL;
	LT_EXPECT(s0_sandbox_refresh(t.c, id, 10, &sb, &err), err, S0_ECONFLICT, NULL);
	/* snapshot, fork and restore while a pause is in flight */
	lt_resume(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "meta_store@commit", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	LT_EXPECT(s0_snapshot_create(t.c, id, NULL, NULL, 0, &bad, &err), err, S0_ECONFLICT, NULL);
	LT_EXPECT(s0_sandbox_fork(t.c, id, NULL, &sb, &err), err, S0_ECONFLICT, NULL);
	LT_EXPECT(s0_sandbox_restore(t.c, id, s0_snapshot_info_id(snap), &lr, &err), err,
	          S0_ECONFLICT, NULL);
	LT_OK(s0_local_fault_release(t.local, "meta_store@commit", &e_));
	lt_quiesce(&t);
	lt_assert_paused(&t, id);
	/* a bad fork request */
	s0_fork_options fo = S0_FORK_OPTIONS_INIT;
	fo.set = S0_CONFIG_SET_TTL;
	fo.ttl_sec = -5;
	LT_EXPECT(s0_sandbox_fork(t.c, id, &fo, &sb, &err), err, S0_EINVAL, NULL);
	s0_snapshot_info_free(snap);
	free(id);
	lt_close(&t);
}
END_TEST

static void expect_file_error(lt *t, const char *id, int rc, s0_error *err, const char *what)
{
	ck_assert_msg(rc != S0_OK, "%s succeeded", what);
	ck_assert_msg(rc != S0_EINTERNAL && rc != S0_ERROR && rc != S0_EPROTOCOL &&
	              rc != S0_ETRANSPORT, "%s: %s (%s)", what, s0_code_name(rc),
	              err ? s0_error_message(err) : "");
	s0_error_free(err);
	(void)t;
	(void)id;
}

/* Hostile file paths through the client never escape the sandbox, never
 * damage the RootFS, and map to files error codes (never 500). */
START_TEST(bad_hostile_file_paths)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/file", "f");
	LT_OK(s0_files_mkdir(t.c, id, "/workspace/dir", false, &e_));
	char escape[128];
	snprintf(escape, sizeof escape, "/tmp/s0-escape-%ld", (long)getpid());
	char up[256];
	snprintf(up, sizeof up, "../../../../../../..%s", escape);

	/* traversal is rejected (400) or resolves inside the sandbox; never the host */
	s0_error *err = NULL;
	int rc = s0_files_write(t.c, id, up, "contained", 9, &err);
	ck_assert_msg(rc == S0_OK || (rc == S0_EINVAL && s0_error_http_status(err) == 400), "%s",
	              s0_code_name(rc));
	s0_error_free(err);
	ck_assert_int_ne(access(escape, F_OK), 0);
	if (rc == S0_OK)
		ck_assert(lt_file_is(&t, id, escape, "contained"));
	err = NULL;
	rc = s0_files_write(t.c, id, "/workspace/../../../var/tmp/../tmp/x", "y", 1, &err);
	ck_assert(rc == S0_OK || rc == S0_EINVAL);
	s0_error_free(err);
	if (rc == S0_OK)
		ck_assert(lt_file_is(&t, id, "/tmp/x", "y"));
	lt_write(&t, id, "/workspace/dir/../dir2/./x", "normalised");
	ck_assert(lt_file_is(&t, id, "/workspace/dir2/x", "normalised"));
	void *d = NULL;
	size_t n = 0;
	err = NULL;
	rc = s0_files_read(t.c, id, "/../../etc/passwd", &d, &n, &err);
	if (rc == S0_OK) /* whatever it is, it is the template's, not the host's */
		ck_assert(!strstr((char *)d, "root:x:0:0"));
	s0_free(d);
	s0_error_free(err);

	char longname[300];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	char *longpath = NULL;
	ck_assert_int_ge(asprintf(&longpath, "/workspace/%s", longname), 0);
	char *deep = malloc(8200);
	strcpy(deep, "/workspace");
	while (strlen(deep) < 8000)
		strcat(deep, "/abcdefgh");
	struct {
		const char *what;
		int rc;
		s0_error *err;
	} cases[16];
	int k = 0;
#define CASE(call)                                                                           \
	do {                                                                                 \
		cases[k].what = #call;                                                       \
		cases[k].err = NULL;                                                         \
		s0_error **errp = &cases[k].err;                                             \
		cases[k].rc = (call);                                                        \
		k++;                                                                         \
	} while (0)
	CASE(s0_files_write(t.c, id, "/", "x", 1, errp));
	CASE(s0_files_write(t.c, id, "/workspace/dir", "x", 1, errp));
	CASE(s0_files_write(t.c, id, "/workspace/file/sub", "x", 1, errp));
	CASE(s0_files_write(t.c, id, "/proc/injected", "x", 1, errp));
	CASE(s0_files_write(t.c, id, longpath, "x", 1, errp));
	CASE(s0_files_write(t.c, id, deep, "x", 1, errp));
	CASE(s0_files_delete(t.c, id, "/", errp));
	CASE(s0_files_delete(t.c, id, "/tmp", errp));
	CASE(s0_files_move(t.c, id, "/workspace", "/workspace/dir/inside", errp));
	CASE(s0_files_move(t.c, id, "/", "/workspace/root", errp));
	CASE(s0_files_mkdir(t.c, id, "/workspace/file", false, errp));
	CASE(s0_files_mkdir(t.c, id, "/workspace/dir", false, errp));
	CASE(s0_files_write(t.c, id, "/workspace/bad\nname/../x", "x", 1, errp));
	for (int i = 0; i < k; i++) {
		if (i == 12 && cases[i].rc == S0_OK) { /* a newline is a legal name byte */
			s0_error_free(cases[i].err);
			continue;
		}
		expect_file_error(&t, id, cases[i].rc, cases[i].err, cases[i].what);
	}
#undef CASE
	ck_assert_int_ne(access(escape, F_OK), 0);
	/* the sandbox is intact, and so is its RootFS */
	ck_assert(lt_file_is(&t, id, "/workspace/file", "f"));
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/dir"), S0_OK);
	ck_assert_int_eq(lt_stat_rc(&t, id, "/tmp"), S0_OK);
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace"), S0_OK);
	lt_pause(&t, id);
	char *head = lt_head(&t, id);
	ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/file", "f"));
	free(head);
	free(deep);
	free(longpath);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_bad_suite(void)
{
	Suite *s = suite_create("local-bad");
	TCase *tc = tcase_create("bad");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, bad_second_opener_is_data_dir_locked);
	tcase_add_test(tc, bad_backend_options_and_faults);
	tcase_add_test(tc, bad_negative_clock_advance);
	tcase_add_test(tc, bad_unknown_backend_names_make_nothing);
	tcase_add_test(tc, bad_unknown_fault_names_are_refused);
	tcase_add_test(tc, bad_unknown_hostile_and_deleted_ids);
	tcase_add_test(tc, bad_wrong_states);
	tcase_add_test(tc, bad_hostile_file_paths);
	suite_add_tcase(s, tc);
	return s;
}
