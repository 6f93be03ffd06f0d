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
#include "cli_harness.h"
#include "../server/tar_build.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static char *home;

static void setup(void)
{
	home = s0_test_tmpdir("cli-teams");
	ck_assert_ptr_nonnull(home);
	h_env_reset(home);
}

static void teardown(void)
{
	s0_test_rmrf(home);
	free(home);
	home = NULL;
}

static char *path_in(const char *rest)
{
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "%s/%s", home, rest), 0);
	return p;
}

static void expect_exit(cli_run *r, int want)
{
	ck_assert_msg(r->status == want, "exit %d (want %d)\nstdout: %s\nstderr: %s", r->status,
	              want, r->out, r->err);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

#define RUN(want, ...)                                                                          \
	do {                                                                                   \
		cli_run r_ = t_cmd(t, A(__VA_ARGS__));                                          \
		expect_exit(&r_, want);                                                        \
		h_run_free(&r_);                                                               \
	} while (0)

START_TEST(keys_golden)
{
	char *data = path_in("data");
	transcript *t = t_new("keys");
	t_note(t, "no server holds the directory: the commands open it");
	cli_run r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "alpha",
	                       "--name", "ci", "-o", "json"));
	expect_exit(&r, 0);
	char *alpha = h_json_str(r.out, "key"), *alpha_id = h_json_str(r.out, "id");
	ck_assert_ptr_nonnull(alpha);
	h_run_free(&r);
	RUN(0, "serve", "keys", "--data", data, "create", "--team", "beta");
	RUN(0, "serve", "keys", "--data", data, "list");
	RUN(2, "serve", "keys", "--data", data, "create");
	RUN(2, "serve", "keys", "--data", data, "create", "--team", "");
	RUN(1, "serve", "keys", "--data", data, "create", "--team", "has space");
	RUN(1, "serve", "keys", "--data", data, "revoke", "key_doesnotexist");
	RUN(2, "serve", "keys", "--data", data, "revoke");
	RUN(2, "serve", "nope");

	t_note(t, "s0 serve holds the directory: the commands go to its admin endpoint");
	serve_proc s;
	ck_assert_msg(h_serve_start(&s, data, NULL), "s0 serve did not start");
	char *admin = path_in("data/admin-token");
	struct stat st;
	ck_assert_int_eq(stat(admin, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "gamma", "-o", "json"));
	expect_exit(&r, 0);
	char *gamma = h_json_str(r.out, "key");
	h_run_free(&r);
	RUN(0, "serve", "keys", "--data", data, "list", "--team", "gamma");
	/* the keys made before the start and now both work, each for its team */
	RUN(0, "--api-url", s.url, "--token", alpha, "sandbox", "list");
	RUN(0, "--api-url", s.url, "--token", gamma, "sandbox", "list");
	RUN(0, "serve", "keys", "--data", data, "revoke", alpha_id);
	RUN(1, "--api-url", s.url, "--token", alpha, "sandbox", "list");
	RUN(1, "serve", "keys", "--data", data, "revoke", "key_doesnotexist");
	ck_assert_int_eq(h_serve_stop(&s), 0);
	ck_assert_msg(access(admin, F_OK) != 0, "the admin credential ends with the server");
	free(s.out);
	t_note(t, "stopped: the directory again");
	RUN(0, "serve", "keys", "--data", data, "list", "--team", "alpha");
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
	char *local = path_in("embedded"), *src = path_in("src"), *sub = path_in("src/app");
	char *file = path_in("src/app/main.py"), *bad = path_in("bad.tar");
	char *good = path_in("good.tar");
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
	RUN(0, "--local", local, "template", "build", "--from-dir", src, "--name", "web");
	RUN(0, "--local", local, "template", "list");
	RUN(0, "--local", local, "template", "get", "web", "-o", "json");
	cli_run r = t_cmd(t, A("--local", local, "sandbox", "create", "-t", "web", "-o", "json"));
	expect_exit(&r, 0);
	char *sb = h_json_str(r.out, "id");
	h_run_free(&r);
	RUN(0, "--local", local, "sandbox", "files", "-s", sb, "cat", "/app/main.py");
	RUN(1, "--local", local, "template", "delete", "web");
	RUN(0, "--local", local, "sandbox", "delete", sb);
	RUN(0, "--local", local, "template", "delete", "web");
	RUN(1, "--local", local, "template", "get", "web");
	RUN(0, "--local", local, "template", "build", "--from-tar", good);
	RUN(1, "--local", local, "template", "build", "--from-tar", good);
	RUN(1, "--local", local, "template", "build", "--from-tar", bad);
	RUN(1, "--local", local, "template", "delete", "default");
	RUN(1, "--local", local, "template", "build", "--from-dir", file);
	/* a tree over the upload cap is refused before it is sent (a sparse file) */
	char *huge = path_in("huge"), *huge_file = path_in("huge/zeros.bin");
	ck_assert_int_eq(mkdir(huge, 0755), 0);
	write_file(huge_file, "", 0);
	ck_assert_int_eq(truncate(huge_file, (off_t)257 << 20), 0);
	RUN(1, "--local", local, "template", "build", "--from-dir", huge, "--name", "huge");
	free(huge);
	free(huge_file);
	RUN(2, "--local", local, "template", "build");
	RUN(2, "--local", local, "template", "build", "--from-dir", src, "--from-tar", good);
	RUN(2, "--local", local, "template");

	t_note(t, "against s0 serve with a team's key: another team sees only public templates");
	char *data = path_in("served");
	r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "alpha", "-o", "json"));
	expect_exit(&r, 0);
	char *alpha = h_json_str(r.out, "key");
	h_run_free(&r);
	r = t_cmd(t, A("serve", "keys", "--data", data, "create", "--team", "beta", "-o", "json"));
	expect_exit(&r, 0);
	char *beta = h_json_str(r.out, "key");
	h_run_free(&r);
	serve_proc s;
	ck_assert_msg(h_serve_start(&s, data, NULL), "s0 serve did not start");
	RUN(0, "--api-url", s.url, "--token", alpha, "template", "build", "--from-dir", src,
	    "--name", "alpha-web", "-o", "json");
	RUN(0, "--api-url", s.url, "--token", alpha, "template", "list");
	RUN(0, "--api-url", s.url, "--token", beta, "template", "list");
	RUN(1, "--api-url", s.url, "--token", beta, "template", "get", "alpha-web");
	RUN(1, "--api-url", s.url, "--token", beta, "template", "delete", "alpha-web");
	RUN(0, "--api-url", s.url, "--token", alpha, "template", "delete", "alpha-web", "-o",
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
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, keys_golden);
	tcase_add_test(tc, templates_golden);
	suite_add_tcase(s, tc);
	return s;
}
