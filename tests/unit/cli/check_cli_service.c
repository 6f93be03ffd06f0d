/*
 * unit-cli, services: `s0 sandbox service apply|list|clear` embedded
 * (--local): a YAML file of services applied, listed as a table and as
 * JSON, cleared; a refused file (resume: true without a restartable
 * runtime) exits 1 with the server's reason, a missing --file exits 2
 * (PUB-09). Golden transcript: golden/services.txt.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "cli_fixture.h"

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(services_golden)
{
	char *local = h_path_in("embedded"), *good = h_path_in("services.yaml");
	char *bad = h_path_in("bad.yaml");
	write_text(good, "services:\n"
	                 "  - id: web\n"
	                 "    port: 8080\n"
	                 "    runtime: {type: cmd, command: [httpd, -p, \"8080\", -h, /www]}\n"
	                 "    ingress:\n"
	                 "      public: true\n"
	                 "      routes: [{id: all, path_prefix: /, resume: true}]\n");
	write_text(bad, "- id: web\n"
	                "  port: 8080\n"
	                "  runtime: {type: manual}\n"
	                "  ingress: {public: true, routes: [{id: all, resume: true}]}\n");
	transcript *t = t_new("services");
	cli_run r = t_cmd(t, A("--local", local, "sandbox", "create", "-t", "default", "-o", "json"));
	h_expect_exit(&r, 0);
	char *sb = h_json_str(r.out, "id");
	h_run_free(&r);
	H_RUN(0, "--local", local, "sandbox", "service", "list", sb);
	/* the public URL holds a random public id: these two stay out of the golden text */
	r = h_run(A("--local", local, "sandbox", "service", "apply", sb, "-f", good), NULL);
	h_expect_exit(&r, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "web      8080  yes     1       /r/"));
	h_run_free(&r);
	r = h_run(A("--local", local, "sandbox", "service", "list", sb, "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\"publishable\": true"));
	ck_assert_ptr_nonnull(strstr(r.out, "/r/"));
	h_run_free(&r);
	H_RUN(1, "--local", local, "sandbox", "service", "apply", sb, "-f", bad);
	H_RUN(2, "--local", local, "sandbox", "service", "apply", sb);
	H_RUN(0, "--local", local, "sandbox", "service", "clear", sb);
	H_RUN(1, "--local", local, "sandbox", "service", "list", "sb_missing");
	ck_assert(t_check(t));
	t_free(t);
	free(sb);
	free(bad);
	free(good);
	free(local);
}
END_TEST

Suite *cli_service_suite(void);

Suite *cli_service_suite(void)
{
	Suite *s = suite_create("cli_service");
	TCase *tc = tcase_create("service");
	tcase_add_checked_fixture(tc, h_home_setup, h_home_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, services_golden);
	suite_add_tcase(s, tc);
	return s;
}
