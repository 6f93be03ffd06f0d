/*
 * The carrier (carrier.h): attach, sync, detach and the namespace thread
 * that owns the FUSE and ext4 mounts.
 *
 * The namespace thread unshares CLONE_NEWNS (which unshares its fs_struct
 * too), makes every mount private, writes the record, then starts the FUSE
 * server (its threads inherit the namespace), binds a loop device to
 * disk.img and mounts ext4. It stays alive, waiting for the detach
 * command, because unmounting needs a thread inside the namespace; when it
 * returns the namespace ends with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "local/objects/crash.h"
#include "local/runtime/carrier/carrier_int.h"

#define SERVER_THREADS 2

enum { PH_STARTING, PH_READY, PH_FAILED, PH_DONE };
enum { CMD_NONE, CMD_DETACH };
enum { DET_OK, DET_BUSY, DET_ERR };

struct s0__carrier {
	pthread_mutex_t mu; /* serialises sync/detach/stats */
	/* the namespace thread's channel */
	pthread_mutex_t cmu;
	pthread_cond_t ccv;
	int phase, cmd, cmd_result;
	bool cmd_done;
	char msg[512];

	s0__blockdev dev;
	char *state_dir, *id, *dir, *fuse_mnt, *root, *img, *host_root, *mount_opts;
	char tag[S0__CARRIER_TAG_MAX];
	pthread_t th;
	bool th_running;
	pid_t tid;
	int nsfd, rootfd, loopfd, loop_index;
	bool dio, io_flusher, attached;
	s0__fusedisk *fd;
	s0__fusedisk_counters last;
	s0__carrier_record rec;
	int64_t attach_us, detach_us;
	int64_t ph_us[5]; /* the last detach's phases (s0__carrier_stats) */
};

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static bool id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n < 1 || n > 64 || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = id[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '.' || ch == '_' || ch == '-'))
			return false;
	}
	return true;
}

/* ---- the namespace thread ---- */

static void report(s0__carrier *c, int phase)
{
	pthread_mutex_lock(&c->cmu);
	c->phase = phase;
	pthread_cond_broadcast(&c->ccv);
	pthread_mutex_unlock(&c->cmu);
}

/* Everything in the namespace, undone in reverse from whatever was made. */
static void teardown(s0__carrier *c)
{
	if (c->rootfd >= 0) {
		close(c->rootfd);
		c->rootfd = -1;
	}
	umount2(c->root, MNT_DETACH);
	if (c->loopfd >= 0) {
		close(c->loopfd); /* the last close clears the device (autoclear) */
		c->loopfd = -1;
	}
	if (c->fd) {
		s0__fusedisk_counters_get(c->fd, &c->last);
		s0__fusedisk_stop(c->fd);
		c->fd = NULL;
	}
}

