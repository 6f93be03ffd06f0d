/* Finding and running runsc (gvisor.h, gv_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

static bool executable(const char *p)
{
	struct stat st;
	return p && *p == '/' && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int s0__gv_find_runsc(char **out, s0_error **err)
{
	const char *env = getenv("S0_RUNSC");
	if (env && *env) {
		if (!executable(env))
			return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
			                     "S0_RUNSC=%s is not an executable file", env);
		return (*out = s0__strdup(env)) ? S0_OK : s0__error_nomem(err);
	}
	char *cand = NULL;
	const char *cache = getenv("S0_RUNSC_CACHE");
	if (cache && *cache)
		cand = s0__asprintf("%s/%s/runsc", cache, S0__GV_RUNSC_VERSION);
	else
		cand = s0__strdup(S0__GV_RUNSC_CACHE);
	if (!cand)
		return s0__error_nomem(err);
	if (executable(cand)) {
		*out = cand;
		return S0_OK;
	}
	const char *path = getenv("PATH");
	char *copy = s0__strdup(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin"), *save = NULL;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
		char *p = s0__asprintf("%s/runsc", d);
		if (executable(p)) {
			free(copy);
			free(cand);
			*out = p;
			return S0_OK;
		}
		free(p);
	}
	free(copy);
	int rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
	                       "runsc not found (S0_RUNSC unset, no %s, none on PATH): run "
	                       "scripts/install-runsc.sh",
	                       cand);
	free(cand);
	return rc;
}

/* The global flags every runsc call of this driver carries. */
static const char *const GLOBAL[] = {
	"--platform=systrap", "--network=sandbox", "--overlay2=none", "--file-access=shared",
};

static int enter_carrier(const void *c)
{
	return s0__carrier_enter(c) == 0 ? 0 : 1;
}

int s0__gv_runsc(s0__rt_host *h, const char *const *args, int64_t timeout_ms, bool may_fail,
                 s0__gv_result *res, s0_error **err)
{
	return s0__gv_runsc_in(h, NULL, args, timeout_ms, may_fail, res, err);
}

int s0__gv_runsc_in(s0__rt_host *h, const s0__carrier *in, const char *const *args,
                    int64_t timeout_ms, bool may_fail, s0__gv_result *res, s0_error **err)
{
	return s0__gv_runsc_io(h, in, args, -1, -1, timeout_ms, may_fail, res, err);
}

int s0__gv_runsc_io(s0__rt_host *h, const s0__carrier *in, const char *const *args, int in_fd,
                    int out_fd, int64_t timeout_ms, bool may_fail, s0__gv_result *res,
                    s0_error **err)
{
	size_t n = 0;
	while (args[n])
		n++;
	size_t ng = sizeof GLOBAL / sizeof GLOBAL[0];
	const char **argv = calloc(n + ng + 4, sizeof *argv);
	char *root = s0__asprintf("--root=%s", h->runsc_root);
	if (!argv || !root) {
		free(argv);
		free(root);
		return s0__error_nomem(err);
	}
	size_t k = 0;
	argv[k++] = h->runsc;
	argv[k++] = root;
	for (size_t i = 0; i < ng; i++)
		argv[k++] = GLOBAL[i];
	for (size_t i = 0; i < n; i++)
		argv[k++] = args[i];
	int rc;
	if (!strcmp(args[0], "run") || !strcmp(args[0], "restore")) {
		/* the sandbox it leaves running would hold pipes open: stderr to a file */
		static unsigned seq;
		char *ep = s0__asprintf("%s/run-%d-%u.err", h->dir, (int)getpid(),
		                        __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
		memset(res, 0, sizeof *res);
		rc = ep ? s0__gv_run_detached_io((char *const *)argv, in_fd, out_fd, ep, timeout_ms,
		                                 in ? enter_carrier : NULL, in, &res->status, err)
		        : s0__error_nomem(err);
		FILE *f = ep ? fopen(ep, "re") : NULL;
		char chunk[4096];
		size_t got;
		while (f && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
			s0__buf_put(&res->err, chunk, got);
		if (f)
			fclose(f);
		if (ep)
			unlink(ep);
		free(ep);
		s0__buf_put(&res->out, "", 1);
		s0__buf_put(&res->err, "", 1);
		res->out.len = 0;
		res->err.len--;
	} else {
		rc = s0__gv_run((char *const *)argv, NULL, 0, timeout_ms, res, err);
	}
	free(argv);
	free(root);
	if (rc == S0_OK && res->status != 0 && !may_fail) {
		rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                   "runsc %s failed (exit %d): %.400s", args[0],
		                   s0__gv_exit_code(res->status), res->err.data ? res->err.data : "");
	}
	s0__gv_reap_orphans();
	return rc;
}

void s0__gv_argv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

char **s0__gv_exec_argv(s0__rt_gen *g, const char *cwd, char *const *env, char *const *cmd)
{
	size_t ng = sizeof GLOBAL / sizeof GLOBAL[0], ne = 0, nc = 0, ns = 0;
	while (env && env[ne])
		ne++;
	while (cmd[nc])
		nc++;
	while (g->env && g->env[ns])
		ns++;
	size_t cap = 4 + ng + 2 + 2 * (ne + ns) + 2 + 2 + nc + 1;
	char **v = calloc(cap, sizeof *v);
	if (!v)
		return NULL;
	size_t k = 0;
	bool ok = (v[k++] = s0__strdup(g->h->runsc)) &&
	          (v[k++] = s0__asprintf("--root=%s", g->h->runsc_root));
	for (size_t i = 0; ok && i < ng; i++)
		ok = (v[k++] = s0__strdup(GLOBAL[i])) != NULL;
	ok = ok && (v[k++] = s0__strdup("exec"));
	for (size_t i = 0; ok && i < ns; i++)
		ok = (v[k++] = s0__strdup("--env")) && (v[k++] = s0__strdup(g->env[i]));
	for (size_t i = 0; ok && i < ne; i++)
		ok = (v[k++] = s0__strdup("--env")) && (v[k++] = s0__strdup(env[i]));
	if (ok && cwd && *cwd)
		ok = (v[k++] = s0__strdup("--cwd")) && (v[k++] = s0__strdup(cwd));
	ok = ok && (v[k++] = s0__strdup("--")) && (v[k++] = s0__strdup(g->id));
	for (size_t i = 0; ok && i < nc; i++)
		ok = (v[k++] = s0__strdup(cmd[i])) != NULL;
	if (!ok) {
		s0__gv_argv_free(v);
		return NULL;
	}
	return v;
}
