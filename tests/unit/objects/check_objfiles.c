/* The files backend (one file per object): layout, damage, temp files left
 * by a crash, a batch torn by SIGKILL between renames, both sync
 * strategies; and the backend choice recorded per store directory and
 * made through s0_local_options.object_store. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <sandbox0/local.h>

#include "check_main.h"
#include "local/objects/backends.h"
#include "local/objects/files/objfiles.h"
#include "objenv.h"
#include "objtest.h"

/* Entries in dir/sub (not . and ..). */
static int count_entries(const char *dir, const char *sub)
{
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/%s", dir, sub), 0);
	DIR *d = opendir(p);
	ck_assert_ptr_nonnull(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	free(p);
	return n;
}

static char *obj_path(s0__objstore *os, const s0__objid *id)
{
	char *p;
	ck_assert_int_eq(s0__objfiles_path(s0__objstore_backend(os), id, &p, NULL), S0_OK);
	return p;
}

static void fill_i(uint8_t *buf, size_t len, int i)
{
	objtest_fill(buf, len, 4000 + (uint64_t)i);
}

/* Put n objects (seeds 4000+i, 6000 bytes) in one batch; commit unless told. */
static void put_batch(s0__objstore *os, int n, bool commit, s0__objid *ids)
{
	s0__objctx *cx;
	s0__objbatch *b;
	uint8_t buf[6000];
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	for (int i = 0; i < n; i++) {
		fill_i(buf, sizeof buf, i);
		ck_assert_int_eq(s0__objstore_put(os, cx, b, buf, sizeof buf, &ids[i], NULL), S0_OK);
	}
	if (commit)
		ck_assert_int_eq(s0__objstore_commit(os, b, NULL), S0_OK);
	s0__objctx_free(cx);
}

START_TEST(test_files_layout_and_damage)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 3);
	s0__objid ids[4];
	put_batch(os, 4, true, ids);
	ck_assert_int_eq(count_entries(dir, "tmp"), 0);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 4);
	ck_assert_uint_eq(u.file_bytes, u.stored_bytes);
	ck_assert_uint_eq(objenv_data_bytes(dir), u.file_bytes);
	char *p[4];
	for (int i = 0; i < 4; i++) {
		p[i] = obj_path(os, &ids[i]);
		char hex[S0__OBJID_HEX_BYTES], want[4096];
		s0__objid_hex(&ids[i], hex);
		snprintf(want, sizeof want, "%s/%.2s/%s", dir, hex, hex);
		ck_assert_str_eq(p[i], want);
		ck_assert_int_eq(access(p[i], F_OK), 0);
	}
	/* A flipped byte anywhere: S0_ECORRUPT naming the id; restored: fine. */
	struct stat st;
	ck_assert_int_eq(stat(p[0], &st), 0);
	for (uint64_t at = 0; at < (uint64_t)st.st_size; at += (uint64_t)st.st_size / 5) {
		objtest_flip_at(p[0], at);
		ck_assert_int_eq(objtest_get_code(os, &ids[0], true), S0_ECORRUPT);
		objtest_flip_at(p[0], at);
		ck_assert_int_eq(objtest_get_code(os, &ids[0], true), S0_OK);
	}
	/* Truncated, emptied, deleted. */
	ck_assert_int_eq(truncate(p[1], st.st_size / 2), 0);
	ck_assert_int_eq(objtest_get_code(os, &ids[1], true), S0_ECORRUPT);
	ck_assert_int_eq(truncate(p[2], 0), 0);
	ck_assert_int_eq(objtest_get_code(os, &ids[2], true), S0_ECORRUPT);
	ck_assert_int_eq(unlink(p[3]), 0);
	ck_assert_int_eq(objtest_get_code(os, &ids[3], true), S0_ENOTFOUND);
	/* A reopen counts what is there and leaves damage alone. */
	s0__objstore_free(os);
	os = objtest_reopen(dir, 3);
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 3);
	ck_assert_uint_eq(objenv_data_bytes(dir), u.file_bytes);
	ck_assert_int_eq(objtest_get_code(os, &ids[0], true), S0_OK);
	ck_assert_int_eq(objtest_get_code(os, &ids[1], true), S0_ECORRUPT);
	/* Deleting frees the files and the counts, durably. */
	uint64_t nd = 0, freed = 0;
	ck_assert_int_eq(s0__objstore_delete(os, ids, 4, &nd, &freed, NULL), S0_OK);
	ck_assert_uint_eq(nd, 3);
	ck_assert_uint_gt(freed, 0);
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 0);
	ck_assert_uint_eq(u.file_bytes, 0);
	ck_assert_int_eq(access(p[0], F_OK), -1);
	/* Wrong installation key: corrupt, never wrong bytes. */
	s0__objid again = objtest_put1(os, "again", 5);
	s0__objstore_free(os);
	os = objtest_reopen(dir, 4);
	ck_assert_int_eq(objtest_get_code(os, &again, true), S0_ECORRUPT);
	for (int i = 0; i < 4; i++)
		free(p[i]);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Until its commit a batch's objects are temp files nobody reads; abort
 * removes them; a process that dies with a batch open leaves temp files
 * that the next open removes. */
