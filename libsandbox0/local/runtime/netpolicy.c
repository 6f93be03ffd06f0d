/* Network policy: validation, compilation and per-connection decisions (netpolicy.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "local/runtime/netpolicy.h"

#define MAX_NAME 253

typedef s0__netpolicy_cidr np_cidr;
typedef s0__netpolicy_port np_port;

typedef struct np_rule {
	bool allow;
	bool never;         /* appProtocols: never matches a raw connection */
	const char *source; /* the field it came from (static) */
	char **domains;
	size_t ndomains;
	np_cidr *cidrs;
	size_t ncidrs;
	np_port *ports;
	size_t nports;
} np_rule;

struct s0__netpolicy {
	bool block_all;
	np_rule *rules;
	size_t nrules;
};

/* ---- parsing of one value ---- */

static bool parse_cidr(const char *s, np_cidr *out)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	if (alen == 0 || alen >= sizeof buf)
		return false;
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	memset(out, 0, sizeof *out);
	out->family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(out->family, buf, out->addr) != 1)
		return false;
	int max = out->family == AF_INET ? 32 : 128;
	out->prefix = max;
	if (slash) {
		char *end;
		long p = strtol(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end || p < 0 || p > max)
			return false;
		out->prefix = (int)p;
	}
	return true;
}

static bool cidr_contains(const np_cidr *c, int family, const uint8_t *addr)
{
	if (c->family != family)
		return false;
	int full = c->prefix / 8, rest = c->prefix % 8;
	if (memcmp(c->addr, addr, (size_t)full))
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (c->addr[full] & mask) == (addr[full] & mask);
}

/* A host name or a `*.`-wildcard: labels of [A-Za-z0-9-_], no empty label. */
static bool valid_domain(const char *s)
{
	if (!strncmp(s, "*.", 2))
		s += 2;
	size_t n = strlen(s);
	if (n && s[n - 1] == '.')
		n--;
	if (n == 0 || n > MAX_NAME)
		return false;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (isalnum(ch) || ch == '-' || ch == '_') {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label > 0;
}

/* Case-insensitive equality ignoring one trailing dot on either side. */
static bool name_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen && a[alen - 1] == '.')
		alen--;
	if (blen && b[blen - 1] == '.')
		blen--;
	return alen == blen && !strncasecmp(a, b, alen);
}

static bool domain_matches(const char *pattern, const char *host)
{
	size_t hl = strlen(host);
	if (strncmp(pattern, "*.", 2))
		return name_eq(pattern, strlen(pattern), host, hl);
	const char *suffix = pattern + 1; /* ".example.com" */
	size_t sl = strlen(suffix);
	if (sl && suffix[sl - 1] == '.')
		sl--;
	if (hl && host[hl - 1] == '.')
		hl--;
	return hl > sl && !strncasecmp(host + hl - sl, suffix, sl);
}

static int proto_code(const char *s)
{
	static const char *const names[] = {"tcp", "udp", "sctp"};
	for (int i = 0; i < 3; i++)
		if (!strcasecmp(s, names[i]))
			return i + 1;
	return -1;
}

/* ---- validation and compilation share one walk ---- */

typedef struct walk {
	const char *what; /* operation, for messages */
	s0_error **err;
	s0__netpolicy *out; /* NULL: validate only */
} walk;

static int bad(walk *w, const char *field, const char *fmt, ...) S0__PRINTF(3, 4);
static int bad(walk *w, const char *field, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return s0__error_set(w->err, S0_EINVAL, "bad_request", "invalid %s request: network%s: %s",
	                     w->what, field, msg);
}

/* "<f>[<i>]": the field of one list element, for messages. */
static const char *at(char buf[128], const char *f, size_t i)
{
	snprintf(buf, 128, "%s[%zu]", f, i);
	return buf;
}

/* Refuse a member not in @p keys (NULL-terminated): a misspelt rule
 * ("deniedDomain") must not pass as an empty one. */
static int known_keys(walk *w, const cJSON *obj, const char *field, const char *const *keys)
{
	const char *k = s0__json_unknown_key(obj, keys);
	return k ? bad(w, field, "unknown field \"%.64s\"", k) : S0_OK;
}

