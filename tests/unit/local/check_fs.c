/*
 * Filesystem-only pause/resume state table (docs/behaviours.md FS-01..FS-08) and
 * ephemeral paths (EPH-01..EPH-06), through the public client over the
 * in-process transport on a manual clock.
 *
 * Not here: FS-04 (processes, contexts) and the process parts of FS-02
 * (env_vars in the new generation's processes) belong to the runtime
 * issue; FS-05 needs WebSockets (deferred); EPH-02's /proc identity entry
 * needs the runtime to populate /proc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "local/lifecycle/engine_open.h"
#include "local/local_internal.h"
#include "lt.h"
#include "suites.h"

/* FS-01: an FS pause leaves the paused state, runtime_id "", no
 * allocation, capacity back to its pre-claim value, the file in the head. */
START_TEST(fs01_pause_releases_runtime_and_commits_files)
{
	LT_ROW("FS-01");
	lt t;
	lt_open(&t, NULL);
	double cpu0 = lt_inum(&t, NULL, "node.cpu_used_millis");
	double mem0 = lt_inum(&t, NULL, "node.memory_used_bytes");
	double car0 = lt_inum(&t, NULL, "node.carriers_used");
	char *id = lt_claim(&t, NULL, NULL);
	ck_assert_double_gt(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu0);
	lt_write(&t, id, "/workspace/fs01.txt", "written before pause");

	/* POST pause with no body, then poll GET until the paused state */
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
	s0_lifecycle_result_free(lr);
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_wait(t.c, id, S0_STATUS_MASK(S0_STATUS_PAUSED), NULL, NULL, &sb, &e_));
	s0_sandbox_info_free(sb);
	lt_quiesce(&t);
	lt_assert_paused(&t, id);

	cJSON *j = lt_inspect(&t, id);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"),
	                                                        "runtimes")), 0);
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), cpu0);
	ck_assert_double_eq(lt_num(j, "node.memory_used_bytes"), mem0);
	ck_assert_double_eq(lt_num(j, "node.carriers_used"), car0);
	char *head = strdup(lt_str(j, "sandbox.head"));
	cJSON_Delete(j);
	char *content = lt_gen_cat(&t, head, "/workspace/fs01.txt");
	ck_assert_ptr_nonnull(content);
	ck_assert_str_eq(content, "written before pause");
	ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
	free(content);
	free(head);
	free(id);
	lt_close(&t);
}
END_TEST

