/*
 * The runtime tmpfs (see tmpfs.h): a tree of nodes in memory, one mutex,
 * the files-API semantics of the RootFS, and a flat serialisation.
 */
#include "local/fsview/tmpfs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"

enum { K_DIR = 1, K_FILE = 2, K_LINK = 3 };

typedef struct tnode tnode;
struct tnode {
	char *name;       /* "" for the root */
	uint8_t kind;     /* K_* */
	uint32_t perm;    /* permission bits, 07777 */
	int64_t mtime_ns;
	tnode *parent;    /* NULL for the root */
	tnode *mnt;       /* owning mount (itself for a mount); NULL: placeholder */
	tnode **kids;     /* directories: children sorted by name */
	size_t nkids, capkids;
	char *data;       /* files */
	size_t size;
	char *target;     /* symlinks */
	bool is_mount, ro;
	uint64_t limit, used; /* mounts: byte limit (0 none) and file bytes below */
};

struct s0__tmpfs {
	pthread_mutex_t mu;
	tnode *root;
	uint64_t used;
	bool has_clock; /* s0__tmpfs_set_clock: read clock, else CLOCK_REALTIME */
	s0_clock clock;
};

/* ---- nodes ---- */

/* Now in ns since the epoch, from the tmpfs's clock. */
static int64_t now_ns(const s0__tmpfs *t)
{
	if (t->has_clock) {
		int64_t ms = t->clock.now_unix_ms(t->clock.ctx);
		return ms > INT64_MAX / 1000000 ? INT64_MAX
		       : ms < INT64_MIN / 1000000 ? INT64_MIN : ms * 1000000;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A node stamped with @p mtime_ns (now_ns(), or a recorded time). */
static tnode *node_new(const char *name, size_t len, uint8_t kind, uint32_t perm,
                       int64_t mtime_ns)
{
	tnode *n = calloc(1, sizeof *n);
	if (!n || !(n->name = s0__strndup(name, len))) {
		free(n);
		return NULL;
	}
	n->kind = kind;
	n->perm = perm & 07777;
	n->mtime_ns = mtime_ns;
	return n;
}

static void node_free1(tnode *n)
{
	free(n->name);
	free(n->kids);
	free(n->data);
	free(n->target);
	free(n);
}

/* Free a subtree without recursion (guest trees can be deep). */
static void tree_free(tnode *top)
{
	tnode *cur = top;
	while (cur) {
		if (cur->nkids) {
			cur = cur->kids[--cur->nkids];
			continue;
		}
		tnode *up = cur == top ? NULL : cur->parent;
		node_free1(cur);
		cur = up;
	}
}

/* Binary search; *at receives the insertion index. */
static tnode *kid_find(const tnode *d, const char *name, size_t len, size_t *at)
{
	size_t lo = 0, hi = d->nkids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *k = d->kids[mid]->name;
		int c = strncmp(k, name, len);
		if (c == 0)
			c = k[len] ? 1 : 0;
		if (c == 0) {
			if (at)
				*at = mid;
			return d->kids[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return NULL;
}

/* Room for one more child. */
static int kid_reserve(tnode *d)
{
	if (d->nkids < d->capkids)
		return 0;
	size_t nc = d->capkids ? d->capkids * 2 : 8;
	tnode **nk = realloc(d->kids, nc * sizeof *nk);
	if (!nk)
		return -1;
	d->kids = nk;
	d->capkids = nc;
	return 0;
}

static int kid_insert(tnode *d, tnode *n)
{
	size_t at;
	if (kid_find(d, n->name, strlen(n->name), &at) || kid_reserve(d) < 0)
		return -1;
	memmove(d->kids + at + 1, d->kids + at, (d->nkids - at) * sizeof *d->kids);
	d->kids[at] = n;
	d->nkids++;
	n->parent = d;
	if (!n->is_mount)
		n->mnt = d->mnt;
	return 0;
}

static void kid_remove(tnode *d, tnode *n)
{
	size_t at;
	if (kid_find(d, n->name, strlen(n->name), &at) != n)
		return;
	memmove(d->kids + at, d->kids + at + 1, (d->nkids - at - 1) * sizeof *d->kids);
	d->nkids--;
	n->parent = NULL;
}

static char *path_of(const tnode *n)
{
	size_t len = 0;
	for (const tnode *p = n; p->parent; p = p->parent)
		len += strlen(p->name) + 1;
	char *s = malloc(len + 2);
	if (!s)
		return NULL;
	s[len] = '\0';
	if (!len)
		return strcpy(s, "/");
	for (const tnode *p = n; p->parent; p = p->parent) {
		size_t k = strlen(p->name);
		len -= k;
		memcpy(s + len, p->name, k);
		s[--len] = '/';
	}
	return s;
}

/* Bytes of files in a subtree (iterative). */
static uint64_t tree_bytes(tnode *top)
{
	uint64_t sum = 0;
	size_t cap = 64, n = 0;
	tnode **stack = malloc(cap * sizeof *stack);
	if (!stack)
		return 0;
	stack[n++] = top;
	while (n) {
		tnode *c = stack[--n];
		sum += c->kind == K_FILE ? c->size : 0;
		for (size_t i = 0; i < c->nkids; i++) {
			if (n == cap) {
				tnode **ns = realloc(stack, (cap *= 2) * sizeof *ns);
				if (!ns)
					break;
				stack = ns;
			}
			stack[n++] = c->kids[i];
		}
	}
	free(stack);
	return sum;
}

static void account(s0__tmpfs *t, tnode *mnt, int64_t delta)
{
	t->used += (uint64_t)delta;
	if (mnt)
		mnt->used += (uint64_t)delta;
}

/* ---- the walker ---- */

enum { TW_OK, TW_NOPARENT, TW_NOTDIR, TW_OUT };
#define TW_FOLLOW 1u
#define TW_MKDIRS 2u

typedef struct twalk {
	int status;
	tnode *dir;   /* parent of the final entry; deepest directory reached */
	tnode *node;  /* final entry, NULL when missing */
	char name[S0__NAME_MAX + 1];
	char *canon;  /* TW_OUT: canonical path that left the mounts */
	char *tail;   /* TW_NOPARENT / TW_NOTDIR: unresolved rest, from the failing component */
} twalk;

static void twalk_clear(twalk *w)
{
	free(w->canon);
	free(w->tail);
	w->canon = w->tail = NULL;
}

typedef struct walker {
	char *rest;
	const char *p;
	size_t link_end; /* rest[0..link_end) came from symlink targets */
	tnode *cur;
	int links;
} walker;

static bool more(const char *p)
{
	while (*p == '/')
		p++;
	return *p != '\0';
}

static int leave(walker *k, twalk *w, const char *comp, size_t n, s0_error **err)
{
	char *base = path_of(k->cur);
	w->status = TW_OUT;
	if (base && n)
		w->canon = s0__asprintf("%s%s%.*s%s", base, strcmp(base, "/") ? "/" : "", (int)n, comp,
		                        k->p);
	else if (base)
		w->canon = s0__strdup(base);
	free(base);
	return w->canon ? S0_OK : s0__error_nomem(err);
}

static int expand(walker *k, const tnode *link, s0_error **err)
{
	if (++k->links > S0__FILES_MAX_LINKS)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "too many levels of symbolic links");
	char *nr = s0__asprintf("%s%s", link->target, k->p);
	if (!nr)
		return s0__error_nomem(err);
	size_t pos = (size_t)(k->p - k->rest);
	k->link_end = strlen(link->target) + (k->link_end > pos ? k->link_end - pos : 0);
	free(k->rest);
	k->rest = nr;
	k->p = nr;
	if (link->target[0] == '/')
		k->cur = NULL; /* set to the root by the caller */
	return S0_OK;
}

static int stop(walker *k, twalk *w, int status, const char *c, size_t n, s0_error **err)
{
	w->status = status;
	w->tail = s0__asprintf("%.*s%s", (int)n, c, k->p);
	return w->tail ? S0_OK : s0__error_nomem(err);
}

static void set_final(twalk *w, tnode *dir, tnode *node, const char *c, size_t n)
{
	w->status = TW_OK;
	w->dir = dir;
	w->node = node;
	memcpy(w->name, c, n);
	w->name[n] = '\0';
}

/* One component; *done when the walk is over. */
static int step(s0__tmpfs *t, walker *k, twalk *w, unsigned fl, const char *c, size_t n,
                bool *done, s0_error **err)
{
	bool last = !more(k->p);
	if (n == 1 && c[0] == '.')
		return S0_OK;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		k->cur = k->cur->parent ? k->cur->parent : t->root;
		return S0_OK;
	}
	if (n > S0__NAME_MAX)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "path component too long");
	tnode *child = kid_find(k->cur, c, n, NULL);
	w->dir = k->cur;
	if (!child && !k->cur->mnt) {
		*done = true;
		return leave(k, w, c, n, err);
	}
	if (!child && last) {
		*done = true;
		set_final(w, k->cur, NULL, c, n);
		return S0_OK;
	}
	/* Never create what a (dangling) symlink names, like mkdir -p. */
	if (!child && (!(fl & TW_MKDIRS) || (size_t)(c - k->rest) < k->link_end)) {
		*done = true;
		return stop(k, w, TW_NOPARENT, c, n, err);
	}
	if (!child) {
		child = node_new(c, n, K_DIR, 0755, now_ns(t));
		if (!child || kid_insert(k->cur, child) < 0) {
			if (child)
				node_free1(child);
			return s0__error_nomem(err);
		}
		k->cur->mtime_ns = child->mtime_ns;
	}
	if (child->kind == K_LINK && (!last || (fl & TW_FOLLOW))) {
		int rc = expand(k, child, err);
		if (!k->cur)
			k->cur = t->root;
		return rc;
	}
	if (last) {
		*done = true;
		set_final(w, k->cur, child, c, n);
		if (child->mnt)
			return S0_OK;
		k->cur = child; /* a placeholder: not ours */
		return leave(k, w, NULL, 0, err);
	}
	if (child->kind != K_DIR) {
		*done = true;
		return stop(k, w, TW_NOTDIR, c, n, err);
	}
	k->cur = child;
	return S0_OK;
}

static int twalk_run(s0__tmpfs *t, const char *path, unsigned fl, twalk *w, s0_error **err)
{
	memset(w, 0, sizeof *w);
	walker k = {.rest = s0__strdup(path), .cur = t->root};
	if (!k.rest)
		return s0__error_nomem(err);
	k.p = k.rest;
	int rc = S0_OK;
	bool done = false;
	while (rc == S0_OK && !done) {
		const char *c;
		size_t n;
		if (!s0__path_next(&k.p, &c, &n)) {
			if (!k.cur->mnt) {
				rc = leave(&k, w, NULL, 0, err);
			} else {
				w->status = TW_OK;
				w->node = k.cur;
				w->dir = k.cur->parent;
				s0__strlcpy(w->name, k.cur->name, sizeof w->name);
			}
			break;
		}
		rc = step(t, &k, w, fl, c, n, &done, err);
	}
	free(k.rest);
	if (rc < 0)
		twalk_clear(w);
	return rc;
}

/* Map a non-OK walk to the operation's error (see rfs_walk_fail). */
static int walk_fail(twalk *w, const char *missing, const char *path, s0__files_route *route,
                     int slot, s0_error **err)
{
	if (w->status == TW_NOTDIR)
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR, "a parent of %s is not a directory",
		                     path);
	if (w->status == TW_NOPARENT)
		return s0__error_set(err, S0_ENOTFOUND, missing, "a parent directory of %s does not exist",
		                     path);
	if (!route)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "%s leads outside the tmpfs", path);
	free(route->redirect[slot]);
	route->redirect[slot] = w->canon;
	w->canon = NULL;
	return S0__FILES_REDIRECT;
}

