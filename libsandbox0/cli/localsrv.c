/*
 * The per-user local server (docs/decisions.md "Local mode outside tests").
 *
 * The simulated runtime lives in the memory of the process that opened the
 * data directory, so commands do not embed a backend each: they talk to one
 * long-lived `s0 serve` on 127.0.0.1. It announces itself in
 * <data>/server.json ({"url", "address", "pid"}); the CLI authenticates with
 * the key in <data>/cli-token (mode 0600), both written by `s0 serve`.
 *
 * When server.json names no live, healthy server the CLI starts one: fork,
 * setsid, exec of its own binary (/proc/self/exe) as `s0 serve --data DIR
 * --listen 127.0.0.1:0` with output to <data>/server.log. The child reports
 * readiness by writing to an inherited pipe (S0_SERVE_READY_FD) after
 * server.json is in place, so the wait is event-driven and bounded. If two
 * commands race, the loser's server exits with SERVE_EXIT_LOCKED (the data
 * directory lock, docs/decisions.md) and its command waits for the winner's
 * server.json.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "localsrv.h"

#define START_BUDGET_MS 30000
#define HEALTH_BUDGET_MS 2000

char *localsrv_read_token(const char *data_dir, char **why_out)
{
	char *path = xasprintf("%s/cli-token", data_dir);
	struct stat st;
	size_t len;
	char *text = NULL;
	if (stat(path, &st) < 0) {
		free(path);
		return NULL;
	}
	if (st.st_mode & 077) {
		*why_out = xasprintf("%s must not be readable by group or others "
		                     "(mode %04o; run chmod 600 on it)",
		                     path, (unsigned)(st.st_mode & 07777));
		free(path);
		return NULL;
	}
	text = read_all(path, &len);
	free(path);
	if (!text)
		return NULL;
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
		text[--len] = 0;
	if (!len) {
		free(text);
		return NULL;
	}
	return text;
}

int localsrv_parse_url(const char *url, char *host, size_t host_len, int *port)
{
	if (strncmp(url, "http://", 7))
		return -1;
	const char *h = url + 7, *colon;
	if (*h == '[') {
		const char *close = strchr(h, ']');
		if (!close || close[1] != ':')
			return -1;
		snprintf(host, host_len, "%.*s", (int)(close - h - 1), h + 1);
		colon = close + 1;
	} else {
		colon = strchr(h, ':');
		if (!colon)
			return -1;
		snprintf(host, host_len, "%.*s", (int)(colon - h), h);
	}
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (p <= 0 || p > 65535 || (*end && *end != '/'))
		return -1;
	*port = (int)p;
	return 0;
}

static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = {fd, events, 0};
	int rc;
	do
		rc = poll(&pfd, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	return rc;
}

/* GET /healthz answers 200 within the budget (no key needed, docs/wire.md §1.2). */
bool localsrv_healthy(const char *url, int budget_ms)
{
	char host[64];
	int port;
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof ss);
	if (localsrv_parse_url(url, host, sizeof host, &port) < 0)
		return false;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		sl = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		sl = sizeof *v6;
	} else {
		return false;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = false;
	double deadline = mono_now_s() + budget_ms / 1000.0;
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS)
		goto out;
	if (wait_fd(fd, POLLOUT, budget_ms) <= 0)
		goto out;
	int soerr = 0;
	socklen_t el = sizeof soerr;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) < 0 || soerr)
		goto out;
	char req[160];
	int n = snprintf(req, sizeof req,
	                 "GET /healthz HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n", host,
	                 port);
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
		goto out;
	char buf[64];
	size_t got = 0;
	while (got < 12) {
		int left = (int)((deadline - mono_now_s()) * 1000);
		if (left <= 0 || wait_fd(fd, POLLIN, left) <= 0)
			goto out;
		ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	buf[got] = 0;
	ok = !strncmp(buf, "HTTP/1.", 7) && !strncmp(buf + 8, " 200", 4);
out:
	close(fd);
	return ok;
}

static bool pid_alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The URL of a live server announced in <data>/server.json, or NULL. */
static char *live_server(const char *data_dir)
{
	char *path = xasprintf("%s/server.json", data_dir);
	size_t len;
	char *text = read_all(path, &len);
	free(path);
	if (!text)
		return NULL;
	cj *v = cj_parse(text, len, NULL);
	free(text);
	const char *url = cj_get_str(v, "url");
	const cj *pid = cj_get(v, "pid");
	char *out = NULL;
	if (url && cJSON_IsNumber(pid) && pid_alive(pid->valueint) &&
	    localsrv_healthy(url, HEALTH_BUDGET_MS))
		out = xstrdup(url);
	cj_free(v);
	return out;
}