/* FS-02: identity and durable configuration survive an FS cycle. */
START_TEST(fs02_identity_and_config_survive_cycle)
{
	LT_ROW("FS-02");
	lt t;
	lt_open(&t, NULL);
	const char *env[] = {"GREETING=hello", "MODE=test", NULL};
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_TTL | S0_CONFIG_SET_HARD_TTL;
	cfg.ttl_sec = 600;
	cfg.hard_ttl_sec = 7200;
	cfg.auto_resume = S0_BOOL_FALSE;
	cfg.memory = "256Mi";
	cfg.env_vars = env;
	cfg.extra_json = "{\"network\":{\"mode\":\"block-all\"},"
	                 "\"services\":[{\"id\":\"web\",\"port\":8080,\"ingress\":{\"public\":false}}]}";
	char *id = lt_claim(&t, NULL, &cfg);
	s0_sandbox_info *before = lt_get(&t, id);
	cJSON *ib = lt_inspect(&t, id);
	char *config_before = strdup(lt_str(ib, "sandbox.config"));
	cJSON_Delete(ib);

	lt_pause(&t, id);
	lt_advance(&t, 1000);
	lt_resume(&t, id);
	s0_sandbox_info *after = lt_get(&t, id);
	ck_assert_str_eq(s0_sandbox_info_id(after), id);
	ck_assert_str_eq(s0_sandbox_info_template_id(after), s0_sandbox_info_template_id(before));
	ck_assert_str_eq(s0_sandbox_info_team_id(after), s0_sandbox_info_team_id(before));
	ck_assert(!s0_sandbox_info_auto_resume(after));
	ck_assert_int_eq(s0_sandbox_info_created_at_unix_ms(after),
	                 s0_sandbox_info_created_at_unix_ms(before));
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(after),
	                 s0_sandbox_info_hard_expires_at_unix_ms(before));
	cJSON *jb = cJSON_Parse(s0_sandbox_info_json(before));
	cJSON *ja = cJSON_Parse(s0_sandbox_info_json(after));
	ck_assert_str_eq(lt_str(ja, "resources.memory"), "256Mi");
	ck_assert_str_eq(lt_str(jb, "resources.memory"), "256Mi");
	cJSON_Delete(jb);
	cJSON_Delete(ja);

	/* every durable config field, as the engine keeps it */
	cJSON *ia = lt_inspect(&t, id);
	ck_assert_str_eq(lt_str(ia, "sandbox.config"), config_before);
	cJSON *cfgj = cJSON_Parse(config_before);
	ck_assert_str_eq(lt_str(cfgj, "env_vars.GREETING"), "hello");
	ck_assert_str_eq(lt_str(cfgj, "network.mode"), "block-all");
	ck_assert_double_eq(lt_num(cfgj, "ttl"), 600);
	ck_assert_double_eq(lt_num(cfgj, "hard_ttl"), 7200);
	ck_assert(cJSON_IsArray(cJSON_GetObjectItem(cfgj, "services")));
	cJSON_Delete(cfgj);
	cJSON_Delete(ia);

	/* still listed under the same id */
	s0_sandbox_page *page = NULL;
	LT_OK(s0_sandbox_list(t.c, NULL, &page, &e_));
	ck_assert_int_eq(s0_sandbox_page_length(page), 1);
	ck_assert_str_eq(s0_sandbox_info_id(s0_sandbox_page_at(page, 0)), id);
	s0_sandbox_page_free(page);
	free(config_before);
	s0_sandbox_info_free(before);
	s0_sandbox_info_free(after);
	free(id);
	lt_close(&t);
}
END_TEST

/* FS-03: after an FS cycle the RootFS equals the latest committed state. */
START_TEST(fs03_rootfs_is_latest_committed_generation)
{
	LT_ROW("FS-03");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/a.txt", "version 1");
	lt_write(&t, id, "/workspace/a.txt", "version 2, longer than the first");
	LT_OK(s0_files_mkdir(t.c, id, "/workspace/d/e", true, &e_));
	lt_write(&t, id, "/workspace/d/e/f.txt", "moved file");
	LT_OK(s0_files_move(t.c, id, "/workspace/d/e/f.txt", "/workspace/g/moved.txt", &e_));
	lt_write(&t, id, "/workspace/gone.txt", "deleted before pause");
	LT_OK(s0_files_delete(t.c, id, "/workspace/gone.txt", &e_));
	LT_OK(s0_files_mkdir(t.c, id, "/workspace/emptydir", false, &e_));
	size_t big_len = 3 << 20;
	unsigned char *big = malloc(big_len);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (unsigned char)(i * 2654435761u >> 13);
	lt_write_bytes(&t, id, "/var/lib/big.bin", big, big_len);
	lt_write(&t, id, "relative.txt", "relative to the workspace");

	lt_pause(&t, id);
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/a.txt", "version 2, longer than the first"));
	ck_assert(lt_file_is(&t, id, "/workspace/g/moved.txt", "moved file"));
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/d/e/f.txt"), S0_ENOTFOUND);
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/gone.txt"), S0_ENOTFOUND);
	ck_assert_int_eq(lt_list_len(&t, id, "/workspace/d/e"), 0);
	ck_assert_int_eq(lt_list_len(&t, id, "/workspace/emptydir"), 0);
	ck_assert(lt_file_is(&t, id, "relative.txt", "relative to the workspace"));
	s0_file_info *fi = NULL;
	LT_OK(s0_files_stat(t.c, id, "/workspace/a.txt", &fi, &e_));
	ck_assert_int_eq(s0_file_info_type(fi), S0_FILE_TYPE_FILE);
	ck_assert_int_eq(s0_file_info_size_bytes(fi), 32);
	ck_assert_uint_eq(s0_file_info_mode(fi), 0644);
	s0_file_info_free(fi);
	LT_OK(s0_files_stat(t.c, id, "/workspace/d", &fi, &e_));
	ck_assert_int_eq(s0_file_info_type(fi), S0_FILE_TYPE_DIR);
	ck_assert_uint_eq(s0_file_info_mode(fi), 0755);
	s0_file_info_free(fi);
	size_t n = 0;
	char *back = lt_read(&t, id, "/var/lib/big.bin", &n);
	ck_assert_uint_eq(n, big_len);
	ck_assert(!memcmp(back, big, big_len));
	free(back);

	/* a second cycle never reverts to the older generation */
	lt_write(&t, id, "/workspace/a.txt", "version 3");
	LT_OK(s0_files_delete(t.c, id, "/workspace/g", &e_));
	lt_pause(&t, id);
	char *head = lt_head(&t, id);
	ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/a.txt", "version 3"));
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/g/moved.txt"), S0_ENOTFOUND);
	free(head);
	free(big);
	free(id);
	lt_close(&t);
}
END_TEST

