/* `e2fsck -fn` of a template image before it is imported (rfs_mkfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local/rootfs/rfs_mkfs.h"

extern char **environ;

int s0__rfs_run_e2fsck(const char *image, s0_error **err)
{
	/* -f: check even a clean filesystem; -n: open read-only, answer no. */
	char *argv[] = {"/sbin/e2fsck", "-fn", (char *)image, NULL};
	int out = memfd_create("s0-e2fsck-output", MFD_CLOEXEC);
	if (out < 0)
		return s0__error_set(err, S0_EIO, "io_error", "memfd_create: %s", strerror(errno));
	int status = 0;
	int sp = s0__rfs_spawn_wait(argv, environ, out, &status);
	int rc = S0_OK;
	if (sp != 0) {
		rc = s0__error_set(err, S0_EIO, "fsck_failed", "cannot run %s: %s", argv[0],
		                   strerror(sp));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *msg = s0__rfs_slurp(out);
		rc = s0__error_set(err, S0_EIO, "fsck_failed",
		                   "template image is not consistent: e2fsck -fn exited %d: %s",
		                   WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg ? msg : "");
		free(msg);
	}
	close(out);
	return rc;
}
