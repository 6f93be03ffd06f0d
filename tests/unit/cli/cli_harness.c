/* Running s0 from the tests: spawn, capture, normalise, compare (cli_harness.h). */
#include "cli_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define RUN_BUDGET_MS 120000
#define SERVE_BUDGET_MS 30000

static char **env;
static size_t env_n;
static char *home_dir;

static void *xalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p)
		abort();
	return p;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* ---- environment ---- */

void h_env_set(const char *name, const char *value)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < env_n; i++)
		if (!strncmp(env[i], name, nl) && env[i][nl] == '=') {
			free(env[i]);
			if (value) {
				env[i] = fmt("%s=%s", name, value);
			} else {
				env[i] = env[--env_n];
				env[env_n] = NULL;
			}
			return;
		}
	if (!value)
		return;
	env = realloc(env, (env_n + 2) * sizeof *env);
	if (!env)
		abort();
	env[env_n++] = fmt("%s=%s", name, value);
	env[env_n] = NULL;
}

void h_env_reset(const char *home)
{
	for (size_t i = 0; i < env_n; i++)
		free(env[i]);
	free(env);
	env = NULL;
	env_n = 0;
	for (char **e = environ; *e; e++) {
		if (!strncmp(*e, "SANDBOX0_", 9) || !strncmp(*e, "S0_", 3) || !strncmp(*e, "HOME=", 5))
			continue;
		env = realloc(env, (env_n + 2) * sizeof *env);
		if (!env)
			abort();
		env[env_n++] = strdup(*e);
		env[env_n] = NULL;
	}
	free(home_dir);
	home_dir = strdup(home);
	h_env_set("HOME", home);
	/* s0 serve, the per-user server and s0 demo default to --runtime auto;
	 * these tests mean the simulated runtime (its shell, faults, manual
	 * clock), wherever gvisor could run. Tests of the choice unset it. */
	h_env_set("S0_RUNTIME", "sim");
	char *data = fmt("%s/data", home);
	h_env_set("S0_DATA_DIR", data);
	free(data);
}

/* ---- running ---- */

typedef struct sbuf {
	char *d;
	size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		while (b->n + n + 1 > b->cap)
			b->cap = b->cap ? b->cap * 2 : 1024;
		b->d = realloc(b->d, b->cap);
		if (!b->d)
			abort();
	}
	memcpy(b->d + b->n, s, n);
	b->n += n;
	b->d[b->n] = 0;
}

static void sb_puts(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static char *sb_take(sbuf *b)
{
	if (!b->d)
		sb_put(b, "", 0);
	return b->d;
}

static const char *s0_path(void)
{
	const char *p = getenv("S0_CLI");
	return p && *p ? p : "s0";
}

static pid_t spawn(const char *const *argv, int in_fd, int out_fd, int err_fd)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **av = xalloc((n + 2) * sizeof *av);
	av[0] = (char *)"s0";
	for (size_t i = 0; i < n; i++)
		av[i + 1] = (char *)argv[i];
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in_fd, 0);
		dup2(out_fd, 1);
		dup2(err_fd, 2);
		execve(s0_path(), av, env);
		_exit(127);
	}
	free(av);
	return pid;
}

static int exit_status(int ws)
{
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : -1;
}