/* FS-06: runtime_id and runtime_generation over N cycles. */
START_TEST(fs06_runtime_id_and_generation_over_cycles)
{
	LT_ROW("FS-06");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	enum { N = 5 };
	char *ids[N + 1];
	int64_t g = lt_generation(&t, id);
	ids[0] = lt_runtime_id(&t, id);
	ck_assert_str_ne(ids[0], "");
	for (int i = 1; i <= N; i++) {
		lt_pause(&t, id);
		ck_assert_int_eq(lt_generation(&t, id), g + i - 1); /* pause keeps it */
		char *rid = lt_runtime_id(&t, id);
		ck_assert_str_eq(rid, "");
		free(rid);
		lt_resume(&t, id);
		ck_assert_int_eq(lt_generation(&t, id), g + i);
		ids[i] = lt_runtime_id(&t, id);
		ck_assert_str_ne(ids[i], "");
		for (int k = 0; k < i; k++)
			ck_assert_str_ne(ids[i], ids[k]);
		/* only the new runtime exists (no process state of the old one) */
		ck_assert_int_eq(lt_runtimes_of(&t, id), 1);
	}
	for (int i = 0; i <= N; i++)
		free(ids[i]);
	free(id);
	lt_close(&t);
}
END_TEST

/* FS-07: named snapshots are independent of pause/resume and lifetime. */
START_TEST(fs07_snapshots_independent_of_sandbox)
{
	LT_ROW("FS-07");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/snap.txt", "in the snapshot");
	int64_t exp = s0_local_now_unix_ms(t.local) + 3600 * 1000LL;
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, id, "milestone", "first", exp, &snap, &e_));
	char *sid = strdup(s0_snapshot_info_id(snap));
	s0_snapshot_info_free(snap);
	lt_write(&t, id, "/workspace/snap.txt", "after the snapshot");

	lt_pause(&t, id);
	lt_resume(&t, id);
	lt_pause(&t, id);
	s0_snapshot_list *sl = NULL;
	LT_OK(s0_snapshot_list_get(t.c, id, &sl, &e_));
	ck_assert_int_eq(s0_snapshot_list_length(sl), 1); /* pause creates none */
	ck_assert_str_eq(s0_snapshot_info_id(s0_snapshot_list_at(sl, 0)), sid);
	ck_assert_str_eq(s0_snapshot_info_name(s0_snapshot_list_at(sl, 0)), "milestone");
	s0_snapshot_list_free(sl);

	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	LT_OK(s0_snapshot_get(t.c, sid, &snap, &e_));
	ck_assert_str_eq(s0_snapshot_info_description(snap), "first");
	s0_snapshot_info_free(snap);
	LT_OK(s0_local_gc(t.local, &e_));
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_claim(t.c, "default", sid, NULL, &sb, &e_));
	char *child = strdup(s0_sandbox_info_id(sb));
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_RUNNING);
	s0_sandbox_info_free(sb);
	ck_assert(lt_file_is(&t, child, "/workspace/snap.txt", "in the snapshot"));

	/* past its own expires_at the snapshot is gone; the claim keeps its data */
	lt_advance(&t, 3601 * 1000LL);
	lt_quiesce(&t);
	s0_error *err = NULL;
	LT_EXPECT(s0_snapshot_get(t.c, sid, &snap, &err), err, S0_ENOTFOUND, NULL);
	LT_OK(s0_local_gc(t.local, &e_));
	ck_assert(lt_file_is(&t, child, "/workspace/snap.txt", "in the snapshot"));
	lt_pause(&t, child);
	lt_resume(&t, child);
	ck_assert(lt_file_is(&t, child, "/workspace/snap.txt", "in the snapshot"));
	free(child);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