static int denied_ro(const tnode *dir, const char *path, s0_error **err)
{
	if (dir && dir->mnt && dir->mnt->ro)
		return s0__error_set(err, S0_EFORBIDDEN, S0__R_DENIED, "read-only file system: %s", path);
	return S0_OK;
}

/* ---- lifecycle ---- */

int s0__tmpfs_new(s0__tmpfs **out, s0_error **err)
{
	s0__tmpfs *t = calloc(1, sizeof *t);
	if (!t || !(t->root = node_new("", 0, K_DIR, 0755, now_ns(t)))) {
		free(t);
		return s0__error_nomem(err);
	}
	pthread_mutex_init(&t->mu, NULL);
	*out = t;
	return S0_OK;
}

void s0__tmpfs_set_clock(s0__tmpfs *t, const s0_clock *clock)
{
	pthread_mutex_lock(&t->mu);
	t->has_clock = clock && clock->now_unix_ms;
	if (t->has_clock)
		t->clock = *clock;
	pthread_mutex_unlock(&t->mu);
}

void s0__tmpfs_free(s0__tmpfs *t)
{
	if (!t)
		return;
	tree_free(t->root);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* Descend the lexical path @p p (no links followed); creates placeholder or
 * plain directories when @p create. Returns the node or NULL. */
static tnode *lexical(s0__tmpfs *t, const char *p, bool create, bool *notdir)
{
	tnode *cur = t->root;
	const char *c;
	size_t n;
	*notdir = false;
	while (s0__path_next(&p, &c, &n)) {
		if (cur->kind != K_DIR) {
			*notdir = true;
			return NULL;
		}
		tnode *child = kid_find(cur, c, n, NULL);
		if (!child && create && more(p)) {
			child = node_new(c, n, K_DIR, 0755, now_ns(t));
			if (!child || kid_insert(cur, child) < 0) {
				if (child)
					node_free1(child);
				return NULL;
			}
		}
		if (!child)
			return create ? cur : NULL;
		cur = child;
	}
	return cur;
}

/* Give every unowned node below the new mount @p m to it (iterative). */
static void adopt(tnode *m)
{
	tnode *cur = m;
	/* preorder over placeholders only: mounts keep their own subtree */
	tnode **stack = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		for (size_t i = 0; i < cur->nkids; i++) {
			tnode *k = cur->kids[i];
			if (k->mnt || k->is_mount)
				continue;
			k->mnt = m;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				tnode **ns = realloc(stack, nc * sizeof *ns);
				if (!ns)
					break;
				stack = ns;
				cap = nc;
			}
			stack[n++] = k;
		}
		if (!n)
			break;
		cur = stack[--n];
	}
	free(stack);
}

