/*
 * The guest's own file changes for file watches (gv_int.h s0__gv_watch_*):
 * host inotify on the directories the files view serves — the root tree
 * (through the files view's descriptor, also a carrier's ext4 mount in its
 * namespace) and the /tmp and ephemeral tmpfs dirs. runsc's gofer writes
 * them (--file-access=shared), so inotify sees what programs inside do.
 *
 * The marks exist only while the sandbox has a file subscriber
 * (files_watched): armed by the thread when it sees one (checked every
 * ARM_CHECK_MS) or at once by a files API change (s0__gv_watch_own()),
 * removed when the last subscriber leaves and at stop. Events map back to
 * sandbox paths: IN_CREATE "create" (a directory gets its marks, recursive,
 * and what it held before them is told after it: a scan, whose entries' own
 * queued IN_CREATE are not told again), IN_MODIFY "write" (repeats of one
 * file within one read of the queue coalesced), IN_ATTRIB "chmod"
 * except the one runsc's gofer makes right after each create, IN_MOVED_FROM
 * "rename", IN_MOVED_TO "create", IN_DELETE "remove", IN_Q_OVERFLOW
 * "invalidate". The files API tells its own changes itself (gv_files.c
 * tell()): while one runs, events on its paths (their parents and children
 * included) are dropped here until its fence — a file created in a private
 * directory watched by the same descriptor, so it is queued after all the
 * change's events — is read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

/* How often an unarmed watcher asks whether anyone subscribed, ms. */
#define ARM_CHECK_MS 100
/* How often an armed one asks whether anyone still listens, ms. */
#define DISARM_CHECK_MS 500
/* The most marks one generation holds (the host user's inotify budget is shared):
 * a directory past it is not watched, and the subscribers get one `invalidate`. */
#define MAX_MARKS 16384

#define MASK (IN_CREATE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | \
              IN_ONLYDIR | IN_EXCL_UNLINK)
#define TEMP_PREFIX ".s0-write." /* the files API's temporary files (gv_files.c) */

/* A list of "<event> <path>" keys, in order. */
typedef struct wkey {
	char *text;
	struct wkey *next;
} wkey;

typedef struct own {
	uint64_t seq;
	char *a, *b; /* paths of a files API change in progress (b nullable) */
	struct own *next;
} own;

struct s0__gv_watch {
	s0__rt_gen *g;
	pthread_t thread;
	bool started;
	int kick_fd;     /* eventfd: stop, or armed by a files API change */
	bool stopping;   /* under mu */
	int ino;         /* the inotify instance, only while armed (-1), under mu */
	int fence_wd;
	char *fence_dir; /* host directory of the fences (private) */
	pthread_mutex_t mu;
	bool armed;
	char buf[16384] __attribute__((aligned(8))); /* events read, under mu */
	char *moved_from; /* a directory moved: its old path, its cookie */
	uint32_t moved_cookie;
	char **wd_path; /* sandbox path of each mark, by wd */
	int *wd_base;   /* index of the served directory (-1: the root tree) */
	size_t n_wd;
	size_t marks;     /* marks held (MAX_MARKS) */
	bool over;        /* a directory went unwatched: told once as `invalidate` */
	own *owns;
	uint64_t next_seq;
	uint32_t skip_cookie;  /* the files API's own temporary file moved */
	char *last_event;      /* the last event told ("write /p"), for coalescing */
	char *last_create;     /* the path of the last create (its gofer ATTRIB follows) */
	wkey *scanned;         /* creates told by a scan of a new directory: their own queued
	                        * IN_CREATE is not told again (cleared when the queue is empty) */
};

static void keys_free(wkey *k)
{
	while (k) {
		wkey *n = k->next;
		free(k->text);
		free(k);
		k = n;
	}
}

/* Append "<event> <path>" to the list ending at *tail (out of memory: dropped). */
static void keys_add(wkey ***tail, const char *event, const char *path)
{
	wkey *k = calloc(1, sizeof *k);
	if (k && (k->text = s0__asprintf("%s %s", event, path))) {
		**tail = k;
		*tail = &k->next;
	} else {
		free(k);
	}
}

