/*
 * The carrier's FUSE server (carrier_int.h): one regular file, /disk.img,
 * whose bytes are the device's. Files are opened FOPEN_DIRECT_IO (no page
 * cache of disk.img in the kernel); each server thread reads requests from
 * the session's /dev/fuse descriptor and answers them from a buffer it
 * allocated once at start, so serving a read allocates nothing of ours.
 */
#define FUSE_USE_VERSION 312
#include <fuse3/fuse_lowlevel.h>

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "local/runtime/carrier/carrier_int.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

#define FD_MAX_THREADS 8
#define FD_IO_MAX (1u << 20) /* largest request the kernel sends (256 pages) */
#define FD_INO_IMG 2

struct s0__fusedisk {
	s0__blockdev dev;
	uint64_t size;
	struct fuse_session *se;
	pthread_t threads[FD_MAX_THREADS];
	int n_threads;
	int flushers; /* threads that got PR_SET_IO_FLUSHER */
	unsigned conn;  /* FUSE connection number (minor of the mount's st_dev) */
	pthread_mutex_t emu;
	char first_err[256]; /* the first device error, for the caller's messages */
	s0__fusedisk_counters ctr;
};

static __thread uint8_t *fd_buf; /* this server thread's read buffer */

static void add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* Count a device error and keep the first one's message (the library never
 * writes to stderr: docs/threading.md). Frees e. */
static void device_error(s0__fusedisk *fd, const char *op, size_t size, off_t off, s0_error *e)
{
	add(&fd->ctr.io_errors, 1);
	pthread_mutex_lock(&fd->emu);
	if (!fd->first_err[0])
		snprintf(fd->first_err, sizeof fd->first_err, "%s of %zu bytes at %lld: %s", op, size,
		         (long long)off, e ? s0_error_message(e) : "?");
	pthread_mutex_unlock(&fd->emu);
	s0_error_free(e);
}

static void fill_attr(const s0__fusedisk *fd, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0700;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)fd->size;
		st->st_blocks = (blkcnt_t)((fd->size + 511) / 512);
	}
	st->st_blksize = 4096;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	s0__fusedisk *fd = fuse_req_userdata(req);
	if (parent != FUSE_ROOT_ID || strcmp(name, "disk.img") != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct fuse_entry_param e;
	memset(&e, 0, sizeof e);
	e.ino = FD_INO_IMG;
	e.generation = 1;
	e.attr_timeout = 3600.0;
	e.entry_timeout = 3600.0;
	fill_attr(fd, FD_INO_IMG, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	s0__fusedisk *fd = fuse_req_userdata(req);
	if (ino != FUSE_ROOT_ID && ino != FD_INO_IMG) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct stat st;
	fill_attr(fd, ino, &st);
	fuse_reply_attr(req, &st, 3600.0);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
	s0__fusedisk *fd = fuse_req_userdata(req);
	/* The volume's size is fixed: only a no-op truncate is accepted. */
	if (ino != FD_INO_IMG || ((to_set & FUSE_SET_ATTR_SIZE) && (uint64_t)attr->st_size != fd->size)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	struct stat st;
	fill_attr(fd, ino, &st);
	fuse_reply_attr(req, &st, 3600.0);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FD_INO_IMG) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
	s0__fusedisk *fd = fuse_req_userdata(req);
	if (off < 0 || (uint64_t)off >= fd->size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if ((uint64_t)off + size > fd->size)
		size = (size_t)(fd->size - (uint64_t)off);
	uint8_t *buf = fd_buf, *tmp = NULL;
	if (!buf || size > FD_IO_MAX)
		buf = tmp = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	s0_error *e = NULL;
	if (s0__blockdev_read(&fd->dev, (uint64_t)off, buf, size, &e) != S0_OK) {
		device_error(fd, "read", size, off, e);
		fuse_reply_err(req, EIO);
	} else {
		add(&fd->ctr.reads, 1);
		add(&fd->ctr.read_bytes, size);
		fuse_reply_buf(req, (const char *)buf, size);
	}
	free(tmp);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
	s0__fusedisk *fd = fuse_req_userdata(req);
	if (off < 0 || (uint64_t)off > fd->size || size > fd->size - (uint64_t)off) {
		fuse_reply_err(req, ENOSPC);
		return;
	}
	s0_error *e = NULL;
	if (s0__blockdev_write(&fd->dev, (uint64_t)off, buf, size, &e) != S0_OK) {
		device_error(fd, "write", size, off, e);
		fuse_reply_err(req, EIO);
		return;
	}
	add(&fd->ctr.writes, 1);
	add(&fd->ctr.write_bytes, size);
	fuse_reply_write(req, size);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	s0__fusedisk *fd = fuse_req_userdata(req);
	s0_error *e = NULL;
	if (s0__blockdev_flush(&fd->dev, &e) != S0_OK) {
		device_error(fd, "flush", 0, 0, e);
		fuse_reply_err(req, EIO);
		return;
	}
	add(&fd->ctr.fsyncs, 1);
	fuse_reply_err(req, 0);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops fd_ops = {
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.fsync = op_fsync,
};

static void *serve(void *arg)
{
	s0__fusedisk *fd = arg;
	pthread_setname_np(pthread_self(), "s0-carrier-fuse"); /* found by name in perf and ps */
	/* Reclaim from this thread must not wait on filesystem I/O (which may
	 * need this thread): needs CAP_SYS_RESOURCE, counted when granted. */
	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) == 0)
		__atomic_fetch_add(&fd->flushers, 1, __ATOMIC_RELAXED);
	fd_buf = malloc(FD_IO_MAX);
	struct fuse_buf fbuf;
	memset(&fbuf, 0, sizeof fbuf);
	while (!fuse_session_exited(fd->se)) {
		int res = fuse_session_receive_buf(fd->se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0)
			break; /* -ENODEV: unmounted or aborted */
		fuse_session_process_buf(fd->se, &fbuf);
	}
	free(fbuf.mem);
	free(fd_buf);
	fd_buf = NULL;
	return NULL;
}

static void quiet_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
}