typedef struct traffic {
	lt *t;
	const char *id;
	volatile int stop;
	int writes, failures;
	char last[160];
} traffic;

static void *traffic_main(void *arg)
{
	traffic *tr = arg;
	while (!__atomic_load_n(&tr->stop, __ATOMIC_SEQ_CST)) {
		char body[32];
		int n = snprintf(body, sizeof body, "w%d", tr->writes);
		s0_error *err = NULL;
		int rc = s0_files_write(tr->t->c, tr->id, "/workspace/traffic", body, (size_t)n, &err);
		if (rc != S0_OK) {
			tr->failures++;
			snprintf(tr->last, sizeof tr->last, "%s: %s", s0_code_name(rc),
			         err ? s0_error_message(err) : "");
		}
		s0_error_free(err);
		tr->writes++;
	}
	return NULL;
}

/* FS-07 (running source): snapshots and forks of a running sandbox under
 * file traffic briefly barrier it: every snapshot succeeds, no request
 * fails (not even with auto_resume off), the sandbox stays running. */
START_TEST(fs07_snapshots_of_running_sandbox_under_traffic)
{
	LT_ROW("FS-07");
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.auto_resume = S0_BOOL_FALSE;
	char *id = lt_claim(&t, NULL, &cfg);
	char *rid = lt_runtime_id(&t, id);
	traffic tr = {.t = &t, .id = id};
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, traffic_main, &tr), 0);
	for (int i = 0; i < 20; i++) {
		s0_snapshot_info *snap = NULL;
		LT_OK(s0_snapshot_create(t.c, id, NULL, NULL, 0, &snap, &e_));
		s0_snapshot_info_free(snap);
		if (i % 5 == 0) {
			s0_sandbox_info *sb = NULL;
			LT_OK(s0_sandbox_fork(t.c, id, NULL, &sb, &e_));
			s0_sandbox_info_free(sb);
		}
	}
	__atomic_store_n(&tr.stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	ck_assert_msg(tr.failures == 0, "%d of %d writes failed, last: %s", tr.failures, tr.writes,
	              tr.last);
	lt_assert_running(&t, id);
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_eq(rid, rid2);
	free(rid2);
	free(rid);
	free(id);
	lt_close(&t);
}
END_TEST