/* Remove "<event> <path>" from the list; whether it was there. */
static bool keys_take(wkey **list, const char *event, const char *path)
{
	size_t n = strlen(event);
	for (wkey **k = list; *k; k = &(*k)->next)
		if (!strncmp((*k)->text, event, n) && (*k)->text[n] == ' ' &&
		    !strcmp((*k)->text + n + 1, path)) {
			wkey *x = *k;
			*k = x->next;
			free(x->text);
			free(x);
			return true;
		}
	return false;
}

/* A files API change's paths are no longer fenced (its fence seen, or none). Under mu. */
static void own_release(s0__gv_watch *w, uint64_t seq)
{
	for (own **o = &w->owns; *o; o = &(*o)->next)
		if ((*o)->seq == seq) {
			own *x = *o;
			*o = x->next;
			free(x->a);
			free(x->b);
			free(x);
			return;
		}
}

static bool related(const char *p, const char *q)
{
	size_t np = strlen(p), nq = strlen(q), n = np < nq ? np : nq;
	if (strncmp(p, q, n))
		return false;
	return np == nq || (np > nq ? p[n] == '/' : q[n] == '/') || n == 1;
}

static bool owned(const s0__gv_watch *w, const char *path)
{
	for (const own *o = w->owns; o; o = o->next)
		if (related(o->a, path) || (o->b && related(o->b, path)))
			return true;
	return false;
}

static char *join(const char *dir, const char *name)
{
	return s0__asprintf("%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

static int base_fd(const s0__gv_watch *w, int base)
{
	return base < 0 ? w->g->files.root_fd : w->g->files.fds[base];
}

/* Mark directory @p rel (relative to the served directory @p base) as sandbox path @p path,
 * and every directory below it on the same filesystem. With @p found (a new directory:
 * what was made in it before its mark cannot come as events), every entry below it is
 * appended there as "create <path>", and "write <path>" after a non-empty file's. Under mu. */
static void mark_tree(s0__gv_watch *w, int base, int dirfd_in, const char *rel, const char *path,
                      dev_t dev, int depth, wkey ***found)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
	                       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	int fd = (int)syscall(SYS_openat2, dirfd_in, rel, &how, sizeof how);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) < 0 || (depth > 0 && st.st_dev != dev) || depth > 64) {
		close(fd);
		return;
	}
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	int wd = w->marks < MAX_MARKS ? inotify_add_watch(w->ino, proc, MASK) : -1;
	if (wd < 0 && !w->over) { /* over the budget: the subscribers re-read the tree */
		w->over = true;
		w->g->files_changed(w->g->files_changed_arg, w->g->sandbox_id, "invalidate", path);
	}
	if (wd >= 0) {
		if ((size_t)wd >= w->n_wd) {
			size_t n = (size_t)wd * 2 + 16;
			char **p = realloc(w->wd_path, n * sizeof *p);
			int *b = p ? realloc(w->wd_base, n * sizeof *b) : NULL;
			if (p)
				w->wd_path = p;
			if (b)
				w->wd_base = b;
			if (!p || !b) {
				inotify_rm_watch(w->ino, wd);
				close(fd);
				return;
			}
			memset(p + w->n_wd, 0, (n - w->n_wd) * sizeof *p);
			w->n_wd = n;
		}
		if (!w->wd_path[wd])
			w->marks++;
		free(w->wd_path[wd]);
		w->wd_path[wd] = s0__strdup(path);
		w->wd_base[wd] = base;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (e->d_type != DT_DIR && !found))
			continue;
		char *sub = join(path, e->d_name);
		struct stat fst;
		if (sub && found) {
			keys_add(found, "create", sub);
			if (e->d_type == DT_REG &&
			    fstatat(dirfd(d), e->d_name, &fst, AT_SYMLINK_NOFOLLOW) == 0 && fst.st_size > 0)
				keys_add(found, "write", sub);
		}
		if (sub && e->d_type == DT_DIR)
			mark_tree(w, base, dirfd(d), e->d_name, sub, st.st_dev, depth + 1, found);
		free(sub);
	}
	closedir(d);
}

