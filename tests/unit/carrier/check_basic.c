/* Carrier basics: files through the kernel, sync, detach, libext2fs sees
 * them, e2fsck clean; the namespace; bad input; busy; concurrency; reclaim
 * sparing live carriers. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cartest.h"
#include "local/blocks/blockdev.h"

#define MiB (1024ull * 1024)

static bool host_mountinfo_mentions(const char *s)
{
	FILE *f = fopen("/proc/1/mountinfo", "re");
	char line[4096];
	bool hit = false;
	while (f && !hit && fgets(line, sizeof line, f))
		hit = strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return hit;
}

/* Write and read files through the kernel's ext4, sync, detach: a
 * libext2fs reader of the same branch sees them, the published generation
 * is e2fsck-clean, and the template's files read back unchanged — with the
 * default options (nobarrier), whose sync and detach send no fsync. */
START_TEST(test_roundtrip)
{
	ct t;
	ct_open(&t, 64 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "rt");
	s0__carrier_stats st;
	s0__carrier_stats_get(c, &st);
	ck_assert_int_ge(st.loop_index, 0);
	uint64_t attach_fsyncs = st.fsyncs; /* the loop device's switch to direct I/O */
	ck_assert(st.direct_io);

	char *p = ct_path(c, "/etc/hostname");
	char *got = ct_get(p, NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, CARENV_HOSTNAME);
	free(got);
	free(p);

	p = ct_path(c, "/workspace/sub");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
	size_t big_len = 3 * MiB + 123;
	char *big = malloc(big_len);
	carenv_fill(big, big_len, 42);
	p = ct_path(c, "/workspace/sub/big.bin");
	ct_put(p, big, big_len);
	size_t n = 0;
	got = ct_get(p, &n);
	ck_assert_uint_eq(n, big_len);
	ck_assert(memcmp(got, big, big_len) == 0);
	free(got);
	free(p);
	p = ct_path(c, "/workspace/hello.txt");
	ct_put(p, "hello from the kernel\n", 22);
	free(p);
	CT_OK(s0__carrier_sync(c, &err_));
	s0__carrier_stats_get(c, &st);
	ck_assert_uint_gt(st.writes, 0);
	ck_assert_uint_eq(st.io_errors, 0);
	/* after sync, still mounted: the device already holds the files (a
	 * read-only libext2fs reader of the branch sees them) */
	got = ct_rootfs_read(b, "/workspace/hello.txt", &n);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "hello from the kernel\n");
	free(got);

	/* a cut of the mounted, synced branch (a snapshot of a running
	 * sandbox) is a consistent filesystem too */
	s0__branch *cut = NULL;
	CT_OK(s0__branch_fork(b, &cut, &err_));
	s0__genid cut_gen;
	CT_OK(s0__branch_publish(cut, 0, &cut_gen, &err_));
	ck_assert_int_eq(ct_fsck(&t, &cut_gen), 0);
	s0__bstore_unref(t.env.bs, &cut_gen);
	s0__branch_free(cut);
	CT_FAILS(S0_EUNAVAILABLE, "resource_leak", s0__carrier_proof(t.state, "rt", &err_));
	CT_OK(s0__carrier_detach(c, &err_));
	CT_OK(s0__carrier_proof(t.state, "rt", &err_));
	CT_OK(s0__carrier_detach(c, &err_)); /* idempotent */
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_proof("rel", "rt", &err_));
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_proof(t.state, "", &err_));
	CT_FAILS(S0_ECONFLICT, "carrier_detached", s0__carrier_sync(c, &err_));
	ck_assert_int_eq(s0__carrier_enter(c), -EBADF);
	s0__carrier_stats_get(c, &st);
	ck_assert_int_eq(st.loop_index, -1);
	/* mounted nobarrier (S0__CARRIER_MOUNT_OPTIONS): sync, cut and detach
	 * sent the server no cache flush, and the branch holds every byte */
	ck_assert_uint_eq(st.fsyncs, attach_fsyncs);
	printf("roundtrip: attach %lld us, detach %lld us, %llu writes\n", (long long)st.attach_us,
	       (long long)st.detach_us, (unsigned long long)st.writes);
	s0__carrier_free(c);

	got = ct_rootfs_read(b, "/workspace/hello.txt", &n);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "hello from the kernel\n");
	free(got);
	got = ct_rootfs_read(b, "/workspace/sub/big.bin", &n);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(n, big_len);
	ck_assert(memcmp(got, big, big_len) == 0);
	free(got);
	free(big);

	s0__genid gen;
	CT_OK(s0__branch_publish(b, 0, &gen, &err_));
	ck_assert_int_eq(ct_fsck(&t, &gen), 0);
	s0__bstore_unref(t.env.bs, &gen);
	s0__branch_free(b);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

