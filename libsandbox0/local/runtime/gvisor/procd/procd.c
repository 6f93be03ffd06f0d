/*
 * procd: PID 1 of a gVisor sandbox of the gvisor runtime (docs/local-backend.md
 * "Runtime gvisor"). A small static program: it starts the processes the
 * driver asks for, relays their stdout, stderr and exit, feeds their stdin,
 * signals their process groups, and reaps every process of the sandbox
 * (orphans included). The channel is its own stdin and stdout, framed as
 * procd_proto.h says; stderr is the sandbox's log.
 *
 * One thread, one poll(2) loop over the channel, a signalfd for SIGCHLD and
 * every process's pipes. Writes to the channel block (the driver always
 * reads); writes to a process's stdin never do (queued until it reads).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procd_proto.h"

typedef struct proc {
	uint32_t id;
	pid_t pid;
	int in_fd, out_fd, err_fd;   /* -1 once closed */
	char *pending;               /* stdin bytes not yet taken */
	size_t pend_len;
	int close_in;                /* close stdin once pending is written */
	int exited;                  /* EXIT sent */
	int closed;                  /* CLOSED sent */
	struct proc *next;
} proc;

static proc *procs;

static void die(const char *what)
{
	fprintf(stderr, "procd: %s: %s\n", what, strerror(errno));
	kill(-1, SIGKILL);
	_exit(1);
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

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("channel write");
		p += n;
		len -= (size_t)n;
	}
}

/* One frame to the driver: header, then @p a and @p b (either may be empty). */
static void send_frame(int type, uint32_t id, const void *a, size_t alen, const void *b,
                       size_t blen)
{
	unsigned char h[S0__PD_HDR];
	put_u32(h, (uint32_t)(5 + alen + blen));
	h[4] = (unsigned char)type;
	put_u32(h + 5, id);
	write_all(1, h, sizeof h);
	if (alen)
		write_all(1, a, alen);
	if (blen)
		write_all(1, b, blen);
}

static void send_i32(int type, uint32_t id, int32_t v)
{
	unsigned char b[4];
	put_u32(b, (uint32_t)v);
	send_frame(type, id, b, 4, NULL, 0);
}

