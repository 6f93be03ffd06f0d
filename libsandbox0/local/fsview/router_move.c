/* Routed move: both ends must land on the same filesystem (see router.h). */
#include "local/fsview/router.h"

#include <stdlib.h>
#include <string.h>

/* Canonicalise *p (final component not followed) across filesystems. */
static int canon_path(const s0__files_ns *ns, char **p, s0_error **err)
{
	for (int hop = 0; hop <= S0__FILES_MAX_HOPS; hop++) {
		s0__files_route rt = {.foreign = &ns->mounts};
		char *out = NULL;
		size_t n = strlen(*p);
		int rc = s0__files_ns_is_runtime_path(ns, *p)
		             ? s0__tmpfs_canon(ns->tmpfs, *p, n, false, &rt, &out, err)
		             : s0__rootfs_canon(ns->rootfs, *p, n, false, &rt, &out, err);
		const char *next = rc == S0__FILES_REDIRECT ? rt.redirect[0] : out;
		char *norm = NULL;
		if (rc >= 0)
			rc = s0__path_normalize(next, strlen(next), S0__PATH_CLAMP, &norm, err) < 0
			         ? S0_EINVAL
			         : rc;
		bool done = rc == S0_OK;
		s0__files_route_reset(&rt);
		free(out);
		if (rc < 0)
			return rc;
		free(*p);
		*p = norm;
		if (done)
			return S0_OK;
	}
	return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "too many levels of symbolic links");
}

static int cross_device(const char *src, const char *dst, s0_error **err)
{
	return s0__error_set(err, S0_EINTERNAL, S0__R_FAILED,
	                     "cannot move %s to %s: different filesystems (cross-device)", src, dst);
}

/* Take the redirected paths of a move (either may be absent). */
static int take_redirects(s0__files_route *rt, char **src, char **dst, s0_error **err)
{
	char **slot[2] = {src, dst};
	for (int i = 0; i < 2; i++) {
		if (!rt->redirect[i])
			continue;
		char *n = NULL;
		int rc = s0__path_normalize(rt->redirect[i], strlen(rt->redirect[i]), S0__PATH_CLAMP, &n,
		                            err);
		if (rc < 0)
			return rc;
		free(*slot[i]);
		*slot[i] = n;
	}
	return S0_OK;
}

static int move_loop(const s0__files_ns *ns, char **src, char **dst, s0_error **err)
{
	bool canonical = false;
	for (int hop = 0; hop <= S0__FILES_MAX_HOPS; hop++) {
		bool st = s0__files_ns_is_runtime_path(ns, *src);
		if (st != s0__files_ns_is_runtime_path(ns, *dst)) {
			if (canonical)
				return cross_device(*src, *dst, err);
			int rc = canon_path(ns, src, err);
			if (rc == S0_OK)
				rc = canon_path(ns, dst, err);
			if (rc < 0)
				return rc;
			canonical = true;
			continue;
		}
		s0__files_route rt = {.foreign = &ns->mounts};
		int rc = st ? s0__tmpfs_move(ns->tmpfs, *src, strlen(*src), *dst, strlen(*dst), &rt, err)
		            : s0__rootfs_move(ns->rootfs, *src, strlen(*src), *dst, strlen(*dst), &rt,
		                              err);
		if (rc == S0__FILES_REDIRECT)
			rc = take_redirects(&rt, src, dst, err) < 0 ? S0_EINVAL : S0__FILES_REDIRECT;
		s0__files_route_reset(&rt);
		if (rc != S0__FILES_REDIRECT)
			return rc;
		canonical = false;
	}
	return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "too many levels of symbolic links");
}

int s0__files_move(const s0__files_ns *ns, const char *src, size_t src_len, const char *dst,
                   size_t dst_len, s0_error **err)
{
	if (ns->ops)
		return ns->ops->move(ns->ops_ctx, src, src_len, dst, dst_len, err);
	char *s = NULL, *d = NULL;
	int rc = s0__path_normalize(src, src_len, 0, &s, err);
	if (rc == S0_OK)
		rc = s0__path_normalize(dst, dst_len, 0, &d, err);
	char *from = NULL, *to = NULL; /* as asked, for the hook (router.h) */
	if (rc == S0_OK && ns->hook && (!(from = s0__strdup(s)) || !(to = s0__strdup(d))))
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		rc = move_loop(ns, &s, &d, err);
	if (rc == S0_OK && ns->hook) {
		ns->hook(ns->hook_arg, "rename", from);
		ns->hook(ns->hook_arg, "create", to);
	}
	free(from);
	free(to);
	free(s);
	free(d);
	return rc;
}