cli_run h_run(const char *const *argv, const char *stdin_data)
{
	cli_run r = {0};
	int in[2], out[2], err[2];
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		abort();
	pid_t pid = spawn(argv, in[0], out[1], err[1]);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (stdin_data) {
		size_t len = strlen(stdin_data);
		if (write(in[1], stdin_data, len) != (ssize_t)len) {
			/* the program did not read it all; its output says why */
		}
	}
	close(in[1]);
	sbuf o = {0}, e = {0};
	struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
	double deadline = now_ms() + RUN_BUDGET_MS;
	int open_fds = 2;
	bool timed_out = false;
	while (open_fds) {
		int left = (int)(deadline - now_ms());
		if (left <= 0) {
			timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(p, 2, left) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			char buf[8192];
			ssize_t n = read(p[i].fd, buf, sizeof buf);
			if (n > 0) {
				sb_put(i ? &e : &o, buf, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(p[i].fd);
				p[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	int ws = 0;
	waitpid(pid, &ws, 0);
	r.status = timed_out ? -1 : exit_status(ws);
	r.out = sb_take(&o);
	r.err = sb_take(&e);
	return r;
}

void h_run_free(cli_run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

/* ---- transcripts and normalisation ---- */

#define MAX_IDS 64

struct transcript {
	char *name;
	sbuf text;
	struct {
		char *raw;
		char *norm;
	} ids[MAX_IDS];
	int nids;
	int counters[5];
};

transcript *t_new(const char *name)
{
	transcript *t = xalloc(sizeof *t);
	t->name = strdup(name);
	return t;
}

void t_free(transcript *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nids; i++) {
		free(t->ids[i].raw);
		free(t->ids[i].norm);
	}
	free(t->text.d);
	free(t->name);
	free(t);
}

void t_note(transcript *t, const char *text)
{
	sb_puts(&t->text, "# ");
	sb_puts(&t->text, text);
	sb_puts(&t->text, "\n\n");
}

cli_run t_cmd(transcript *t, const char *const *argv)
{
	cli_run r = h_run(argv, NULL);
	sb_puts(&t->text, "$ s0");
	for (const char *const *a = argv; *a; a++) {
		sb_puts(&t->text, " ");
		sb_puts(&t->text, *a);
	}
	sb_puts(&t->text, "\n");
	sb_puts(&t->text, r.out);
	if (*r.out && r.out[strlen(r.out) - 1] != '\n')
		sb_puts(&t->text, "\n[no final newline]\n");
	if (*r.err) {
		sb_puts(&t->text, "[stderr]\n");
		sb_puts(&t->text, r.err);
		if (r.err[strlen(r.err) - 1] != '\n')
			sb_puts(&t->text, "\n");
	}
	char st[32];
	snprintf(st, sizeof st, "[exit %d]\n\n", r.status);
	sb_puts(&t->text, st);
	return r;
}

typedef const char *(*replacer)(transcript *t, const char *match, size_t len, char *buf,
                                size_t buf_len);

static char *replace_all(transcript *t, const char *text, const char *pattern, replacer fn)
{
	regex_t re;
	if (regcomp(&re, pattern, REG_EXTENDED))
		abort();
	sbuf out = {0};
	const char *p = text;
	regmatch_t m;
	int flags = 0;
	while (*p && regexec(&re, p, 1, &m, flags) == 0) {
		if (m.rm_eo == m.rm_so) { /* empty match: copy one byte and go on */
			sb_put(&out, p, 1);
			p++;
			flags = REG_NOTBOL;
			continue;
		}
		char buf[128];
		sb_put(&out, p, (size_t)m.rm_so);
		sb_puts(&out, fn(t, p + m.rm_so, (size_t)(m.rm_eo - m.rm_so), buf, sizeof buf));
		p += m.rm_eo;
		flags = REG_NOTBOL;
	}
	sb_puts(&out, p);
	regfree(&re);
	return sb_take(&out);
}

static const char *r_time(transcript *t, const char *m, size_t len, char *buf, size_t bl)
{
	(void)t;
	if (len >= 10 && !strncmp(m, "0001-01-01", 10)) {
		snprintf(buf, bl, "%.*s", (int)len, m);
		return buf;
	}
	return "<TIME>";
}

static const char *r_port(transcript *t, const char *m, size_t len, char *buf, size_t bl)
{
	(void)t;
	(void)m;
	(void)len;
	snprintf(buf, bl, "127.0.0.1:<PORT>");
	return buf;
}

static const char *r_fixed(transcript *t, const char *m, size_t len, char *buf, size_t bl)
{
	(void)t;
	(void)len;
	/* keep a leading character class the pattern needed for context */
	snprintf(buf, bl, "%s", m[0] == ' ' ? " <DUR>s" : "<DUR>s");
	return buf;
}

static const char *r_key(transcript *t, const char *m, size_t len, char *buf, size_t bl)
{
	(void)t;
	(void)m;
	(void)len;
	(void)bl;
	(void)buf;
	return "<KEY>";
}

static const char *r_id(transcript *t, const char *m, size_t len, char *buf, size_t bl)
{
	static const char *const prefixes[] = {"sb_", "snap_", "rt_", "pod-", "key_"};
	static const char *const names[] = {"SB", "SNAP", "RT", "POD", "KEYID"};
	/* the pattern includes the character before the id (a word boundary) */
	char lead[2] = {0, 0};
	if (len && !(*m >= 'a' && *m <= 'z')) {
		lead[0] = *m;
		m++;
		len--;
	}
	for (int i = 0; i < t->nids; i++)
		if (strlen(t->ids[i].raw) == len && !strncmp(t->ids[i].raw, m, len)) {
			snprintf(buf, bl, "%s%s", lead, t->ids[i].norm);
			return buf;
		}
	int kind = 0;
	for (int k = 0; k < 5; k++)
		if (!strncmp(m, prefixes[k], strlen(prefixes[k])))
			kind = k;
	if (t->nids == MAX_IDS) {
		snprintf(buf, bl, "<%s?>", names[kind]);
		return buf;
	}
	t->ids[t->nids].raw = strndup(m, len);
	t->ids[t->nids].norm = fmt("<%s%d>", names[kind], ++t->counters[kind]);
	snprintf(buf, bl, "%s%s", lead, t->ids[t->nids++].norm);
	return buf;
}

static const char *r_home(transcript *t, const char *m, size_t len, char *buf, size_t bl)
{
	(void)t;
	(void)m;
	(void)len;
	(void)buf;
	(void)bl;
	return "<HOME>";
}

static char *regex_quote(const char *s)
{
	sbuf b = {0};
	for (; *s; s++) {
		if (strchr(".[]{}()\\*+?^$|", *s))
			sb_put(&b, "\\", 1);
		sb_put(&b, s, 1);
	}
	return sb_take(&b);
}

char *h_normalise(transcript *t, const char *text)
{
	static const struct {
		const char *re;
		replacer fn;
	} rules[] = {
		{"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?",
		 r_time},
		{"(127\\.0\\.0\\.1|localhost):[0-9]+", r_port},
		{"s0_[a-z0-9]{40}", r_key},
		{"(^|[^A-Za-z0-9_])(sb_|snap_|rt_|pod-|key_)[a-z0-9]+", r_id},
		{"[0-9]+\\.[0-9]+s", r_fixed},
	};
	char *cur = strdup(text);
	if (home_dir) {
		char *q = regex_quote(home_dir);
		char *next = replace_all(t, cur, q, r_home);
		free(q);
		free(cur);
		cur = next;
	}
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		char *next = replace_all(t, cur, rules[i].re, rules[i].fn);
		free(cur);
		cur = next;
	}
	return cur;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	sbuf b = {0};
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sb_put(&b, buf, n);
	fclose(f);
	return sb_take(&b);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

bool t_check(transcript *t)
{
	const char *dir = getenv("S0_CLI_GOLDEN");
	char *actual = h_normalise(t, sb_take(&t->text));
	char *golden_path = fmt("%s/%s.txt", dir ? dir : "golden", t->name);
	const char *update = getenv("S0_UPDATE_GOLDEN");
	bool ok = true;
	if (update && !strcmp(update, "1")) {
		write_text(golden_path, actual);
		fprintf(stderr, "rewrote %s\n", golden_path);
	} else {
		char *golden = read_file(golden_path);
		ok = golden && !strcmp(golden, actual);
		if (!ok) {
			char *actual_path = fmt("%s.actual", t->name);
			write_text(actual_path, actual);
			/* the first line that differs */
			const char *a = actual, *g = golden ? golden : "";
			int line = 1;
			while (*a && *a == *g) {
				if (*a == '\n')
					line++;
				a++;
				g++;
			}
			fprintf(stderr,
			        "golden mismatch for %s at line %d (actual text in %s; "
			        "S0_UPDATE_GOLDEN=1 rewrites)\n  want: %.*s\n  got:  %.*s\n",
			        golden_path, line, actual_path, (int)strcspn(g, "\n"), g,
			        (int)strcspn(a, "\n"), a);
			free(actual_path);
		}
		free(golden);
	}
	free(golden_path);
	free(actual);
	return ok;
}

char *h_json_str(const char *json, const char *key)
{
	char *pat = fmt("\"%s\": \"", key);
	const char *p = strstr(json, pat);
	char *v = NULL;
	if (p) {
		p += strlen(pat);
		const char *e = strchr(p, '"');
		if (e)
			v = strndup(p, (size_t)(e - p));
	}
	free(pat);
	return v;
}

/* ---- s0 serve ---- */

bool h_wait_gone(pid_t pid, int timeout_ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == ESRCH;
	struct pollfd p = {fd, POLLIN, 0};
	int rc;
	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	close(fd);
	return rc > 0;
}

bool h_serve_start(serve_proc *s, const char *data, const char *const *extra)
{
	const char *argv[16] = {"serve", "--data", data, "--listen", "127.0.0.1:0"};
	int n = 5;
	for (const char *const *e = extra; e && *e && n < 15; e++)
		argv[n++] = *e;
	argv[n] = NULL;
	memset(s, 0, sizeof *s);
	int out[2];
	if (pipe2(out, O_CLOEXEC))
		abort();
	char *err_path = fmt("%s.serve-stderr", data);
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	s->pid = spawn(argv, in, out[1], err);
	close(in);
	close(err);
	close(out[1]);
	s->out_fd = out[0];
	sbuf o = {0};
	double deadline = now_ms() + SERVE_BUDGET_MS;
	bool ok = false;
	while (!ok) {
		int left = (int)(deadline - now_ms());
		struct pollfd p = {s->out_fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		char buf[4096];
		ssize_t r = read(s->out_fd, buf, sizeof buf);
		if (r <= 0)
			break;
		sb_put(&o, buf, (size_t)r);
		const char *l = strstr(o.d, "Listening on ");
		if (l && strchr(l, '\n')) {
			sscanf(l, "Listening on %127s", s->url);
			const char *k = strstr(o.d, "API key");
			if (k && (k = strstr(k, "s0_")))
				sscanf(k, "%127s", s->key);
			ok = true;
		}
	}
	s->out = sb_take(&o);
	if (!ok) {
		char *e = read_file(err_path);
		fprintf(stderr, "s0 serve did not start; stdout:\n%s\nstderr:\n%s\n", s->out,
		        e ? e : "");
		free(e);
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		close(s->out_fd);
		s->pid = 0;
	}
	free(err_path);
	return ok;
}

int h_serve_stop(serve_proc *s)
{
	if (!s->pid)
		return -1;
	kill(s->pid, SIGTERM);
	sbuf o = {0};
	sb_puts(&o, s->out);
	double deadline = now_ms() + SERVE_BUDGET_MS;
	for (;;) {
		int left = (int)(deadline - now_ms());
		struct pollfd p = {s->out_fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		char buf[4096];
		ssize_t r = read(s->out_fd, buf, sizeof buf);
		if (r <= 0)
			break;
		sb_put(&o, buf, (size_t)r);
	}
	close(s->out_fd);
	free(s->out);
	s->out = sb_take(&o);
	int ws = 0, status = -1;
	if (h_wait_gone(s->pid, (int)(deadline - now_ms()) > 0 ? (int)(deadline - now_ms()) : 1) &&
	    waitpid(s->pid, &ws, 0) == s->pid)
		status = exit_status(ws);
	else
		kill(s->pid, SIGKILL), waitpid(s->pid, NULL, 0);
	s->pid = 0;
	return status;
}

/* ---- raw HTTP ---- */

int h_connect(const char *url)
{
	char host[64];
	int port = 0;
	if (sscanf(url, "http://%63[^:]:%d", host, &port) != 2)
		return -1;
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int h_read_status(int fd)
{
	char buf[64];
	size_t got = 0;
	double deadline = now_ms() + 10000;
	while (got < 12) {
		struct pollfd p = {fd, POLLIN, 0};
		int left = (int)(deadline - now_ms());
		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = 0;
	return got >= 12 && !strncmp(buf, "HTTP/1.", 7) ? atoi(buf + 9) : 0;
}

int h_http(const char *url, const char *method, const char *path, const char *auth,
           const char *body)
{
	int fd = h_connect(url);
	if (fd < 0)
		return 0;
	char *auth_line = auth ? fmt("Authorization: %s\r\n", auth) : strdup("");
	char *req = fmt("%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n%s"
	                "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	                method, path, url + 7, auth_line, body ? strlen(body) : 0,
	                body ? body : "");
	size_t len = strlen(req);
	bool sent = send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len;
	free(req);
	free(auth_line);
	int code = sent ? h_read_status(fd) : 0;
	close(fd);
	return code;
}

int h_closed_port(void)
{
	struct sockaddr_in sa = {0};
	socklen_t sl = sizeof sa;
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		abort();
	close(fd);
	return ntohs(sa.sin_port);
}

pid_t h_spawn(const char *const *argv, int *out_fd)
{
	int out[2];
	if (pipe2(out, O_CLOEXEC))
		abort();
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int err = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid_t pid = spawn(argv, in, out[1], err);
	close(in);
	close(err);
	close(out[1]);
	*out_fd = out[0];
	return pid;
}

char *h_read_until(int fd, const char *want, int timeout_ms)
{
	sbuf o = {0};
	double deadline = now_ms() + timeout_ms;
	for (;;) {
		if (o.d && strstr(o.d, want))
			return sb_take(&o);
		int left = (int)(deadline - now_ms());
		struct pollfd p = {fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		char buf[4096];
		ssize_t r = read(fd, buf, sizeof buf);
		if (r <= 0)
			break;
		sb_put(&o, buf, (size_t)r);
	}
	char *got = sb_take(&o);
	fprintf(stderr, "did not see \"%s\" in:\n%s\n", want, got ? got : "");
	free(got);
	return NULL;
}