int s0__fusedisk_start(const s0__blockdev *dev, const char *mnt, const char *tag, int threads,
                       s0__fusedisk **out, char *msg, size_t msg_len)
{
	s0__fusedisk *fd = calloc(1, sizeof *fd);
	if (!fd) {
		snprintf(msg, msg_len, "out of memory");
		return -ENOMEM;
	}
	fd->dev = *dev;
	fd->size = s0__blockdev_size(dev);
	pthread_mutex_init(&fd->emu, NULL);
	/* libfuse logs to stderr by default; the library never writes there. */
	fuse_set_log_func(quiet_log);
	char opt[160];
	snprintf(opt, sizeof opt, "fsname=%s,subtype=s0carrier,default_permissions", tag);
	char *argv[] = {"s0carrier", "-o", opt, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	fd->se = fuse_session_new(&args, &fd_ops, sizeof fd_ops, fd);
	fuse_opt_free_args(&args); /* copies libfuse may have made of argv */
	if (!fd->se) {
		snprintf(msg, msg_len, "fuse_session_new failed");
		pthread_mutex_destroy(&fd->emu);
		free(fd);
		return -EIO;
	}
	if (fuse_session_mount(fd->se, mnt) != 0) {
		snprintf(msg, msg_len, "FUSE mount at %s failed", mnt);
		fuse_session_destroy(fd->se);
		pthread_mutex_destroy(&fd->emu);
		free(fd);
		return -EIO;
	}
	if (threads < 1)
		threads = 1;
	if (threads > FD_MAX_THREADS)
		threads = FD_MAX_THREADS;
	for (int i = 0; i < threads; i++) {
		int rc = pthread_create(&fd->threads[i], NULL, serve, fd);
		if (rc != 0) {
			snprintf(msg, msg_len, "pthread_create: %s", strerror(rc));
			s0__fusedisk_stop(fd);
			return -rc;
		}
		fd->n_threads++;
	}
	/* Served from here on (a request before the threads would wait for
	 * the connection's INIT forever). */
	struct stat st;
	if (stat(mnt, &st) == 0)
		fd->conn = minor(st.st_dev);
	*out = fd;
	return 0;
}

/* Abort our connection through fusectl (mounted in the calling thread's
 * private namespace if needed): every pending and future request fails. */
static void abort_conn(const s0__fusedisk *fd)
{
	const char *dir = "/sys/fs/fuse/connections";
	char path[96];
	snprintf(path, sizeof path, "%s/%u/abort", dir, fd->conn);
	if (access(path, W_OK) != 0)
		mount("fusectl", dir, "fusectl", 0, NULL);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
}

void s0__fusedisk_stop(s0__fusedisk *fd)
{
	if (!fd)
		return;
	/* Unmounting ends the connection once nothing holds disk.img open
	 * (the loop device is detached first): every reader gets ENODEV. */
	fuse_session_exit(fd->se);
	fuse_session_unmount(fd->se);
	bool aborted = false;
	for (int i = 0; i < fd->n_threads; i++) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 2;
		/* A thread still blocked after the unmount means the connection
		 * lives on (disk.img still open: a failed attach or detach); it is
		 * still ours then, so aborting it by number is safe. */
		if (!aborted && pthread_timedjoin_np(fd->threads[i], NULL, &dl) == 0)
			continue;
		if (!aborted) {
			abort_conn(fd);
			aborted = true;
		}
		pthread_join(fd->threads[i], NULL);
	}
	fuse_session_destroy(fd->se);
	pthread_mutex_destroy(&fd->emu);
	free(fd);
}

void s0__fusedisk_counters_get(const s0__fusedisk *fd, s0__fusedisk_counters *out)
{
	out->reads = __atomic_load_n(&fd->ctr.reads, __ATOMIC_RELAXED);
	out->read_bytes = __atomic_load_n(&fd->ctr.read_bytes, __ATOMIC_RELAXED);
	out->writes = __atomic_load_n(&fd->ctr.writes, __ATOMIC_RELAXED);
	out->write_bytes = __atomic_load_n(&fd->ctr.write_bytes, __ATOMIC_RELAXED);
	out->io_errors = __atomic_load_n(&fd->ctr.io_errors, __ATOMIC_RELAXED);
	out->fsyncs = __atomic_load_n(&fd->ctr.fsyncs, __ATOMIC_RELAXED);
}

bool s0__fusedisk_io_flusher(const s0__fusedisk *fd)
{
	return fd->n_threads > 0 &&
	       __atomic_load_n(&fd->flushers, __ATOMIC_RELAXED) == fd->n_threads;
}

void s0__fusedisk_first_error(s0__fusedisk *fd, char *buf, size_t len)
{
	pthread_mutex_lock(&fd->emu);
	snprintf(buf, len, "%s", fd->first_err);
	pthread_mutex_unlock(&fd->emu);
}
