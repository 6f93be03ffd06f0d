/*
 * unit-cli, teams and templates: `s0 serve keys create|list|revoke` on a
 * data directory no server holds and, through the admin endpoint, on one
 * `s0 serve` holds; `s0 template build|list|get|delete` embedded (--local)
 * and against the server with a team's key; usage errors exit 2, refused
 * requests (unknown key id, a name used twice, a template in use, hostile
 * archives) exit 1 with the server's reason. Golden transcripts:
 * golden/keys.txt and golden/templates.txt.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "cli_fixture.h"
#include "../server/tar_build.h"

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

START_TEST(keys_golden)
{
	char *data = h_path_in("data");
	transcript *t = t_new("keys");
	t_note(t, "no server holds the directory: the commands open it");
	cli_run r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "alpha",
	                       "--name", "ci", "-o", "json"));
	h_expect_exit(&r, 0);
	char *alpha = h_json_str(r.out, "key"), *alpha_id = h_json_str(r.out, "id");
	ck_assert_ptr_nonnull(alpha);
	h_run_free(&r);
	H_RUN(0, "serve", "keys", "--data", data, "create", "--team", "beta");
	H_RUN(0, "serve", "keys", "--data", data, "list");
	H_RUN(2, "serve", "keys", "--data", data, "create");
	H_RUN(2, "serve", "keys", "--data", data, "create", "--team", "");
	H_RUN(1, "serve", "keys", "--data", data, "create", "--team", "has space");
	H_RUN(1, "serve", "keys", "--data", data, "revoke", "key_doesnotexist");
	H_RUN(2, "serve", "keys", "--data", data, "revoke");
	H_RUN(2, "serve", "nope");

	t_note(t, "s0 serve holds the directory: the commands go to its admin endpoint");
	serve_proc s;
	ck_assert_msg(h_serve_start(&s, data, NULL), "s0 serve did not start");
	char *admin = h_path_in("data/admin-token");
	struct stat st;
	ck_assert_int_eq(stat(admin, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "gamma", "-o", "json"));
	h_expect_exit(&r, 0);
	char *gamma = h_json_str(r.out, "key");
	h_run_free(&r);
	H_RUN(0, "serve", "keys", "--data", data, "list", "--team", "gamma");
	/* the keys made before the start and now both work, each for its team */
	H_RUN(0, "--api-url", s.url, "--token", alpha, "sandbox", "list");
	H_RUN(0, "--api-url", s.url, "--token", gamma, "sandbox", "list");
	H_RUN(0, "serve", "keys", "--data", data, "revoke", alpha_id);
	H_RUN(1, "--api-url", s.url, "--token", alpha, "sandbox", "list");
	H_RUN(1, "serve", "keys", "--data", data, "revoke", "key_doesnotexist");
	ck_assert_int_eq(h_serve_stop(&s), 0);
	ck_assert_msg(access(admin, F_OK) != 0, "the admin credential ends with the server");
	free(s.out);
	t_note(t, "stopped: the directory again");
	H_RUN(0, "serve", "keys", "--data", data, "list", "--team", "alpha");
	ck_assert(t_check(t));
	t_free(t);
	free(admin);
	free(alpha);
	free(alpha_id);
	free(gamma);
	free(data);
}
END_TEST

