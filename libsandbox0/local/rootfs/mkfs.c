/* Running mke2fs for template images (pinned features, no journal). */
#include "local/rootfs/rfs_mkfs.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Pinned so images do not depend on the host's mke2fs.conf:
 * no journal, no orphan_file, metadata_csum kept. */
#define FEATURES                                                                 \
	"none,sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr,"   \
	"extent,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize,huge_file"

/* Environment: ours plus the reproducibility knobs. Caller frees [0..n). */
static char **make_env(const s0__rootfs_image_opts *o, size_t *n_extra)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof *env);
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "E2FSPROGS_FAKE_TIME=", 20) && strncmp(environ[i], "MKE2FS_", 7))
			env[k++] = environ[i];
	*n_extra = 0;
	if (o->fake_time_unix) {
		env[k] = s0__asprintf("E2FSPROGS_FAKE_TIME=%lld", (long long)o->fake_time_unix);
		if (env[k]) {
			k++;
			*n_extra = k;
		}
	}
	return env;
}

char *s0__rfs_slurp(int fd)
{
	char *buf = calloc(1, 4097);
	if (!buf)
		return NULL;
	ssize_t n = pread(fd, buf, 4096, 0);
	if (n > 0)
		buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n' && i + 1 < n)
			buf[i] = ' ';
	return buf;
}

int s0__rfs_spawn_wait(char *const argv[], char **env, int out_fd, int *status)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return rc;
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}

int s0__rfs_run_mke2fs(const s0__rootfs_image_opts *o, const char *image, s0_error **err)
{
	char size[32], ratio[16], ext[160];
	snprintf(size, sizeof size, "%lluk", (unsigned long long)(o->size_bytes / 1024));
	snprintf(ratio, sizeof ratio, "%u", o->inode_ratio ? o->inode_ratio : 16384u);
	snprintf(ext, sizeof ext, "lazy_itable_init=0,lazy_journal_init=0%s%s",
	         o->uuid ? ",hash_seed=" : "", o->uuid ? o->uuid : "");
	const char *argv[32]; /* 1 + 18 fixed + 2 + 2 + image, size, NULL = 26 */
	int a = 0;
	argv[a++] = o->mke2fs_path ? o->mke2fs_path : "/sbin/mke2fs";
	const char *fixed[] = {"-q", "-F", "-t", "ext4", "-T", "default", "-b", "4096", "-I", "256",
	                       "-m", "0", "-O", FEATURES, "-i", ratio, "-E", ext};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		argv[a++] = fixed[i];
	if (o->uuid) {
		argv[a++] = "-U";
		argv[a++] = o->uuid;
	}
	if (o->source_dir) {
		argv[a++] = "-d";
		argv[a++] = o->source_dir;
	}
	argv[a++] = image;
	argv[a++] = size;
	argv[a] = NULL;

	int out = memfd_create("s0-mke2fs-output", MFD_CLOEXEC);
	if (out < 0)
		return s0__error_set(err, S0_EIO, "io_error", "memfd_create: %s", strerror(errno));
	size_t n_extra = 0;
	char **env = make_env(o, &n_extra);
	int status = 0;
	int sp = env ? s0__rfs_spawn_wait((char *const *)argv, env, out, &status) : ENOMEM;
	if (n_extra)
		free(env[n_extra - 1]);
	free(env);
	int rc = S0_OK;
	if (sp != 0) {
		rc = s0__error_set(err, S0_EIO, "mkfs_failed", "cannot run %s: %s", argv[0], strerror(sp));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *msg = s0__rfs_slurp(out);
		rc = s0__error_set(err, S0_EIO, "mkfs_failed", "mke2fs failed (status %d): %s",
		                   WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg ? msg : "");
		free(msg);
	}
	close(out);
	return rc;
}