/* FS-08: delete removes identity, runtime, generation and writable RootFS. */
START_TEST(fs08_delete_removes_everything_but_snapshots)
{
	LT_ROW("FS-08");
	lt t;
	lt_open(&t, NULL);
	double cpu0 = lt_inum(&t, NULL, "node.cpu_used_millis");
	char *id = lt_claim(&t, NULL, NULL);
	char *other = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/x", "x");
	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	s0_error *err = NULL;
	s0_sandbox_info *sb = NULL;
	LT_EXPECT(s0_sandbox_get(t.c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
	err = NULL;
	LT_EXPECT(s0_sandbox_status(t.c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
	s0_lifecycle_result *lr = NULL;
	err = NULL;
	LT_EXPECT(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ENOTFOUND, NULL);
	err = NULL;
	LT_EXPECT(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ENOTFOUND, NULL);
	err = NULL;
	LT_EXPECT(s0_sandbox_delete(t.c, id, &err), err, S0_ENOTFOUND, NULL);
	err = NULL;
	LT_EXPECT(s0_sandbox_delete(t.c, "sb_doesnotexist", &err), err, S0_ENOTFOUND, NULL);
	void *data = NULL;
	size_t len = 0;
	err = NULL;
	LT_EXPECT(s0_files_read(t.c, id, "/workspace/x", &data, &len, &err), err, S0_ENOTFOUND,
	          NULL);

	s0_sandbox_page *page = NULL;
	LT_OK(s0_sandbox_list(t.c, NULL, &page, &e_));
	ck_assert_int_eq(s0_sandbox_page_count(page), 1);
	ck_assert_str_eq(s0_sandbox_info_id(s0_sandbox_page_at(page, 0)), other);
	s0_sandbox_page_free(page);

	cJSON *j = lt_inspect(&t, id);
	ck_assert_ptr_null(cJSON_GetObjectItem(j, "sandbox")); /* no head, no record */
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"),
	                                                        "runtimes")), 0);
	cJSON_Delete(j);
	LT_OK(s0_sandbox_delete(t.c, other, &e_));
	ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu0);
	free(other);
	free(id);
	lt_close(&t);
}
END_TEST

/* EPH-01: /var/tmp and workspace files survive an FS cycle byte for byte;
 * EPH-02: /tmp is recreated empty, /proc, /dev and /sys exist again. */
START_TEST(eph01_eph02_ordinary_paths_persist_tmp_recreated)
{
	LT_ROW("EPH-01");
	LT_ROW("EPH-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	unsigned char bin[4096];
	for (size_t i = 0; i < sizeof bin; i++)
		bin[i] = (unsigned char)i;
	lt_write_bytes(&t, id, "/var/tmp/keep.bin", bin, sizeof bin);
	lt_write(&t, id, "/workspace/keep.txt", "workspace");
	lt_write(&t, id, "/tmp/x", "runtime only");
	LT_OK(s0_files_mkdir(t.c, id, "/tmp/sub/dir", true, &e_));
	lt_pause(&t, id);
	lt_resume(&t, id);
	size_t n = 0;
	char *back = lt_read(&t, id, "/var/tmp/keep.bin", &n);
	ck_assert_uint_eq(n, sizeof bin);
	ck_assert(!memcmp(back, bin, n));
	free(back);
	ck_assert(lt_file_is(&t, id, "/workspace/keep.txt", "workspace"));

	s0_file_info *fi = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_files_stat(t.c, id, "/tmp/x", &fi, &err), err, S0_ENOTFOUND, "file_not_found");
	ck_assert_int_eq(lt_list_len(&t, id, "/tmp"), 0);
	static const char *const virt[] = {"/tmp", "/proc", "/dev", "/sys"};
	for (size_t i = 0; i < 4; i++) {
		LT_OK(s0_files_stat(t.c, id, virt[i], &fi, &e_));
		ck_assert_int_eq(s0_file_info_type(fi), S0_FILE_TYPE_DIR);
		s0_file_info_free(fi);
	}
	free(id);
	lt_close(&t);
}
END_TEST

static void build_eph_template(lt *t, const char *name)
{
	const char *mounts[] = {"/workspace/cache", "/scratch", NULL};
	s0_template_options o = S0_TEMPLATE_OPTIONS_INIT;
	o.ephemeral_mounts = mounts;
	LT_OK(s0_local_template_build(t->local, name, NULL, &o, &e_));
}

