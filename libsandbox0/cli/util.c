/* Small helpers of the s0 program: allocation, files, time. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void out_of_memory(void)
{
	static const char msg[] = "s0: out of memory\n";
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing more to say */
	}
	exit(CLI_EXIT_FAIL);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		out_of_memory();
	return q;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		out_of_memory();
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		out_of_memory();
	return s;
}

char *read_all(const char *path, size_t *len_out)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			if (fd)
				close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (fd)
		close(fd);
	buf[n] = 0;
	*len_out = n;
	return buf;
}

int write_file_atomic(const char *path, const void *data, size_t len, unsigned mode)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto fail;
		p += w;
		left -= (size_t)w;
	}
	if (fchmod(fd, (mode_t)mode) < 0 || fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	free(tmp);
	return 0;
fail: {
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	errno = e;
	return -1;
}
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, (mode_t)mode) < 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			errno = e;
			return -1;
		}
		*s = '/';
	}
	int rc = mkdir(p, (mode_t)mode) < 0 && errno != EEXIST ? -1 : 0;
	int e = errno;
	free(p);
	errno = e;
	return rc;
}

double mono_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fmt_time(int64_t unix_ms, char *buf, size_t len)
{
	if (unix_ms <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

void fmt_rfc3339(int64_t unix_ms, char *buf, size_t len)
{
	if (unix_ms <= 0) {
		snprintf(buf, len, "%s", "");
		return;
	}
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	char base[32];
	gmtime_r(&t, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	if (unix_ms % 1000)
		snprintf(buf, len, "%s.%03dZ", base, (int)(unix_ms % 1000));
	else
		snprintf(buf, len, "%sZ", base);
}

static int digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (**p - '0');
	}
	*out = v;
	return 0;
}

int parse_rfc3339(const char *s, int64_t *unix_ms_out)
{
	struct tm tm;
	int y, mo, d, h, mi, sec, ms = 0;
	memset(&tm, 0, sizeof tm);
	const char *p = s;
	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d) || (*p != 'T' && *p != 't') || !*p++ || digits(&p, 2, &h) ||
	    *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' || digits(&p, 2, &sec))
		return -1;
	if (*p == '.') {
		p++;
		int scale = 100, nd = 0;
		while (*p >= '0' && *p <= '9') {
			ms += scale * (*p - '0');
			scale /= 10;
			p++;
			nd++;
		}
		if (!nd)
			return -1;
	}
	int off_min = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;
		if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
			return -1;
		off_min = sign * (oh * 60 + om);
	} else {
		return -1;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	*unix_ms_out = ((int64_t)t - (int64_t)off_min * 60) * 1000 + ms;
	return 0;
}
