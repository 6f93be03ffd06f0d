/* Host processes of the gvisor driver (gv_proc.h). */
#include "local/runtime/gvisor/gv_proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void s0__gv_result_clear(s0__gv_result *r)
{
	s0__buf_free(&r->out);
	s0__buf_free(&r->err);
}

int s0__gv_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

static const char *const CHILD_ENV[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", NULL,
};

/* In the child: stdio from the three fds, every other descriptor closed,
 * a process group of its own, default signals, then exec. */
static void child_exec(char *const *argv, int in, int out, int err)
{
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	execve(argv[0], argv, (char *const *)CHILD_ENV);
	_exit(127);
}

static int spawn(char *const *argv, int p_in[2], int p_out[2], int p_err[2], pid_t *pid,
                 s0_error **err)
{
	if (pipe2(p_in, O_CLOEXEC) < 0)
		goto fail0;
	if (pipe2(p_out, O_CLOEXEC) < 0)
		goto fail1;
	if (pipe2(p_err, O_CLOEXEC) < 0)
		goto fail2;
	pid_t p = fork();
	if (p == 0)
		child_exec(argv, p_in[0], p_out[1], p_err[1]);
	if (p < 0)
		goto fail3;
	close(p_in[0]);
	close(p_out[1]);
	close(p_err[1]);
	fcntl(p_out[0], F_SETFL, O_NONBLOCK);
	fcntl(p_err[0], F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN); /* a child that closed its stdin must not kill us */
	*pid = p;
	return S0_OK;
fail3:
	close(p_err[0]);
	close(p_err[1]);
fail2:
	close(p_out[0]);
	close(p_out[1]);
fail1:
	close(p_in[0]);
	close(p_in[1]);
fail0:
	return s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot start %s: %s", argv[0],
	                     strerror(errno));
}

/* Append what fd has to b; false at EOF or error (other than EAGAIN). */
static bool drain(int fd, s0__buf *b)
{
	char chunk[16384];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n > 0) {
			if (b && s0__buf_put(b, chunk, (size_t)n) < 0)
				return false;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN;
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int s0__gv_run(char *const *argv, const void *in, size_t in_len, int64_t timeout_ms,
               s0__gv_result *res, s0_error **err)
{
	int p_in[2], p_out[2], p_err[2];
	pid_t pid;
	memset(res, 0, sizeof *res);
	int rc = spawn(argv, p_in, p_out, p_err, &pid, err);
	if (rc < 0)
		return rc;
	int wfd = p_in[1];
	size_t sent = 0;
	if (!in || !in_len) {
		close(wfd);
		wfd = -1;
	} else {
		fcntl(wfd, F_SETFL, O_NONBLOCK);
	}
	bool out_open = true, err_open = true, timed_out = false;
	int64_t deadline = now_ms() + timeout_ms;
	while (out_open || err_open) {
		struct pollfd pf[3] = {{.fd = out_open ? p_out[0] : -1, .events = POLLIN},
		                       {.fd = err_open ? p_err[0] : -1, .events = POLLIN},
		                       {.fd = wfd, .events = POLLOUT}};
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		int n = poll(pf, 3, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR)
			break;
		if (out_open && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			out_open = drain(p_out[0], &res->out);
		if (err_open && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
			err_open = drain(p_err[0], &res->err);
		if (wfd >= 0 && (pf[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(wfd, (const char *)in + sent, in_len - sent);
			if (w > 0)
				sent += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == in_len) {
				close(wfd);
				wfd = -1;
			}
		}
	}
	if (wfd >= 0)
		close(wfd);
	close(p_out[0]);
	close(p_err[0]);
	if (timed_out)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &res->status, 0) < 0 && errno == EINTR)
		;
	/* NUL-terminate both (an empty buffer gets "") */
	s0__buf_put(&res->out, "", 1);
	s0__buf_put(&res->err, "", 1);
	res->out.len--;
	res->err.len--;
	if (timed_out)
		return s0__error_set(err, S0_ETIMEDOUT, "runtime_unavailable",
		                     "%s did not finish in %lld ms", argv[0], (long long)timeout_ms);
	return S0_OK;
}

int s0__gv_run_detached(char *const *argv, const char *err_path, int64_t timeout_ms,
                        int *status, s0_error **err)
{
	return s0__gv_run_detached_pre(argv, err_path, timeout_ms, NULL, NULL, status, err);
}

int s0__gv_run_detached_pre(char *const *argv, const char *err_path, int64_t timeout_ms,
                            int (*pre)(const void *arg), const void *arg, int *status,
                            s0_error **err)
{
	return s0__gv_run_detached_io(argv, -1, -1, err_path, timeout_ms, pre, arg, status, err);
}

int s0__gv_run_detached_io(char *const *argv, int in_fd, int out_fd, const char *err_path,
                           int64_t timeout_ms, int (*pre)(const void *arg), const void *arg,
                           int *status, s0_error **err)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	int ef = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (nul < 0 || ef < 0) {
		int rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot open %s: %s",
		                       err_path, strerror(errno));
		if (nul >= 0)
			close(nul);
		if (ef >= 0)
			close(ef);
		return rc;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (pre && pre(arg) != 0)
			_exit(127);
		child_exec(argv, in_fd >= 0 ? in_fd : nul, out_fd >= 0 ? out_fd : nul, ef);
	}
	int fork_errno = errno;
	close(nul);
	close(ef);
	if (pid < 0)
		return s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot start %s: %s",
		                     argv[0], strerror(fork_errno));
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int64_t deadline = now_ms() + timeout_ms;
	bool done = false;
	while (!done) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR)) {
			done = true;
			break;
		}
		int64_t left = deadline - now_ms();
		if (left <= 0)
			break;
		struct pollfd pf = {.fd = pfd, .events = POLLIN};
		if (pfd >= 0)
			poll(&pf, 1, (int)(left > 1000 ? 1000 : left));
		else
			nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	if (pfd >= 0)
		close(pfd);
	if (done)
		return S0_OK;
	kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return s0__error_set(err, S0_ETIMEDOUT, "runtime_unavailable",
	                     "%s did not finish in %lld ms", argv[0], (long long)timeout_ms);
}

