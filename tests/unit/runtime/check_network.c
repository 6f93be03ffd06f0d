/*
 * The simulated network (local/runtime/netpolicy.h) and the shell's `nc`:
 * validation messages, the decision order (loopback, deny, allow, mode),
 * domains, CIDRs, ports, traffic rules, and what a guest does before and
 * after a policy is applied. The lifecycle half of RTX-04 (applied at
 * resume before readiness) is in tests/unit/local/check_network.c.
 */
#include "rtsuites.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/runtime/gvisor/gv_net.h"
#include "local/runtime/netpolicy.h"

static s0__netpolicy *compile(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	ck_assert_msg(j != NULL, "bad test JSON %s", json);
	s0__netpolicy *p = NULL;
	s0_error *err = NULL;
	int rc = s0__netpolicy_compile(j, &p, &err);
	ck_assert_msg(rc == S0_OK, "%s: %s", json, err ? s0_error_message(err) : "");
	cJSON_Delete(j);
	return p;
}

/* The validation message for json (asserts it is rejected as bad_request). */
static char *rejected(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	ck_assert_ptr_nonnull(j);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__netpolicy_validate(j, "claim", &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "bad_request");
	char *m = strdup(s0_error_message(err));
	s0_error_free(err);
	/* compile refuses the same input */
	s0__netpolicy *p = NULL;
	ck_assert_int_eq(s0__netpolicy_compile(j, &p, NULL), S0_EINVAL);
	ck_assert_ptr_null(p);
	cJSON_Delete(j);
	return m;
}

#define REJECTS(json, needle)                                                            \
	do {                                                                             \
		char *m_ = rejected(json);                                               \
		ck_assert_msg(strstr(m_, (needle)) != NULL, "%s: message [%s] lacks [%s]", \
		              (json), m_, (needle));                                     \
		free(m_);                                                                \
	} while (0)

START_TEST(validation_names_the_field)
{
	REJECTS("{}", "network.mode");
	REJECTS("{\"mode\":\"deny-all\"}", "network.mode: must be \"allow-all\" or \"block-all\"");
	REJECTS("[]", "network: must be an object");
	REJECTS("{\"mode\":\"block-all\",\"egress\":5}", "network.egress: must be an object");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedCidrs\":\"10.0.0.0/8\"}}",
	        "network.egress.allowedCidrs: must be an array of strings");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedCidrs\":[\"10.0.0.0/33\"]}}",
	        "invalid CIDR \"10.0.0.0/33\"");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"deniedCidrs\":[\"300.1.1.1\"]}}",
	        "network.egress.deniedCidrs[0]: invalid CIDR");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedCidrs\":[\"10.0.0.0/8\",\"10.0.0.0/x\"]}}",
	        "network.egress.allowedCidrs[1]: invalid CIDR \"10.0.0.0/x\"");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"deniedDomains\":[\"a.io\",7]}}",
	        "network.egress.deniedDomains[1]: must be a string");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"a..b\"]}}",
	        "invalid domain \"a..b\"");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"\"]}}", "invalid domain");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"x/y\"]}}",
	        "invalid domain");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedPorts\":[{\"port\":0}]}}",
	        "network.egress.allowedPorts[0]: port must be an integer in 1..65535");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedPorts\":[{\"port\":80,\"endPort\":79}]}}",
	        "endPort");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"deniedPorts\":[{\"port\":1.5}]}}", "port must");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"deniedPorts\":[{\"port\":5,\"protocol\":\"icmp\"}]}}",
	        "protocol \"icmp\"");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"trafficRules\":[{\"action\":\"drop\"}]}}",
	        "network.egress.trafficRules[0]: action");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"trafficRules\":[{\"action\":\"allow\","
	        "\"cidrs\":[\"1.2.3.4/99\"]}]}}",
	        "network.egress.trafficRules[0].cidrs[0]: invalid CIDR");
	REJECTS("{\"mode\":\"block-all\",\"credentialBindings\":{}}", "credentialBindings");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"proxy\":[]}}", "proxy");
	/* misspelt members never pass as "no rule" */
	REJECTS("{\"mode\":\"block-all\",\"unknownTop\":1}", "network: unknown field \"unknownTop\"");
	REJECTS("{\"mode\":\"allow-all\",\"egress\":{\"deniedDomain\":[\"x.com\"]}}",
	        "network.egress: unknown field \"deniedDomain\"");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"trafficRules\":[{\"action\":\"deny\","
	        "\"cidr\":[\"1.2.3.4\"]}]}}",
	        "network.egress.trafficRules[0]: unknown field \"cidr\"");
	REJECTS("{\"mode\":\"block-all\",\"egress\":{\"allowedPorts\":[{\"port\":1,\"end\":2}]}}",
	        "network.egress.allowedPorts[0]: unknown field \"end\"");
}
END_TEST

