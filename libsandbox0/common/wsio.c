/* The socket side of a wslay connection (wsio.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/wsio.h"

ssize_t s0__wsio_recv(wslay_event_context_ptr ctx, int fd, const char *extra, size_t extra_len,
                      size_t *extra_off, uint8_t *buf, size_t len)
{
	if (*extra_off < extra_len) {
		size_t n = extra_len - *extra_off < len ? extra_len - *extra_off : len;
		memcpy(buf, extra + *extra_off, n);
		*extra_off += n;
		return (ssize_t)n;
	}
	ssize_t n;
	while ((n = recv(fd, buf, len, 0)) < 0 && errno == EINTR)
		;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (n <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return n;
}

ssize_t s0__wsio_send(wslay_event_context_ptr ctx, int fd, const uint8_t *data, size_t len)
{
	ssize_t n;
	while ((n = send(fd, data, len, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n < 0) {
		wslay_event_set_error(ctx, errno == EAGAIN || errno == EWOULDBLOCK
		                               ? WSLAY_ERR_WOULDBLOCK
		                               : WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return n;
}