static const char *const policy_keys[] = {"mode", "egress", "credentialBindings", NULL};
static const char *const egress_keys[] = {
	"allowedCidrs",  "allowedDomains", "allowedPorts",  "deniedDomains",   "deniedCidrs",
	"deniedPorts",   "trafficRules",   "protocolRules", "credentialRules", "proxy",
	NULL};
static const char *const rule_keys[] = {"name",  "action",       "cidrs", "domains",
                                        "ports", "appProtocols", NULL};
static const char *const port_keys[] = {"port", "protocol", "endPort", NULL};

/* The strings of egress.<key> (or a rule's <key>); *arr NULL when absent. */
static int string_list(walk *w, const cJSON *obj, const char *key, const char *field,
                       const cJSON **arr)
{
	*arr = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!*arr || cJSON_IsNull(*arr)) {
		*arr = NULL;
		return S0_OK;
	}
	char f[96];
	snprintf(f, sizeof f, "%s.%s", field, key);
	if (!cJSON_IsArray(*arr))
		return bad(w, f, "must be an array of strings");
	const cJSON *it;
	size_t i = 0;
	char fi[128];
	cJSON_ArrayForEach(it, *arr)
	{
		if (!cJSON_IsString(it))
			return bad(w, at(fi, f, i), "must be a string");
		i++;
	}
	return S0_OK;
}

static int add_domains(walk *w, np_rule *r, const cJSON *arr, const char *f)
{
	const cJSON *it;
	size_t i = 0;
	char fi[128];
	cJSON_ArrayForEach(it, arr)
	{
		if (!valid_domain(it->valuestring))
			return bad(w, at(fi, f, i), "invalid domain \"%.80s\"", it->valuestring);
		i++;
		if (!r)
			continue;
		char *d = s0__strdup(it->valuestring);
		char **nd = d ? realloc(r->domains, (r->ndomains + 1) * sizeof *nd) : NULL;
		if (!nd) {
			free(d);
			return s0__error_nomem(w->err);
		}
		r->domains = nd;
		r->domains[r->ndomains++] = d;
	}
	return S0_OK;
}

static int add_cidrs(walk *w, np_rule *r, const cJSON *arr, const char *f)
{
	const cJSON *it;
	size_t i = 0;
	char fi[128];
	cJSON_ArrayForEach(it, arr)
	{
		np_cidr c;
		if (!parse_cidr(it->valuestring, &c))
			return bad(w, at(fi, f, i), "invalid CIDR \"%.80s\"", it->valuestring);
		i++;
		if (!r)
			continue;
		np_cidr *nc = realloc(r->cidrs, (r->ncidrs + 1) * sizeof *nc);
		if (!nc)
			return s0__error_nomem(w->err);
		r->cidrs = nc;
		r->cidrs[r->ncidrs++] = c;
	}
	return S0_OK;
}

static int parse_port(walk *w, const cJSON *it, const char *f, np_port *p)
{
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(it, "port");
	const cJSON *end = cJSON_GetObjectItemCaseSensitive(it, "endPort");
	const cJSON *proto = cJSON_GetObjectItemCaseSensitive(it, "protocol");
	if (!cJSON_IsObject(it) || !cJSON_IsNumber(port) || port->valuedouble < 1 ||
	    port->valuedouble > 65535 || port->valuedouble != (int)port->valuedouble)
		return bad(w, f, "port must be an integer in 1..65535");
	int rc = known_keys(w, it, f, port_keys);
	if (rc < 0)
		return rc;
	p->lo = p->hi = (int)port->valuedouble;
	if (end && !cJSON_IsNull(end)) {
		if (!cJSON_IsNumber(end) || end->valuedouble < p->lo || end->valuedouble > 65535 ||
		    end->valuedouble != (int)end->valuedouble)
			return bad(w, f, "endPort must be an integer in port..65535");
		p->hi = (int)end->valuedouble;
	}
	p->proto = 0;
	if (proto && !cJSON_IsNull(proto) && *(cJSON_IsString(proto) ? proto->valuestring : "")) {
		if ((p->proto = proto_code(proto->valuestring)) < 0)
			return bad(w, f, "protocol \"%s\" is not TCP, UDP or SCTP", proto->valuestring);
	} else if (proto && !cJSON_IsNull(proto) && !cJSON_IsString(proto)) {
		return bad(w, f, "protocol must be a string");
	}
	return S0_OK;
}