static int add_mount_locked(s0__tmpfs *t, const char *p, uint32_t mode, unsigned flags,
                            uint64_t limit, s0_error **err)
{
	bool notdir;
	tnode *at = lexical(t, p, false, &notdir);
	if (at && (at->is_mount || at->mnt))
		return s0__error_set(err, S0_ECONFLICT, S0__R_EXISTS, "already exists: %s", p);
	if (at) { /* a placeholder above other mounts becomes a mount itself */
		at->is_mount = true;
		at->mnt = at;
		at->perm = mode & 07777;
		at->ro = flags & S0__TMPFS_RDONLY;
		at->limit = limit;
		adopt(at);
		return S0_OK;
	}
	tnode *dir = lexical(t, p, true, &notdir);
	if (!dir || notdir || dir->kind != K_DIR)
		return notdir ? s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR, "not a directory: %s", p)
		              : s0__error_nomem(err);
	const char *base = s0__path_base(p);
	tnode *m = node_new(base, strlen(base), K_DIR, mode, now_ns(t));
	if (!m)
		return s0__error_nomem(err);
	m->is_mount = true;
	m->mnt = m;
	m->ro = flags & S0__TMPFS_RDONLY;
	m->limit = limit;
	if (kid_insert(dir, m) < 0) {
		node_free1(m);
		return s0__error_nomem(err);
	}
	return S0_OK;
}

int s0__tmpfs_add_mount(s0__tmpfs *t, const char *path, size_t path_len, uint32_t mode,
                        unsigned flags, uint64_t limit_bytes, s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc == S0_OK && !strcmp(p, "/"))
		rc = s0__error_set(err, S0_EINVAL, S0__R_INVALID, "the root cannot be a tmpfs mount");
	if (rc == S0_OK) {
		pthread_mutex_lock(&t->mu);
		rc = add_mount_locked(t, p, mode, flags, limit_bytes, err);
		pthread_mutex_unlock(&t->mu);
	}
	free(p);
	return rc;
}

int s0__tmpfs_new_runtime(const char *const *eph, size_t n_eph, s0__tmpfs **out, s0_error **err)
{
	return s0__tmpfs_new_runtime_clock(NULL, eph, n_eph, out, err);
}

int s0__tmpfs_new_runtime_clock(const s0_clock *clock, const char *const *eph, size_t n_eph,
                                s0__tmpfs **out, s0_error **err)
{
	static const struct {
		const char *path;
		uint32_t mode;
		unsigned flags;
	} base[] = {{"/tmp", 01777, 0},
	            {"/proc", 0555, S0__TMPFS_RDONLY},
	            {"/dev", 0755, S0__TMPFS_RDONLY},
	            {"/sys", 0555, S0__TMPFS_RDONLY}};
	s0__tmpfs *t = NULL;
	int rc = s0__tmpfs_new(&t, err);
	if (rc == S0_OK && clock) {
		s0__tmpfs_set_clock(t, clock);
		t->root->mtime_ns = now_ns(t);
	}
	for (size_t i = 0; rc == S0_OK && i < sizeof base / sizeof base[0]; i++)
		rc = s0__tmpfs_add_mount(t, base[i].path, strlen(base[i].path), base[i].mode,
		                         base[i].flags, 0, err);
	for (size_t i = 0; rc == S0_OK && i < n_eph; i++) {
		s0_error *e = NULL;
		rc = s0__tmpfs_add_mount(t, eph[i], strlen(eph[i]), 0777, 0, 0, &e);
		if (rc == S0_ECONFLICT) { /* listed twice, or one of the built-ins */
			s0_error_free(e);
			rc = S0_OK;
		} else if (rc < 0) {
			s0__error_put(err, e);
		}
	}
	if (rc < 0) {
		s0__tmpfs_free(t);
		return rc;
	}
	*out = t;
	return S0_OK;
}

int s0__tmpfs_set_readonly(s0__tmpfs *t, const char *path, size_t path_len, bool ro,
                           s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	bool notdir;
	pthread_mutex_lock(&t->mu);
	tnode *m = lexical(t, p, false, &notdir);
	if (m && m->is_mount)
		m->ro = ro;
	else
		rc = s0__error_set(err, S0_ENOTFOUND, S0__R_DIR_NOT_FOUND, "no tmpfs mount at %s", p);
	pthread_mutex_unlock(&t->mu);
	free(p);
	return rc;
}