/* A forked child joins the namespace with s0__carrier_enter and sees the
 * mounted tree at s0__carrier_root; the host's mount table never shows it. */
START_TEST(test_enter_namespace)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "ns");
	const char *root = s0__carrier_root(c);
	ck_assert(!host_mountinfo_mentions(root));
	char path[4096];
	snprintf(path, sizeof path, "%s/etc/hostname", root);
	struct stat st;
	ck_assert_int_ne(stat(path, &st), 0); /* empty directory on the host */
	pid_t pid = fork();
	if (pid == 0) {
		if (s0__carrier_enter(c) != 0)
			_exit(2);
		int fd = open(path, O_RDONLY);
		char buf[64] = {0};
		if (fd < 0 || read(fd, buf, sizeof buf - 1) <= 0)
			_exit(3);
		_exit(strcmp(buf, CARENV_HOSTNAME) == 0 ? 0 : 4);
	}
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFEXITED(ws));
	ck_assert_int_eq(WEXITSTATUS(ws), 0);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST

/* Bad options are S0_EINVAL; a second carrier of the same id is
 * carrier_exists; a device without ext4 fails the attach and leaves
 * nothing behind. */
START_TEST(test_bad_input)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__carrier *c = NULL;
	s0__carrier_opts o = {.dev = &dev, .state_dir = t.state, .id = "x"};
	o.dev = NULL;
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	o.dev = &dev;
	o.state_dir = "relative/state";
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	o.state_dir = t.state;
	const char *bad_ids[] = {"", ".", "..", "a/b", "sp ace",
	                         "0123456789012345678901234567890123456789012345678901234567890123456789"};
	for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
		o.id = bad_ids[i];
		CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	}
	o.id = NULL;
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	ck_assert_ptr_null(c);

	o.id = "dup";
	CT_OK(s0__carrier_attach(&o, &c, &err_));
	s0__carrier *c2 = NULL;
	CT_FAILS(S0_ECONFLICT, "carrier_exists", s0__carrier_attach(&o, &c2, &err_));
	ck_assert_ptr_null(c2);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);

	/* a device whose size is not a multiple of 512 bytes */
	s0__blockdev odd;
	CT_OK(s0__memdev_new(16 * MiB + 100, &odd, &err_));
	o.dev = &odd;
	o.id = "odd";
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	s0__memdev_free(&odd);
	/* not ext4: an all-zero device */
	s0__blockdev zero;
	CT_OK(s0__memdev_new(16 * MiB, &zero, &err_));
	o.dev = &zero;
	o.id = "zero";
	c = NULL;
	CT_FAILS(S0_EIO, NULL, s0__carrier_attach(&o, &c, &err_));
	ck_assert_ptr_null(c);
	s0__memdev_free(&zero);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	char rec[4096];
	snprintf(rec, sizeof rec, "%s/zero.carrier", t.state);
	ck_assert_int_ne(access(rec, F_OK), 0);
	snprintf(rec, sizeof rec, "%s/zero.d", t.state);
	ck_assert_int_ne(access(rec, F_OK), 0);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST

/* Detach while a process (one that entered the namespace) still uses the
 * mount: carrier_busy, nothing undone; once it is gone, detach works. */
START_TEST(test_detach_busy)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "busy");
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (s0__carrier_enter(c) != 0 || chdir(s0__carrier_root(c)) != 0)
			_exit(2);
		ssize_t w = write(ready[1], "r", 1);
		(void)w;
		pause();
		_exit(0);
	}
	char ch;
	ck_assert_int_eq(read(ready[0], &ch, 1), 1);
	CT_FAILS(S0_ECONFLICT, "carrier_busy", s0__carrier_detach(c, &err_));
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	/* a process in a namespace copied from the carrier's (as a runtime
	 * that unshares after entering), not using the tree: busy too */
	pid = fork();
	if (pid == 0) {
		if (s0__carrier_enter(c) != 0 || unshare(CLONE_NEWNS) != 0 || chdir("/") != 0)
			_exit(2);
		ssize_t w = write(ready[1], "r", 1);
		(void)w;
		pause();
		_exit(0);
	}
	ck_assert_int_eq(read(ready[0], &ch, 1), 1);
	s0_error *be = NULL;
	ck_assert_int_eq(s0__carrier_detach(c, &be), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_reason(be), "carrier_busy");
	char pidstr[32];
	snprintf(pidstr, sizeof pidstr, " %d", (int)pid);
	ck_assert_msg(strstr(s0_error_message(be), pidstr) != NULL, "%s", s0_error_message(be));
	s0_error_free(be);
	/* still attached and usable */
	char *p = ct_path(c, "/etc/hostname");
	char *got = ct_get(p, NULL);
	ck_assert_ptr_nonnull(got);
	free(got);
	free(p);
	CT_OK(s0__carrier_sync(c, &err_));
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	close(ready[0]);
	close(ready[1]);
	s0__branch_free(b);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