static int add_ports(walk *w, np_rule *r, const cJSON *obj, const char *key, const char *field)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!arr || cJSON_IsNull(arr))
		return S0_OK;
	char f[96];
	snprintf(f, sizeof f, "%s.%s", field, key);
	if (!cJSON_IsArray(arr))
		return bad(w, f, "must be an array of port specs");
	const cJSON *it;
	size_t i = 0;
	char fi[128];
	cJSON_ArrayForEach(it, arr)
	{
		np_port p;
		int rc = parse_port(w, it, at(fi, f, i++), &p);
		if (rc < 0)
			return rc;
		if (!r)
			continue;
		np_port *np = realloc(r->ports, (r->nports + 1) * sizeof *np);
		if (!np)
			return s0__error_nomem(w->err);
		r->ports = np;
		r->ports[r->nports++] = p;
	}
	return S0_OK;
}

/* A fresh rule in the output (NULL while only validating). */
static int new_rule(walk *w, bool allow, const char *source, np_rule **out)
{
	*out = NULL;
	if (!w->out)
		return S0_OK;
	np_rule *nr = realloc(w->out->rules, (w->out->nrules + 1) * sizeof *nr);
	if (!nr)
		return s0__error_nomem(w->err);
	w->out->rules = nr;
	*out = &nr[w->out->nrules++];
	memset(*out, 0, sizeof **out);
	(*out)->allow = allow;
	(*out)->source = source;
	return S0_OK;
}

/* Destinations (cidrs + domains) of one key pair into one rule. */
static int dests(walk *w, np_rule *r, const cJSON *obj, const char *ck, const char *dk,
                 const char *field)
{
	const cJSON *c, *d;
	char fc[96], fd[96];
	snprintf(fc, sizeof fc, "%s.%s", field, ck);
	snprintf(fd, sizeof fd, "%s.%s", field, dk);
	int rc = string_list(w, obj, ck, field, &c);
	if (rc == S0_OK)
		rc = string_list(w, obj, dk, field, &d);
	if (rc == S0_OK && c)
		rc = add_cidrs(w, r, c, fc);
	if (rc == S0_OK && d)
		rc = add_domains(w, r, d, fd);
	return rc;
}

static bool nonempty(const cJSON *obj, const char *key)
{
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(obj, key)) > 0;
}

static int egress_lists(walk *w, const cJSON *eg)
{
	np_rule *r = NULL;
	int rc = S0_OK;
	/* deny: destinations on any port, then ports to any destination */
	if (nonempty(eg, "deniedCidrs") || nonempty(eg, "deniedDomains"))
		rc = new_rule(w, false, "deniedCidrs/deniedDomains", &r);
	if (rc == S0_OK)
		rc = dests(w, r, eg, "deniedCidrs", "deniedDomains", ".egress");
	r = NULL;
	if (rc == S0_OK && nonempty(eg, "deniedPorts"))
		rc = new_rule(w, false, "deniedPorts", &r);
	if (rc == S0_OK)
		rc = add_ports(w, r, eg, "deniedPorts", ".egress");
	r = NULL;
	if (rc == S0_OK && (nonempty(eg, "allowedCidrs") || nonempty(eg, "allowedDomains") ||
	                    nonempty(eg, "allowedPorts")))
		rc = new_rule(w, true, "allowedCidrs/allowedDomains/allowedPorts", &r);
	if (rc == S0_OK)
		rc = dests(w, r, eg, "allowedCidrs", "allowedDomains", ".egress");
	if (rc == S0_OK)
		rc = add_ports(w, r, eg, "allowedPorts", ".egress");
	return rc;
}

static int traffic_rule(walk *w, const cJSON *tr, size_t i)
{
	char f[64];
	snprintf(f, sizeof f, ".egress.trafficRules[%zu]", i);
	const char *action = s0__json_str(tr, "action");
	if (!cJSON_IsObject(tr) || !action || (strcmp(action, "allow") && strcmp(action, "deny")))
		return bad(w, f, "action must be \"allow\" or \"deny\"");
	np_rule *r = NULL;
	int rc = known_keys(w, tr, f, rule_keys);
	if (rc == S0_OK)
		rc = new_rule(w, !strcmp(action, "allow"), "trafficRules", &r);
	if (rc == S0_OK)
		rc = dests(w, r, tr, "cidrs", "domains", f);
	if (rc == S0_OK)
		rc = add_ports(w, r, tr, "ports", f);
	const cJSON *app = NULL;
	if (rc == S0_OK)
		rc = string_list(w, tr, "appProtocols", f, &app);
	if (r && cJSON_GetArraySize(app) > 0)
		r->never = true;
	return rc;
}