START_TEST(valid_policies_and_defaults)
{
	s0_error *err = NULL;
	ck_assert_int_eq(s0__netpolicy_validate(NULL, "claim", &err), S0_OK);
	cJSON *null = cJSON_CreateNull();
	ck_assert_int_eq(s0__netpolicy_validate(null, "claim", &err), S0_OK);
	s0__netpolicy *p = NULL;
	ck_assert_int_eq(s0__netpolicy_compile(null, &p, &err), S0_OK);
	cJSON_Delete(null);
	/* the template default: allow-all, no rules */
	ck_assert_str_eq(s0__netpolicy_mode(p), "allow-all");
	ck_assert_uint_eq(s0__netpolicy_rule_count(p), 0);
	ck_assert(s0__netpolicy_allows(p, "example.com", 443, false, NULL));
	s0__netpolicy_free(p);
	/* the opaque parts and an empty egress are accepted */
	p = compile("{\"mode\":\"block-all\",\"egress\":{},\"credentialBindings\":[{\"ref\":\"x\"}]}");
	ck_assert_str_eq(s0__netpolicy_mode(p), "block-all");
	ck_assert_uint_eq(s0__netpolicy_rule_count(p), 0);
	s0__netpolicy_free(p);
	s0__netpolicy_free(NULL);
}
END_TEST

static void expect(const s0__netpolicy *p, const char *host, int port, bool udp, bool allowed,
                   const char *why_want)
{
	const char *why = NULL;
	bool got = s0__netpolicy_allows(p, host, port, udp, &why);
	ck_assert_msg(got == allowed, "%s:%d/%s: got %s (%s)", host, port, udp ? "udp" : "tcp",
	              got ? "allowed" : "denied", why);
	if (why_want)
		ck_assert_str_eq(why, why_want);
}

START_TEST(block_all_denies_everything_but_loopback)
{
	s0__netpolicy *p = compile("{\"mode\":\"block-all\"}");
	expect(p, "example.com", 443, false, false, "block-all");
	expect(p, "8.8.8.8", 53, true, false, "block-all");
	expect(p, "2001:db8::1", 80, false, false, "block-all");
	expect(p, "localhost", 8080, false, true, "loopback");
	expect(p, "LOCALHOST.", 8080, false, true, "loopback");
	expect(p, "127.1.2.3", 1, false, true, "loopback");
	expect(p, "::1", 22, false, true, "loopback");
	s0__netpolicy_free(p);
}
END_TEST

START_TEST(block_all_with_allow_lists)
{
	s0__netpolicy *p = compile(
		"{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"pypi.org\",\"*.npmjs.org\"],"
		"\"allowedCidrs\":[\"10.1.0.0/16\",\"2001:db8::/32\"],"
		"\"allowedPorts\":[{\"port\":443},{\"port\":8000,\"endPort\":8010,\"protocol\":\"TCP\"}]}}");
	expect(p, "pypi.org", 443, false, true, NULL);
	expect(p, "PyPI.org.", 443, false, true, NULL);
	expect(p, "pypi.org", 80, false, false, "block-all"); /* port not listed */
	expect(p, "registry.npmjs.org", 443, false, true, NULL);
	expect(p, "a.b.npmjs.org", 8005, false, true, NULL);
	expect(p, "a.b.npmjs.org", 8005, true, false, NULL); /* the range is TCP only */
	expect(p, "npmjs.org", 443, false, false, NULL);      /* the wildcard skips the apex */
	expect(p, "evilnpmjs.org", 443, false, false, NULL);
	expect(p, "10.1.255.255", 443, false, true, NULL);
	expect(p, "10.2.0.1", 443, false, false, NULL);
	expect(p, "2001:db8:ffff::5", 443, true, true, NULL); /* no protocol: TCP and UDP */
	expect(p, "2001:db9::5", 443, false, false, NULL);
	s0__netpolicy_free(p);
	/* allowedPorts alone opens those ports to any destination */
	p = compile("{\"mode\":\"block-all\",\"egress\":{\"allowedPorts\":[{\"port\":53,\"protocol\":\"udp\"}]}}");
	expect(p, "1.1.1.1", 53, true, true, NULL);
	expect(p, "1.1.1.1", 53, false, false, NULL);
	s0__netpolicy_free(p);
}
END_TEST

