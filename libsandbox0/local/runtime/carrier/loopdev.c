/*
 * Loop devices of the carrier (carrier_int.h): bind with LOOP_CONFIGURE
 * (direct I/O, autoclear, a name tag in lo_file_name that reclaim reads
 * back), look a device's tag up, detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "local/runtime/carrier/carrier_int.h"

int s0__loop_attach(int file_fd, const char *tag, int *index, int *loop_fd, bool *dio,
                    char *msg, size_t msg_len)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		int e = errno;
		snprintf(msg, msg_len, "/dev/loop-control: %s", strerror(e));
		return -e;
	}
	int rc = -EBUSY;
	/* Another process may take the free device between GET_FREE and
	 * CONFIGURE (EBUSY): ask again. */
	for (int attempt = 0; attempt < 64; attempt++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			rc = -errno;
			snprintf(msg, msg_len, "LOOP_CTL_GET_FREE: %s", strerror(errno));
			break;
		}
		char path[32];
		snprintf(path, sizeof path, "/dev/loop%d", n);
		int lfd = open(path, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			rc = -errno;
			snprintf(msg, msg_len, "%s: %s", path, strerror(errno));
			if (errno == ENOENT || errno == ENXIO)
				continue;
			break;
		}
		struct loop_config cfg;
		memset(&cfg, 0, sizeof cfg);
		cfg.fd = (unsigned)file_fd;
		cfg.info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR;
		snprintf((char *)cfg.info.lo_file_name, sizeof cfg.info.lo_file_name, "%s", tag);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) != 0) {
			rc = -errno;
			snprintf(msg, msg_len, "LOOP_CONFIGURE %s: %s", path, strerror(errno));
			close(lfd);
			if (rc == -EBUSY)
				continue;
			break;
		}
		struct loop_info64 info;
		*dio = ioctl(lfd, LOOP_GET_STATUS64, &info) == 0 &&
		       (info.lo_flags & LO_FLAGS_DIRECT_IO);
		*index = n;
		*loop_fd = lfd;
		rc = 0;
		break;
	}
	close(ctl);
	return rc;
}

bool s0__loop_bound(int index)
{
	char path[96];
	snprintf(path, sizeof path, "/sys/block/loop%d/loop/backing_file", index);
	return access(path, F_OK) == 0;
}

bool s0__loop_tag(int index, char *tag, size_t tag_len)
{
	if (!s0__loop_bound(index))
		return false;
	char path[32];
	snprintf(path, sizeof path, "/dev/loop%d", index);
	int lfd = open(path, O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return false;
	struct loop_info64 info;
	bool ok = ioctl(lfd, LOOP_GET_STATUS64, &info) == 0;
	close(lfd);
	if (!ok)
		return false;
	info.lo_file_name[LO_NAME_SIZE - 1] = 0;
	snprintf(tag, tag_len, "%s", (const char *)info.lo_file_name);
	return true;
}

int s0__loop_clear(int index)
{
	char path[32];
	snprintf(path, sizeof path, "/dev/loop%d", index);
	int lfd = open(path, O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return errno == ENOENT || errno == ENXIO ? 0 : -errno;
	int rc = ioctl(lfd, LOOP_CLR_FD) == 0 ? 0 : -errno;
	/* LOOP_CLR_FD marks the device autoclear; the last close clears it. */
	close(lfd);
	if (rc == -ENXIO)
		rc = 0; /* not bound (any more) */
	if (rc == 0 && s0__loop_bound(index))
		rc = -EBUSY; /* still open elsewhere (mounted): cleared on its last close */
	return rc;
}