static int setup(s0__carrier *c)
{
	size_t ml = sizeof c->msg;
	if (unshare(CLONE_NEWNS) != 0) {
		snprintf(c->msg, ml, "unshare(CLONE_NEWNS): %s", strerror(errno));
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		snprintf(c->msg, ml, "make mounts private: %s", strerror(errno));
		return -1;
	}
	c->nsfd = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (c->nsfd < 0 || fstat(c->nsfd, &st) != 0) {
		snprintf(c->msg, ml, "open mount namespace: %s", strerror(errno));
		return -1;
	}
	c->tid = (pid_t)syscall(SYS_gettid);
	c->rec.tid = c->tid;
	c->rec.ns_ino = (uint64_t)st.st_ino;
	s0_error *e = NULL;
	if (s0__carrier_record_write(c->state_dir, &c->rec, &e) != S0_OK) {
		snprintf(c->msg, ml, "%s", s0_error_message(e));
		s0_error_free(e);
		return -1;
	}
	int rc = s0__fusedisk_start(&c->dev, c->fuse_mnt, c->tag, SERVER_THREADS, &c->fd, c->msg, ml);
	if (rc != 0)
		return -1;
	c->io_flusher = s0__fusedisk_io_flusher(c->fd);
	s0__crash_point("carrier.fuse_mounted");
	int imgfd = open(c->img, O_RDWR | O_CLOEXEC);
	if (imgfd < 0) {
		snprintf(c->msg, ml, "open %s: %s", c->img, strerror(errno));
		return -1;
	}
	rc = s0__loop_attach(imgfd, c->tag, &c->loop_index, &c->loopfd, &c->dio, c->msg, ml);
	close(imgfd);
	if (rc != 0)
		return -1;
	s0__crash_point("carrier.loop_bound"); /* before the record names it */
	c->rec.loop_index = c->loop_index;
	if (s0__carrier_record_write(c->state_dir, &c->rec, &e) != S0_OK) {
		snprintf(c->msg, ml, "%s", s0_error_message(e));
		s0_error_free(e);
		return -1;
	}
	char dev[32];
	snprintf(dev, sizeof dev, "/dev/loop%d", c->loop_index);
	if (mount(dev, c->root, "ext4", MS_NOSUID | MS_NODEV, c->mount_opts) != 0) {
		int en = errno;
		char first[256]; /* e.g. a chunk the store refused (SEC-74) */
		s0__fusedisk_first_error(c->fd, first, sizeof first);
		snprintf(c->msg, ml, "mount ext4 (%s on %s, %s): %s%s%s%s", dev, c->root, c->mount_opts,
		         strerror(en), first[0] ? " (first device error: " : "", first, first[0] ? ")" : "");
		return -1;
	}
	s0__crash_point("carrier.mounted");
	c->rootfd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->rootfd < 0) {
		snprintf(c->msg, ml, "open %s: %s", c->root, strerror(errno));
		return -1;
	}
	return 0;
}

typedef struct sync_job {
	int fd, err;
	int64_t us;
} sync_job;

static void *sync_main(void *arg)
{
	sync_job *j = arg;
	int64_t t0 = now_us();
	j->err = syncfs(j->fd) == 0 ? 0 : errno;
	j->us = now_us() - t0;
	return NULL;
}

static int detach_in_ns(s0__carrier *c)
{
	size_t ml = sizeof c->msg;
	int result = DET_OK;
	int64_t t0 = now_us();
	memset(c->ph_us, 0, sizeof c->ph_us);
	/* ext4's dirty data goes to the branch (syncfs, in a thread of its
	 * own) while the holders are looked for: both take milliseconds */
	sync_job sj = {.fd = c->rootfd};
	pthread_t st;
	bool sync_thread = pthread_create(&st, NULL, sync_main, &sj) == 0;
	if (!sync_thread)
		sync_main(&sj);
	/* Copies of our mounts in namespaces made from ours (e.g. a runtime
	 * that unshared after s0__carrier_enter) would keep the filesystem and
	 * the loop device alive after our unmount: busy, nothing undone. */
	pid_t holders[4];
	int nh = s0__carrier_holders(c->tag, c->loop_index, c->rec.ns_ino, holders, 4);
	c->ph_us[0] = now_us() - t0;
	if (sync_thread)
		pthread_join(st, NULL);
	c->ph_us[1] = sj.us;
	int64_t t2 = now_us();
	if (nh > 0) {
		int len = snprintf(c->msg, ml, "%d process(es) in other mount namespaces hold it:", nh);
		for (int i = 0; i < nh && i < 4 && len > 0 && (size_t)len < ml; i++)
			len += snprintf(c->msg + len, ml - (size_t)len, " %d", (int)holders[i]);
		return DET_BUSY;
	}
	if (sj.err) {
		snprintf(c->msg, ml, "syncfs: %s", strerror(sj.err));
		result = DET_ERR;
	}
	close(c->rootfd);
	c->rootfd = -1;
	if (umount2(c->root, 0) != 0) {
		int e = errno;
		c->rootfd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(c->msg, ml, "unmount %s: %s", c->root, strerror(e));
		return e == EBUSY ? DET_BUSY : DET_ERR;
	}
	int64_t t3 = now_us();
	c->ph_us[2] = t3 - t2;
	s0__crash_point("carrier.unmounted");
	close(c->loopfd); /* the last close: autoclear detaches the device now */
	c->loopfd = -1;
	if (s0__loop_bound(c->loop_index)) {
		snprintf(c->msg, ml, "/dev/loop%d still bound after its last close", c->loop_index);
		result = DET_ERR;
	}
	int64_t t4 = now_us();
	c->ph_us[3] = t4 - t3;
	s0__fusedisk_counters_get(c->fd, &c->last);
	s0__fusedisk_stop(c->fd);
	c->fd = NULL;
	c->ph_us[4] = now_us() - t4;
	return result;
}

