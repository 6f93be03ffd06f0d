/*
 * File descriptors of the built-in shell: pipes into the process's
 * buffers, files of the sandbox's namespace with offsets, redirections and
 * deferred file writes (shell.h).
 */
#include "local/runtime/sim/sh_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/fsview/router.h"

static s0__shout *sink_of(sh_cmdctx *x)
{
	return x->r->sink ? x->r->sink : &x->r->p->io;
}

const struct s0__files_ns *s0__sh_ns(sh_cmdctx *x, const char *who)
{
	if (!x->r->g->ns)
		s0__sh_errf(x, "%s: filesystem unavailable", who);
	return x->r->g->ns;
}

const char *s0__sh_strerror(const s0_error *e)
{
	const char *r = s0_error_reason(e);
	static const char *const map[][2] = {
		{"file_not_found", "No such file or directory"},
		{"directory_not_found", "No such file or directory"},
		{"path_not_directory", "Not a directory"},
		{"path_not_file", "Is a directory"},
		{"path_exists", "File exists"},
		{"permission_denied", "Permission denied"},
		{"invalid_request", "Invalid argument"},
		{"file_too_large", "File too large"},
	};
	for (size_t i = 0; r && i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(r, map[i][0]))
			return map[i][1];
	return s0_error_message(e);
}

static sh_pending *pending_for(sh_cmdctx *x, s0__fd *f)
{
	for (size_t i = 0; i < x->npend; i++)
		if (x->pend[i].fd == f)
			return &x->pend[i];
	if (x->npend == S0__NFD)
		return NULL;
	sh_pending *p = &x->pend[x->npend++];
	p->fd = f;
	memset(&p->buf, 0, sizeof p->buf);
	return p;
}

int s0__sh_write(sh_cmdctx *x, int fd, const void *data, size_t len)
{
	s0__fd *f = fd >= 0 && fd < S0__NFD ? x->view[fd] : NULL;
	if (!f || f->kind == S0__FD_CLOSED)
		return -1;
	if (!len)
		return 0;
	if (f->kind == S0__FD_PIPE) {
		s0__shout *o = sink_of(x);
		bool err = f == &x->r->p->fd[2];
		if (s0__pipe_put(err ? &o->err : &o->out, err ? &o->dropped_err : &o->dropped_out, data,
		                 len) < 0 ||
		    s0__pipe_put(&o->raw, &o->dropped_raw, data, len) < 0)
			x->oom = true;
		return 0;
	}
	if (!(f->flags & S0__FD_WRITE))
		return -1;
	sh_pending *p = pending_for(x, f);
	if (!p || s0__buf_put(&p->buf, data, len) < 0)
		x->oom = true;
	return 0;
}

int s0__sh_printf(sh_cmdctx *x, int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = s0__vasprintf(fmt, ap);
	va_end(ap);
	if (!s) {
		x->oom = true;
		return -1;
	}
	int rc = s0__sh_write(x, fd, s, strlen(s));
	free(s);
	return rc;
}

void s0__sh_errf(sh_cmdctx *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = s0__vasprintf(fmt, ap);
	va_end(ap);
	if (!s) {
		x->oom = true;
		return;
	}
	s0__sh_write(x, 2, s, strlen(s));
	s0__sh_write(x, 2, "\n", 1);
	free(s);
}

char *s0__sh_path(sh_cmdctx *x, const char *who, const char *word)
{
	const char *cwd = x->r->p->cwd ? x->r->p->cwd : "/";
	char *joined = word[0] == '/' ? s0__strdup(word) : s0__asprintf("%s/%s", cwd, word);
	char *out = NULL;
	s0_error *e = NULL;
	if (!joined) {
		x->oom = true;
		return NULL;
	}
	if (s0__path_normalize(joined, strlen(joined), 0, &out, &e) < 0) {
		s0__sh_errf(x, "%s: %s: %s", who, word, s0__sh_strerror(e));
		s0_error_free(e);
		out = NULL;
	}
	free(joined);
	return out;
}

