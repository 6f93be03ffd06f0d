/* Pack file format and read descriptor cache. */
#include "local/objects/pack/pack.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/le.h"

uint64_t s0__pack_rec_span(uint32_t len)
{
	return ((uint64_t)S0__PACK_REC_BYTES + len + 7) & ~(uint64_t)7;
}

bool s0__pack_parse_rec(const uint8_t hdr[S0__PACK_REC_BYTES], s0__objid *id, uint32_t *len)
{
	if (memcmp(hdr, "S0R1", 4) != 0)
		return false;
	*len = s0__le_get32(hdr + 4);
	memcpy(id->b, hdr + 8, S0__OBJID_BYTES);
	return true;
}

int s0__pack_write_rec(int fd, uint64_t off, const s0__objid *id, const void *sealed,
                       uint32_t len)
{
	uint8_t hdr[S0__PACK_REC_BYTES], pad[8] = {0};
	s0__pack_rec_header(id, len, hdr);
	size_t npad = (size_t)(s0__pack_rec_span(len) - S0__PACK_REC_BYTES - len);
	struct iovec iov[3] = {{hdr, sizeof hdr}, {(void *)sealed, len}, {pad, npad}};
	size_t want = sizeof hdr + len + npad, done = 0;
	int cnt = 3;
	struct iovec *v = iov;
	while (done < want) {
		ssize_t n = pwritev(fd, v, cnt, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		done += (size_t)n;
		while (cnt && (size_t)n >= v->iov_len) {
			n -= (ssize_t)v->iov_len;
			v++;
			cnt--;
		}
		if (cnt) {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= (size_t)n;
		}
	}
	return 0;
}

void s0__pack_name(uint64_t id, char out[32])
{
	snprintf(out, 32, "%016" PRIx64 ".pack", id);
}

bool s0__pack_parse_name(const char *name, uint64_t *id)
{
	if (strlen(name) != 21 || strcmp(name + 16, ".pack") != 0)
		return false;
	uint64_t v = 0;
	for (int i = 0; i < 16; i++) {
		char c = name[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*id = v;
	return true;
}

void s0__pack_header(uint64_t id, uint8_t out[S0__PACK_HDR_BYTES])
{
	memcpy(out, "S0PK", 4);
	s0__le_put32(out + 4, 1);
	s0__le_put32(out + 8, (uint32_t)id);
	s0__le_put32(out + 12, (uint32_t)(id >> 32));
}

void s0__pack_rec_header(const s0__objid *id, uint32_t len, uint8_t out[S0__PACK_REC_BYTES])
{
	memcpy(out, "S0R1", 4);
	s0__le_put32(out + 4, len);
	memcpy(out + 8, id->b, S0__OBJID_BYTES);
}

int s0__pack_create(int dirfd, uint64_t id, int *fd_out, s0_error **err)
{
	char name[32];
	uint8_t hdr[S0__PACK_HDR_BYTES];
	s0__pack_name(id, name);
	s0__pack_header(id, hdr);
	int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return s0__error_set(err, S0_EIO, "pack_io", "create pack %s: %s", name,
		                     strerror(errno));
	if (pwrite(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr || fsync(dirfd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(dirfd, name, 0);
		return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "pack_io",
		                     "create pack %s: %s", name, strerror(e));
	}
	*fd_out = fd;
	return S0_OK;
}

static int corrupt(s0_error **err, const s0__objid *id, const char *why)
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	return s0__error_set(err, S0_ECORRUPT, "object_corrupt", "object %s failed verification: %s",
	                     hex, why);
}

int s0__pack_read(int fd, uint64_t off, uint32_t len, const s0__objid *id, s0__buf *out,
                  s0_error **err)
{
	uint8_t hdr[S0__PACK_REC_BYTES];
	out->len = 0;
	if (s0__buf_grow(out, len) < 0)
		return s0__error_nomem(err);
	struct iovec iov[2] = {{hdr, sizeof hdr}, {out->data, len}};
	size_t want = sizeof hdr + len, got = 0;
	while (got < want) {
		ssize_t n = preadv(fd, iov, 2, (off_t)(off + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return s0__error_set(err, S0_EIO, "pack_io", "read pack: %s", strerror(errno));
		}
		if (n == 0)
			return corrupt(err, id, "record truncated");
		got += (size_t)n;
		size_t adv = (size_t)n;
		for (int i = 0; i < 2 && adv; i++) {
			size_t a = adv < iov[i].iov_len ? adv : iov[i].iov_len;
			iov[i].iov_base = (uint8_t *)iov[i].iov_base + a;
			iov[i].iov_len -= a;
			adv -= a;
		}
	}
	if (memcmp(hdr, "S0R1", 4) != 0 || s0__le_get32(hdr + 4) != len ||
	    memcmp(hdr + 8, id->b, S0__OBJID_BYTES) != 0)
		return corrupt(err, id, "record header mismatch");
	out->len = len;
	return S0_OK;
}

void s0__packcache_init(s0__packcache *pc, int dirfd)
{
	memset(pc, 0, sizeof *pc);
	pthread_mutex_init(&pc->mu, NULL);
	pc->dirfd = dirfd;
	for (int i = 0; i < S0__PACK_FDS; i++)
		pc->slot[i].fd = -1;
}

void s0__packcache_fini(s0__packcache *pc)
{
	for (int i = 0; i < S0__PACK_FDS; i++)
		if (pc->slot[i].fd >= 0)
			close(pc->slot[i].fd);
	pthread_mutex_destroy(&pc->mu);
}

/* A free slot, or the least recently used idle one (closed); NULL if none. */
static s0__packfd *victim(s0__packcache *pc)
{
	s0__packfd *best = NULL;
	for (int i = 0; i < S0__PACK_FDS; i++) {
		s0__packfd *f = &pc->slot[i];
		if (f->fd < 0)
			return f;
		if (!f->refs && (!best || f->stamp < best->stamp))
			best = f;
	}
	if (best) {
		close(best->fd);
		best->fd = -1;
	}
	return best;
}

int s0__packcache_get(s0__packcache *pc, uint64_t id, s0__packfd **out, s0_error **err)
{
	pthread_mutex_lock(&pc->mu);
	for (int i = 0; i < S0__PACK_FDS; i++) {
		s0__packfd *f = &pc->slot[i];
		if (f->fd >= 0 && f->id == id && !f->dead) {
			f->refs++;
			f->stamp = ++pc->clock;
			*out = f;
			pthread_mutex_unlock(&pc->mu);
			return S0_OK;
		}
	}
	char name[32];
	s0__pack_name(id, name);
	int fd = openat(pc->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		pthread_mutex_unlock(&pc->mu);
		if (e == ENOENT)
			return S0_ENOTFOUND;
		return s0__error_set(err, S0_EIO, "pack_io", "open pack %s: %s", name, strerror(e));
	}
	s0__packfd *f = victim(pc);
	if (!f) {
		/* Every slot is busy: hand out an uncached descriptor. */
		f = calloc(1, sizeof *f);
		if (!f) {
			close(fd);
			pthread_mutex_unlock(&pc->mu);
			return s0__error_nomem(err);
		}
		f->dead = true;
		f->stamp = UINT64_MAX; /* marks heap-allocated */
	}
	f->id = id;
	f->fd = fd;
	f->refs = 1;
	if (f->stamp != UINT64_MAX) {
		f->dead = false;
		f->stamp = ++pc->clock;
	}
	*out = f;
	pthread_mutex_unlock(&pc->mu);
	return S0_OK;
}

void s0__packcache_put(s0__packcache *pc, s0__packfd *f)
{
	pthread_mutex_lock(&pc->mu);
	if (--f->refs == 0 && f->dead) {
		close(f->fd);
		f->fd = -1;
		if (f->stamp == UINT64_MAX)
			free(f);
	}
	pthread_mutex_unlock(&pc->mu);
}

void s0__packcache_forget(s0__packcache *pc, uint64_t id)
{
	pthread_mutex_lock(&pc->mu);
	for (int i = 0; i < S0__PACK_FDS; i++) {
		s0__packfd *f = &pc->slot[i];
		if (f->fd >= 0 && f->id == id && !f->dead) {
			f->dead = true;
			if (!f->refs) {
				close(f->fd);
				f->fd = -1;
			}
		}
	}
	pthread_mutex_unlock(&pc->mu);
}