static void eph03_body(lt *t, const char *tmpl)
{
	char *id = lt_claim(t, tmpl, NULL);
	lt_write(t, id, "/workspace/cache/blob", "ephemeral");
	lt_write(t, id, "/scratch/a/b", "ephemeral too");
	lt_write(t, id, "/workspace/kept", "durable");
	ck_assert_int_eq(lt_list_len(t, id, "/workspace/cache"), 1);
	lt_pause(t, id);
	char *head = lt_head(t, id);
	ck_assert_int_eq(lt_gen_dir_entries(t, head, "/workspace/cache"), 0);
	ck_assert_int_eq(lt_gen_dir_entries(t, head, "/scratch"), 0);
	lt_resume(t, id);
	ck_assert_int_eq(lt_list_len(t, id, "/workspace/cache"), 0);
	ck_assert_int_eq(lt_list_len(t, id, "/scratch"), 0);
	ck_assert(lt_file_is(t, id, "/workspace/kept", "durable"));
	free(head);
	free(id);
}

/* EPH-03: content under a template ephemeral mount is gone after an FS
 * cycle; the mount point exists again, empty. */
START_TEST(eph03_template_ephemeral_mounts_excluded_from_cycle)
{
	LT_ROW("EPH-03");
	lt t;
	lt_open(&t, NULL);
	build_eph_template(&t, "eph");
	eph03_body(&t, "eph");
	lt_close(&t);
}
END_TEST

static void write_runtime_only(lt *t, const char *id)
{
	lt_write(t, id, "/tmp/t.txt", "tmp");
	lt_write(t, id, "/workspace/cache/c.txt", "cache");
	lt_write(t, id, "/var/tmp/v.txt", "var tmp");
}

static void expect_only_var_tmp(lt *t, const char *id)
{
	ck_assert(lt_file_is(t, id, "/var/tmp/v.txt", "var tmp"));
	ck_assert_int_eq(lt_stat_rc(t, id, "/tmp/t.txt"), S0_ENOTFOUND);
	ck_assert_int_eq(lt_stat_rc(t, id, "/workspace/cache/c.txt"), S0_ENOTFOUND);
	ck_assert_int_eq(lt_list_len(t, id, "/workspace/cache"), 0);
}

/* Snapshot + claim and fork of a source; both children see only /var/tmp. */
static void snapshot_and_fork(lt *t, const char *src, const char *tmpl)
{
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t->c, src, NULL, NULL, 0, &snap, &e_));
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_claim(t->c, tmpl, s0_snapshot_info_id(snap), NULL, &sb, &e_));
	char *from_snap = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	s0_snapshot_info_free(snap);
	expect_only_var_tmp(t, from_snap);
	LT_OK(s0_sandbox_fork(t->c, src, NULL, &sb, &e_));
	char *fork = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	char *head = lt_head(t, fork);
	ck_assert_int_eq(lt_gen_dir_entries(t, head, "/tmp"), 0);
	ck_assert_int_eq(lt_gen_dir_entries(t, head, "/workspace/cache"), 0);
	free(head);
	lt_resume(t, fork);
	expect_only_var_tmp(t, fork);
	LT_OK(s0_sandbox_delete(t->c, fork, &e_));
	LT_OK(s0_sandbox_delete(t->c, from_snap, &e_));
	free(fork);
	free(from_snap);
}

static void eph04_body(lt *t, const char *tmpl)
{
	char *id = lt_claim(t, tmpl, NULL);
	write_runtime_only(t, id);
	snapshot_and_fork(t, id, tmpl); /* running source */
	lt_pause(t, id);
	snapshot_and_fork(t, id, tmpl); /* FS-paused source */
	free(id);
}

/* EPH-04: runtime-only paths never appear in snapshots or forks, from a
 * running or an FS-paused source (memory-paused: the checkpoint issue). */
START_TEST(eph04_runtime_paths_not_in_snapshots_or_forks)
{
	LT_ROW("EPH-04");
	lt t;
	lt_open(&t, NULL);
	build_eph_template(&t, "eph");
	eph04_body(&t, "eph");
	lt_close(&t);
}
END_TEST

static int build_spec(lt *t, const char *name, const char *spec, s0_error **err)
{
	return s0__engine_template_build_spec(s0__local_engine(t->local), name, NULL, 0, spec, err);
}