/* Calls fn on every node of the tree in preorder, without recursion. */
static int each_node(tnode *root, int (*fn)(tnode *n, void *ctx), void *ctx)
{
	tnode *cur = root;
	for (;;) {
		int rc = fn(cur, ctx);
		if (rc)
			return rc;
		if (cur->nkids) {
			cur = cur->kids[0];
			continue;
		}
		for (;;) {
			if (cur == root)
				return 0;
			tnode *p = cur->parent;
			size_t at = 0;
			kid_find(p, cur->name, strlen(cur->name), &at);
			if (at + 1 < p->nkids) {
				cur = p->kids[at + 1];
				break;
			}
			cur = p;
		}
	}
}

static int collect_mount(tnode *n, void *ctx)
{
	if (!n->is_mount)
		return 0;
	char *p = path_of(n);
	int rc = p ? s0__mountset_add(ctx, p, strlen(p), NULL) : S0_ENOMEM;
	free(p);
	return rc < 0 ? rc : 0;
}

int s0__tmpfs_mounts(s0__tmpfs *t, s0__mountset *out, s0_error **err)
{
	pthread_mutex_lock(&t->mu);
	int rc = each_node(t->root, collect_mount, out);
	pthread_mutex_unlock(&t->mu);
	if (rc) {
		s0__mountset_clear(out);
		return s0__error_nomem(err);
	}
	return S0_OK;
}

uint64_t s0__tmpfs_used_bytes(s0__tmpfs *t)
{
	pthread_mutex_lock(&t->mu);
	uint64_t u = t->used;
	pthread_mutex_unlock(&t->mu);
	return u;
}

/* ---- files operations ---- */

/* Normalise, lock, run fn, unlock: the frame of every operation. */
typedef struct opctx {
	s0__tmpfs *t;
	const char *p;      /* normalised path */
	const char *raw;    /* as requested */
	size_t raw_len;
	s0__files_route *route;
} opctx;

/* Walk to an entry that must exist: the lookup every query starts with. A missing entry is
 * `missing` (S0__R_NOT_FOUND or S0__R_DIR_NOT_FOUND), "<what> not found: <path>". The caller
 * clears w whatever the result. */
static int find_existing(opctx *o, unsigned fl, const char *missing, const char *what, twalk *w,
                         s0_error **err)
{
	int rc = twalk_run(o->t, o->p, fl, w, err);
	if (rc < 0)
		return rc; /* twalk_run has cleared w */
	if (w->status != TW_OK)
		return walk_fail(w, missing, o->p, o->route, 0, err);
	if (!w->node)
		return s0__error_set(err, S0_ENOTFOUND, missing, "%s not found: %s", what, o->p);
	return S0_OK;
}

/* One entry as stat and list render it; path (transfer full, NULL: out of memory) is the
 * entry's path as shown, owned by fi from here on. */
static int fill_info(const tnode *n, const char *name, char *path, bool with_target,
                     s0__fileinfo *fi, s0_error **err)
{
	fi->path = path;
	fi->name = s0__strdup(name);
	if (!path || !fi->name)
		return s0__error_nomem(err);
	fi->type = n->kind == K_DIR ? S0_FILE_TYPE_DIR
	           : n->kind == K_LINK ? S0_FILE_TYPE_SYMLINK : S0_FILE_TYPE_FILE;
	fi->size_bytes = n->kind == K_FILE   ? (int64_t)n->size
	                 : n->kind == K_LINK ? (int64_t)strlen(n->target)
	                                     : (int64_t)(n->nkids + 2) * 20;
	fi->mode = n->perm;
	fi->mod_time_unix_ns = n->mtime_ns;
	fi->is_link = n->kind == K_LINK;
	if (fi->is_link && with_target && !(fi->link_target = s0__strdup(n->target)))
		return s0__error_nomem(err);
	return S0_OK;
}

static int read_locked(opctx *o, uint64_t off, int64_t len, void **out, size_t *n_out,
                       s0_error **err)
{
	twalk w;
	int rc = find_existing(o, TW_FOLLOW, S0__R_NOT_FOUND, "file", &w, err);
	if (rc == S0_OK && w.node->kind != K_FILE)
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_NOT_FILE, "not a regular file: %s", o->p);
	if (rc == S0_OK) {
		size_t size = w.node->size, start = off < size ? (size_t)off : size, n = size - start;
		if (len >= 0 && (uint64_t)len < n)
			n = (size_t)len;
		char *buf = malloc(n + 1);
		if (!buf) {
			rc = s0__error_nomem(err);
		} else {
			if (n)
				memcpy(buf, w.node->data + start, n);
			buf[n] = '\0';
			*out = buf;
			*n_out = n;
		}
	}
	twalk_clear(&w);
	return rc;
}

int s0__tmpfs_read(s0__tmpfs *t, const char *path, size_t path_len, uint64_t offset,
                   int64_t length, s0__files_route *route, void **data_out, size_t *len_out,
                   s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	opctx o = {t, p, path, path_len, route};
	pthread_mutex_lock(&t->mu);
	rc = read_locked(&o, offset, length, data_out, len_out, err);
	pthread_mutex_unlock(&t->mu);
	free(p);
	return rc;
}

/* Checks before a write; *w holds the final walk (with parents created). */
static int write_prepare(opctx *o, size_t len, twalk *w, s0_error **err)
{
	int rc = twalk_run(o->t, o->p, 0, w, err);
	if (rc < 0)
		return rc;
	if (w->status == TW_OUT || w->status == TW_NOTDIR)
		return walk_fail(w, S0__R_DIR_NOT_FOUND, o->p, o->route, 0, err);
	if ((rc = denied_ro(w->dir, o->p, err)) < 0)
		return rc;
	if (w->status == TW_OK && w->node && w->node->kind == K_DIR)
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_FILE, "is a directory: %s", o->p);
	tnode *m = w->dir->mnt;
	uint64_t old = w->node && w->node->kind == K_FILE ? w->node->size : 0;
	if (m->limit && m->used - old + len > m->limit)
		return s0__error_set(err, S0_EINTERNAL, S0__R_FAILED,
		                     "no space left on device (tmpfs limit %llu bytes)",
		                     (unsigned long long)m->limit);
	if (w->status == TW_NOPARENT) {
		twalk_clear(w);
		rc = twalk_run(o->t, o->p, TW_MKDIRS, w, err);
		if (rc == S0_OK && w->status != TW_OK)
			rc = walk_fail(w, S0__R_DIR_NOT_FOUND, o->p, o->route, 0, err);
	}
	return rc;
}