static int opaque_shapes(walk *w, const cJSON *net, const cJSON *eg)
{
	static const struct {
		bool in_egress;
		const char *key;
		bool array;
	} shapes[] = {{false, "credentialBindings", true}, {true, "protocolRules", true},
	              {true, "credentialRules", true},     {true, "proxy", false}};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(shapes[i].in_egress ? eg : net,
		                                                  shapes[i].key);
		if (v && !cJSON_IsNull(v) && (shapes[i].array ? !cJSON_IsArray(v) : !cJSON_IsObject(v)))
			return bad(w, shapes[i].in_egress ? ".egress" : "", "%s has the wrong type",
			           shapes[i].key);
	}
	return S0_OK;
}

static int walk_policy(walk *w, const cJSON *net)
{
	if (!net || cJSON_IsNull(net))
		return S0_OK;
	if (!cJSON_IsObject(net))
		return bad(w, "", "must be an object");
	const char *mode = s0__json_str(net, "mode");
	if (!mode || (strcmp(mode, "allow-all") && strcmp(mode, "block-all")))
		return bad(w, ".mode", "must be \"allow-all\" or \"block-all\"");
	if (w->out)
		w->out->block_all = !strcmp(mode, "block-all");
	const cJSON *eg = cJSON_GetObjectItemCaseSensitive(net, "egress");
	if (eg && !cJSON_IsNull(eg) && !cJSON_IsObject(eg))
		return bad(w, ".egress", "must be an object");
	int rc = known_keys(w, net, "", policy_keys);
	if (rc == S0_OK)
		rc = opaque_shapes(w, net, eg);
	if (rc == S0_OK && eg && !cJSON_IsNull(eg))
		rc = known_keys(w, eg, ".egress", egress_keys);
	if (rc < 0 || !eg || cJSON_IsNull(eg))
		return rc;
	const cJSON *trs = cJSON_GetObjectItemCaseSensitive(eg, "trafficRules");
	if (trs && !cJSON_IsNull(trs) && !cJSON_IsArray(trs))
		return bad(w, ".egress.trafficRules", "must be an array");
	const cJSON *tr, *list = cJSON_IsArray(trs) ? trs : NULL;
	size_t i = 0;
	cJSON_ArrayForEach(tr, list)
	{
		if ((rc = traffic_rule(w, tr, i++)) < 0)
			return rc;
	}
	return egress_lists(w, eg);
}

int s0__netpolicy_validate(const cJSON *net, const char *what, s0_error **err)
{
	walk w = {.what = what ? what : "network", .err = err};
	return walk_policy(&w, net);
}

int s0__netpolicy_compile(const cJSON *net, s0__netpolicy **out, s0_error **err)
{
	*out = NULL;
	s0__netpolicy *p = calloc(1, sizeof *p);
	if (!p)
		return s0__error_nomem(err);
	walk w = {.what = "network", .err = err, .out = p};
	int rc = walk_policy(&w, net);
	if (rc < 0) {
		s0__netpolicy_free(p);
		return rc;
	}
	*out = p;
	return S0_OK;
}

void s0__netpolicy_free(s0__netpolicy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		np_rule *r = &p->rules[i];
		for (size_t j = 0; j < r->ndomains; j++)
			free(r->domains[j]);
		free(r->domains);
		free(r->cidrs);
		free(r->ports);
	}
	free(p->rules);
	free(p);
}

const char *s0__netpolicy_mode(const s0__netpolicy *p)
{
	return p && p->block_all ? "block-all" : "allow-all";
}

size_t s0__netpolicy_rule_count(const s0__netpolicy *p)
{
	return p ? p->nrules : 0;
}

