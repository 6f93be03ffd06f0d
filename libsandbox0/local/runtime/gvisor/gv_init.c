/*
 * procd as PID 1 of a generation (gv_int.h): the binary staged in the
 * bundle (bind-mounted read-only at S0__GV_PROCD_DIR inside, so the root
 * tree needs nothing of ours), `runsc run --detach` (or `runsc restore` of
 * a memory image) with the channel's pipes as the container's stdin and
 * stdout, then the channel opened (procd's hello; a restored procd is
 * attached with a ping instead).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

/** How long procd may take to say hello after `runsc run` returned, ms. */
#define HELLO_TIMEOUT_MS 30000

static int copy_file(const char *from, const char *to, s0_error **err)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = in >= 0 ? open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755) : -1;
	bool ok = in >= 0 && out >= 0;
	char buf[65536];
	ssize_t n;
	while (ok && (n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0 && write(out, buf, (size_t)n) == n;
	}
	int e = errno;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		ok = false;
	if (!ok)
		return s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot copy %s to %s: %s",
		                     from, to, strerror(e));
	return S0_OK;
}

int s0__gv_init_stage(s0__rt_gen *g, const char *from, s0_error **err)
{
	g->procd_dir = s0__asprintf("%s/procd", g->bundle);
	char *bin = g->procd_dir ? s0__asprintf("%s/%s", g->procd_dir, S0__GV_PROCD_NAME) : NULL;
	int rc = bin ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK && mkdir(g->procd_dir, 0755) < 0 && errno != EEXIST)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make %s: %s",
		                   g->procd_dir, strerror(errno));
	if (rc == S0_OK)
		rc = copy_file(from ? from : g->h->procd, bin, err);
	if (rc == S0_OK) /* what PID 1 runs: recorded, not compared (MEM-11) */
		s0__gv_procd_build(bin, g->procd_build, sizeof g->procd_build);
	free(bin);
	return rc;
}

int s0__gv_init_run(s0__rt_gen *g, const char *const *args, bool restored, s0_error **err)
{
	int to[2], from[2];
	if (pipe2(to, O_CLOEXEC) < 0)
		return s0__error_set(err, S0_EIO, "runtime_unavailable", "pipe: %s", strerror(errno));
	if (pipe2(from, O_CLOEXEC) < 0) {
		close(to[0]);
		close(to[1]);
		return s0__error_set(err, S0_EIO, "runtime_unavailable", "pipe: %s", strerror(errno));
	}
	s0__gv_result res;
	int rc = s0__gv_runsc_io(g->h, g->carrier, args, to[0], from[1], restored ? 600000 : 60000,
	                         false, &res, err);
	s0__gv_result_clear(&res);
	close(to[0]); /* the sandbox holds its ends now */
	close(from[1]);
	if (rc < 0) {
		close(to[1]);
		close(from[0]);
		return rc;
	}
	if (restored) /* procd goes on from the image: it said hello before */
		return s0__gv_pd_attach(to[1], from[0], HELLO_TIMEOUT_MS, &g->procd, err);
	return s0__gv_pd_open(to[1], from[0], HELLO_TIMEOUT_MS, NULL, &g->procd, err);
}