static int write_locked(opctx *o, const void *data, size_t len, s0_error **err)
{
	twalk w;
	int rc = write_prepare(o, len, &w, err);
	char *copy = NULL;
	if (rc == S0_OK && !(copy = malloc(len ? len : 1)))
		rc = s0__error_nomem(err);
	tnode *n = rc == S0_OK ? w.node : NULL;
	if (rc == S0_OK && !n) {
		n = node_new(w.name, strlen(w.name), K_FILE, 0644, now_ns(o->t));
		if (!n || kid_insert(w.dir, n) < 0) {
			if (n)
				node_free1(n);
			rc = s0__error_nomem(err);
		}
	}
	if (rc == S0_OK) {
		memcpy(copy, data, len);
		int64_t old = n->kind == K_FILE ? (int64_t)n->size : 0;
		free(n->data);
		free(n->target);
		n->target = NULL;
		n->data = copy;
		n->size = len;
		n->kind = K_FILE;
		n->perm = 0644;
		n->mtime_ns = w.dir->mtime_ns = now_ns(o->t);
		account(o->t, n->mnt, (int64_t)len - old);
		copy = NULL;
	}
	free(copy);
	twalk_clear(&w);
	return rc;
}

int s0__tmpfs_write(s0__tmpfs *t, const char *path, size_t path_len, const void *data,
                    size_t len, s0__files_route *route, s0_error **err)
{
	if (len > S0__FILES_MAX_WRITE)
		return s0__error_set(err, S0_ETOOLARGE, S0__R_TOO_LARGE,
		                     "file of %zu bytes exceeds the %llu-byte limit", len,
		                     (unsigned long long)S0__FILES_MAX_WRITE);
	if (len && !data)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "no data");
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	opctx o = {t, p, path, path_len, route};
	pthread_mutex_lock(&t->mu);
	rc = write_locked(&o, data, len, err);
	pthread_mutex_unlock(&t->mu);
	free(p);
	return rc;
}

typedef int (*locked_fn)(opctx *o, void *arg, s0_error **err);

static int run_op(s0__tmpfs *t, const char *path, size_t path_len, s0__files_route *route,
                  locked_fn fn, void *arg, s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	opctx o = {t, p, path, path_len, route};
	pthread_mutex_lock(&t->mu);
	rc = fn(&o, arg, err);
	pthread_mutex_unlock(&t->mu);
	free(p);
	return rc;
}

/* Whether a directory (or a link to one) is at @p p. */
static int is_dir_following(opctx *o, bool *yes, s0_error **err)
{
	twalk f;
	int rc = twalk_run(o->t, o->p, TW_FOLLOW, &f, err);
	if (rc < 0)
		return rc;
	*yes = f.status == TW_OK && f.node && f.node->kind == K_DIR;
	if (f.status == TW_OUT)
		rc = walk_fail(&f, S0__R_DIR_NOT_FOUND, o->p, o->route, 0, err);
	twalk_clear(&f);
	return rc;
}

static int mkdir_locked(opctx *o, void *arg, s0_error **err)
{
	bool recursive = *(bool *)arg;
	twalk w;
	int rc = twalk_run(o->t, o->p, 0, &w, err);
	if (rc < 0)
		return rc;
	bool yes = false;
	if (w.status == TW_OUT || w.status == TW_NOTDIR ||
	    (w.status == TW_NOPARENT && !recursive)) {
		rc = walk_fail(&w, S0__R_DIR_NOT_FOUND, o->p, o->route, 0, err);
	} else if (w.node && !recursive) {
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_EXISTS, "path exists: %s", o->p);
	} else if (w.node) {
		rc = is_dir_following(o, &yes, err);
		if (rc == S0_OK && !yes)
			rc = s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR, "exists and is not a directory: %s",
			                   o->p);
	} else if ((rc = denied_ro(w.dir, o->p, err)) == S0_OK) {
		twalk_clear(&w);
		rc = twalk_run(o->t, o->p, TW_MKDIRS, &w, err);
		tnode *d = rc == S0_OK && w.status == TW_OK && !w.node
		               ? node_new(w.name, strlen(w.name), K_DIR, 0755, now_ns(o->t))
		               : NULL;
		if (rc == S0_OK && (!d || kid_insert(w.dir, d) < 0)) {
			if (d)
				node_free1(d);
			rc = w.status == TW_OK ? s0__error_nomem(err)
			                       : walk_fail(&w, S0__R_DIR_NOT_FOUND, o->p, o->route, 0, err);
		}
		if (rc == S0_OK)
			w.dir->mtime_ns = now_ns(o->t);
	}
	twalk_clear(&w);
	return rc;
}

int s0__tmpfs_mkdir(s0__tmpfs *t, const char *path, size_t path_len, bool recursive,
                    s0__files_route *route, s0_error **err)
{
	return run_op(t, path, path_len, route, mkdir_locked, &recursive, err);
}

static int has_mount(tnode *n, void *ctx)
{
	(void)ctx;
	return n->is_mount ? 1 : 0;
}

static int delete_locked(opctx *o, void *arg, s0_error **err)
{
	(void)arg;
	twalk w;
	int rc = twalk_run(o->t, o->p, 0, &w, err);
	if (rc < 0)
		return rc;
	tnode *n = w.status == TW_OK ? w.node : NULL;
	if (w.status == TW_OUT)
		rc = walk_fail(&w, S0__R_NOT_FOUND, o->p, o->route, 0, err);
	else if (n && each_node(n, has_mount, NULL))
		rc = s0__error_set(err, S0_EFORBIDDEN, S0__R_DENIED, "mount point busy: %s", o->p);
	else if (n)
		rc = denied_ro(w.dir, o->p, err);
	if (rc == S0_OK && n) {
		account(o->t, n->mnt, -(int64_t)tree_bytes(n));
		kid_remove(w.dir, n);
		tree_free(n);
		w.dir->mtime_ns = now_ns(o->t);
	}
	twalk_clear(&w);
	return rc;
}

int s0__tmpfs_delete(s0__tmpfs *t, const char *path, size_t path_len, s0__files_route *route,
                     s0_error **err)
{
	return run_op(t, path, path_len, route, delete_locked, NULL, err);
}

