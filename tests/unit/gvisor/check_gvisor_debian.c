/*
 * A debootstrapped minimal Debian as a gvisor template
 * (scripts/debian-tree.sh into $S0_TEST_DEBIAN_TREE): a new data
 * directory's default template is built from the tree (S0_GVISOR_TEMPLATE;
 * mke2fs -d, then e2fsck -fn), and a sandbox of it runs Debian's python3
 * with its ssl and sqlite3 modules, and pip. Not in CI: building the tree
 * on a fresh machine takes minutes (docs/local-backend.md "Runtime
 * gvisor"); run it with `meson test -C build --suite gvisor-debian` as root
 * after the script.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "check_main.h"
#include "lt.h"

START_TEST(debian_python_ssl_sqlite_pip)
{
	const char *tree = getenv("S0_TEST_DEBIAN_TREE");
	ck_assert_msg(tree && *tree, "S0_TEST_DEBIAN_TREE unset: scripts/debian-tree.sh DIR first");
	setenv("S0_GVISOR_TEMPLATE", tree, 1);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	lt t;
	lt_open(&t, &o);
	char *id = lt_claim(&t, NULL, NULL);
	lt_assert_running(&t, id);
	char *ctx = lt_repl(&t, id);
	char *out = lt_sh(&t, id, ctx,
	                  "python3 -c 'import ssl, sqlite3; "
	                  "print(ssl.OPENSSL_VERSION.split()[0], sqlite3.sqlite_version_info[0])'",
	                  NULL);
	ck_assert_str_eq(out, "OpenSSL 3");
	free(out);
	out = lt_sh(&t, id, ctx, "pip --version | cut -d' ' -f1; . /etc/os-release; echo $ID", NULL);
	ck_assert_str_eq(out, "pip\ndebian");
	free(out);
	/* a file of Debian's tree and one written inside survive a pause */
	out = lt_sh(&t, id, ctx, "echo kept > /root/k; echo ok", NULL);
	ck_assert_str_eq(out, "ok");
	free(out);
	free(ctx);
	lt_pause(&t, id);
	lt_resume(&t, id);
	ctx = lt_repl(&t, id);
	out = lt_sh(&t, id, ctx, "cat /root/k; python3 -c 'import sqlite3; print(1)'", NULL);
	ck_assert_str_eq(out, "kept\n1");
	free(out);
	free(ctx);
	free(id);
	lt_close(&t);
	unsetenv("S0_GVISOR_TEMPLATE");
}
END_TEST

static Suite *gvisor_debian_suite(void)
{
	Suite *s = suite_create("gvisor_debian");
	TCase *tc = tcase_create("debian");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, debian_python_ssl_sqlite_pip);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_debian_suite)