/* The instance and its marks (an instance per generation only while armed: the
 * host user's instances are few). Without one, nothing of the guest's is told. */
static void arm_locked(s0__gv_watch *w)
{
	if (w->armed || w->stopping)
		return;
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino < 0)
		return;
	if ((mkdir(w->fence_dir, 0700) < 0 && errno != EEXIST) ||
	    (w->fence_wd = inotify_add_watch(w->ino, w->fence_dir, IN_CREATE | IN_ONLYDIR)) < 0) {
		close(w->ino);
		w->ino = -1;
		return;
	}
	w->armed = true;
	const s0__gv_files *v = &w->g->files;
	mark_tree(w, -1, v->root_fd, ".", "/", 0, 0, NULL);
	for (size_t i = 0; i < v->n; i++)
		mark_tree(w, (int)i, v->fds[i], ".", v->mounts[i], 0, 0, NULL);
}

static void disarm_locked(s0__gv_watch *w)
{
	if (!w->armed)
		return;
	w->armed = false;
	close(w->ino); /* every mark with it: nothing holds the tree */
	w->ino = w->fence_wd = -1;
	for (size_t i = 0; i < w->n_wd; i++) {
		free(w->wd_path[i]);
		w->wd_path[i] = NULL;
	}
	free(w->moved_from);
	w->moved_from = NULL;
	w->marks = 0;
	w->over = false;
	free(w->last_event);
	free(w->last_create);
	w->last_event = w->last_create = NULL;
	keys_free(w->scanned);
	w->scanned = NULL;
}

static bool wanted(const s0__gv_watch *w)
{
	const s0__rt_gen *g = w->g;
	return g->files_watched ? g->files_watched(g->files_changed_arg, g->sandbox_id) : true;
}

static void emit(s0__gv_watch *w, const char *event, const char *path)
{
	char *key = s0__asprintf("%s %s", event, path);
	bool repeat = key && w->last_event && !strcmp(key, w->last_event) && !strcmp(event, "write");
	free(w->last_event);
	w->last_event = key;
	if (!repeat)
		w->g->files_changed(w->g->files_changed_arg, w->g->sandbox_id, event, path);
}

/* A moved directory: its marks' paths follow. */
static void moved_dir(s0__gv_watch *w, const char *from, const char *to)
{
	size_t n = strlen(from);
	for (size_t i = 0; i < w->n_wd; i++) {
		char *p = w->wd_path[i];
		if (p && !strncmp(p, from, n) && (p[n] == '/' || !p[n])) {
			char *q = s0__asprintf("%s%s", to, p + n);
			if (q) {
				free(p);
				w->wd_path[i] = q;
			}
		}
	}
}

