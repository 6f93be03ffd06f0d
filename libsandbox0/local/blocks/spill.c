/* A branch's spill file: dirty chunks in fixed-size slots of an anonymous
 * file (O_TMPFILE: nothing survives the process, so a crash leaves no
 * scratch behind; the page cache keeps hot slots in memory). */
#include "local/blocks/bstore_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int s0__spill_open(s0__branch *b, s0_error **err)
{
	const char *dir = b->bs->scratch;
	int fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		char *path = s0__asprintf("%s/s0-branch-XXXXXX", dir);
		if (!path)
			return s0__error_nomem(err);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
		free(path);
	}
	if (fd < 0)
		return s0__error_set(err, errno == ENOSPC ? S0_ENOSPACE : S0_EIO, "spill_io",
		                     "create branch spill file in %s: %s", dir, strerror(errno));
	b->spill_fd = fd;
	return S0_OK;
}

int s0__spill_alloc(s0__branch *b, uint64_t *slot, s0_error **err)
{
	if (b->n_free) {
		*slot = b->free_slots[--b->n_free];
		return S0_OK;
	}
	*slot = b->next_slot++;
	return S0_OK;
}

void s0__spill_alloc_fresh(s0__branch *b, uint64_t *slot)
{
	*slot = b->next_slot++;
}

void s0__spill_release(s0__branch *b, uint64_t slot)
{
	if (b->n_free == b->cap_free) {
		size_t cap = b->cap_free ? b->cap_free * 2 : 64;
		uint64_t *v = realloc(b->free_slots, cap * sizeof *v);
		if (!v)
			return; /* the slot is leaked until reset: harmless */
		b->free_slots = v;
		b->cap_free = cap;
	}
	b->free_slots[b->n_free++] = slot;
}

static int io_err(s0_error **err, const char *what, int e)
{
	return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "spill_io",
	                     "branch spill file %s: %s", what, strerror(e ? e : EIO));
}

int s0__spill_write(s0__branch *b, uint64_t slot, uint32_t in_off, const void *buf, size_t len,
                    s0_error **err)
{
	off_t off = (off_t)(slot * b->cs + in_off);
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(b->spill_fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return io_err(err, "write", n < 0 ? errno : 0);
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return S0_OK;
}

int s0__spill_read(const s0__branch *b, uint64_t slot, uint32_t in_off, void *buf, size_t len,
                   s0_error **err)
{
	off_t off = (off_t)(slot * b->cs + in_off);
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(b->spill_fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return io_err(err, "read", errno);
		if (n == 0) { /* a slot written only in part reads as zeros past EOF */
			memset(p, 0, len);
			break;
		}
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return S0_OK;
}

void s0__spill_reset(s0__branch *b)
{
	b->next_slot = 0;
	b->n_free = 0;
	/* A failure only wastes space: slots are fully rewritten before use. */
	int rc = ftruncate(b->spill_fd, 0);
	(void)rc;
}
