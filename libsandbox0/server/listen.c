/* The listening socket: TCP on an address literal, or a 0600 unix socket. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/server_internal.h"

#define BACKLOG 128

static int bind_error(int fd, const char *what, s0_error **err)
{
	int e = errno;
	close(fd);
	if (e == EADDRINUSE)
		return s0__error_set(err, S0_ECONFLICT, "address_in_use", "%s is already in use", what);
	return s0__error_set(err, S0_EIO, "listen_failed", "cannot listen on %s: %s", what,
	                     strerror(e));
}

static int listen_tcp(const char *addr, int32_t port, s0_error **err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		len = sizeof *v4;
	} else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		len = sizeof *v6;
	} else {
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "listen_address \"%.64s\" is not an IP address literal", addr);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return s0__error_set(err, S0_EIO, "listen_failed", "socket: %s", strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, BACKLOG) < 0)
		return bind_error(fd, addr, err);
	return fd;
}

/* A socket file nobody accepts on is stale and may be replaced. */
static bool stale_socket(const struct sockaddr_un *sa)
{
	struct stat st;
	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT;
	if (!S_ISSOCK(st.st_mode))
		return false;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool live = connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0;
	close(fd);
	return !live && unlink(sa->sun_path) == 0;
}

static int listen_unix(const char *path, s0_error **err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "unix socket path is longer than %zu bytes",
		                     sizeof sa.sun_path - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (!stale_socket(&sa))
		return s0__error_set(err, S0_ECONFLICT, "address_in_use",
		                     "%s exists and is not a stale socket", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return s0__error_set(err, S0_EIO, "listen_failed", "socket: %s", strerror(errno));
	/* Linux creates the file with the socket inode's mode (less the
	 * umask), so the path is never reachable by others, even briefly;
	 * umask() would be process-wide */
	if (fchmod(fd, 0600) < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, BACKLOG) < 0)
		return bind_error(fd, path, err);
	return fd;
}

int s0__server_listen(const s0_server_options *o, s0_error **err)
{
	if (o->unix_socket_path && *o->unix_socket_path)
		return listen_unix(o->unix_socket_path, err);
	if (o->port < 0 || o->port > 65535)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "port %d is out of range",
		                     (int)o->port);
	return listen_tcp(o->listen_address ? o->listen_address : "127.0.0.1", o->port, err);
}