START_TEST(allow_all_with_deny_lists_and_precedence)
{
	s0__netpolicy *p = compile(
		"{\"mode\":\"allow-all\",\"egress\":{\"deniedDomains\":[\"*.internal\",\"metadata\"],"
		"\"deniedCidrs\":[\"169.254.169.254\"],\"deniedPorts\":[{\"port\":25}],"
		"\"allowedDomains\":[\"ok.internal\"]}}");
	expect(p, "example.com", 443, false, true, "allow-all");
	expect(p, "db.internal", 5432, false, false, "deniedCidrs/deniedDomains");
	expect(p, "ok.internal", 443, false, false, NULL); /* a deny beats an allow */
	expect(p, "metadata", 80, false, false, NULL);
	expect(p, "169.254.169.254", 80, false, false, NULL);
	expect(p, "169.254.169.253", 80, false, true, NULL);
	expect(p, "example.com", 25, false, false, "deniedPorts");
	expect(p, "localhost", 25, false, true, "loopback"); /* loopback is not egress */
	s0__netpolicy_free(p);
}
END_TEST

/* Numeric hosts are read the way a guest's resolver reads them, so no
 * spelling of an address slips past a CIDR rule. */
START_TEST(numeric_host_forms_match_cidrs)
{
	s0__netpolicy *p = compile("{\"mode\":\"allow-all\",\"egress\":{\"deniedCidrs\":"
	                           "[\"10.0.0.0/8\",\"2001:db8::/32\"]}}");
	static const char *const ten[] = {"10.0.0.1",  "012.0.0.1",  "0x0a000001", "167772161",
	                                  "10.1",      "[10.0.0.1]", "10.0.0.1.",  "::ffff:10.0.0.1",
	                                  "[::ffff:a00:1]", "[2001:db8::1]"};
	for (size_t i = 0; i < sizeof ten / sizeof ten[0]; i++)
		expect(p, ten[i], 443, false, false, "deniedCidrs/deniedDomains");
	expect(p, "11.0.0.1", 443, false, true, "allow-all");
	expect(p, "010.0.0.1", 443, false, true, "allow-all"); /* octal: 8.0.0.1 */
	expect(p, "10 .0.0.1", 443, false, true, "allow-all"); /* not a number: a name */
	s0__netpolicy_free(p);
	ck_assert(s0__netpolicy_is_loopback("::ffff:127.0.0.1"));
	ck_assert(s0__netpolicy_is_loopback("[::1]"));
	ck_assert(s0__netpolicy_is_loopback("0x7f000001"));
	ck_assert(s0__netpolicy_is_loopback("127.1"));
	ck_assert(!s0__netpolicy_is_loopback("128.0.0.1"));
	ck_assert(!s0__netpolicy_is_loopback("localhost.example.com"));
}
END_TEST

START_TEST(traffic_rules)
{
	s0__netpolicy *p = compile(
		"{\"mode\":\"block-all\",\"egress\":{\"trafficRules\":["
		"{\"name\":\"gh\",\"action\":\"allow\",\"domains\":[\"github.com\"],\"ports\":[{\"port\":443}]},"
		"{\"action\":\"allow\",\"cidrs\":[\"192.168.0.0/24\"]},"
		"{\"action\":\"deny\",\"cidrs\":[\"192.168.0.7\"]},"
		"{\"action\":\"allow\",\"domains\":[\"web.example\"],\"appProtocols\":[\"http\"]}]}}");
	ck_assert_uint_eq(s0__netpolicy_rule_count(p), 4);
	expect(p, "github.com", 443, false, true, "trafficRules");
	expect(p, "github.com", 22, false, false, "block-all");
	expect(p, "192.168.0.9", 22, false, true, NULL);
	expect(p, "192.168.0.7", 22, false, false, "trafficRules");
	expect(p, "web.example", 80, false, false, NULL); /* app-protocol rules skip raw connections */
	s0__netpolicy_free(p);
}
END_TEST