/* A read-only query (stat, list): find the entry that must exist, then render it into out. */
typedef int (*render_fn)(const opctx *o, const tnode *n, void *out, s0_error **err);

typedef struct query_arg {
	unsigned fl;         /* walk flags */
	const char *missing; /* reason of a missing entry */
	const char *what;    /* "file", "directory" */
	render_fn render;
	void *out;
} query_arg;

static int query_locked(opctx *o, void *arg, s0_error **err)
{
	const query_arg *q = arg;
	twalk w;
	int rc = find_existing(o, q->fl, q->missing, q->what, &w, err);
	if (rc == S0_OK)
		rc = q->render(o, w.node, q->out, err);
	twalk_clear(&w);
	return rc;
}

static int stat_render(const opctx *o, const tnode *n, void *out, s0_error **err)
{
	s0__fileinfo *fi = calloc(1, sizeof *fi);
	int rc = fi ? fill_info(n, strcmp(o->p, "/") ? s0__path_base(o->p) : "/",
	                        s0__strndup(o->raw, o->raw_len), true, fi, err)
	            : s0__error_nomem(err);
	if (rc == S0_OK)
		*(s0__fileinfo **)out = fi;
	else
		s0__fileinfo_free(fi);
	return rc;
}

int s0__tmpfs_stat(s0__tmpfs *t, const char *path, size_t path_len, s0__files_route *route,
                   s0__fileinfo **out, s0_error **err)
{
	query_arg q = {0, S0__R_NOT_FOUND, "file", stat_render, out};
	return run_op(t, path, path_len, route, query_locked, &q, err);
}

static int list_entries(const tnode *d, const char *p, s0__filelist *l, s0_error **err)
{
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < d->nkids; i++) {
		s0__fileinfo fi = {0};
		rc = fill_info(d->kids[i], d->kids[i]->name, s0__path_join(p, d->kids[i]->name), false,
		               &fi, err);
		if (rc == S0_OK)
			rc = s0__filelist_push(l, &fi, err);
		s0__fileinfo_clear(&fi);
	}
	return rc;
}

static int list_render(const opctx *o, const tnode *d, void *out, s0_error **err)
{
	if (d->kind != K_DIR)
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR, "not a directory: %s", o->p);
	s0__filelist *l = calloc(1, sizeof *l);
	int rc = l ? list_entries(d, o->p, l, err) : s0__error_nomem(err);
	if (rc == S0_OK)
		*(s0__filelist **)out = l; /* children are kept sorted by name */
	else
		s0__filelist_free(l);
	return rc;
}

int s0__tmpfs_list(s0__tmpfs *t, const char *path, size_t path_len, s0__files_route *route,
                   s0__filelist **out, s0_error **err)
{
	query_arg q = {TW_FOLLOW, S0__R_DIR_NOT_FOUND, "directory", list_render, out};
	return run_op(t, path, path_len, route, query_locked, &q, err);
}

static int chmod_locked(opctx *o, void *arg, s0_error **err)
{
	twalk w;
	int rc = find_existing(o, TW_FOLLOW, S0__R_NOT_FOUND, "file", &w, err);
	if (rc == S0_OK)
		rc = denied_ro(w.node->is_mount ? w.node : w.dir, o->p, err);
	if (rc == S0_OK)
		w.node->perm = *(uint32_t *)arg;
	twalk_clear(&w);
	return rc;
}

int s0__tmpfs_chmod(s0__tmpfs *t, const char *path, size_t path_len, uint32_t mode,
                    s0__files_route *route, s0_error **err)
{
	if (mode & ~07777u)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "mode %o has bits outside 07777",
		                     (unsigned)mode);
	return run_op(t, path, path_len, route, chmod_locked, &mode, err);
}

static int symlink_locked(opctx *o, void *arg, s0_error **err)
{
	twalk w;
	int rc = twalk_run(o->t, o->p, 0, &w, err);
	if (rc < 0)
		return rc;
	if (w.status != TW_OK)
		rc = walk_fail(&w, S0__R_DIR_NOT_FOUND, o->p, o->route, 0, err);
	else if (w.node)
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_EXISTS, "path exists: %s", o->p);
	else
		rc = denied_ro(w.dir, o->p, err);
	tnode *n =
	    rc == S0_OK ? node_new(w.name, strlen(w.name), K_LINK, 0777, now_ns(o->t)) : NULL;
	if (rc == S0_OK && (!n || !(n->target = s0__strdup(arg)) || kid_insert(w.dir, n) < 0)) {
		if (n)
			node_free1(n);
		rc = s0__error_nomem(err);
	}
	if (rc == S0_OK)
		w.dir->mtime_ns = now_ns(o->t);
	twalk_clear(&w);
	return rc;
}

int s0__tmpfs_symlink(s0__tmpfs *t, const char *target, size_t target_len, const char *path,
                      size_t path_len, s0__files_route *route, s0_error **err)
{
	if (!target || target_len == 0 || target_len > S0__PATH_MAX - 1 ||
	    memchr(target, '\0', target_len))
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID,
		                     "symlink target must be 1..%d bytes without NUL", S0__PATH_MAX - 1);
	char *tg = s0__strndup(target, target_len);
	if (!tg)
		return s0__error_nomem(err);
	int rc = run_op(t, path, path_len, route, symlink_locked, tg, err);
	free(tg);
	return rc;
}

typedef struct canon_arg {
	bool follow;
	char **out;
} canon_arg;

static int canon_locked(opctx *o, void *arg, s0_error **err)
{
	canon_arg *a = arg;
	twalk w;
	int rc = twalk_run(o->t, o->p, a->follow ? TW_FOLLOW : 0, &w, err);
	if (rc < 0)
		return rc;
	char *c = NULL;
	if (w.status == TW_OUT) {
		rc = walk_fail(&w, S0__R_NOT_FOUND, o->p, o->route, 0, err);
	} else {
		char *base = path_of(w.node ? w.node : w.dir);
		const char *rest = w.node ? "" : w.tail ? w.tail : w.name;
		if (base)
			c = *rest ? s0__asprintf("%s%s%s", base, strcmp(base, "/") ? "/" : "", rest)
			          : s0__strdup(base);
		free(base);
		rc = c ? S0_OK : s0__error_nomem(err);
	}
	if (rc == S0_OK)
		*a->out = c;
	twalk_clear(&w);
	return rc;
}