int s0__gv_child_start(char *const *argv, s0__gv_child *c, s0_error **err)
{
	int p_in[2], p_out[2], p_err[2];
	memset(c, 0, sizeof *c);
	int rc = spawn(argv, p_in, p_out, p_err, &c->pid, err);
	if (rc < 0)
		return rc;
	c->in_fd = p_in[1];
	c->out_fd = p_out[0];
	c->err_fd = p_err[0];
	return S0_OK;
}

bool s0__gv_child_exited(s0__gv_child *c)
{
	if (c->reaped)
		return true;
	pid_t r = waitpid(c->pid, &c->status, WNOHANG);
	if (r == c->pid || (r < 0 && errno == ECHILD))
		c->reaped = true;
	return c->reaped;
}

size_t s0__gv_child_read(s0__gv_child *c, s0__buf *out, s0__buf *err, int wait_ms)
{
	size_t before = out->len + err->len;
	struct pollfd pf[2] = {{.fd = c->out_fd, .events = POLLIN},
	                       {.fd = c->err_fd, .events = POLLIN}};
	if (poll(pf, 2, wait_ms) <= 0)
		return 0;
	if (c->out_fd >= 0 && !drain(c->out_fd, out)) {
		close(c->out_fd);
		c->out_fd = -1;
	}
	if (c->err_fd >= 0 && !drain(c->err_fd, err)) {
		close(c->err_fd);
		c->err_fd = -1;
	}
	return out->len + err->len - before;
}

void s0__gv_child_end(s0__gv_child *c)
{
	if (!c || c->pid <= 0)
		return;
	if (!c->reaped) {
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
			;
		c->reaped = true;
	}
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->pid = 0;
}

void s0__gv_subreaper(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* Whether pid is a zombie runsc daemonised (its comm). */
static bool runsc_zombie(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r[1] != ' ' || r[2] != 'Z')
		return false;
	*r = 0;
	/* runsc's sandbox and gofer re-exec /proc/self/exe: comm "exe"; our own
	 * runsc children ("runsc") are waited for by pid, never here */
	return !strcmp(l + 1, "exe");
}

void s0__gv_reap_orphans(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[300];
		snprintf(path, sizeof path, "/proc/self/task/%s/children", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		int pid;
		while (fscanf(f, "%d", &pid) == 1)
			if (runsc_zombie(pid))
				waitpid(pid, NULL, WNOHANG);
		fclose(f);
	}
	closedir(d);
}