static proc *find(uint32_t id)
{
	for (proc *p = procs; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

static int alive(const proc *p)
{
	for (proc *q = procs; q; q = q->next)
		if (q == p)
			return 1;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void forget(proc *p)
{
	for (proc **q = &procs; *q; q = &(*q)->next)
		if (*q == p) {
			*q = p->next;
			break;
		}
	close_fd(&p->in_fd);
	close_fd(&p->out_fd);
	close_fd(&p->err_fd);
	free(p->pending);
	free(p);
}

/* Relay what @p *fd has (up to a few chunks); close it at end of file. */
static void relay(proc *p, int *fd, int type)
{
	static char buf[S0__PD_CHUNK];
	for (int i = 0; i < 16 && *fd >= 0; i++) {
		ssize_t n = read(*fd, buf, sizeof buf);
		if (n > 0) {
			send_frame(type, p->id, buf, (size_t)n, NULL, 0);
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close_fd(fd);
	}
}

static void maybe_closed(proc *p)
{
	if (!p->closed && p->out_fd < 0 && p->err_fd < 0) {
		send_frame(S0__PD_CLOSED, p->id, NULL, 0, NULL, 0);
		p->closed = 1;
	}
	if (p->closed && p->exited)
		forget(p);
}

/* Parse a NUL-terminated string at *off of b[0..len). */
static const char *take_str(const unsigned char *b, size_t len, size_t *off)
{
	const char *s = (const char *)b + *off;
	const void *nul = *off < len ? memchr(s, 0, len - *off) : NULL;
	if (!nul)
		return NULL;
	*off += strlen(s) + 1;
	return s;
}

/* A list of u32 count + strings into a NULL-terminated vector (borrowed). */
static char **take_vec(const unsigned char *b, size_t len, size_t *off)
{
	if (*off + 4 > len)
		return NULL;
	uint32_t n = get_u32(b + *off);
	*off += 4;
	if (n > len)
		return NULL;
	char **v = calloc((size_t)n + 1, sizeof *v);
	for (uint32_t i = 0; v && i < n; i++)
		if (!(v[i] = (char *)take_str(b, len, off))) {
			free(v);
			return NULL;
		}
	return v;
}

static void spawn_failed(uint32_t id, int e, const char *msg)
{
	unsigned char b[4];
	put_u32(b, (uint32_t)e);
	send_frame(S0__PD_FAILED, id, b, 4, msg, strlen(msg));
}

static void do_spawn(uint32_t id, const unsigned char *b, size_t len)
{
	size_t off = 4;
	const char *cwd = len >= 4 ? take_str(b, len, &off) : NULL;
	uint32_t flags = len >= 4 ? get_u32(b) : 0;
	char **argv = cwd ? take_vec(b, len, &off) : NULL;
	char **envp = argv ? take_vec(b, len, &off) : NULL;
	if (!envp || !argv[0] || find(id)) {
		free(argv);
		spawn_failed(id, EINVAL, "bad spawn request");
		return;
	}
	int in[2] = {-1, -1}, out[2], err[2], rep[2];
	if ((flags & S0__PD_F_STDIN ? pipe2(in, O_CLOEXEC) : 0) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0)
		die("pipe");
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int e = 0;
		if (setsid() < 0 || dup2(in[0] >= 0 ? in[0] : null, 0) < 0 || dup2(out[1], 1) < 0 ||
		    dup2(err[1], 2) < 0 || (cwd[0] && chdir(cwd) < 0))
			e = errno;
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		for (char **v = envp; !e && *v; v++) /* over the sandbox's environment */
			if (putenv(*v) != 0)
				e = errno;
		if (!e) {
			execvp(argv[0], argv);
			e = errno;
		}
		ssize_t w = write(rep[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	free(argv);
	free(envp);
	close_fd(&in[0]);
	close(out[1]);
	close(err[1]);
	close(rep[1]);
	int e = 0;
	ssize_t got;
	while ((got = read(rep[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(rep[0]);
	if (pid < 0 || got == (ssize_t)sizeof e) {
		int code = pid < 0 ? errno : e;
		close_fd(&in[1]);
		close(out[0]);
		close(err[0]);
		spawn_failed(id, code, strerror(code)); /* the child (if any) is reaped by the loop */
		return;
	}
	proc *p = calloc(1, sizeof *p);
	if (!p)
		die("calloc");
	*p = (proc){.id = id, .pid = pid, .in_fd = in[1], .out_fd = out[0], .err_fd = err[0]};
	if (p->in_fd >= 0)
		fcntl(p->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
	p->next = procs;
	procs = p;
	send_i32(S0__PD_STARTED, id, pid);
}

static void flush_input(proc *p)
{
	while (p->in_fd >= 0 && p->pend_len) {
		ssize_t n = write(p->in_fd, p->pending, p->pend_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) { /* the reader is gone: drop what waits */
			p->pend_len = 0;
			close_fd(&p->in_fd);
			return;
		}
		memmove(p->pending, p->pending + n, p->pend_len - (size_t)n);
		p->pend_len -= (size_t)n;
	}
	if (p->close_in && !p->pend_len)
		close_fd(&p->in_fd);
}

static void do_input(uint32_t id, const unsigned char *b, size_t len)
{
	proc *p = find(id);
	if (!p || p->in_fd < 0 || p->close_in)
		return; /* ended or stdin closed: the driver knows from EXIT */
	if (!len) {
		p->close_in = 1;
	} else {
		char *n = realloc(p->pending, p->pend_len + len);
		if (!n)
			die("realloc");
		memcpy(n + p->pend_len, b, len);
		p->pending = n;
		p->pend_len += len;
	}
	flush_input(p);
}

static void do_kill(uint32_t id, const unsigned char *b, size_t len)
{
	proc *p = find(id);
	if (p && !p->exited && len == 4)
		kill(-p->pid, (int)get_u32(b));
}

/* Channel input: frames accumulate in inbuf. @return 0 at end of file. */
static unsigned char *inbuf;
static size_t in_len, in_cap;

static int read_channel(void)
{
	if (in_cap - in_len < 65536) {
		size_t cap = in_cap ? in_cap * 2 : 131072;
		unsigned char *n = realloc(inbuf, cap);
		if (!n)
			die("realloc");
		inbuf = n;
		in_cap = cap;
	}
	ssize_t n = read(0, inbuf + in_len, in_cap - in_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0)
		return 0;
	in_len += (size_t)n;
	size_t off = 0;
	while (in_len - off >= S0__PD_HDR) {
		uint32_t flen = get_u32(inbuf + off);
		if (flen < 5 || flen > S0__PD_FRAME_MAX) {
			fprintf(stderr, "procd: bad frame length %u\n", flen);
			return 0;
		}
		if (in_len - off < 4 + (size_t)flen)
			break;
		int type = inbuf[off + 4];
		uint32_t id = get_u32(inbuf + off + 5);
		const unsigned char *pl = inbuf + off + S0__PD_HDR;
		size_t plen = flen - 5;
		switch (type) {
		case S0__PD_SPAWN: do_spawn(id, pl, plen); break;
		case S0__PD_INPUT: do_input(id, pl, plen); break;
		case S0__PD_KILL: do_kill(id, pl, plen); break;
		case S0__PD_PING: send_frame(S0__PD_PING, id, NULL, 0, NULL, 0); break;
		default: fprintf(stderr, "procd: unknown frame type %d\n", type); break;
		}
		off += 4 + (size_t)flen;
	}
	memmove(inbuf, inbuf + off, in_len - off);
	in_len -= off;
	return 1;
}

static void reap(void)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (proc *p = procs; p; p = p->next) {
			if (p->pid != pid || p->exited)
				continue;
			relay(p, &p->out_fd, S0__PD_OUT);
			relay(p, &p->err_fd, S0__PD_ERR);
			send_i32(S0__PD_EXIT, p->id, st);
			p->exited = 1;
			close_fd(&p->in_fd);
			maybe_closed(p);
			break;
		}
	}
}

int main(void)
{
	/* not dumpable: the sandbox's programs (root too, without CAP_SYS_PTRACE)
	 * cannot open /proc/1/fd/0 or /proc/1/fd/1, the channel */
	prctl(PR_SET_DUMPABLE, 0);
	signal(SIGPIPE, SIG_IGN);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		die("signalfd");
	fcntl(0, F_SETFD, FD_CLOEXEC);
	fcntl(1, F_SETFD, FD_CLOEXEC);
	send_frame(S0__PD_HELLO, 0, S0__PD_VERSION, strlen(S0__PD_VERSION), NULL, 0);
	struct pollfd *fds = NULL;
	proc **who = NULL;
	size_t cap = 0;
	for (;;) {
		size_t n = 2;
		for (proc *p = procs; p; p = p->next)
			n += 3;
		if (n > cap) {
			cap = n * 2;
			fds = realloc(fds, cap * sizeof *fds);
			who = realloc(who, cap * sizeof *who);
			if (!fds || !who)
				die("realloc");
		}
		fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
		fds[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
		size_t k = 2;
		for (proc *p = procs; p; p = p->next) {
			if (p->out_fd >= 0)
				who[k] = p, fds[k++] = (struct pollfd){.fd = p->out_fd, .events = POLLIN};
			if (p->err_fd >= 0)
				who[k] = p, fds[k++] = (struct pollfd){.fd = p->err_fd, .events = POLLIN};
			if (p->in_fd >= 0 && p->pend_len)
				who[k] = p, fds[k++] = (struct pollfd){.fd = p->in_fd, .events = POLLOUT};
		}
		if (poll(fds, k, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		/* process pipes first (a process's output before its exit) */
		for (size_t i = 2; i < k; i++) {
			if (!fds[i].revents)
				continue;
			proc *p = who[i];
			if (!alive(p))
				continue; /* forgotten in this round */
			if (fds[i].fd == p->out_fd)
				relay(p, &p->out_fd, S0__PD_OUT);
			else if (fds[i].fd == p->err_fd)
				relay(p, &p->err_fd, S0__PD_ERR);
			else if (fds[i].fd == p->in_fd)
				flush_input(p);
			maybe_closed(p);
		}
		if (fds[1].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) > 0)
				;
			reap();
		}
		if (fds[0].revents && !read_channel())
			break;
	}
	kill(-1, SIGKILL); /* the driver is gone: so is the sandbox */
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	return 0;
}