/* ---- random policies: mutated JSON never crashes; validate and compile
 * agree; loopback is always allowed; an exact deniedDomains entry always
 * denies, whatever the mode and the other rules ---- */

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static const char *const corpus[] = {
	"{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"pypi.org\",\"*.npmjs.org\"],"
	"\"allowedCidrs\":[\"10.0.0.0/8\",\"::1/128\"],\"allowedPorts\":[{\"port\":443,\"endPort\":444}]}}",
	"{\"mode\":\"allow-all\",\"egress\":{\"deniedDomains\":[\"x.io\"],\"deniedPorts\":[{\"port\":25,"
	"\"protocol\":\"TCP\"}],\"trafficRules\":[{\"action\":\"allow\",\"cidrs\":[\"1.2.3.0/24\"],"
	"\"ports\":[{\"port\":1}]},{\"action\":\"deny\",\"domains\":[\"*.a.b\"],\"appProtocols\":[\"http\"]}]}}",
	"{\"mode\":\"block-all\",\"credentialBindings\":[],\"egress\":{\"proxy\":{},\"protocolRules\":[]}}",
};

static void mutate(uint64_t *st, char *buf, size_t cap)
{
	static const char junk[] = "{}[]\":,.*/-0123456789aelnrstux\\ \x01\xff";
	size_t n = strlen(buf);
	for (int k = (int)(rng(st) % 4) + 1; k > 0; k--) {
		size_t at = n ? rng(st) % n : 0;
		switch (rng(st) % 4) {
		case 0: /* replace */
			if (n)
				buf[at] = junk[rng(st) % (sizeof junk - 1)];
			break;
		case 1: /* delete */
			if (n) {
				memmove(buf + at, buf + at + 1, n - at);
				n--;
			}
			break;
		case 2: /* insert */
			if (n + 1 < cap) {
				memmove(buf + at + 1, buf + at, n - at + 1);
				buf[at] = junk[rng(st) % (sizeof junk - 1)];
				n++;
			}
			break;
		default: /* truncate */
			buf[n = at] = '\0';
		}
	}
}

static void check_properties(const s0__netpolicy *p, const cJSON *j, uint64_t *st)
{
	static const char *const hosts[] = {"pypi.org", "x.io", "a.npmjs.org", "10.1.2.3",
	                                    "1.2.3.4",  "::1",  "2001:db8::9", "q.a.b"};
	for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
		(void)s0__netpolicy_allows(p, hosts[i], (int)(rng(st) % 65535) + 1, rng(st) & 1, NULL);
	ck_assert(s0__netpolicy_allows(p, "127.0.0.1", 80, false, NULL));
	ck_assert(s0__netpolicy_allows(p, "localhost", 53, true, NULL));
	const cJSON *dd = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "egress"), "deniedDomains");
	const cJSON *it;
	cJSON_ArrayForEach(it, dd) if (strncmp(it->valuestring, "*.", 2) &&
	                              !s0__netpolicy_is_loopback(it->valuestring))
		ck_assert_msg(!s0__netpolicy_allows(p, it->valuestring, 443, false, NULL),
		              "denied domain %s allowed", it->valuestring);
}

START_TEST(random_policies)
{
	uint64_t st = 0x5eed5eedULL + (uint64_t)_i;
	long iters = s0_test_iterations(3000);
	long compiled = 0;
	for (long i = 0; i < iters; i++) {
		char buf[1024];
		snprintf(buf, sizeof buf, "%s", corpus[rng(&st) % (sizeof corpus / sizeof corpus[0])]);
		if (i % 8) /* every 8th run checks an unmutated policy */
			mutate(&st, buf, sizeof buf);
		cJSON *j = cJSON_Parse(buf);
		if (!j)
			continue;
		s0_error *err = NULL;
		int v = s0__netpolicy_validate(j, "update", &err);
		ck_assert(v == S0_OK || (v == S0_EINVAL && err && *s0_error_message(err)));
		s0_error_free(err);
		s0__netpolicy *p = NULL;
		int c = s0__netpolicy_compile(j, &p, NULL);
		ck_assert_msg(c == v, "validate %d vs compile %d for %s", v, c, buf);
		if (p) {
			compiled++;
			check_properties(p, j, &st);
		}
		s0__netpolicy_free(p);
		cJSON_Delete(j);
	}
	ck_assert_int_gt(compiled, iters / 8); /* the unmutated ones at least */
}
END_TEST