int s0__tmpfs_canon(s0__tmpfs *t, const char *path, size_t path_len, bool follow_final,
                    s0__files_route *route, char **out, s0_error **err)
{
	canon_arg a = {follow_final, out};
	return run_op(t, path, path_len, route, canon_locked, &a, err);
}

typedef struct move_arg {
	const char *dst;
	twalk s, d;
} move_arg;

static bool is_within(const tnode *n, const tnode *top)
{
	for (; n; n = n->parent)
		if (n == top)
			return true;
	return false;
}

/* Both sides resolved; the checks that need both. */
static int move_check(opctx *o, move_arg *m, s0_error **err)
{
	tnode *s = m->s.node, *d = m->d.node;
	if (m->d.dir->mnt != s->mnt)
		return s0__error_set(err, S0_EINTERNAL, S0__R_FAILED,
		                     "cannot move %s to %s: different mounts (cross-device)", o->p, m->dst);
	int rc = denied_ro(m->s.dir, o->p, err);
	if (rc < 0)
		return rc;
	if (s->kind == K_DIR && is_within(m->d.dir, s))
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "cannot move directory %s into itself",
		                     o->p);
	if (!d || d == s)
		return S0_OK;
	if (d->is_mount)
		return s0__error_set(err, S0_EFORBIDDEN, S0__R_DENIED, "mount point busy: %s", m->dst);
	if (s->kind == K_DIR && d->kind != K_DIR)
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR,
		                     "cannot replace non-directory %s with a directory", m->dst);
	if (s->kind != K_DIR && d->kind == K_DIR)
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_FILE,
		                     "cannot replace directory %s with a non-directory", m->dst);
	if (d->kind == K_DIR && d->nkids)
		return s0__error_set(err, S0_ECONFLICT, S0__R_EXISTS, "directory not empty: %s", m->dst);
	return S0_OK;
}

static int move_resolve(opctx *o, move_arg *m, s0_error **err)
{
	int rc = twalk_run(o->t, o->p, 0, &m->s, err);
	if (rc < 0)
		return rc;
	if (m->s.status == TW_OUT && o->route)
		o->route->redirect[1] = s0__strdup(m->dst);
	if (m->s.status != TW_OK)
		return walk_fail(&m->s, S0__R_NOT_FOUND, o->p, o->route, 0, err);
	if (!m->s.node)
		return s0__error_set(err, S0_ENOTFOUND, S0__R_NOT_FOUND, "file not found: %s", o->p);
	if (each_node(m->s.node, has_mount, NULL))
		return s0__error_set(err, S0_EFORBIDDEN, S0__R_DENIED, "mount point busy: %s", o->p);
	rc = twalk_run(o->t, m->dst, 0, &m->d, err);
	if (rc < 0)
		return rc;
	if (m->d.status == TW_OUT && o->route)
		o->route->redirect[0] = path_of(m->s.node);
	if (m->d.status == TW_OUT || m->d.status == TW_NOTDIR)
		return walk_fail(&m->d, S0__R_DIR_NOT_FOUND, m->dst, o->route, 1, err);
	rc = move_check(o, m, err);
	if (rc == S0_OK && m->d.status == TW_NOPARENT) {
		twalk_clear(&m->d);
		rc = twalk_run(o->t, m->dst, TW_MKDIRS, &m->d, err);
		if (rc == S0_OK && m->d.status != TW_OK)
			rc = walk_fail(&m->d, S0__R_DIR_NOT_FOUND, m->dst, o->route, 1, err);
	}
	return rc;
}

static int move_locked(opctx *o, void *arg, s0_error **err)
{
	move_arg *m = arg;
	int rc = move_resolve(o, m, err);
	tnode *s = m->s.node, *d = m->d.node;
	if (rc < 0 || rc == S0__FILES_REDIRECT || d == s)
		return rc;
	char *name = s0__strdup(m->d.name);
	if (!name || kid_reserve(m->d.dir) < 0) {
		free(name);
		return s0__error_nomem(err);
	}
	if (d) {
		account(o->t, d->mnt, -(int64_t)tree_bytes(d));
		kid_remove(m->d.dir, d);
		tree_free(d);
	}
	kid_remove(m->s.dir, s);
	free(s->name);
	s->name = name;
	kid_insert(m->d.dir, s); /* cannot fail: name free, room reserved */
	m->s.dir->mtime_ns = m->d.dir->mtime_ns = now_ns(o->t);
	return S0_OK;
}

int s0__tmpfs_move(s0__tmpfs *t, const char *src, size_t src_len, const char *dst,
                   size_t dst_len, s0__files_route *route, s0_error **err)
{
	char *dp = NULL;
	int rc = s0__path_normalize(dst, dst_len, 0, &dp, err);
	if (rc < 0)
		return rc;
	move_arg m = {.dst = dp};
	rc = run_op(t, src, src_len, route, move_locked, &m, err);
	twalk_clear(&m.s);
	twalk_clear(&m.d);
	free(dp);
	return rc;
}

/* ---- serialisation ----
 * "S0TMPFS1" u32 version(1) u32 reserved(0), then every node in preorder:
 *   u8 kind, u8 flags (1 mount, 2 read-only), u16 name length, u32 perm,
 *   i64 mtime_ns, [mount: u64 limit], name bytes, then
 *   dir: u32 child count; file: u64 size + bytes; symlink: u32 length + bytes.
 * All integers little-endian. The root has an empty name. */

#define MAGIC "S0TMPFS1"
#define F_MOUNT 1u
#define F_RO 2u