START_TEST(test_files_uncommitted_invisible_and_cleaned)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 5);
	s0__objctx *cx;
	s0__objbatch *b;
	s0__objid id;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_put(os, cx, b, "pending bytes", 13, &id, NULL), S0_OK);
	bool has = true;
	ck_assert_int_eq(s0__objstore_has(os, NULL, &id, &has, NULL), S0_OK);
	ck_assert(!has);
	ck_assert_int_eq(s0__objstore_has(os, b, &id, &has, NULL), S0_OK);
	ck_assert(has);
	ck_assert_int_eq(objtest_get_code(os, &id, true), S0_ENOTFOUND);
	ck_assert_int_eq(count_entries(dir, "tmp"), 1);
	s0__objstore_abort(os, b);
	ck_assert_int_eq(count_entries(dir, "tmp"), 0);
	s0__objctx_free(cx);
	s0__objstore_free(os);

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* puts, then dies with the batch open */
		s0__objstore *cos = objtest_reopen(dir, 5);
		s0__objid ids[3];
		put_batch(cos, 3, false, ids);
		_exit(0);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(count_entries(dir, "tmp"), 3);
	os = objtest_reopen(dir, 5);
	ck_assert_int_eq(count_entries(dir, "tmp"), 0);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 0);
	s0__objstore_free(os);

	/* Directories left in tmp/ (no batch makes one) do not stop the store
	 * from opening (it failed: "unlink tmp x.dir: Is a directory"): an
	 * empty one is removed, one with contents is left alone. */
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/tmp/empty.dir", dir), 0);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	free(p);
	ck_assert_int_ge(asprintf(&p, "%s/tmp/full.dir", dir), 0);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	free(p);
	ck_assert_int_ge(asprintf(&p, "%s/tmp/full.dir/kept", dir), 0);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	os = objtest_reopen(dir, 5);
	ck_assert_int_eq(access(p, F_OK), 0);
	free(p);
	ck_assert_int_eq(count_entries(dir, "tmp"), 1);
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 0);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* SIGKILL after the second rename of a 5-object commit: after a reopen two
 * objects are visible and whole, three absent, no temp file is left, and
 * the counts agree with the files. */