/* Read a file from an offset to its end. */
static int file_read(sh_cmdctx *x, s0__fd *f, void **data, size_t *len)
{
	const struct s0__files_ns *ns = s0__sh_ns(x, "sh");
	if (!ns)
		return -1;
	s0_error *e = NULL;
	if (s0__files_read(ns, f->path, strlen(f->path), f->offset, -1, data, len, &e) < 0) {
		if (s0_error_code(e) == S0_ENOTFOUND) { /* unlinked: reads as empty */
			s0_error_free(e);
			*data = NULL;
			*len = 0;
			return 0;
		}
		s0__sh_errf(x, "sh: %s: %s", f->path, s0__sh_strerror(e));
		s0_error_free(e);
		return -1;
	}
	return 0;
}

int s0__sh_read_all(sh_cmdctx *x, int fd, s0__buf *out)
{
	s0__fd *f = fd >= 0 && fd < S0__NFD ? x->view[fd] : NULL;
	if (!f || f->kind == S0__FD_CLOSED || (f->kind == S0__FD_FILE && !(f->flags & S0__FD_READ)))
		return 0; /* nothing to read */
	if (f->kind == S0__FD_PIPE) {
		s0__buf *in = &x->r->p->in;
		if (in->len && s0__buf_put(out, in->data, in->len) < 0)
			return x->oom = true, -1;
		s0__buf_reset(in);
		return 0;
	}
	void *d = NULL;
	size_t n = 0;
	if (file_read(x, f, &d, &n) < 0)
		return -1;
	int rc = n && s0__buf_put(out, d, n) < 0 ? -1 : 0;
	if (rc < 0)
		x->oom = true;
	else
		f->offset += n;
	free(d);
	return rc;
}

static int take_line(sh_cmdctx *x, const char *d, size_t n, s0__buf *line, size_t *used)
{
	const char *nl = memchr(d, '\n', n);
	size_t take = nl ? (size_t)(nl - d) : n;
	if (take && s0__buf_put(line, d, take) < 0)
		return x->oom = true, -1;
	*used = nl ? take + 1 : take;
	return 0;
}

int s0__sh_read_line(sh_cmdctx *x, int fd, s0__buf *line, bool *eof)
{
	s0__fd *f = fd >= 0 && fd < S0__NFD ? x->view[fd] : NULL;
	size_t used = 0;
	*eof = true;
	if (!f || f->kind == S0__FD_CLOSED)
		return 0;
	if (f->kind == S0__FD_PIPE) {
		s0__buf *in = &x->r->p->in;
		if (!in->len)
			return 0;
		*eof = false;
		if (take_line(x, in->data, in->len, line, &used) < 0)
			return -1;
		memmove(in->data, in->data + used, in->len - used);
		in->len -= used;
		in->data[in->len] = 0;
		return 0;
	}
	void *d = NULL;
	size_t n = 0;
	if (!(f->flags & S0__FD_READ) || file_read(x, f, &d, &n) < 0 || !n) {
		free(d);
		return 0;
	}
	*eof = false;
	int rc = take_line(x, d, n, line, &used);
	f->offset += used;
	free(d);
	return rc;
}

/* Apply one pending write: read, splice at the offset, write back. */
static int flush_one(sh_cmdctx *x, const struct s0__files_ns *ns, sh_pending *p)
{
	s0__fd *f = p->fd;
	void *old = NULL;
	size_t olen = 0;
	s0_error *e = NULL;
	if (s0__files_read(ns, f->path, strlen(f->path), 0, -1, &old, &olen, &e) < 0) {
		s0_error_free(e);
		e = NULL;
		old = NULL;
		olen = 0;
	}
	uint64_t off = (f->flags & S0__FD_APPEND) ? olen : f->offset;
	size_t end = (size_t)off + p->buf.len, nlen = end > olen ? end : olen;
	char *nb = calloc(1, nlen + 1);
	int rc = -1;
	if (!nb) {
		x->oom = true;
	} else {
		if (olen)
			memcpy(nb, old, off < olen ? (size_t)off : olen);
		memcpy(nb + off, p->buf.data, p->buf.len);
		if (end < olen)
			memcpy(nb + end, (char *)old + end, olen - end);
		if (s0__files_write(ns, f->path, strlen(f->path), nb, nlen, &e) < 0) {
			s0__sh_errf(x, "sh: write %s: %s", f->path, s0__sh_strerror(e));
			s0_error_free(e);
		} else {
			f->offset = end;
			rc = 0;
		}
	}
	free(nb);
	free(old);
	return rc;
}