static void *ns_main(void *arg)
{
	s0__carrier *c = arg;
	if (setup(c) != 0) {
		teardown(c);
		report(c, PH_FAILED);
		return NULL;
	}
	report(c, PH_READY);
	pthread_mutex_lock(&c->cmu);
	for (;;) {
		while (c->cmd == CMD_NONE)
			pthread_cond_wait(&c->ccv, &c->cmu);
		c->cmd = CMD_NONE;
		pthread_mutex_unlock(&c->cmu);
		int r = detach_in_ns(c);
		pthread_mutex_lock(&c->cmu);
		c->cmd_result = r;
		c->cmd_done = true;
		pthread_cond_broadcast(&c->ccv);
		if (r != DET_BUSY)
			break;
	}
	pthread_mutex_unlock(&c->cmu);
	if (c->fd || c->loopfd >= 0)
		teardown(c);
	return NULL;
}

/* ---- API ---- */

static void carrier_free_fields(s0__carrier *c)
{
	free(c->state_dir);
	free(c->id);
	free(c->dir);
	free(c->fuse_mnt);
	free(c->root);
	free(c->img);
	free(c->host_root);
	free(c->mount_opts);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->cmu);
	pthread_cond_destroy(&c->ccv);
	free(c);
}

static void remove_dirs(const s0__carrier *c)
{
	rmdir(c->root);
	rmdir(c->fuse_mnt);
	rmdir(c->dir);
}