typedef struct att_job {
	ct *t;
	s0__branch *b;
	char id[16];
	s0__carrier *c;
	int rc;
	char msg[256];
} att_job;

static void *attach_thread(void *arg)
{
	att_job *j = arg;
	s0__blockdev dev;
	s0__branch_blockdev(j->b, &dev);
	s0__carrier_opts o = {.dev = &dev, .state_dir = j->t->state, .id = j->id};
	s0_error *e = NULL;
	j->rc = s0__carrier_attach(&o, &j->c, &e);
	snprintf(j->msg, sizeof j->msg, "%s", e ? s0_error_message(e) : "");
	s0_error_free(e);
	return NULL;
}

/* Three carriers of one template attached at once from three threads (they
 * race for free loop devices), each written; each branch holds only its
 * own file afterwards. */
START_TEST(test_concurrent)
{
	ct t;
	ct_open(&t, 32 * MiB);
	enum { N = 3 };
	s0__branch *b[N];
	s0__carrier *c[N];
	char name[64];
	att_job jobs[N];
	pthread_t th[N];
	for (int i = 0; i < N; i++) {
		CT_OK(carenv_branch(&t.env, &b[i], &err_));
		memset(&jobs[i], 0, sizeof jobs[i]);
		jobs[i].t = &t;
		jobs[i].b = b[i];
		snprintf(jobs[i].id, sizeof jobs[i].id, "c%d", i);
		ck_assert_int_eq(pthread_create(&th[i], NULL, attach_thread, &jobs[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(jobs[i].rc == S0_OK, "attach %d: %s", i, jobs[i].msg);
		c[i] = jobs[i].c;
	}
	s0__carrier_stats s0st, s1st;
	s0__carrier_stats_get(c[0], &s0st);
	s0__carrier_stats_get(c[1], &s1st);
	ck_assert_int_ne(s0st.loop_index, s1st.loop_index);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "/workspace/only-%d.txt", i);
		char *p = ct_path(c[i], name);
		ct_put(p, jobs[i].id, strlen(jobs[i].id));
		free(p);
	}
	for (int i = N - 1; i >= 0; i--) {
		CT_OK(s0__carrier_detach(c[i], &err_));
		s0__carrier_free(c[i]);
	}
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < N; j++) {
			snprintf(name, sizeof name, "/workspace/only-%d.txt", j);
			char *got = ct_rootfs_read(b[i], name, NULL);
			ck_assert_msg((got != NULL) == (i == j), "branch %d file %d", i, j);
			free(got);
		}
		s0__branch_free(b[i]);
	}
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

/* Reclaim from another process leaves a live carrier alone. */
START_TEST(test_reclaim_spares_live)
{
	const char *crasher = getenv("S0_CARRIER_CRASHER");
	ck_assert_ptr_nonnull(crasher);
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "live");
	const char *argv[] = {crasher, "reclaim", t.state, NULL};
	char *out = NULL;
	ck_assert_int_eq(carenv_run(argv, &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "records 0 processes 0 mounts 0 loops 0"));
	free(out);
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_reclaim("relative", &err_));
	CT_OK(s0__carrier_reclaim("/nonexistent/s0-carrier-state", &err_));
	char *p = ct_path(c, "/etc/hostname");
	char *got = ct_get(p, NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, CARENV_HOSTNAME);
	free(got);
	free(p);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST


Suite *carrier_basic_suite(void)
{
	Suite *s = suite_create("carrier");
	TCase *tc = tcase_create("basic");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_enter_namespace);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_detach_busy);
	tcase_add_test(tc, test_concurrent);
	tcase_add_test(tc, test_reclaim_spares_live);
	suite_add_tcase(s, tc);
	return s;
}
