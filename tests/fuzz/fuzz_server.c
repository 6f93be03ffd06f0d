/*
 * Fuzz target: s0 serve's HTTP layer (libsandbox0/server over
 * libmicrohttpd, then the router) with raw bytes on a TCP connection. One
 * server on 127.0.0.1 over a real local backend (fz_engine.h), both remade
 * every 200 inputs. Each input is sent on a fresh connection (@0, @1, @S
 * replaced by fixture ids), the write side is shut, and the reply is read
 * to EOF; whatever comes back must begin with an HTTP/1.x status line.
 * API key "s0_fuzzkey_0001" and requests without Authorization both map to
 * team_a; the admin routes are off (their fault points can SIGKILL).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fz_engine.h"
#include "sandbox0/server.h"

#define RESET_EVERY 200

static fz_engine eng;
static s0_server *srv;
static int port;
static long inputs;

static void stop(void)
{
	s0_server_free(srv);
	srv = NULL;
	fz_engine_close(&eng);
}

static void start(void)
{
	fz_engine_open(&eng, 0);
	static const s0_server_api_key keys[] = {{"s0_fuzzkey_0001", "team_a"}};
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.listen_address = "127.0.0.1";
	o.api_keys = keys;
	o.api_keys_len = 1;
	o.anonymous_team_id = "team_a";
	o.connection_timeout_ms = 1000;
	o.drain_timeout_ms = 5000;
	s0_error *err = NULL;
	if (s0_server_new(eng.local, &o, &srv, &err) != S0_OK) {
		fprintf(stderr, "s0_server_new: %s\n", err ? s0_error_message(err) : "?");
		abort();
	}
	port = s0_server_port(srv);
}

/* Write all of buf (the server may close early: EPIPE/ECONNRESET end it). */
static void send_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!srv) {
		start();
		atexit(stop);
	} else if (++inputs % RESET_EVERY == 0) {
		stop();
		start();
	}
	if (size > (1u << 20))
		return 0;
	size_t n;
	char *buf = fz_substitute(&eng, (const char *)data, size, &n);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("fuzz_server: connect");
		abort();
	}
	send_all(fd, buf, n);
	shutdown(fd, SHUT_WR);
	char head[16] = "";
	size_t got = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, 10000);
		if (pr == 0) {
			fprintf(stderr, "fuzz_server: no EOF within 10 s of the write side closing\n");
			abort();
		}
		char tmp[65536];
		ssize_t r = recv(fd, tmp, sizeof tmp, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (got < sizeof head - 1) {
			size_t k = (size_t)r < sizeof head - 1 - got ? (size_t)r : sizeof head - 1 - got;
			memcpy(head + got, tmp, k);
			got += k;
		}
	}
	close(fd);
	if (got && strncmp(head, "HTTP/1.", got < 7 ? got : 7) != 0) {
		fprintf(stderr, "fuzz_server: reply does not start with a status line: %.15s\n", head);
		abort();
	}
	free(buf);
	return 0;
}