static char *log_tail(const char *log_path)
{
	size_t len;
	char *text = read_all(log_path, &len);
	if (!text)
		return xstrdup("");
	/* the last three lines */
	size_t start = len, lines = 0;
	while (start > 0 && lines < 4)
		if (text[--start] == '\n')
			lines++;
	char *tail = xstrdup(text + (start && text[start] == '\n' ? start + 1 : start));
	free(text);
	return tail;
}

/* Start `s0 serve` detached; returns its pid, and the read end of the ready pipe. */
static pid_t spawn_server(const char *data_dir, const char *log_path, int *ready_fd, char **why)
{
	int p[2];
	int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log < 0) {
		*why = xasprintf("cannot open %s: %s", log_path, strerror(errno));
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		*why = xasprintf("pipe: %s", strerror(errno));
		close(log);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		*why = xasprintf("fork: %s", strerror(errno));
		close(log);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* child: only async-signal-safe calls until exec */
		char fdenv[48];
		int devnull = open("/dev/null", O_RDONLY);
		setsid();
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(log, 1);
		dup2(log, 2);
		int wfd = dup(p[1]); /* without O_CLOEXEC, so it survives exec */
		snprintf(fdenv, sizeof fdenv, "S0_SERVE_READY_FD=%d", wfd);
		char *const argv[] = {"s0", "serve", "--data", (char *)data_dir, "--listen",
		                      "127.0.0.1:0", NULL};
		char *const envp_extra = fdenv;
		putenv(envp_extra);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(log);
	close(p[1]);
	*ready_fd = p[0];
	return pid;
}

int localsrv_ensure(const char *data_dir, char **url_out, char **token_out, char **why_out)
{
	char *url = live_server(data_dir);
	char *why = NULL;
	if (!url) {
		if (mkdir_p(data_dir, 0700) < 0) {
			*why_out = xasprintf("cannot create the data directory %s: %s", data_dir,
			                     strerror(errno));
			return -1;
		}
		char *log_path = xasprintf("%s/server.log", data_dir);
		int ready_fd = -1;
		pid_t pid = spawn_server(data_dir, log_path, &ready_fd, &why);
		if (pid < 0) {
			free(log_path);
			*why_out = why;
			return -1;
		}
		/* wait for "ready" or EOF (the child exited), bounded */
		double deadline = mono_now_s() + START_BUDGET_MS / 1000.0;
		bool ready = false, eof = false;
		char buf[16];
		while (!ready && !eof) {
			int left = (int)((deadline - mono_now_s()) * 1000);
			if (left <= 0 || wait_fd(ready_fd, POLLIN, left) <= 0)
				break;
			ssize_t r = read(ready_fd, buf, sizeof buf);
			if (r > 0)
				ready = true;
			else if (r == 0 || errno != EINTR)
				eof = true;
		}
		close(ready_fd);
		int status = 0;
		bool exited = false;
		if (!ready) {
			/* EOF without "ready": it is exiting; no answer in time: stop it */
			if (!eof)
				kill(pid, SIGKILL);
			exited = waitpid(pid, &status, 0) == pid;
		}
		bool lost_race = exited && WIFEXITED(status) &&
		                 WEXITSTATUS(status) == SERVE_EXIT_LOCKED;
		/* our server, or the one that won a race, announces itself */
		do {
			url = live_server(data_dir);
			if (url || !lost_race)
				break;
			wait_fd(-1, 0, 50);
		} while (mono_now_s() < deadline);
		if (!url) {
			char *tail = log_tail(log_path);
			*why_out = xasprintf("could not start the local server (s0 serve --data %s); "
			                     "the end of %s:\n%s",
			                     data_dir, log_path, tail);
			free(tail);
			free(log_path);
			if (!exited)
				kill(pid, SIGTERM); /* it answered "ready" but is not healthy */
			return -1;
		}
		if (!lost_race)
			fprintf(stderr, "s0: started a local server at %s (data in %s, log in %s)\n", url,
			        data_dir, log_path);
		free(log_path);
	}
	char *token = localsrv_read_token(data_dir, &why);
	if (!token) {
		*why_out = why ? why : xasprintf("no key in %s/cli-token", data_dir);
		free(url);
		return -1;
	}
	*url_out = url;
	*token_out = token;
	return 0;
}
