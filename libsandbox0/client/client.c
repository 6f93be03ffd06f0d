/* s0_client construction, options and configuration (sandbox0/client.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/client_internal.h"

int s0_client_options_init(s0_client_options *opts, uint32_t version)
{
	if (!opts || version != S0_CLIENT_OPTIONS_VERSION)
		return S0_EINVAL;
	s0_client_options d = S0_CLIENT_OPTIONS_INIT;
	*opts = d;
	return S0_OK;
}

static void client_destroy(s0_client *c)
{
	if (c->ops && c->ops->free)
		c->ops->free(c->tctx);
	free(c->base_url);
	free(c->token);
	free(c->user_agent);
	free(c->team_id);
	s0__headers_free(&c->extra);
	free(c);
}

/* RFC 9110 token characters (a field name). */
static bool is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* A field value may not carry CR, LF, NUL or other controls (header injection). */
static bool valid_field_value(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)v[i];
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return false;
	}
	return true;
}

/* Framing headers the library sets per request; a fixed value would break requests. */
static bool reserved_header(const char *name, size_t n)
{
	static const char *const names[] = {"Content-Type", "Content-Length", "Transfer-Encoding",
	                                    "Expect", "Idempotency-Key", "Connection"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == n && !strncasecmp(names[i], name, n))
			return true;
	return false;
}

static int copy_extra_headers(s0_client *c, const char *const *headers, s0_error **err)
{
	for (size_t i = 0; headers && headers[i]; i++) {
		const char *h = headers[i];
		const char *colon = strchr(h, ':');
		size_t nlen = colon ? (size_t)(colon - h) : 0;
		bool name_ok = nlen > 0;
		for (size_t k = 0; k < nlen && name_ok; k++)
			name_ok = is_tchar((unsigned char)h[k]);
		if (!name_ok)
			return s0__error_set(err, S0_EINVAL, "invalid_header",
			                     "extra header %zu is not \"Name: value\"", i);
		if (reserved_header(h, nlen))
			return s0__error_set(err, S0_EINVAL, "invalid_header",
			                     "extra header %zu (%.*s) is set by the library per request", i,
			                     (int)nlen, h);
		/* the value without surrounding whitespace (RFC 9110 §5.5 OWS) */
		const char *v = colon + 1, *end = v + strlen(v);
		while (*v == ' ' || *v == '\t')
			v++;
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (!valid_field_value(v, (size_t)(end - v)))
			return s0__error_set(err, S0_EINVAL, "invalid_header",
			                     "extra header %zu has a control character in its value", i);
		char *name = s0__strndup(h, nlen), *value = s0__strndup(v, (size_t)(end - v));
		int rc = name && value ? s0__headers_add(&c->extra, name, value) : -1;
		free(name);
		free(value);
		if (rc < 0)
			return s0__error_nomem(err);
	}
	return S0_OK;
}

/* Copy of s without leading and trailing whitespace; NULL when blank (or s NULL). */
static char *trimmed(const char *s, bool *oom)
{
	if (s0__is_blank(s))
		return NULL;
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *d = s0__strndup(s, n);
	if (!d)
		*oom = true;
	return d;
}

int s0__client_new_with_transport(const s0_client_options *opts, const s0__transport_ops *ops,
                                  void *tctx, const char *label, s0_client **out,
                                  s0_error **err)
{
	s0_client_options d = S0_CLIENT_OPTIONS_INIT;
	if (!opts)
		opts = &d;
	if (opts->version != S0_CLIENT_OPTIONS_VERSION) {
		ops->free(tctx);
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_client_options.version %u is not %u", opts->version,
		                     S0_CLIENT_OPTIONS_VERSION);
	}
	s0_client *c = calloc(1, sizeof *c);
	if (!c) {
		ops->free(tctx);
		return s0__error_nomem(err);
	}
	c->ops = ops;
	c->tctx = tctx;
	bool oom = false;
	c->base_url = s0__strdup(label);
	/* whitespace around a token (a newline from a file or env var) is never part of it */
	c->token = trimmed(opts->token, &oom);
	c->user_agent = opts->user_agent ? s0__strdup(opts->user_agent)
	                                 : s0__strdup("libsandbox0/" S0_VERSION_STRING);
	c->team_id = trimmed(opts->team_id, &oom);
	c->request_timeout_ms = opts->request_timeout_ms ? opts->request_timeout_ms : 120000;
	c->cancel = opts->cancel;
	if (opts->clock)
		c->clock = *opts->clock;
	else
		s0_clock_real(&c->clock);
	int rc = S0_OK;
	if (!c->base_url || !c->user_agent || oom)
		rc = s0__error_nomem(err);
	else if ((c->token && !valid_field_value(c->token, strlen(c->token))) ||
	         !valid_field_value(c->user_agent, strlen(c->user_agent)) ||
	         (c->team_id && !valid_field_value(c->team_id, strlen(c->team_id))))
		rc = s0__error_set(err, S0_EINVAL, "invalid_header",
		                   "token, user_agent and team_id may not contain control characters");
	else if (opts->request_timeout_ms < 0 && opts->request_timeout_ms != S0_TIMEOUT_INFINITE)
		rc = s0__error_set(err, S0_EINVAL, "invalid_timeout",
		                   "request_timeout_ms must be >= 0 or S0_TIMEOUT_INFINITE");
	else
		rc = copy_extra_headers(c, opts->headers, err);
	if (rc < 0) {
		client_destroy(c);
		return rc;
	}
	s0__obj_inc();
	*out = c;
	return S0_OK;
}