/* ---- the guest's nc ---- */

static rtfix F;
static char *R;

static void setup(void)
{
	rtfix_open(&F, NULL);
	R = rtfix_repl(&F);
}

static void teardown(void)
{
	free(R);
	rtfix_close(&F);
}

static void apply(const char *json)
{
	s0__guest_set_network(F.g, compile(json));
}

START_TEST(nc_without_network_is_unreachable)
{
	char *e = rtfix_err(&F, R, "nc -z example.com 80; echo $? >/tmp/rc");
	ck_assert_str_eq(e, "nc: connect to example.com port 80 (tcp) failed: Network is unreachable\n");
	free(e);
	char *rc = rtfix_get(&F, "/tmp/rc");
	ck_assert_str_eq(rc, "1\n");
	free(rc);
	cJSON *gi = s0__guest_inspect(F.g);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(gi, "network"), "applied")));
	cJSON_Delete(gi);
}
END_TEST

START_TEST(nc_decides_through_the_policy)
{
	apply("{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"pypi.org\"]}}");
	char *e = rtfix_err(&F, R, "nc -zv example.com 443");
	ck_assert_str_eq(e, "nc: connect to example.com port 443 (tcp) failed: Operation not "
	                    "permitted (network policy: block-all)\n");
	free(e);
	char *o = rtfix_out(&F, R, "nc -z example.com 443 || echo denied; nc -z pypi.org 443 && echo ok");
	ck_assert_str_eq(o, "denied\nok\n");
	free(o);
	e = rtfix_err(&F, R, "nc -v -w 3 pypi.org 443");
	ck_assert_str_eq(e, "Connection to pypi.org 443 port [tcp/*] succeeded!\n");
	free(e);
	/* loopback reaches the guest's own listeners */
	e = rtfix_err(&F, R, "nc -z 127.0.0.1 8080");
	ck_assert_str_eq(e, "nc: connect to 127.0.0.1 port 8080 (tcp) failed: Connection refused\n");
	free(e);
	o = rtfix_out(&F, R, "listen 8080; nc -z localhost 8080 && echo up");
	ck_assert_str_eq(o, "up\n");
	free(o);
	cJSON *gi = s0__guest_inspect(F.g);
	const cJSON *n = cJSON_GetObjectItem(gi, "network");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(n, "applied")));
	ck_assert_str_eq(cJSON_GetObjectItem(n, "mode")->valuestring, "block-all");
	ck_assert_int_eq(cJSON_GetObjectItem(n, "connections_denied")->valueint, 2);
	ck_assert_int_eq(cJSON_GetObjectItem(n, "connections_allowed")->valueint, 3);
	cJSON_Delete(gi);
	/* a new policy replaces the old one at once */
	apply("{\"mode\":\"allow-all\"}");
	o = rtfix_out(&F, R, "nc -z example.com 443 && echo open");
	ck_assert_str_eq(o, "open\n");
	free(o);
	s0__guest_set_network(F.g, NULL); /* taken down */
	o = rtfix_out(&F, R, "nc -z example.com 443 || echo down");
	ck_assert_str_eq(o, "down\n");
	free(o);
}
END_TEST

START_TEST(nc_usage_errors)
{
	static const char *const bad[] = {"nc", "nc example.com", "nc -z example.com 0",
	                                  "nc example.com 65536", "nc -q example.com 80",
	                                  "nc example.com http", "nc -w", "nc a b c"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char cmd[96];
		snprintf(cmd, sizeof cmd, "%s; echo $?", bad[i]);
		char *o = rtfix_out(&F, R, cmd);
		ck_assert_msg(!strcmp(o, "2\n"), "%s -> %s", bad[i], o);
		free(o);
	}
}
END_TEST

/* The compiled rules as a packet filter reads them (netpolicy.h
 * s0__netpolicy_rule_at): denials first, then allowances, each with its
 * destinations and ports; and the nftables chain the gvisor runtime makes
 * of them (gv_net.h s0__gv_nft_policy: domains fail closed, "any
 * destination" excludes the sandbox pool). No root needed: text only. */