int s0__carrier_attach(const s0__carrier_opts *o, s0__carrier **out, s0_error **err)
{
	if (!o || !o->dev || !o->dev->ops || !o->state_dir || o->state_dir[0] != '/' || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "carrier: a device and an absolute state_dir are required");
	if (!id_ok(o->id))
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "carrier: bad id \"%s\" ([A-Za-z0-9._-], 1..64 bytes)",
		                     o->id ? o->id : "(null)");
	uint64_t size = s0__blockdev_size(o->dev);
	if (size == 0 || size % 512)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "carrier: device size %llu is not a positive multiple of 512",
		                     (unsigned long long)size);
	int rc = s0__carrier_probe(err);
	if (rc != S0_OK)
		return rc;
	if (mkdir(o->state_dir, 0700) != 0 && errno != EEXIST)
		return s0__error_set(err, S0_EIO, NULL, "carrier: mkdir %s: %s", o->state_dir,
		                     strerror(errno));
	char real[PATH_MAX];
	if (!realpath(o->state_dir, real))
		return s0__error_set(err, S0_EIO, NULL, "carrier: %s: %s", o->state_dir, strerror(errno));

	s0__carrier *c = calloc(1, sizeof *c);
	if (!c)
		return s0__error_nomem(err);
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->cmu, NULL);
	pthread_cond_init(&c->ccv, NULL);
	c->nsfd = c->rootfd = c->loopfd = -1;
	c->loop_index = -1;
	c->dev = *o->dev;
	c->state_dir = strdup(real);
	c->id = strdup(o->id);
	c->mount_opts = strdup(o->mount_options ? o->mount_options : S0__CARRIER_MOUNT_OPTIONS);
	if (!c->state_dir || !c->id || !c->mount_opts ||
	    asprintf(&c->dir, "%s/%s.d", real, o->id) < 0 ||
	    asprintf(&c->fuse_mnt, "%s/fuse", c->dir) < 0 ||
	    asprintf(&c->root, "%s/root", c->dir) < 0 ||
	    asprintf(&c->img, "%s/disk.img", c->fuse_mnt) < 0) {
		carrier_free_fields(c);
		return s0__error_nomem(err);
	}
	if (strlen(c->img) >= PATH_MAX - 64) {
		carrier_free_fields(c);
		return s0__error_set(err, S0_EINVAL, "invalid_request", "carrier: state_dir too long");
	}
	s0__carrier_tag(real, o->id, c->tag, sizeof c->tag);

	char rpath[PATH_MAX + 16];
	snprintf(rpath, sizeof rpath, "%s/%s.carrier", real, o->id);
	if (access(rpath, F_OK) == 0) {
		carrier_free_fields(c);
		return s0__error_set(err, S0_ECONFLICT, "carrier_exists",
		                     "carrier %s: a record exists in %s (attached, or an orphan to reclaim)",
		                     o->id, real);
	}
	if ((mkdir(c->dir, 0700) != 0 && errno != EEXIST) ||
	    (mkdir(c->fuse_mnt, 0700) != 0 && errno != EEXIST) ||
	    (mkdir(c->root, 0755) != 0 && errno != EEXIST)) {
		rc = s0__error_set(err, S0_EIO, NULL, "carrier: mkdir under %s: %s", c->dir,
		                   strerror(errno));
		remove_dirs(c);
		carrier_free_fields(c);
		return rc;
	}
	snprintf(c->rec.id, sizeof c->rec.id, "%s", o->id);
	c->rec.pid = getpid();
	c->rec.start_time = s0__proc_start_time(c->rec.pid);
	c->rec.loop_index = -1;

	int64_t t0 = now_us();
	c->phase = PH_STARTING;
	int prc = pthread_create(&c->th, NULL, ns_main, c);
	if (prc != 0) {
		remove_dirs(c);
		carrier_free_fields(c);
		return s0__error_set(err, S0_EIO, NULL, "carrier: pthread_create: %s", strerror(prc));
	}
	pthread_mutex_lock(&c->cmu);
	while (c->phase == PH_STARTING)
		pthread_cond_wait(&c->ccv, &c->cmu);
	int phase = c->phase;
	pthread_mutex_unlock(&c->cmu);
	if (phase != PH_READY) {
		pthread_join(c->th, NULL);
		if (c->nsfd >= 0)
			close(c->nsfd);
		rc = s0__error_set(err, S0_EIO, NULL, "carrier %s: attach failed: %s", o->id, c->msg);
		s0__carrier_record_remove(c->state_dir, c->id);
		remove_dirs(c);
		carrier_free_fields(c);
		return rc;
	}
	c->th_running = true;
	c->attached = true;
	c->attach_us = now_us() - t0;
	if (asprintf(&c->host_root, "/proc/%d/task/%d/root%s", (int)getpid(), (int)c->tid,
	             c->root) < 0)
		c->host_root = NULL;
	if (!c->host_root) {
		s0__carrier_free(c);
		return s0__error_nomem(err);
	}
	*out = c;
	return S0_OK;
}

const char *s0__carrier_root(const s0__carrier *c)
{
	return c->root;
}

const char *s0__carrier_host_root(const s0__carrier *c)
{
	return c->host_root;
}