/*
 * Require http(s)://host[...] (scheme in any case), with no query, fragment,
 * blanks or controls -- the API path is appended to it; trim trailing
 * slashes.
 */
static int normalise_base_url(const char *in, char **out, s0_error **err)
{
	const char *u = in && *in ? in : S0_DEFAULT_BASE_URL;
	size_t skip = !strncasecmp(u, "http://", 7) ? 7 : !strncasecmp(u, "https://", 8) ? 8 : 0;
	bool ok = skip && u[skip] && u[skip] != '/';
	for (const char *p = u; ok && *p; p++)
		ok = (unsigned char)*p > 0x20 && *p != 0x7f && *p != '?' && *p != '#';
	if (!ok)
		return s0__error_set(err, S0_EINVAL, "invalid_base_url",
		                     "base URL \"%s\" must be http(s)://host[:port][/path]", u);
	size_t n = strlen(u);
	while (n > skip + 1 && u[n - 1] == '/')
		n--;
	*out = s0__strndup(u, n);
	return *out ? S0_OK : s0__error_nomem(err);
}

int s0_client_new(const s0_client_options *opts, s0_client **out, s0_error **err)
{
	if (!out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "out is NULL");
	if (s0__global_ensure() < 0)
		return s0__error_set(err, S0_ERROR, "global_init", "libcurl/libsodium init failed");
	if (opts && opts->version != S0_CLIENT_OPTIONS_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_client_options.version %u is not %u", opts->version,
		                     S0_CLIENT_OPTIONS_VERSION);
	if (opts && opts->connect_timeout_ms < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_timeout", "connect_timeout_ms < 0");
	char *base = NULL;
	int rc = normalise_base_url(opts ? opts->base_url : NULL, &base, err);
	if (rc < 0)
		return rc;
	s0__http_transport_config cfg = {
		.base_url = base,
		.connect_timeout_ms = opts && opts->connect_timeout_ms ? opts->connect_timeout_ms : 10000,
		.insecure_skip_verify = opts && opts->insecure_skip_verify,
		.ca_file = opts ? opts->ca_file : NULL,
		.proxy = opts ? opts->proxy : NULL,
	};
	void *tctx = NULL;
	rc = s0__http_transport_new(&cfg, &tctx, err);
	if (rc == S0_OK)
		rc = s0__client_new_with_transport(opts, &s0__http_transport_ops, tctx, base, out, err);
	free(base);
	return rc;
}

int s0_client_new_from_env(const s0_client_options *opts, s0_client **out, s0_error **err)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	if (opts) {
		if (opts->version != S0_CLIENT_OPTIONS_VERSION)
			return s0__error_set(err, S0_EINVAL, "options_version",
			                     "s0_client_options.version %u is not %u", opts->version,
			                     S0_CLIENT_OPTIONS_VERSION);
		o = *opts;
	}
	if (!o.base_url || !*o.base_url) {
		const char *env = getenv("SANDBOX0_BASE_URL");
		o.base_url = env && *env ? env : S0_DEFAULT_BASE_URL;
	}
	if (s0__is_blank(o.token)) {
		const char *t = getenv("SANDBOX0_TOKEN");
		if (s0__is_blank(t))
			t = getenv("SANDBOX0_API_KEY");
		o.token = t;
	}
	return s0_client_new(&o, out, err);
}

void s0_client_free(s0_client *c)
{
	if (!c)
		return;
	client_destroy(c);
	s0__obj_dec();
}

const char *s0_client_base_url(const s0_client *c)
{
	return c->base_url;
}

void s0_client_clock(const s0_client *c, s0_clock *out)
{
	*out = c->clock;
}
