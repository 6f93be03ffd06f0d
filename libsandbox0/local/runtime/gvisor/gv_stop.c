/*
 * The fast half of a generation's stop and the rest finished in the
 * background (gv_int.h; docs/local-backend.md "Runtime gvisor", "Stop and
 * proof").
 *
 * A filesystem-only pause waits for the stop before it seals the branch, so
 * the stop does only what the seal needs: every process of the generation
 * gone (SIGKILL to the cgroup's processes, waited for through pidfds instead
 * of a `runsc delete --force`, a Go program started per call) and the
 * carrier detached. runsc's records, the cgroups, the tmpfs mounts, the
 * network and the bundle go in a thread of their own while the engine
 * seals, publishes and commits; the terminal proof of the runtime id waits
 * for that thread first, so the proof — and the return of capacity after
 * it — still sees every resource absent. A process killed meanwhile leaves
 * the bundle, which the next open's reclaim finds.
 *
 * $S0_GVISOR_TRACE set (to anything): each phase's wall time on stderr.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

/** The most processes of one generation killed per round (runsc's sandbox,
 * gofer and systrap stubs; more are taken in the next round). */
#define KILL_BATCH 256

struct s0__gv_fin {
	struct s0__gv_fin *next;
	char *id;
	pthread_t th;
	void (*fn)(void *arg);
	void *arg;
};

bool s0__gv_tracing(void)
{
	static int on = -1;
	int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
	if (v < 0) {
		const char *e = getenv("S0_GVISOR_TRACE");
		v = e && *e;
		__atomic_store_n(&on, v, __ATOMIC_RELAXED);
	}
	return v;
}

int64_t s0__gv_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void s0__gv_trace(const char *id, const char *fmt, ...)
{
	if (!s0__gv_tracing())
		return;
	char line[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "s0 gvisor trace: %s %s\n", id ? id : "-", line);
}

/* The processes of the generation's cgroup (the pids controller's
 * cgroup.procs lists live thread groups only); -1 when the cgroup is gone. */
static int cgroup_procs(const char *id, pid_t *pids, int max)
{
	char p[512];
	snprintf(p, sizeof p, "/sys/fs/cgroup/pids/%s/%s/cgroup.procs", S0__GV_CGROUP_PARENT, id);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	int n = 0, pid;
	while (n < max && fscanf(f, "%d", &pid) == 1)
		pids[n++] = pid;
	fclose(f);
	return n;
}

static int ms_left(int64_t deadline_us)
{
	int64_t left = (deadline_us - s0__gv_now_us()) / 1000;
	return left < 0 ? 0 : left > 1000000 ? 1000000 : (int)left;
}

int s0__gv_kill_wait(const char *id, int timeout_ms)
{
	int64_t deadline = s0__gv_now_us() + (int64_t)timeout_ms * 1000;
	pid_t pids[KILL_BATCH];
	int fds[KILL_BATCH];
	for (;;) {
		int n = cgroup_procs(id, pids, KILL_BATCH);
		if (n <= 0)
			return 0; /* none left (or no cgroup: runsc never started) */
		int nf = 0;
		for (int i = 0; i < n; i++) {
			/* the pidfd first: a pid reused after the kill is not waited for */
			int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);
			if (fd < 0)
				continue; /* already gone */
			if (syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0 || errno != ESRCH)
				fds[nf++] = fd;
			else
				close(fd);
		}
		if (nf == 0) /* each exited meanwhile: look again shortly */
			nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
		/* a pidfd is readable once its whole thread group has exited:
		 * its files and mount namespace are released (a zombie is left
		 * for the reaper) */
		for (int i = 0; i < nf;) {
			struct pollfd pf = {.fd = fds[i], .events = POLLIN};
			int r = poll(&pf, 1, ms_left(deadline));
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0) {
				for (; i < nf; i++)
					close(fds[i]);
				s0__gv_reap_orphans();
				return -ETIMEDOUT;
			}
			close(fds[i++]);
		}
		s0__gv_reap_orphans();
		if (ms_left(deadline) == 0)
			return -ETIMEDOUT;
	}
}

static void *fin_main(void *arg)
{
	struct s0__gv_fin *f = arg;
	f->fn(f->arg);
	return NULL;
}

void s0__gv_fin_start(s0__rt_host *h, const char *id, void (*fn)(void *arg), void *arg)
{
	struct s0__gv_fin *f = calloc(1, sizeof *f);
	if (f && !(f->id = s0__strdup(id))) {
		free(f);
		f = NULL;
	}
	if (!f) {
		fn(arg); /* out of memory: finished here */
		return;
	}
	f->fn = fn;
	f->arg = arg;
	pthread_mutex_lock(&h->mu);
	int rc = pthread_create(&f->th, NULL, fin_main, f);
	if (rc == 0) {
		f->next = h->fins;
		h->fins = f;
	}
	pthread_mutex_unlock(&h->mu);
	if (rc != 0) {
		free(f->id);
		free(f);
		fn(arg); /* no thread: finished here */
	}
}

/* Take the first finisher of @p id (any when NULL) off the list. */
static struct s0__gv_fin *fin_take(s0__rt_host *h, const char *id)
{
	pthread_mutex_lock(&h->mu);
	struct s0__gv_fin **p = &h->fins;
	while (*p && id && strcmp((*p)->id, id))
		p = &(*p)->next;
	struct s0__gv_fin *f = *p;
	if (f)
		*p = f->next;
	pthread_mutex_unlock(&h->mu);
	return f;
}

static void fin_join(struct s0__gv_fin *f)
{
	pthread_join(f->th, NULL);
	free(f->id);
	free(f);
}

void s0__gv_fin_wait(s0__rt_host *h, const char *id)
{
	struct s0__gv_fin *f;
	while ((f = fin_take(h, id)))
		fin_join(f);
}

void s0__gv_fin_wait_all(s0__rt_host *h)
{
	s0__gv_fin_wait(h, NULL);
}

static __thread int rm_failed; /* nftw's callback has no argument */

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) != 0 && errno != ENOENT)
		rm_failed = errno;
	return 0;
}

int s0__gv_rm_tree(const char *dir)
{
	rm_failed = 0;
	/* depth first, no symlink followed, never into another filesystem */
	if (nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0 && errno != ENOENT)
		return -errno;
	return rm_failed ? -rm_failed : 0;
}