int s0__carrier_open(s0__carrier *c, const char *path, int flags, unsigned mode)
{
	struct open_how how;
	memset(&how, 0, sizeof how);
	how.flags = (uint64_t)(unsigned)(flags | O_CLOEXEC);
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	pthread_mutex_lock(&c->mu);
	int fd = c->attached ? (int)syscall(SYS_openat2, c->rootfd, path, &how, sizeof how) : -1;
	int rc = fd >= 0 ? fd : c->attached ? -errno : -EBADF;
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int s0__carrier_enter(const s0__carrier *c)
{
	int fd = __atomic_load_n(&c->nsfd, __ATOMIC_RELAXED);
	return setns(fd, CLONE_NEWNS) == 0 ? 0 : -errno;
}

int s0__carrier_sync(s0__carrier *c, s0_error **err)
{
	pthread_mutex_lock(&c->mu);
	int rc = S0_OK;
	if (!c->attached) {
		rc = s0__error_set(err, S0_ECONFLICT, "carrier_detached", "carrier %s is detached", c->id);
	} else if (syncfs(c->rootfd) != 0) {
		int e = errno;
		char first[256] = "";
		if (c->fd)
			s0__fusedisk_first_error(c->fd, first, sizeof first);
		rc = s0__error_set(err, S0_EIO, NULL, "carrier %s: syncfs: %s%s%s%s", c->id, strerror(e),
		                   first[0] ? " (first device error: " : "", first, first[0] ? ")" : "");
	} else {
		rc = s0__blockdev_flush(&c->dev, err);
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int s0__carrier_detach(s0__carrier *c, s0_error **err)
{
	pthread_mutex_lock(&c->mu);
	if (!c->attached) {
		pthread_mutex_unlock(&c->mu);
		return S0_OK;
	}
	int64_t t0 = now_us();
	pthread_mutex_lock(&c->cmu);
	c->cmd_done = false;
	c->cmd = CMD_DETACH;
	pthread_cond_broadcast(&c->ccv);
	while (!c->cmd_done)
		pthread_cond_wait(&c->ccv, &c->cmu);
	int r = c->cmd_result;
	pthread_mutex_unlock(&c->cmu);
	if (r == DET_BUSY) {
		pthread_mutex_unlock(&c->mu);
		return s0__error_set(err, S0_ECONFLICT, "carrier_busy",
		                     "carrier %s: the mount is in use (%s)", c->id, c->msg);
	}
	pthread_join(c->th, NULL);
	c->th_running = false;
	c->attached = false;
	int fd = c->nsfd;
	__atomic_store_n(&c->nsfd, -1, __ATOMIC_RELAXED);
	close(fd);
	/* The namespace ended with its thread; only a loop device still bound
	 * to our tag (held elsewhere) is left for reclaim, with the record. */
	char tag[S0__CARRIER_TAG_MAX];
	bool loop_left = c->loop_index >= 0 && s0__loop_tag(c->loop_index, tag, sizeof tag) &&
	                 strcmp(tag, c->tag) == 0;
	c->loop_index = -1;
	int rc = S0_OK;
	if (r != DET_OK)
		rc = s0__error_set(err, S0_EIO, NULL, "carrier %s: detach: %s", c->id, c->msg);
	if (!loop_left) {
		remove_dirs(c);
		s0__carrier_record_remove(c->state_dir, c->id);
	}
	c->detach_us = now_us() - t0;
	pthread_mutex_unlock(&c->mu);
	return rc;
}

void s0__carrier_free(s0__carrier *c)
{
	if (!c)
		return;
	s0_error *e = NULL;
	s0__carrier_detach(c, &e); /* errors: the record stays for reclaim */
	s0_error_free(e);
	/* Still busy: the namespace thread and its mounts stay with the
	 * process (the record stays for reclaim); the handle is leaked. */
	if (!c->th_running)
		carrier_free_fields(c);
}

void s0__carrier_stats_get(const s0__carrier *c, s0__carrier_stats *out)
{
	s0__carrier *m = (s0__carrier *)c;
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&m->mu);
	s0__fusedisk_counters k = c->last;
	if (c->attached && c->fd)
		s0__fusedisk_counters_get(c->fd, &k);
	out->reads = k.reads;
	out->read_bytes = k.read_bytes;
	out->writes = k.writes;
	out->write_bytes = k.write_bytes;
	out->io_errors = k.io_errors;
	out->fsyncs = k.fsyncs;
	out->attach_us = c->attach_us;
	out->detach_us = c->detach_us;
	out->holders_us = c->ph_us[0];
	out->syncfs_us = c->ph_us[1];
	out->unmount_us = c->ph_us[2];
	out->loop_us = c->ph_us[3];
	out->fuse_us = c->ph_us[4];
	out->loop_index = c->attached ? c->loop_index : -1;
	out->io_flusher = c->io_flusher;
	out->direct_io = c->dio;
	pthread_mutex_unlock(&m->mu);
}