START_TEST(test_files_torn_batch)
{
	char *dir = s0_test_tmpdir("objfiles");
	ck_assert_ptr_nonnull(dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("S0_CRASH_AT", "objects.files_renamed:2", 1);
		s0__objstore *cos = objtest_reopen(dir, 6);
		s0__objid ids[5];
		put_batch(cos, 5, true, ids);
		_exit(0); /* not reached */
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	              "the commit was not killed at its second rename");
	s0__objstore *os = objtest_reopen(dir, 6);
	ck_assert_int_eq(count_entries(dir, "tmp"), 0);
	int present = 0;
	uint8_t buf[6000];
	for (int i = 0; i < 5; i++) {
		s0__objid id;
		fill_i(buf, sizeof buf, i);
		s0__objstore_hash(os, buf, sizeof buf, &id);
		int rc = objtest_get_code(os, &id, true);
		ck_assert_msg(rc == S0_OK || rc == S0_ENOTFOUND, "object %d: %s", i, s0_code_name(rc));
		present += rc == S0_OK;
	}
	ck_assert_int_eq(present, 2);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 2);
	ck_assert_uint_eq(objenv_data_bytes(dir), u.file_bytes);
	/* The same batch again completes it (the two kept copies stay). */
	s0__objid ids[5];
	put_batch(os, 5, true, ids);
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(objtest_get_code(os, &ids[i], true), S0_OK);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* A commit that fails after some renames (the last object's directory
 * breaks between its put and the commit: a file stands in its place) takes the renamed objects back: none
 * of the batch is visible, no temp file stays, the counts are unchanged;
 * once repaired the same batch commits. */
START_TEST(test_files_failed_commit_leaves_nothing)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 8);
	enum { N = 6 };
	s0__objid ids[N];
	uint8_t buf[6000];
	for (int i = 0; i < N; i++) {
		fill_i(buf, sizeof buf, i);
		s0__objstore_hash(os, buf, sizeof buf, &ids[i]);
	}
	for (int i = 0; i < N - 1; i++) /* distinct directories, so the break hits one */
		ck_assert_int_ne(ids[i].b[0], ids[N - 1].b[0]);
	s0__objctx *cx;
	s0__objbatch *b;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	for (int i = 0; i < N; i++) {
		fill_i(buf, sizeof buf, i);
		ck_assert_int_eq(s0__objstore_put(os, cx, b, buf, sizeof buf, NULL, NULL), S0_OK);
	}
	char *fan;
	ck_assert_int_ge(asprintf(&fan, "%s/%02x", dir, ids[N - 1].b[0]), 0);
	ck_assert_int_eq(rmdir(fan), 0);
	FILE *f = fopen(fan, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__objstore_commit(os, b, &err), S0_EIO);
	ck_assert_str_eq(s0_error_reason(err), "store_io");
	s0_error_free(err);
	for (int i = 0; i < N - 1; i++)
		ck_assert_int_eq(objtest_get_code(os, &ids[i], true), S0_ENOTFOUND);
	ck_assert_int_eq(count_entries(dir, "tmp"), 0);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 0);
	ck_assert_uint_eq(objenv_data_bytes(dir), 0);
	s0__objstore_counters c;
	s0__objstore_counters_get(os, &c);
	ck_assert_uint_eq(c.objects_written, 0);
	/* Repaired: the same batch commits. */
	ck_assert_int_eq(unlink(fan), 0);
	ck_assert_int_eq(mkdir(fan, 0700), 0);
	ck_assert_int_eq(objtest_get_code(os, &ids[N - 1], true), S0_ENOTFOUND);
	s0__objid again[N];
	put_batch(os, N, true, again);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(objtest_get_code(os, &ids[i], true), S0_OK);
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, N);
	s0__objctx_free(cx);
	free(fan);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* The other sync strategies (one after the other; syncfs) give the same
 * results as the default parallel one. */
START_TEST(test_files_sync_strategies)
{
	static const s0__objfiles_sync modes[] = {S0__OBJFILES_SYNC_EACH, S0__OBJFILES_SYNC_FS};
	char *dir;
	s0__objstore *os = objtest_open(&dir, 7);
	s0__objfiles_set_sync(s0__objstore_backend(os), modes[_i]);
	s0__objid ids[40];
	put_batch(os, 40, true, ids);
	uint64_t nd = 0, freed = 0;
	ck_assert_int_eq(s0__objstore_delete(os, ids, 10, &nd, &freed, NULL), S0_OK);
	ck_assert_uint_eq(nd, 10);
	s0__objstore_free(os);
	os = objtest_reopen(dir, 7);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(objtest_get_code(os, &ids[i], false), i < 10 ? S0_ENOTFOUND : S0_OK);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 30);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