int s0__sh_flush(sh_cmdctx *x)
{
	int rc = 0;
	for (size_t i = 0; i < x->npend; i++) {
		sh_pending *p = &x->pend[i];
		if (!p->buf.len)
			continue;
		const struct s0__files_ns *ns = s0__sh_ns(x, "sh");
		if (!ns || flush_one(x, ns, p) < 0)
			rc = -1;
		s0__buf_reset(&p->buf);
	}
	return rc;
}

void s0__sh_cmdctx_clear(sh_cmdctx *x)
{
	for (size_t i = 0; i < x->npend; i++)
		s0__buf_free(&x->pend[i].buf);
	x->npend = 0;
	for (int i = 0; i < S0__NFD; i++)
		s0__fd_close(&x->temp[i]);
}

void s0__sh_crash(sh_cmdctx *x, s0_error *e)
{
	s0__gproc_damaged(x->r->g, x->r->p, e);
	s0_error_free(e);
	x->r->crashed = true;
	x->r->stop = true;
}

int s0__sh_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	uint64_t mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (*end || (v && mul > UINT64_MAX / v))
		return -1;
	*out = v * mul;
	return 0;
}

/* Open the file of one redirection into x->temp[fd]. */
static int open_redir(sh_cmdctx *x, const struct s0__files_ns *ns, const sh_redir *rd,
                      const char *path)
{
	s0__fileinfo *fi = NULL;
	s0_error *e = NULL;
	s0__fd f = {.kind = S0__FD_FILE};
	int rc = s0__files_stat(ns, path, strlen(path), &fi, &e);
	bool exists = rc == S0_OK;
	if (exists && fi->type == S0_FILE_TYPE_DIR) {
		s0__sh_errf(x, "sh: %s: Is a directory", path);
		s0__fileinfo_free(fi);
		return -1;
	}
	if (rc < 0 && (rd->op == SH_R_IN || s0_error_code(e) != S0_ENOTFOUND))
		goto fail;
	s0_error_free(e);
	e = NULL;
	if (rd->op == SH_R_IN) {
		f.flags = S0__FD_READ;
	} else if (rd->op == SH_R_APPEND && exists) {
		f.flags = S0__FD_WRITE | S0__FD_APPEND;
		f.offset = (uint64_t)fi->size_bytes;
	} else {
		f.flags = S0__FD_WRITE | (rd->op == SH_R_APPEND ? S0__FD_APPEND : 0);
		if (s0__files_write(ns, path, strlen(path), "", 0, &e) < 0)
			goto fail;
	}
	s0__fileinfo_free(fi);
	if (!(f.path = s0__strdup(path)))
		return x->oom = true, -1;
	s0__fd_close(&x->temp[rd->fd]);
	x->temp[rd->fd] = f;
	x->view[rd->fd] = &x->temp[rd->fd];
	return 0;
fail:
	s0__sh_errf(x, "sh: %s: %s", path, s0__sh_strerror(e));
	s0_error_free(e);
	s0__fileinfo_free(fi);
	return -1;
}

int s0__sh_redirect(sh_cmdctx *x, const sh_cmd *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		const sh_redir *rd = &c->r[i];
		if (rd->op == SH_R_DUP) {
			s0__fd *src = x->view[rd->dupfd];
			if (!src || src->kind == S0__FD_CLOSED) {
				s0__sh_errf(x, "sh: %d: Bad file descriptor", rd->dupfd);
				return -1;
			}
			x->view[rd->fd] = src;
			continue;
		}
		bool drop;
		char *w = s0__sh_expand(x->r, rd->target, &drop);
		if (!w)
			return x->oom = true, -1;
		const struct s0__files_ns *ns = s0__sh_ns(x, "sh");
		char *path = ns ? s0__sh_path(x, "sh", w) : NULL;
		free(w);
		int rc = path ? open_redir(x, ns, rd, path) : -1;
		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}
