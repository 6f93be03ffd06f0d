/* Files object store: the batched durability steps (syncfs, or one
 * fdatasync/fsync per name, sequential or on several threads at once). */
#include "local/objects/files/objfiles_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Threads of a parallel sync (the filesystem's journal folds concurrent
 * syncs into one commit, so a few suffice). */
#define SYNC_THREADS 8

typedef struct sync_job {
	int dir_fd;
	const char *names; /* n names of stride bytes each */
	size_t stride, n;
	bool dirs;
	atomic_size_t next;
	atomic_int err;         /* first errno */
	atomic_size_t err_name; /* index of the name that failed */
} sync_job;

/* Sync one name; returns 0 or an errno. */
static int sync_one(const sync_job *j, size_t i)
{
	const char *name = j->names + i * j->stride;
	int fd = openat(j->dir_fd, name, (j->dirs ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int e = (j->dirs ? fsync(fd) : fdatasync(fd)) < 0 ? errno : 0;
	close(fd);
	return e;
}

static void *sync_worker(void *arg)
{
	sync_job *j = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->n || atomic_load(&j->err))
			return NULL;
		int e = sync_one(j, i);
		int none = 0;
		if (e && atomic_compare_exchange_strong(&j->err, &none, e))
			atomic_store(&j->err_name, i);
	}
}

int s0__objfiles_sync_names(s0__objfiles *of, int dir_fd, const char *names, size_t stride,
                            size_t n, bool dirs, s0_error **err)
{
	int mode = atomic_load(&of->sync);
	if (mode == S0__OBJFILES_SYNC_FS) {
		if (n && syncfs(dir_fd) < 0)
			return s0__error_set(err, errno == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io",
			                     "syncfs %s: %s", of->dir, strerror(errno));
		return S0_OK;
	}
	sync_job j = {.dir_fd = dir_fd, .names = names, .stride = stride, .n = n, .dirs = dirs};
	pthread_t t[SYNC_THREADS];
	size_t started = 0;
	size_t want = mode == S0__OBJFILES_SYNC_PARALLEL ? (n < SYNC_THREADS ? n : SYNC_THREADS) : 1;
	while (started + 1 < want && pthread_create(&t[started], NULL, sync_worker, &j) == 0)
		started++;
	sync_worker(&j); /* the caller works too (alone when threads cannot start) */
	for (size_t i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	int e = atomic_load(&j.err);
	if (e)
		return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io", "%s %s: %s",
		                     dirs ? "fsync directory" : "fdatasync",
		                     names + atomic_load(&j.err_name) * stride, strerror(e));
	return S0_OK;
}

int s0__objfiles_sync_dirs(s0__objfiles *of, const bool dirs[256], s0_error **err)
{
	char names[256][3];
	size_t n = 0;
	for (int i = 0; i < 256; i++)
		if (dirs[i])
			snprintf(names[n++], sizeof names[0], "%02x", i);
	return s0__objfiles_sync_names(of, of->root_fd, &names[0][0], sizeof names[0], n, true, err);
}