TCase *objtest_files_tcase(void)
{
	TCase *tc = tcase_create("files");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_files_layout_and_damage);
	tcase_add_test(tc, test_files_uncommitted_invisible_and_cleaned);
	tcase_add_test(tc, test_files_torn_batch);
	tcase_add_test(tc, test_files_failed_commit_leaves_nothing);
	tcase_add_loop_test(tc, test_files_sync_strategies, 0, 2);
	return tc;
}

/* Open dir with backend name; the status, and the reason in *reason. */
static int open_as(const char *name, const char *dir, char reason[64])
{
	uint8_t key[32];
	memset(key, 1, sizeof key);
	s0__objstore *os = NULL;
	s0_error *err = NULL;
	int rc = s0__objstore_open_backend(name, dir, key, NULL, &os, &err);
	reason[0] = '\0';
	if (err) {
		snprintf(reason, 64, "%s", s0_error_reason(err) ? s0_error_reason(err) : "");
		if (rc == S0_EINVAL && !strcmp(reason, "object_store_mismatch"))
			ck_assert_msg(strstr(s0_error_message(err), "\"pack\"") &&
			                  strstr(s0_error_message(err), "\"files\""),
			              "names missing in: %s", s0_error_message(err));
	}
	s0_error_free(err);
	s0__objstore_free(os);
	return rc;
}

static char *record_of(const char *dir)
{
	char *p, line[64] = "";
	ck_assert_int_ge(asprintf(&p, "%s/backend", dir), 0);
	FILE *f = fopen(p, "r");
	free(p);
	if (!f)
		return strdup("");
	if (!fgets(line, sizeof line, f))
		line[0] = '\0';
	fclose(f);
	return strdup(line);
}

static void write_record(const char *dir, const char *text)
{
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/backend", dir), 0);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

/* A store keeps the backend it was created with: reopening it with another
 * is refused with a reason and changes nothing; unknown names are refused. */
START_TEST(test_backend_choice_recorded)
{
	char *root = s0_test_tmpdir("objchoice"), *fdir, *pdir, reason[64], *rec;
	ck_assert_int_ge(asprintf(&fdir, "%s/f", root), 0);
	ck_assert_int_ge(asprintf(&pdir, "%s/p", root), 0);
	ck_assert_int_eq(open_as("files", fdir, reason), S0_OK);
	ck_assert_str_eq(rec = record_of(fdir), "files\n");
	free(rec);
	ck_assert_int_eq(open_as("pack", fdir, reason), S0_EINVAL);
	ck_assert_str_eq(reason, "object_store_mismatch");
	ck_assert_int_eq(open_as(NULL, fdir, reason), S0_OK); /* NULL: as recorded */
	ck_assert_int_eq(open_as("files", fdir, reason), S0_OK);
	/* A new store without a name is a pack store. */
	ck_assert_int_eq(open_as(NULL, pdir, reason), S0_OK);
	ck_assert_str_eq(rec = record_of(pdir), "pack\n");
	free(rec);
	ck_assert_int_eq(open_as("files", pdir, reason), S0_EINVAL);
	ck_assert_str_eq(reason, "object_store_mismatch");
	/* A pack store from before the record is recognised, then recorded. */
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/backend", pdir), 0);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(open_as("files", pdir, reason), S0_EINVAL);
	ck_assert_str_eq(reason, "object_store_mismatch");
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(open_as(NULL, pdir, reason), S0_OK);
	ck_assert_str_eq(rec = record_of(pdir), "pack\n");
	free(rec);
	free(p);
	/* Unknown names, asked for or recorded. */
	ck_assert_int_eq(open_as("s3-someday", fdir, reason), S0_EINVAL);
	ck_assert_str_eq(reason, "object_store_unknown");
	write_record(fdir, "zzz\n");
	ck_assert_int_eq(open_as(NULL, fdir, reason), S0_EINVAL);
	ck_assert_str_eq(reason, "object_store_unknown");
	ck_assert_ptr_null(s0__objbackend_find("zzz"));
	ck_assert_ptr_null(s0__objbackend_find(NULL));
	ck_assert_str_eq(s0__objbackend_find("files")->name, "files");
	s0_test_rmrf(root);
	free(root);
	free(fdir);
	free(pdir);
}
END_TEST

/* The engine's option: s0_local_options.object_store picks the backend of
 * a new data directory; naming another one on reopen is refused with
 * S0_EINVAL and changes nothing; an unknown name is refused. */
START_TEST(test_local_option_object_store)
{
	char *dir = s0_test_tmpdir("objlocal"), *rec, *objdir;
	ck_assert_int_ge(asprintf(&objdir, "%s/objects", dir), 0);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.object_store = "files";
	s0_local *l = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_OK);
	s0_local_close(l);
	ck_assert_str_eq(rec = record_of(objdir), "files\n");
	free(rec);
	o.object_store = "pack";
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "object_store_mismatch");
	s0_error_free(err);
	err = NULL;
	o.object_store = "nosuch";
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "object_store_unknown");
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "nosuch"));
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "pack, files"));
	s0_error_free(err);
	err = NULL;
	o.object_store = NULL; /* as recorded */
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_OK);
	ck_assert_int_eq(s0_local_gc(l, NULL), S0_OK);
	s0_local_close(l);
	ck_assert_str_eq(rec = record_of(objdir), "files\n");
	free(rec);
	s0_test_rmrf(dir);
	free(dir);
	free(objdir);
}
END_TEST

