/* The driver's side of procd (gv_procd.h, procd/procd_proto.h). */
#include "local/runtime/gvisor/gv_procd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/deadline.h"
#include "local/runtime/gvisor/procd/procd_path.h"
#include "local/runtime/gvisor/procd/procd_proto.h"

/** How long closing a channel waits for procd's end of file, ms. */
#define CLOSE_WAIT_MS 10000

struct s0__gv_pp {
	s0__gv_pd *pd;
	uint32_t id;
	int32_t pid;
	bool answered;    /* STARTED or FAILED came */
	int fail_errno;   /* FAILED */
	char *fail_msg;
	s0__buf out, err; /* not yet read */
	bool exited;
	int status;
	bool stdin_pipe, stdin_closed;
	struct s0__gv_pp *next;
};

struct s0__gv_pd {
	int to_fd, from_fd;
	int stop_fd;         /* eventfd: the reader stops when it is written */
	pthread_t reader;
	bool reader_started;
	pthread_mutex_t mu;  /* everything below, and every s0__gv_pp of the channel */
	pthread_cond_t cv;   /* any change */
	pthread_mutex_t wmu; /* writes to to_fd */
	bool hello, gone;
	char version[64];
	uint32_t next_id;
	uint32_t pings_sent, pings_back;
	s0__gv_pp *procs;
};

static bool executable(const char *p)
{
	struct stat st;
	return p && p[0] == '/' && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int s0__gv_procd_find(char **out, s0_error **err)
{
	const char *env = getenv("S0_PROCD");
	if (env && *env) {
		if (!executable(env))
			return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
			                     "S0_PROCD=%s is not an executable file", env);
		return (*out = s0__strdup(env)) ? S0_OK : s0__error_nomem(err);
	}
	const char *cand[] = {S0__GV_PROCD_BUILD, S0__GV_PROCD_INSTALL};
	for (size_t i = 0; i < 2; i++)
		if (executable(cand[i]))
			return (*out = s0__strdup(cand[i])) ? S0_OK : s0__error_nomem(err);
	return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
	                     "procd not found (S0_PROCD unset, no %s, no %s): build or install "
	                     "libsandbox0",
	                     S0__GV_PROCD_BUILD, S0__GV_PROCD_INSTALL);
}