static int put_le(s0__buf *b, uint64_t v, int bytes)
{
	unsigned char x[8];
	for (int i = 0; i < bytes; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	return s0__buf_put(b, x, (size_t)bytes);
}

static int put_node(tnode *n, void *ctx)
{
	s0__buf *b = ctx;
	size_t nl = strlen(n->name);
	unsigned flags = (n->is_mount ? F_MOUNT : 0) | (n->ro ? F_RO : 0);
	if (put_le(b, n->kind, 1) || put_le(b, flags, 1) || put_le(b, nl, 2) ||
	    put_le(b, n->perm, 4) || put_le(b, (uint64_t)n->mtime_ns, 8) ||
	    (n->is_mount && put_le(b, n->limit, 8)) || s0__buf_put(b, n->name, nl))
		return -1;
	if (n->kind == K_DIR)
		return put_le(b, n->nkids, 4);
	if (n->kind == K_FILE)
		return put_le(b, n->size, 8) || s0__buf_put(b, n->data ? n->data : "", n->size);
	size_t tl = strlen(n->target);
	return put_le(b, tl, 4) || s0__buf_put(b, n->target, tl);
}

int s0__tmpfs_serialize(s0__tmpfs *t, void **buf_out, size_t *len_out, s0_error **err)
{
	s0__buf b = S0__BUF_INIT;
	pthread_mutex_lock(&t->mu);
	int rc = s0__buf_put(&b, MAGIC, 8) || put_le(&b, 1, 4) || put_le(&b, 0, 4) ||
	         each_node(t->root, put_node, &b);
	pthread_mutex_unlock(&t->mu);
	if (rc) {
		s0__buf_free(&b);
		return s0__error_nomem(err);
	}
	*buf_out = s0__buf_detach(&b, len_out);
	return S0_OK;
}

typedef struct reader {
	const unsigned char *p;
	size_t left;
	bool bad;
} reader;

static uint64_t get_le(reader *r, int bytes)
{
	if (r->left < (size_t)bytes) {
		r->bad = true;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += bytes;
	r->left -= (size_t)bytes;
	return v;
}

static const char *get_bytes(reader *r, uint64_t n)
{
	if (r->left < n) {
		r->bad = true;
		return NULL;
	}
	const char *s = (const char *)r->p;
	r->p += n;
	r->left -= (size_t)n;
	return s;
}

static bool good_name(const char *s, size_t n, bool root)
{
	if (root)
		return n == 0;
	if (n == 0 || n > S0__NAME_MAX || memchr(s, '/', n) || memchr(s, '\0', n))
		return false;
	return !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* Read one node record; *nkids gets a directory's child count. */
static tnode *get_node(reader *r, bool root, uint32_t *nkids)
{
	unsigned kind = (unsigned)get_le(r, 1), flags = (unsigned)get_le(r, 1);
	size_t nl = (size_t)get_le(r, 2);
	uint32_t perm = (uint32_t)get_le(r, 4);
	int64_t mtime = (int64_t)get_le(r, 8);
	uint64_t limit = flags & F_MOUNT ? get_le(r, 8) : 0;
	const char *name = get_bytes(r, nl);
	bool ok = !r->bad && kind >= K_DIR && kind <= K_LINK && !(flags & ~(F_MOUNT | F_RO)) &&
	          (!(flags & F_MOUNT) || (kind == K_DIR && !root)) && !(perm & ~07777u) &&
	          good_name(name, nl, root);
	tnode *n = ok ? node_new(name, nl, (uint8_t)kind, perm, mtime) : NULL; /* recorded */
	if (!n)
		return NULL;
	n->is_mount = flags & F_MOUNT;
	n->ro = flags & F_RO;
	n->limit = limit;
	*nkids = 0;
	if (kind == K_DIR) {
		*nkids = (uint32_t)get_le(r, 4);
	} else {
		uint64_t len = get_le(r, kind == K_FILE ? 8 : 4);
		const char *d = get_bytes(r, len);
		bool good = d && (kind == K_FILE || (len && len < S0__PATH_MAX && !memchr(d, 0, len)));
		char *copy = good ? malloc(len ? len : 1) : NULL;
		if (!copy) {
			node_free1(n);
			return NULL;
		}
		memcpy(copy, d, len);
		if (kind == K_FILE) {
			n->data = copy;
			n->size = len;
		} else {
			n->target = s0__strndup(copy, len);
			free(copy);
			if (!n->target) {
				node_free1(n);
				return NULL;
			}
		}
	}
	return n;
}

typedef struct frame {
	tnode *dir;
	uint32_t left;
} frame;

static int count_bytes(tnode *n, void *ctx)
{
	if (n->kind == K_FILE)
		account(ctx, n->mnt, (int64_t)n->size);
	return 0;
}

/* Rebuild the tree below root; false on any malformed record. */
static bool load_tree(reader *r, tnode *root, uint32_t nk)
{
	size_t n = 0, cap = 16;
	frame *st = malloc(cap * sizeof *st);
	if (!st)
		return false;
	st[n++] = (frame){root, nk};
	bool ok = true;
	while (ok && n) {
		frame *f = &st[n - 1];
		if (!f->left) {
			n--;
			continue;
		}
		f->left--;
		uint32_t ck = 0;
		tnode *c = get_node(r, false, &ck);
		ok = c && (f->dir->mnt || c->kind == K_DIR);
		if (ok && c->is_mount)
			c->mnt = c;
		if (ok && kid_insert(f->dir, c) < 0)
			ok = false;
		if (!ok) {
			if (c)
				node_free1(c);
			break;
		}
		if (c->kind == K_DIR && n == cap) {
			frame *ns = realloc(st, (cap *= 2) * sizeof *ns);
			ok = ns != NULL;
			if (ns)
				st = ns;
		}
		if (ok && c->kind == K_DIR)
			st[n++] = (frame){c, ck};
	}
	free(st);
	return ok && !r->bad && r->left == 0;
}

int s0__tmpfs_deserialize(const void *buf, size_t len, s0__tmpfs **out, s0_error **err)
{
	reader r = {buf, len, false};
	const char *magic = get_bytes(&r, 8);
	uint64_t version = get_le(&r, 4);
	get_le(&r, 4);
	if (!magic || memcmp(magic, MAGIC, 8) || version != 1)
		return s0__error_set(err, S0_ECORRUPT, "corrupt", "not a tmpfs image (bad header)");
	uint32_t nk = 0;
	tnode *root = get_node(&r, true, &nk);
	if (!root || root->kind != K_DIR) {
		if (root)
			node_free1(root);
		return s0__error_set(err, S0_ECORRUPT, "corrupt", "tmpfs image: bad root record");
	}
	if (!load_tree(&r, root, nk)) {
		tree_free(root);
		return s0__error_set(err, S0_ECORRUPT, "corrupt", "tmpfs image: malformed tree");
	}
	s0__tmpfs *t = calloc(1, sizeof *t);
	if (!t) {
		tree_free(root);
		return s0__error_nomem(err);
	}
	pthread_mutex_init(&t->mu, NULL);
	t->root = root;
	each_node(root, count_bytes, t);
	*out = t;
	return S0_OK;
}