/* EPH-06: the mount list is accepted as ephemeralMounts and as the public
 * pod.emptyDirMounts (mountPath, sizeLimit) with the same effect; the size
 * limit holds; bad specs are rejected. (The engine entry point a template
 * endpoint will call: no public template surface takes JSON yet.) */
START_TEST(eph06_both_spellings_same_effect)
{
	LT_ROW("EPH-06");
	lt t;
	lt_open(&t, NULL);
	static const char *const specs[] = {
		"{\"ephemeralMounts\":[\"/workspace/cache\",\"/scratch\"]}",
		"{\"pod\":{\"emptyDirMounts\":[{\"mountPath\":\"/workspace/cache\"},"
		"{\"mountPath\":\"/scratch\",\"sizeLimit\":\"1Mi\"}]}}",
		"{\"ephemeral_mounts\":[\"/workspace/cache\",{\"path\":\"/scratch\"}]}",
	};
	for (size_t i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof name, "spec%zu", i);
		LT_OK(build_spec(&t, name, specs[i], &e_));
		eph03_body(&t, name);
		eph04_body(&t, name);
	}
	/* the sizeLimit of the public spelling is enforced */
	char *id = lt_claim(&t, "spec1", NULL);
	size_t big = 2u << 20;
	char *junk = calloc(1, big);
	s0_error *err = NULL;
	int rc = s0_files_write(t.c, id, "/scratch/too-big", junk, big, &err);
	ck_assert_int_eq(rc, S0_EINTERNAL);
	s0_error_free(err);
	err = NULL;
	lt_write_bytes(&t, id, "/scratch/fits", junk, 512u << 10);
	free(junk);
	free(id);
	static const char *const bad[] = {
		"{\"pod\":{\"emptyDirMounts\":[{\"sizeLimit\":\"1Mi\"}]}}",
		"{\"pod\":{\"emptyDirMounts\":[{\"mountPath\":\"/x\",\"sizeLimit\":\"lots\"}]}}",
		"{\"ephemeralMounts\":[\"/\"]}",
		"{\"ephemeralMounts\":[\"relative\"]}",
		"{\"ephemeralMounts\":\"/x\"}",
		"[1,2]",
		"not json",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		LT_EXPECT(build_spec(&t, "bad", bad[i], &err), err, S0_EINVAL, NULL);
	lt_close(&t);
}
END_TEST

/* EPH-05: filling /tmp before a pause adds no data blocks to the
 * published generation; /tmp in it is an empty directory. */
START_TEST(eph05_tmp_writes_never_reach_block_device)
{
	LT_ROW("EPH-05");
	lt t;
	lt_open(&t, NULL);
	char *quiet = lt_claim(&t, NULL, NULL);
	char *busy = lt_claim(&t, NULL, NULL);
	size_t len = 64u << 20;
	char *junk = malloc(len);
	for (size_t i = 0; i < len; i += 4096)
		memset(junk + i, (int)(i >> 12), 4096);
	lt_write_bytes(&t, busy, "/tmp/fill.bin", junk, len);
	free(junk);

	double c0 = lt_inum(&t, NULL, "storage.chunks_stored");
	lt_pause(&t, quiet);
	double c1 = lt_inum(&t, NULL, "storage.chunks_stored");
	lt_pause(&t, busy);
	double c2 = lt_inum(&t, NULL, "storage.chunks_stored");
	ck_assert_double_eq(c2 - c1, c1 - c0); /* metadata only, the same for both */
	ck_assert_double_lt(c2 - c1, 16);
	char *head = lt_head(&t, busy);
	ck_assert_int_eq(lt_gen_dir_entries(&t, head, "/tmp"), 0);
	ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
	free(head);
	free(quiet);
	free(busy);
	lt_close(&t);
}
END_TEST

static int64_t lt_mod_time(lt *t, const char *id, const char *path)
{
	s0_file_info *fi = NULL;
	s0_error *err = NULL;
	int rc = s0_files_stat(t->c, id, path, &fi, &err);
	ck_assert_msg(rc == S0_OK, "stat %s: %s", path, s0_error_message(err));
	int64_t ms = s0_file_info_mod_time_unix_ms(fi);
	s0_file_info_free(fi);
	return ms;
}