bool s0__netpolicy_rule_at(const s0__netpolicy *p, size_t i, s0__netpolicy_rule *out)
{
	size_t k = 0; /* denials first, as s0__netpolicy_allows() reads them */
	for (int pass = 0; p && pass < 2; pass++)
		for (size_t j = 0; j < p->nrules; j++) {
			const np_rule *r = &p->rules[j];
			if (r->allow != (pass == 1) || k++ != i)
				continue;
			*out = (s0__netpolicy_rule){r->allow, r->never, r->source, r->cidrs, r->ncidrs,
			                            (const char *const *)r->domains, r->ndomains,
			                            r->ports, r->nports};
			return true;
		}
	return false;
}

/* ---- decisions ---- */

typedef struct dest {
	const char *host;
	int family; /* 0: a name */
	uint8_t addr[16];
	int port, proto;
} dest;

static bool rule_matches(const np_rule *r, const dest *d)
{
	if (r->never)
		return false;
	bool dest_ok = r->ncidrs + r->ndomains == 0;
	for (size_t i = 0; !dest_ok && i < r->ncidrs; i++)
		dest_ok = d->family && cidr_contains(&r->cidrs[i], d->family, d->addr);
	for (size_t i = 0; !dest_ok && i < r->ndomains; i++)
		dest_ok = !d->family && domain_matches(r->domains[i], d->host);
	bool port_ok = r->nports == 0;
	for (size_t i = 0; !port_ok && i < r->nports; i++)
		port_ok = d->port >= r->ports[i].lo && d->port <= r->ports[i].hi &&
		          (!r->ports[i].proto || r->ports[i].proto == d->proto);
	return dest_ok && port_ok;
}

/*
 * The address a guest would connect to for @p host, as its resolver reads
 * numeric hosts: IPv6 in brackets or not (an IPv4-mapped one is IPv4),
 * and IPv4 in every inet_aton() form ("10.1", "0x0a000001", "012.0.0.1",
 * "167772161"), with one trailing dot allowed. 0 when @p host is a name.
 */
static int numeric_host(const char *host, uint8_t addr[16])
{
	char buf[64];
	size_t n = strlen(host);
	if (n >= sizeof buf)
		return 0;
	memcpy(buf, host, n + 1);
	if (n >= 2 && buf[0] == '[' && buf[n - 1] == ']') {
		memmove(buf, buf + 1, n - 2);
		buf[n -= 2] = '\0';
	} else if (n && buf[n - 1] == '.') {
		buf[--n] = '\0';
	}
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	if (inet_pton(AF_INET6, buf, addr) == 1) {
		if (memcmp(addr, mapped, 12))
			return AF_INET6;
		memmove(addr, addr + 12, 4);
		return AF_INET;
	}
	struct in_addr in;
	for (size_t i = 0; i < n; i++) /* inet_aton stops at a space: refuse */
		if (!isxdigit((unsigned char)buf[i]) && buf[i] != '.' && buf[i] != 'x' &&
		    buf[i] != 'X')
			return 0;
	if (n == 0 || inet_aton(buf, &in) == 0)
		return 0;
	memcpy(addr, &in.s_addr, 4);
	return AF_INET;
}

bool s0__netpolicy_is_loopback(const char *host)
{
	uint8_t a[16];
	if (name_eq(host, strlen(host), "localhost", 9))
		return true;
	int family = numeric_host(host, a);
	static const uint8_t v6lo[16] = {[15] = 1};
	return (family == AF_INET && a[0] == 127) || (family == AF_INET6 && !memcmp(a, v6lo, 16));
}

bool s0__netpolicy_allows(const s0__netpolicy *p, const char *host, int port, bool udp,
                          const char **why)
{
	const char *dummy;
	why = why ? why : &dummy;
	if (s0__netpolicy_is_loopback(host)) {
		*why = "loopback";
		return true;
	}
	dest d = {.host = host, .port = port, .proto = udp ? 2 : 1};
	d.family = numeric_host(host, d.addr);
	size_t n = p ? p->nrules : 0;
	for (int pass = 0; pass < 2; pass++) { /* denials first, then allowances */
		for (size_t i = 0; i < n; i++) {
			const np_rule *r = &p->rules[i];
			if (r->allow == (pass == 1) && rule_matches(r, &d)) {
				*why = r->source;
				return r->allow;
			}
		}
	}
	*why = s0__netpolicy_mode(p);
	return !(p && p->block_all);
}