START_TEST(rules_for_a_packet_filter)
{
	s0__netpolicy *p = compile(
		"{\"mode\":\"block-all\",\"egress\":{\"allowedCidrs\":[\"10.9.8.7/24\"],"
		"\"allowedDomains\":[\"pypi.org\"],\"allowedPorts\":[{\"port\":443,\"protocol\":\"tcp\"}],"
		"\"deniedDomains\":[\"evil.example\"],\"deniedPorts\":[{\"port\":25,\"endPort\":26}]}}");
	s0__netpolicy_rule r;
	ck_assert(s0__netpolicy_rule_at(p, 0, &r));
	ck_assert(!r.allow);
	ck_assert_int_eq(r.ndomains, 1);
	ck_assert_str_eq(r.domains[0], "evil.example");
	ck_assert(s0__netpolicy_rule_at(p, 1, &r));
	ck_assert(!r.allow);
	ck_assert_int_eq(r.nports, 1);
	ck_assert_int_eq(r.ports[0].lo, 25);
	ck_assert_int_eq(r.ports[0].hi, 26);
	ck_assert(s0__netpolicy_rule_at(p, 2, &r));
	ck_assert(r.allow);
	ck_assert_int_eq(r.ncidrs, 1);
	ck_assert_int_eq(r.cidrs[0].prefix, 24);
	ck_assert(!s0__netpolicy_rule_at(p, 3, &r));
	char *t = s0__gv_nft_policy(7, "10.200.0.30", "10.200.0.0/16", p);
	static const char *const want[] = {
		"flush chain inet s0 sb7\n",
		"add rule inet s0 sb7 ip saddr != 10.200.0.30 drop\n",
		/* the denied domain: every destination */
		"add rule inet s0 sb7 meta l4proto tcp reject with tcp reset\n"
		"add rule inet s0 sb7 reject with icmpx type admin-prohibited\n"
		"add rule inet s0 sb7 tcp dport 25-26 reject with tcp reset\n"
		"add rule inet s0 sb7 udp dport 25-26 reject with icmpx type admin-prohibited\n"
		/* host bits cleared; the allowed domain matches nothing */
		"add rule inet s0 sb7 ip daddr { 10.9.8.0/24 } tcp dport 443 accept\n"
		"add rule inet s0 sb7 meta l4proto tcp reject with tcp reset\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_msg(strstr(t, want[i]), "no [%s] in:\n%s", want[i], t);
	ck_assert_msg(!strstr(t, "accept\nadd rule inet s0 sb7 ip daddr !="), "%s", t);
	free(t);
	s0__netpolicy_free(p);
	p = compile("{\"mode\":\"allow-all\"}");
	t = s0__gv_nft_policy(0, "10.200.0.2", "10.200.0.0/16", p);
	ck_assert_msg(strstr(t, "add rule inet s0 sb0 ip daddr != 10.200.0.0/16 accept\n"), "%s", t);
	free(t);
	s0__netpolicy_free(p);
	t = s0__gv_nft_policy(0, "10.200.0.2", "10.200.0.0/16", NULL); /* network down */
	const char *reply = strstr(t, "ct direction reply accept\n");
	ck_assert_msg(reply && !strstr(reply + 26, "accept"), "%s", t); /* replies only */
	free(t);
}
END_TEST

Suite *rt_network_suite(void)
{
	Suite *s = suite_create("runtime-network");
	TCase *p = tcase_create("policy");
	tcase_add_test(p, validation_names_the_field);
	tcase_add_test(p, valid_policies_and_defaults);
	tcase_add_test(p, block_all_denies_everything_but_loopback);
	tcase_add_test(p, block_all_with_allow_lists);
	tcase_add_test(p, allow_all_with_deny_lists_and_precedence);
	tcase_add_test(p, numeric_host_forms_match_cidrs);
	tcase_add_test(p, traffic_rules);
	tcase_add_test(p, random_policies);
	tcase_add_test(p, rules_for_a_packet_filter);
	suite_add_tcase(s, p);
	TCase *n = tcase_create("nc");
	tcase_add_checked_fixture(n, setup, teardown);
	tcase_add_test(n, nc_without_network_is_unreachable);
	tcase_add_test(n, nc_decides_through_the_policy);
	tcase_add_test(n, nc_usage_errors);
	suite_add_tcase(s, n);
	return s;
}