/* One event, under mu. */
static void handle(s0__gv_watch *w, const struct inotify_event *ev)
{
	char **moved_from = &w->moved_from;
	uint32_t *moved_cookie = &w->moved_cookie;
	if (ev->mask & IN_Q_OVERFLOW) { /* fences may be lost with the rest: none waits */
		emit(w, "invalidate", "/");
		while (w->owns)
			own_release(w, w->owns->seq);
		return;
	}
	if (ev->wd == w->fence_wd) {
		uint64_t seq;
		if ((ev->mask & IN_CREATE) && sscanf(ev->name, "f%" SCNu64, &seq) == 1)
			own_release(w, seq);
		return;
	}
	if (ev->wd < 0 || (size_t)ev->wd >= w->n_wd || !w->wd_path[ev->wd])
		return;
	if (ev->mask & IN_IGNORED) { /* its directory is gone: the mark with it */
		free(w->wd_path[ev->wd]);
		w->wd_path[ev->wd] = NULL;
		w->marks--;
		return;
	}
	if (!ev->len)
		return;
	const char *dir = w->wd_path[ev->wd];
	char *path = join(dir, ev->name);
	if (!path)
		return;
	bool temp = !strncmp(ev->name, TEMP_PREFIX, strlen(TEMP_PREFIX));
	bool skip = temp || owned(w, path);
	bool told = (ev->mask & (IN_CREATE | IN_MOVED_TO)) && keys_take(&w->scanned, "create", path);
	if (told)
		skip = true; /* a scan told it (and what it holds) already */
	else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
		keys_take(&w->scanned, "create", path); /* a create after this one is new */
	wkey *found = NULL, **tail = &found;
	if ((ev->mask & IN_MOVED_FROM) && temp)
		w->skip_cookie = ev->cookie;
	if ((ev->mask & IN_MOVED_TO) && ev->cookie == w->skip_cookie && ev->cookie)
		skip = true;
	if (ev->mask & IN_ISDIR) {
		if (ev->mask & IN_MOVED_FROM) {
			free(*moved_from);
			*moved_from = s0__strdup(path);
			*moved_cookie = ev->cookie;
		} else if ((ev->mask & IN_MOVED_TO) && *moved_from && *moved_cookie == ev->cookie) {
			moved_dir(w, *moved_from, path);
		} else if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
			int base = w->wd_base[ev->wd];
			const char *top = base < 0 ? "/" : w->g->files.mounts[base];
			const char *rel = path + strlen(top) + (strcmp(top, "/") ? 1 : 0);
			struct stat st;
			if (*rel && fstat(base_fd(w, base), &st) == 0)
				mark_tree(w, base, base_fd(w, base), rel, path, st.st_dev, 1,
				          told ? NULL : &tail);
		}
	}
	if (ev->mask & IN_CREATE) { /* told or not: the gofer's ATTRIB comes right after */
		free(w->last_create);
		w->last_create = s0__strdup(path);
	}
	if (!skip) {
		if (ev->mask & IN_CREATE) {
			emit(w, "create", path);
		} else if (ev->mask & IN_ATTRIB) {
			bool gofer = w->last_create && !strcmp(w->last_create, path);
			if (!gofer)
				emit(w, "chmod", path);
		} else if (ev->mask & IN_MODIFY) {
			emit(w, "write", path);
		} else if (ev->mask & IN_MOVED_FROM) {
			emit(w, "rename", path);
		} else if (ev->mask & IN_MOVED_TO) {
			emit(w, "create", path);
		} else if (ev->mask & IN_DELETE) {
			emit(w, "remove", path);
		}
	}
	if (!(ev->mask & IN_CREATE)) { /* the gofer's ATTRIB is the event right after */
		free(w->last_create);
		w->last_create = NULL;
	}
	/* what the new directory held before its mark, after its own create */
	tail = &w->scanned;
	while (*tail)
		tail = &(*tail)->next;
	while (found) {
		wkey *k = found;
		found = k->next;
		k->next = NULL;
		const char *p = strchr(k->text, ' ') + 1, *name = strrchr(p, '/') + 1;
		if (!owned(w, p) && strncmp(name, TEMP_PREFIX, strlen(TEMP_PREFIX)))
			emit(w, !strncmp(k->text, "write ", 6) ? "write" : "create", p);
		if (!strncmp(k->text, "create ", 7)) { /* its queued IN_CREATE, if any, is not told */
			*tail = k;
			tail = &k->next;
		} else {
			free(k->text);
			free(k);
		}
	}
	free(path);
}

/* Tell every event queued now, in order (under mu). */
static void drain_locked(s0__gv_watch *w)
{
	ssize_t len;
	while (w->armed && (len = read(w->ino, w->buf, sizeof w->buf)) > 0)
		for (ssize_t off = 0; off < len;) {
			const struct inotify_event *ev = (const void *)(w->buf + off);
			handle(w, ev);
			off += (ssize_t)(sizeof *ev + ev->len);
		}
	/* the queue is empty: every event of what a scan saw has been read, and a
	 * write from now on is a new one (coalescing is within one drain only) */
	keys_free(w->scanned);
	w->scanned = NULL;
	free(w->last_event);
	w->last_event = NULL;
}