static void put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read exactly @p len bytes, unless @p stop_fd becomes readable first. */
static bool read_full(int fd, int stop_fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			return false;
		if (pf[1].revents)
			return false;
		if (!pf[0].revents)
			continue;
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* One frame to procd. @return false when the channel is broken. */
static bool send_frame(s0__gv_pd *pd, int type, uint32_t id, const void *pl, size_t len)
{
	unsigned char h[S0__PD_HDR];
	put_u32(h, (uint32_t)(5 + len));
	h[4] = (unsigned char)type;
	put_u32(h + 5, id);
	pthread_mutex_lock(&pd->wmu);
	bool ok = true;
	for (int part = 0; ok && part < 2; part++) {
		const char *p = part ? pl : (const char *)h;
		size_t left = part ? len : sizeof h;
		while (left) {
			ssize_t n = write(pd->to_fd, p, left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				ok = false;
				break;
			}
			p += n;
			left -= (size_t)n;
		}
	}
	pthread_mutex_unlock(&pd->wmu);
	return ok;
}

static s0__gv_pp *find(s0__gv_pd *pd, uint32_t id)
{
	for (s0__gv_pp *p = pd->procs; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

/* procd is gone: every process ended by SIGKILL (with the lock held). */
static void mark_gone(s0__gv_pd *pd)
{
	pd->gone = true;
	for (s0__gv_pp *p = pd->procs; p; p = p->next) {
		if (!p->answered) {
			p->answered = true;
			p->fail_errno = EPIPE;
		}
		if (!p->exited) {
			p->exited = true;
			p->status = SIGKILL; /* a wait status: killed by SIGKILL */
		}
	}
	pthread_cond_broadcast(&pd->cv);
}

static void dispatch(s0__gv_pd *pd, int type, uint32_t id, const unsigned char *pl, size_t len)
{
	if (type == S0__PD_HELLO) {
		snprintf(pd->version, sizeof pd->version, "%.*s", (int)(len < 63 ? len : 63),
		         (const char *)pl);
		pd->hello = true;
		return;
	}
	if (type == S0__PD_PING) {
		pd->pings_back++;
		return;
	}
	s0__gv_pp *p = find(pd, id);
	if (!p)
		return; /* a forgotten process */
	switch (type) {
	case S0__PD_STARTED:
		p->answered = true;
		p->pid = len >= 4 ? (int32_t)get_u32(pl) : 0;
		break;
	case S0__PD_FAILED:
		p->answered = true;
		p->exited = true;
		p->fail_errno = len >= 4 ? (int)get_u32(pl) : EINVAL;
		free(p->fail_msg);
		p->fail_msg = len > 4 ? s0__strndup((const char *)pl + 4, len - 4) : NULL;
		break;
	case S0__PD_OUT:
	case S0__PD_ERR:
		s0__buf_put(type == S0__PD_OUT ? &p->out : &p->err, pl, len);
		break;
	case S0__PD_EXIT:
		p->exited = true;
		p->status = len >= 4 ? (int)get_u32(pl) : 0;
		break;
	default:
		break; /* S0__PD_CLOSED: nothing more comes */
	}
}

static void *reader_main(void *arg)
{
	s0__gv_pd *pd = arg;
	unsigned char *pl = malloc(S0__PD_FRAME_MAX);
	unsigned char h[S0__PD_HDR];
	while (pl && read_full(pd->from_fd, pd->stop_fd, h, sizeof h)) {
		uint32_t flen = get_u32(h);
		if (flen < 5 || flen > S0__PD_FRAME_MAX - 4)
			break;
		size_t len = flen - 5;
		if (len && !read_full(pd->from_fd, pd->stop_fd, pl, len))
			break;
		pthread_mutex_lock(&pd->mu);
		dispatch(pd, h[4], get_u32(h + 5), pl, len);
		pthread_cond_broadcast(&pd->cv);
		pthread_mutex_unlock(&pd->mu);
	}
	free(pl);
	pthread_mutex_lock(&pd->mu);
	mark_gone(pd);
	pthread_mutex_unlock(&pd->mu);
	return NULL;
}

static void deadline_after(struct timespec *ts, int64_t ms)
{
	*ts = s0__deadline_after_ms(CLOCK_MONOTONIC, ms);
}

/* Wait on the condition (lock held) until @p dl; false once it passed. */
static bool wait_until(s0__gv_pd *pd, const struct timespec *dl)
{
	return pthread_cond_timedwait(&pd->cv, &pd->mu, dl) != ETIMEDOUT;
}

/* The channel with its reader thread started (no frame waited for). */
static int pd_start(int to_fd, int from_fd, s0__gv_pd **out, s0_error **err)
{
	s0__gv_pd *pd = calloc(1, sizeof *pd);
	if (!pd) {
		close(to_fd);
		close(from_fd);
		return s0__error_nomem(err);
	}
	pd->to_fd = to_fd;
	pd->from_fd = from_fd;
	pd->stop_fd = eventfd(0, EFD_CLOEXEC);
	pthread_mutex_init(&pd->mu, NULL);
	pthread_mutex_init(&pd->wmu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pd->cv, &ca);
	pthread_condattr_destroy(&ca);
	signal(SIGPIPE, SIG_IGN); /* a dead procd must not kill the server */
	if (pd->stop_fd < 0 || pthread_create(&pd->reader, NULL, reader_main, pd) != 0) {
		s0__gv_pd_close(pd);
		return s0__error_nomem(err);
	}
	pd->reader_started = true;
	*out = pd;
	return S0_OK;
}

int s0__gv_pd_open(int to_fd, int from_fd, int64_t timeout_ms, const char *log_path,
                   s0__gv_pd **out, s0_error **err)
{
	s0__gv_pd *pd = NULL;
	int rc = pd_start(to_fd, from_fd, &pd, err);
	if (rc < 0)
		return rc;
	struct timespec dl;
	deadline_after(&dl, timeout_ms);
	pthread_mutex_lock(&pd->mu);
	while (!pd->hello && !pd->gone && wait_until(pd, &dl))
		;
	bool ok = pd->hello;
	pthread_mutex_unlock(&pd->mu);
	if (ok) {
		*out = pd;
		return S0_OK;
	}
	char log[400] = "";
	FILE *f = log_path ? fopen(log_path, "re") : NULL;
	if (f) {
		size_t n = fread(log, 1, sizeof log - 1, f);
		log[n] = 0;
		fclose(f);
	}
	s0__gv_pd_close(pd);
	return s0__error_set(err, S0_EUNAVAILABLE, "procd_not_ready",
	                     "procd did not start in the sandbox: %s", *log ? log : "no hello");
}

int s0__gv_pd_attach(int to_fd, int from_fd, int64_t timeout_ms, s0__gv_pd **out,
                     s0_error **err)
{
	s0__gv_pd *pd = NULL;
	int rc = pd_start(to_fd, from_fd, &pd, err);
	/* procd still knows the ids of the processes it started for the channel
	 * before the checkpoint (still running, or ended and not yet forgotten):
	 * this channel numbers its own from a random point of the id space */
	uint32_t base = 0;
	if (rc == S0_OK && getrandom(&base, sizeof base, 0) != (ssize_t)sizeof base)
		base = (uint32_t)time(NULL) * 2654435761u;
	if (rc == S0_OK)
		pd->next_id = (base & 0x7fffffffu) | 0x00100000u;
	if (rc == S0_OK)
		rc = s0__gv_pd_ping(pd, timeout_ms, err);
	if (rc == S0_OK) {
		snprintf(pd->version, sizeof pd->version, "%s", "restored");
		*out = pd;
		return S0_OK;
	}
	s0__gv_pd_close(pd);
	return rc;
}

void s0__gv_pd_close(s0__gv_pd *pd)
{
	if (!pd)
		return;
	if (pd->to_fd >= 0)
		close(pd->to_fd); /* procd sees end of file: it kills everything and exits */
	pd->to_fd = -1;
	if (pd->reader_started) {
		/* the reader ends at the end of file of procd's stdout — every
		 * holder of the pipe gone: procd and the runsc sandbox process —
		 * or, after CLOSE_WAIT_MS, now (a procd that never said hello) */
		struct timespec dl;
		deadline_after(&dl, CLOSE_WAIT_MS);
		pthread_mutex_lock(&pd->mu);
		while (!pd->gone && wait_until(pd, &dl))
			;
		pthread_mutex_unlock(&pd->mu);
		uint64_t one = 1;
		ssize_t w = write(pd->stop_fd, &one, sizeof one);
		(void)w;
		pthread_join(pd->reader, NULL);
	}
	if (pd->stop_fd >= 0)
		close(pd->stop_fd);
	close(pd->from_fd);
	for (s0__gv_pp *p = pd->procs, *n; p; p = n) {
		n = p->next;
		s0__buf_free(&p->out);
		s0__buf_free(&p->err);
		free(p->fail_msg);
		free(p);
	}
	pthread_cond_destroy(&pd->cv);
	pthread_mutex_destroy(&pd->mu);
	pthread_mutex_destroy(&pd->wmu);
	free(pd);
}

bool s0__gv_pd_gone(s0__gv_pd *pd)
{
	pthread_mutex_lock(&pd->mu);
	bool g = pd->gone;
	pthread_mutex_unlock(&pd->mu);
	return g;
}

const char *s0__gv_pd_version(const s0__gv_pd *pd)
{
	return pd->version;
}

static int gone(s0_error **err)
{
	return s0__error_set(err, S0_EUNAVAILABLE, "procd_gone",
	                     "the sandbox's init (procd) is gone");
}

int s0__gv_pd_ping(s0__gv_pd *pd, int64_t timeout_ms, s0_error **err)
{
	pthread_mutex_lock(&pd->mu);
	uint32_t want = ++pd->pings_sent;
	pthread_mutex_unlock(&pd->mu);
	if (!send_frame(pd, S0__PD_PING, 0, NULL, 0))
		return gone(err);
	struct timespec dl;
	deadline_after(&dl, timeout_ms);
	pthread_mutex_lock(&pd->mu);
	while (pd->pings_back < want && !pd->gone && wait_until(pd, &dl))
		;
	bool ok = pd->pings_back >= want, was_gone = pd->gone;
	pthread_mutex_unlock(&pd->mu);
	if (ok)
		return S0_OK;
	return was_gone ? gone(err)
	                : s0__error_set(err, S0_EUNAVAILABLE, "procd_not_ready",
	                                "procd did not answer in %lld ms", (long long)timeout_ms);
}

/* u32 count and the strings, each NUL-terminated. */
static int put_vec(s0__buf *b, char *const *v)
{
	uint32_t n = 0;
	while (v && v[n])
		n++;
	unsigned char c[4];
	put_u32(c, n);
	int rc = s0__buf_put(b, c, 4);
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		rc = s0__buf_put(b, v[i], strlen(v[i]) + 1);
	return rc;
}

static void unlink_pp(s0__gv_pd *pd, s0__gv_pp *pp)
{
	for (s0__gv_pp **q = &pd->procs; *q; q = &(*q)->next)
		if (*q == pp) {
			*q = pp->next;
			break;
		}
}

static void pp_destroy(s0__gv_pp *pp)
{
	s0__buf_free(&pp->out);
	s0__buf_free(&pp->err);
	free(pp->fail_msg);
	free(pp);
}

int s0__gv_pp_spawn(s0__gv_pd *pd, char *const *argv, char *const *env, const char *cwd,
                    bool with_stdin, int64_t timeout_ms, s0__gv_pp **out, s0_error **err)
{
	if (!argv || !argv[0] || !*argv[0])
		return s0__error_set(err, S0_EINVAL, "invalid_request", "an empty command");
	s0__gv_pp *pp = calloc(1, sizeof *pp);
	if (!pp)
		return s0__error_nomem(err);
	pp->pd = pd;
	pp->stdin_pipe = with_stdin;
	s0__buf b = {0};
	unsigned char fl[4];
	put_u32(fl, with_stdin ? S0__PD_F_STDIN : 0);
	const char *dir = cwd && *cwd ? cwd : "/";
	if (s0__buf_put(&b, fl, 4) || s0__buf_put(&b, dir, strlen(dir) + 1) || put_vec(&b, argv) ||
	    put_vec(&b, env)) {
		s0__buf_free(&b);
		free(pp);
		return s0__error_nomem(err);
	}
	if (b.len + S0__PD_HDR > S0__PD_FRAME_MAX) {
		s0__buf_free(&b);
		free(pp);
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "the command and environment are too long");
	}
	pthread_mutex_lock(&pd->mu);
	bool was_gone = pd->gone;
	if (!was_gone) {
		pp->id = ++pd->next_id;
		pp->next = pd->procs;
		pd->procs = pp;
	}
	pthread_mutex_unlock(&pd->mu);
	bool sent = !was_gone && send_frame(pd, S0__PD_SPAWN, pp->id, b.data, b.len);
	s0__buf_free(&b);
	struct timespec dl;
	deadline_after(&dl, timeout_ms);
	pthread_mutex_lock(&pd->mu);
	while (sent && !pp->answered && !pd->gone && wait_until(pd, &dl))
		;
	int rc = S0_OK;
	if (!sent || pd->gone || !pp->answered)
		rc = pd->gone || !sent ? gone(err)
		                       : s0__error_set(err, S0_EUNAVAILABLE, "procd_not_ready",
		                                       "procd did not answer in %lld ms",
		                                       (long long)timeout_ms);
	else if (pp->fail_errno)
		rc = s0__error_set(err, S0_EINVAL, "command_failed", "cannot run %s: %s", argv[0],
		                   pp->fail_msg ? pp->fail_msg : strerror(pp->fail_errno));
	if (rc < 0 && !was_gone)
		unlink_pp(pd, pp);
	pthread_mutex_unlock(&pd->mu);
	if (rc < 0) {
		pp_destroy(pp);
		return rc;
	}
	*out = pp;
	return S0_OK;
}

int32_t s0__gv_pp_pid(const s0__gv_pp *pp)
{
	return pp->pid;
}

uint32_t s0__gv_pp_id(const s0__gv_pp *pp)
{
	return pp->id;
}

int s0__gv_pp_adopt(s0__gv_pd *pd, uint32_t id, int32_t pid, bool with_stdin, s0__gv_pp **out,
                    s0_error **err)
{
	s0__gv_pp *pp = calloc(1, sizeof *pp);
	if (!pp)
		return s0__error_nomem(err);
	*pp = (s0__gv_pp){.pd = pd, .id = id, .pid = pid, .answered = true, .stdin_pipe = with_stdin};
	pthread_mutex_lock(&pd->mu);
	bool was_gone = pd->gone || find(pd, id);
	if (!was_gone) {
		pp->next = pd->procs;
		pd->procs = pp;
	}
	pthread_mutex_unlock(&pd->mu);
	if (was_gone) {
		free(pp);
		return gone(err);
	}
	*out = pp;
	return S0_OK;
}

size_t s0__gv_pp_read(s0__gv_pp *pp, s0__buf *out, s0__buf *err, int wait_ms)
{
	s0__gv_pd *pd = pp->pd;
	pthread_mutex_lock(&pd->mu);
	if (wait_ms > 0 && !pp->out.len && !pp->err.len && !pp->exited) {
		struct timespec dl;
		deadline_after(&dl, wait_ms);
		while (!pp->out.len && !pp->err.len && !pp->exited && wait_until(pd, &dl))
			;
	}
	size_t n = pp->out.len + pp->err.len;
	if (pp->out.len)
		s0__buf_put(out, pp->out.data, pp->out.len);
	if (pp->err.len)
		s0__buf_put(err, pp->err.data, pp->err.len);
	s0__buf_reset(&pp->out);
	s0__buf_reset(&pp->err);
	pthread_mutex_unlock(&pd->mu);
	return n;
}

bool s0__gv_pp_exited(s0__gv_pp *pp, int *status_out)
{
	pthread_mutex_lock(&pp->pd->mu);
	bool e = pp->exited;
	if (e && status_out)
		*status_out = pp->status;
	pthread_mutex_unlock(&pp->pd->mu);
	return e;
}

bool s0__gv_pp_stdin_open(const s0__gv_pp *pp)
{
	return pp && pp->stdin_pipe && !pp->stdin_closed && !s0__gv_pp_exited((s0__gv_pp *)pp, NULL);
}

int s0__gv_pp_write(s0__gv_pp *pp, const void *data, size_t len, s0_error **err)
{
	if (!s0__gv_pp_stdin_open(pp))
		return s0__error_set(err, S0_EGONE, "process_finished", "process has finished");
	const char *p = data;
	while (len) { /* an empty INPUT frame would close stdin: send only bytes */
		size_t n = len < S0__PD_CHUNK ? len : S0__PD_CHUNK;
		if (!send_frame(pp->pd, S0__PD_INPUT, pp->id, p, n))
			return gone(err);
		p += n;
		len -= n;
	}
	return S0_OK;
}

void s0__gv_pp_close_stdin(s0__gv_pp *pp)
{
	if (!pp || !pp->stdin_pipe || pp->stdin_closed)
		return;
	pp->stdin_closed = true;
	send_frame(pp->pd, S0__PD_INPUT, pp->id, NULL, 0);
}

int s0__gv_pp_signal(s0__gv_pp *pp, int signo, s0_error **err)
{
	if (!pp || s0__gv_pp_exited(pp, NULL))
		return s0__error_set(err, S0_ECONFLICT, "process_not_running",
		                     "process is not running");
	unsigned char b[4];
	put_u32(b, (uint32_t)signo);
	return send_frame(pp->pd, S0__PD_KILL, pp->id, b, 4) ? S0_OK : gone(err);
}

void s0__gv_pp_free(s0__gv_pp *pp)
{
	if (!pp)
		return;
	s0__gv_pd *pd = pp->pd;
	if (!s0__gv_pp_exited(pp, NULL)) {
		unsigned char b[4];
		put_u32(b, SIGKILL);
		send_frame(pd, S0__PD_KILL, pp->id, b, 4);
	}
	pthread_mutex_lock(&pd->mu);
	unlink_pp(pd, pp);
	pthread_mutex_unlock(&pd->mu);
	pp_destroy(pp);
}