/* PRAGMA user_version of dir/meta.db, after running sql (nullable) on it. */
static int meta_version(const char *dir, const char *sql)
{
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/meta.db", dir), 0);
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	if (sql)
		ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	int v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(p);
	return v;
}

/* A refused backend choice changes nothing, the metadata schema included: a
 * data directory of the release before teams and API keys (schema 3),
 * opened with the wrong object store, stays at schema 3 (that release
 * refuses a newer schema), and opens normally afterwards. */
START_TEST(test_refused_open_keeps_metadata_schema)
{
	char *dir = s0_test_tmpdir("objmeta");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.object_store = "files";
	s0_local *l = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_OK);
	s0_local_close(l);
	/* back to schema 3: undo migrations 7 (services, public_routes), 6 (nodes,
	 * gen_owners), 5 (templates of teams) and 4 (teams, api_keys) */
	ck_assert_int_eq(meta_version(dir, "DROP TABLE public_routes; DROP TABLE services;"
	                                   "DROP TABLE gen_owners; DROP TABLE nodes;"
	                                   "ALTER TABLE templates DROP COLUMN team_id;"
	                                   "ALTER TABLE templates DROP COLUMN spec;"
	                                   "ALTER TABLE templates DROP COLUMN created_at;"
	                                   "ALTER TABLE templates DROP COLUMN updated_at;"
	                                   "DROP INDEX api_keys_team; DROP TABLE api_keys;"
	                                   "DROP TABLE teams; PRAGMA user_version=3;"),
	                 3);
	o.object_store = "pack";
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "object_store_mismatch");
	s0_error_free(err);
	err = NULL;
	ck_assert_int_eq(meta_version(dir, NULL), 3);
	o.object_store = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_OK);
	s0_local_close(l);
	ck_assert_int_gt(meta_version(dir, NULL), 3);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

TCase *objtest_choice_tcase(void)
{
	TCase *tc = tcase_create("choice");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_backend_choice_recorded);
	tcase_add_test(tc, test_local_option_object_store);
	tcase_add_test(tc, test_refused_open_keeps_metadata_schema);
	return tc;
}