static void *watch_main(void *arg)
{
	s0__gv_watch *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		bool armed = w->armed, stop = w->stopping;
		struct pollfd p[2] = {{.fd = w->kick_fd, .events = POLLIN},
		                      {.fd = w->ino, .events = POLLIN}};
		pthread_mutex_unlock(&w->mu);
		if (stop)
			break;
		int n = poll(p, 2, armed ? DISARM_CHECK_MS : ARM_CHECK_MS);
		if (n < 0 && errno != EINTR)
			break;
		uint64_t k;
		if (p[0].revents && read(w->kick_fd, &k, sizeof k) < 0)
			k = 0;
		bool want = wanted(w); /* outside mu: the engine's lock */
		pthread_mutex_lock(&w->mu);
		drain_locked(w);
		if (want)
			arm_locked(w);
		else if (!w->owns)
			disarm_locked(w);
		pthread_mutex_unlock(&w->mu);
	}
	return NULL;
}

int s0__gv_watch_start(s0__rt_gen *g, s0__gv_watch **out, s0_error **err)
{
	*out = NULL;
	s0__gv_watch *w = calloc(1, sizeof *w);
	if (!w)
		return s0__error_nomem(err);
	w->g = g;
	w->ino = w->fence_wd = -1;
	w->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->fence_dir = s0__asprintf("%s/watch-fence", g->bundle);
	pthread_mutex_init(&w->mu, NULL);
	int rc = S0_OK;
	if (w->kick_fd < 0 || !w->fence_dir)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot watch files: %s",
		                   strerror(errno));
	else if (pthread_create(&w->thread, NULL, watch_main, w) != 0)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot start a thread");
	else
		w->started = true;
	if (rc < 0) {
		s0__gv_watch_stop(w);
		return rc;
	}
	*out = w;
	return S0_OK;
}

static void kick(s0__gv_watch *w)
{
	uint64_t one = 1;
	ssize_t n = write(w->kick_fd, &one, sizeof one);
	(void)n; /* a full counter is already a wake */
}

void s0__gv_watch_stop(s0__gv_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	disarm_locked(w);
	pthread_mutex_unlock(&w->mu);
	if (w->started) {
		kick(w);
		pthread_join(w->thread, NULL);
	}
	if (w->kick_fd >= 0)
		close(w->kick_fd);
	for (size_t i = 0; i < w->n_wd; i++)
		free(w->wd_path[i]);
	free(w->wd_path);
	free(w->wd_base);
	while (w->owns)
		own_release(w, w->owns->seq);
	if (w->fence_dir)
		rmdir(w->fence_dir);
	free(w->fence_dir);
	free(w->last_event);
	free(w->last_create);
	free(w->moved_from);
	keys_free(w->scanned);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

uint64_t s0__gv_watch_own(s0__gv_watch *w, const char *a, const char *b)
{
	if (!w)
		return 0;
	bool want = wanted(w); /* outside mu: the engine's lock */
	pthread_mutex_lock(&w->mu);
	bool was = w->armed;
	if (want)
		arm_locked(w); /* from now on the marks see every change */
	if (w->armed && !was)
		kick(w); /* the thread polls the new instance */
	drain_locked(w); /* the guest's changes so far are told before this one */
	uint64_t seq = 0;
	own *o = w->armed ? calloc(1, sizeof *o) : NULL;
	if (o) {
		o->a = s0__strdup(a);
		o->b = b ? s0__strdup(b) : NULL;
		if (o->a && (o->b || !b)) {
			o->seq = seq = ++w->next_seq;
			o->next = w->owns;
			w->owns = o;
		} else {
			free(o->a);
			free(o->b);
			free(o);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return seq;
}

void s0__gv_watch_fence(s0__gv_watch *w, uint64_t seq)
{
	if (!w || !seq)
		return;
	char *f = s0__asprintf("%s/f%" PRIu64, w->fence_dir, seq);
	int fd = f ? open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
	if (fd >= 0) {
		close(fd);
		unlink(f);
	} else { /* no fence: the change's own paths are released here */
		pthread_mutex_lock(&w->mu);
		own_release(w, seq);
		pthread_mutex_unlock(&w->mu);
	}
	free(f);
}