START_TEST(templates_golden)
{
	char *local = h_path_in("embedded"), *src = h_path_in("src"), *sub = h_path_in("src/app");
	char *file = h_path_in("src/app/main.py"), *bad = h_path_in("bad.tar");
	char *good = h_path_in("good.tar");
	ck_assert_int_eq(mkdir(src, 0755), 0);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	write_file(file, "print('hi')\n", 12);
	static const tar_member bad_m[] = {{'f', "../escape.txt", "x"}};
	static const tar_member good_m[] = {{'f', "etc/motd", "hello\n"}};
	size_t len = 0;
	void *tar = tar_build(bad_m, 1, &len);
	write_file(bad, tar, len);
	free(tar);
	tar = tar_build(good_m, 1, &len);
	write_file(good, tar, len);
	free(tar);

	transcript *t = t_new("templates");
	t_note(t, "embedded (--local DIR): templates of team_local");
	H_RUN(0, "--local", local, "template", "build", "--from-dir", src, "--name", "web");
	H_RUN(0, "--local", local, "template", "list");
	H_RUN(0, "--local", local, "template", "get", "web", "-o", "json");
	cli_run r = t_cmd(t, A("--local", local, "sandbox", "create", "-t", "web", "-o", "json"));
	h_expect_exit(&r, 0);
	char *sb = h_json_str(r.out, "id");
	h_run_free(&r);
	H_RUN(0, "--local", local, "sandbox", "files", "-s", sb, "cat", "/app/main.py");
	H_RUN(1, "--local", local, "template", "delete", "web");
	H_RUN(0, "--local", local, "sandbox", "delete", sb);
	H_RUN(0, "--local", local, "template", "delete", "web");
	H_RUN(1, "--local", local, "template", "get", "web");
	H_RUN(0, "--local", local, "template", "build", "--from-tar", good);
	H_RUN(1, "--local", local, "template", "build", "--from-tar", good);
	H_RUN(1, "--local", local, "template", "build", "--from-tar", bad);
	H_RUN(1, "--local", local, "template", "delete", "default");
	H_RUN(1, "--local", local, "template", "build", "--from-dir", file);
	/* a tree over the upload cap is refused before it is sent (a sparse file) */
	char *huge = h_path_in("huge"), *huge_file = h_path_in("huge/zeros.bin");
	ck_assert_int_eq(mkdir(huge, 0755), 0);
	write_file(huge_file, "", 0);
	ck_assert_int_eq(truncate(huge_file, (off_t)257 << 20), 0);
	H_RUN(1, "--local", local, "template", "build", "--from-dir", huge, "--name", "huge");
	free(huge);
	free(huge_file);
	H_RUN(2, "--local", local, "template", "build");
	H_RUN(2, "--local", local, "template", "build", "--from-dir", src, "--from-tar", good);
	H_RUN(2, "--local", local, "template");

	t_note(t, "against s0 serve with a team's key: another team sees only public templates");
	char *data = h_path_in("served");
	r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "alpha", "-o", "json"));
	h_expect_exit(&r, 0);
	char *alpha = h_json_str(r.out, "key");
	h_run_free(&r);
	r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "beta", "-o", "json"));
	h_expect_exit(&r, 0);
	char *beta = h_json_str(r.out, "key");
	h_run_free(&r);
	serve_proc s;
	ck_assert_msg(h_serve_start(&s, data, NULL), "s0 serve did not start");
	H_RUN(0, "--api-url", s.url, "--token", alpha, "template", "build", "--from-dir", src,
	    "--name", "alpha-web", "-o", "json");
	H_RUN(0, "--api-url", s.url, "--token", alpha, "template", "list");
	H_RUN(0, "--api-url", s.url, "--token", beta, "template", "list");
	H_RUN(1, "--api-url", s.url, "--token", beta, "template", "get", "alpha-web");
	H_RUN(1, "--api-url", s.url, "--token", beta, "template", "delete", "alpha-web");
	H_RUN(0, "--api-url", s.url, "--token", alpha, "template", "delete", "alpha-web", "-o",
	    "json");
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	ck_assert(t_check(t));
	t_free(t);
	free(alpha);
	free(beta);
	free(data);
	free(sb);
	free(local);
	free(src);
	free(sub);
	free(file);
	free(bad);
	free(good);
}
END_TEST

Suite *cli_teams_suite(void);

Suite *cli_teams_suite(void)
{
	Suite *s = suite_create("cli_teams");
	TCase *tc = tcase_create("teams");
	tcase_add_checked_fixture(tc, h_home_setup, h_home_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, keys_golden);
	tcase_add_test(tc, templates_golden);
	suite_add_tcase(s, tc);
	return s;
}