/* File modification times follow the backend clock (manual here), in the
 * RootFS (/workspace) and the runtime tmpfs (/tmp), across a cycle. */
START_TEST(fs_mod_time_follows_backend_clock)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_advance(&t, 5000);
	int64_t now = s0_local_now_unix_ms(t.local);
	ck_assert_int_ge(now, 1700000005000LL);
	lt_write(&t, id, "/workspace/mt.txt", "rootfs");
	lt_write(&t, id, "/tmp/mt.txt", "tmpfs");
	ck_assert_int_eq(lt_mod_time(&t, id, "/workspace/mt.txt"), now);
	ck_assert_int_eq(lt_mod_time(&t, id, "/tmp/mt.txt"), now);
	ck_assert_int_le(lt_mod_time(&t, id, "/tmp"), now);
	lt_advance(&t, 2000);
	lt_write(&t, id, "/workspace/mt.txt", "rootfs again");
	lt_write(&t, id, "/tmp/mt.txt", "tmpfs again");
	ck_assert_int_eq(lt_mod_time(&t, id, "/workspace/mt.txt"), now + 2000);
	ck_assert_int_eq(lt_mod_time(&t, id, "/tmp/mt.txt"), now + 2000);
	/* a new runtime after an FS cycle: the same clock, the file's time kept */
	lt_pause(&t, id);
	lt_advance(&t, 3000);
	lt_resume(&t, id);
	int64_t later = s0_local_now_unix_ms(t.local);
	ck_assert_int_eq(lt_mod_time(&t, id, "/workspace/mt.txt"), now + 2000);
	lt_write(&t, id, "/workspace/mt2.txt", "rootfs");
	lt_write(&t, id, "/tmp/mt2.txt", "tmpfs");
	ck_assert_int_eq(lt_mod_time(&t, id, "/workspace/mt2.txt"), later);
	ck_assert_int_eq(lt_mod_time(&t, id, "/tmp/mt2.txt"), later);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_fs_suite(void)
{
	Suite *s = suite_create("local-fs");
	TCase *tc = tcase_create("fs");
	tcase_set_timeout(tc, 120);
	tcase_set_tags(tc, LT_TAG_RUNTIMES); /* also on gvisor (unit-local-gvisor) */
	tcase_add_test(tc, fs01_pause_releases_runtime_and_commits_files);
	tcase_add_test(tc, fs02_identity_and_config_survive_cycle);
	tcase_add_test(tc, fs03_rootfs_is_latest_committed_generation);
	tcase_add_test(tc, fs06_runtime_id_and_generation_over_cycles);
	tcase_add_test(tc, fs07_snapshots_independent_of_sandbox);
	tcase_add_test(tc, fs07_snapshots_of_running_sandbox_under_traffic);
	tcase_add_test(tc, fs08_delete_removes_everything_but_snapshots);
	suite_add_tcase(s, tc);
	/* sim only: on gvisor the kernel inside stamps real time, not the
	 * backend's manual clock (docs/behaviours.md "Runtimes") */
	TCase *clk = tcase_create("fs-clock");
	tcase_add_test(clk, fs_mod_time_follows_backend_clock);
	suite_add_tcase(s, clk);
	TCase *eph = tcase_create("eph");
	tcase_set_timeout(eph, 120);
	tcase_add_test(eph, eph01_eph02_ordinary_paths_persist_tmp_recreated);
	tcase_add_test(eph, eph03_template_ephemeral_mounts_excluded_from_cycle);
	tcase_add_test(eph, eph04_runtime_paths_not_in_snapshots_or_forks);
	tcase_add_test(eph, eph05_tmp_writes_never_reach_block_device);
	tcase_add_test(eph, eph06_both_spellings_same_effect);
	suite_add_tcase(s, eph);
	return s;
}
