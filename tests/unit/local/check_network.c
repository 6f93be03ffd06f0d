/*
 * The sandbox network policy through the public client (docs/behaviours.md
 * RTX-04's network half: "a block-all policy denies egress in the
 * simulated network"): applied to every new runtime before it is reported
 * running (FS resume, memory resume, crash recovery), re-applied on
 * update, GET/PUT …/network, a failed application (fault
 * `network_policy`), and bad policies at claim, update and PUT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "lt.h"
#include "suites.h"

#define BLOCK_ALL_PYPI                                                                   \
	"{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"pypi.org\"]}}"

static char *claim_with_network(lt *t, const char *policy)
{
	char extra[512];
	snprintf(extra, sizeof extra, "{\"network\":%s}", policy);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.extra_json = extra;
	return lt_claim(t, NULL, &cfg);
}

/* `nc -z HOST PORT` in a fresh REPL: its exit status; *err_out its stderr. */
static int nc(lt *t, const char *id, const char *host, int port, char **err_out)
{
	char *ctx = lt_repl(t, id);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "nc -z %s %d; echo $?", host, port);
	char *out = lt_sh(t, id, ctx, cmd, err_out);
	int rc = atoi(out);
	free(out);
	free(ctx);
	return rc;
}

static void assert_denied_by(lt *t, const char *id, const char *host, const char *why)
{
	char *err = NULL;
	ck_assert_int_eq(nc(t, id, host, 443, &err), 1);
	char want[128];
	snprintf(want, sizeof want, "Operation not permitted (network policy: %s)", why);
	ck_assert_msg(strstr(err, want), "%s: stderr [%s] lacks [%s]", host, err, want);
	free(err);
}

/* The applied network state of the sandbox's runtime, from inspection. */
static cJSON *runtime_network(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	const cJSON *rts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes");
	ck_assert_int_eq(cJSON_GetArraySize(rts), 1);
	cJSON *g = cJSON_GetObjectItem(cJSON_GetArrayItem(rts, 0), "guest");
	cJSON *n = cJSON_DetachItemFromObject(g, "network");
	ck_assert_ptr_nonnull(n);
	cJSON_Delete(j);
	return n;
}

static void assert_applied(lt *t, const char *id, const char *mode)
{
	cJSON *n = runtime_network(t, id);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(n, "applied")));
	ck_assert_str_eq(lt_str(n, "mode"), mode);
	cJSON_Delete(n);
}

/* RTX-04: after an FS resume the files are readable and the block-all
 * policy is in force in the new runtime before anything runs in it. */
START_TEST(rtx04_block_all_denies_egress_after_resume)
{
	LT_ROW("RTX-04");
	lt t;
	lt_open(&t, NULL);
	char *id = claim_with_network(&t, BLOCK_ALL_PYPI);
	assert_denied_by(&t, id, "example.com", "block-all"); /* applied at claim too */
	lt_write(&t, id, "/workspace/data", "kept");
	char *rid = lt_runtime_id(&t, id);
	lt_pause(&t, id);
	lt_resume(&t, id);
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_ne(rid, rid2);
	ck_assert(lt_file_is(&t, id, "/workspace/data", "kept"));
	assert_applied(&t, id, "block-all");
	assert_denied_by(&t, id, "example.com", "block-all");
	assert_denied_by(&t, id, "93.184.216.34", "block-all");
	ck_assert_int_eq(nc(&t, id, "pypi.org", 443, NULL), 0); /* the allow list */
	ck_assert_int_eq(nc(&t, id, "localhost", 1, NULL), 1);  /* loopback: nobody listens */
	cJSON *n = runtime_network(&t, id);
	ck_assert_double_eq(lt_num(n, "connections_denied"), 2);
	ck_assert_double_eq(lt_num(n, "connections_allowed"), 1);
	cJSON_Delete(n);
	free(rid);
	free(rid2);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-04 for the other ways a runtime starts: a memory resume (the image
 * never carries the network) and recovery after a runtime crash. */
START_TEST(rtx04_policy_applied_after_memory_resume_and_recovery)
{
	LT_ROW("RTX-04");
	lt t;
	lt_open(&t, NULL);
	char *id = claim_with_network(&t, "{\"mode\":\"block-all\"}");
	char *ctx = lt_repl(&t, id);
	free(lt_sh(&t, id, ctx, "X=42", NULL));
	LT_OK(lt_wait_rc(&t, id, true, S0_BOOL_TRUE, &e_));
	LT_OK(lt_wait_rc(&t, id, false, S0_BOOL_TRUE, &e_));
	char *x = lt_sh(&t, id, ctx, "echo $X", NULL); /* the same process: restored */
	ck_assert_str_eq(x, "42");
	free(x);
	assert_applied(&t, id, "block-all");
	assert_denied_by(&t, id, "example.com", "block-all");
	free(ctx);

	char *rid = lt_runtime_id(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "runtime_crash", S0_FAULT_FAIL, 1, 0, &e_));
	lt_advance(&t, 1000);
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_ne(rid, rid2); /* a replacement runtime */
	assert_denied_by(&t, id, "example.com", "block-all");
	free(rid);
	free(rid2);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-04: a policy that cannot be applied keeps the sandbox out of
 * `running`: 503, still paused on the same head and generation, nothing
 * leased; once the cause is gone the resume succeeds with the policy. */
START_TEST(rtx04_network_failure_never_reports_running)
{
	LT_ROW("RTX-04");
	lt t;
	lt_open(&t, NULL);
	char *id = claim_with_network(&t, "{\"mode\":\"block-all\"}");
	lt_pause(&t, id);
	char *head = lt_head(&t, id);
	int64_t g = lt_generation(&t, id);
	double carriers = lt_inum(&t, NULL, "node.carriers_used");
	LT_OK(s0_local_fault_arm(t.local, "network_policy", S0_FAULT_FAIL, 1, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_message(err), "the sandbox network policy could not be applied");
	s0_error_free(err);
	lt_assert_paused(&t, id);
	char *head2 = lt_head(&t, id);
	ck_assert_str_eq(head, head2);
	ck_assert_int_eq(lt_generation(&t, id), g);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.carriers_used"), carriers);
	lt_resume(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g + 1);
	assert_denied_by(&t, id, "example.com", "block-all");
	free(head);
	free(head2);
	free(id);
	lt_close(&t);
}
END_TEST

/* GET/PUT …/network and config updates: the running generation follows
 * at once (same runtime_id); a paused sandbox gets it at resume. */
START_TEST(network_update_applies_to_running_and_paused)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *pol = NULL;
	LT_OK(s0_sandbox_get_network_policy(t.c, id, &pol, &e_));
	ck_assert_str_eq(pol, "{\"mode\":\"allow-all\"}"); /* the template default */
	s0_free(pol);
	ck_assert_int_eq(nc(&t, id, "example.com", 443, NULL), 0);
	assert_applied(&t, id, "allow-all");

	char *rid = lt_runtime_id(&t, id);
	LT_OK(s0_sandbox_update_network_policy(t.c, id, BLOCK_ALL_PYPI, &pol, &e_));
	cJSON *pj = cJSON_Parse(pol);
	ck_assert_str_eq(lt_str(pj, "mode"), "block-all");
	cJSON_Delete(pj);
	s0_free(pol);
	assert_denied_by(&t, id, "example.com", "block-all");
	ck_assert_int_eq(nc(&t, id, "pypi.org", 443, NULL), 0);
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_eq(rid, rid2); /* no new generation */
	LT_OK(s0_sandbox_get_network_policy(t.c, id, &pol, &e_));
	ck_assert_str_eq(pol, BLOCK_ALL_PYPI);
	s0_free(pol);

	/* the sandbox config update carries the same field */
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.extra_json = "{\"network\":{\"mode\":\"allow-all\",\"egress\":"
	                 "{\"deniedDomains\":[\"*.example.com\"]}}}";
	s0_sandbox_info *info = NULL;
	LT_OK(s0_sandbox_update(t.c, id, &cfg, &info, &e_));
	s0_sandbox_info_free(info);
	ck_assert_int_eq(nc(&t, id, "example.com", 443, NULL), 0);
	assert_denied_by(&t, id, "www.example.com", "deniedCidrs/deniedDomains");

	/* paused: stored now, applied by the next runtime */
	lt_pause(&t, id);
	LT_OK(s0_sandbox_update_network_policy(t.c, id, "{\"mode\":\"block-all\"}", NULL, &e_));
	lt_assert_paused(&t, id);
	lt_resume(&t, id);
	assert_denied_by(&t, id, "example.com", "block-all");
	free(rid);
	free(rid2);
	free(id);
	lt_close(&t);
}
END_TEST

/* Bad policies: 400 naming the field; nothing is created or changed. */
START_TEST(network_bad_policies_change_nothing)
{
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.extra_json = "{\"network\":{\"mode\":\"deny-all\"}}";
	s0_sandbox_info *info = NULL;
	s0_error *err = NULL;
	int rc = s0_sandbox_claim(t.c, "default", NULL, &cfg, &info, &err);
	ck_assert_int_eq(rc, S0_EINVAL);
	ck_assert_msg(strstr(s0_error_message(err), "network.mode"), "%s", s0_error_message(err));
	s0_error_free(err);
	err = NULL;
	ck_assert_int_eq(lt_runtimes_of(&t, NULL), 0);

	char *id = claim_with_network(&t, BLOCK_ALL_PYPI);
	char path0[160];
	snprintf(path0, sizeof path0, "/api/v1/sandboxes/%s/network", id);
	static const char *const bad[] = {
		"{}",
		"{\"mode\":\"block-all\",\"egress\":{\"allowedCidrs\":[\"10.0.0.0/40\"]}}",
		"{\"mode\":\"block-all\",\"egress\":{\"allowedPorts\":[{\"port\":70000}]}}",
		"{\"mode\":\"allow-all\",\"egress\":{\"trafficRules\":[{\"action\":\"maybe\"}]}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		LT_EXPECT(s0_sandbox_update_network_policy(t.c, id, bad[i], NULL, &err), err,
		          S0_EINVAL, "bad_request");
		char extra[256];
		snprintf(extra, sizeof extra, "{\"network\":%s}", bad[i]);
		cfg.extra_json = extra;
		LT_EXPECT(s0_sandbox_update(t.c, id, &cfg, &info, &err), err, S0_EINVAL, "bad_request");
	}
	/* a NUL escape would cut the string short in any C JSON reader:
	 * refused before sending, never stored shortened */
	err = NULL;
	ck_assert_int_eq(s0_sandbox_update_network_policy(
				 t.c, id, "{\"mode\":\"allow-all\\u0000zz\"}", NULL, &err),
	                 S0_EINVAL);
	ck_assert_msg(strstr(s0_error_message(err), "NUL character"), "%s", s0_error_message(err));
	s0_error_free(err);
	err = NULL;
	cfg.extra_json = "{\"network\":{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":"
	                 "[\"pypi.org\\u0000evil.com\"]}}}";
	LT_EXPECT(s0_sandbox_update(t.c, id, &cfg, &info, &err), err, S0_EINVAL, NULL);
	LT_EXPECT(s0_runtime_call(t.c, "POST", id, "/contexts", "{\"type\":\"repl\\u0000\"}", NULL,
	                          NULL, NULL, &err),
	          err, S0_EINVAL, NULL);
	/* and the server refuses such bodies from any other client */
	ck_assert_int_eq(lt_raw(&t, "PUT", path0, "{\"mode\":\"allow-all\\u0000zz\"}", NULL), 400);
	/* not JSON objects: refused before sending */
	LT_EXPECT(s0_sandbox_update_network_policy(t.c, id, "[1]", NULL, &err), err, S0_EINVAL, NULL);
	LT_EXPECT(s0_sandbox_update_network_policy(t.c, id, NULL, NULL, &err), err, S0_EINVAL, NULL);
	LT_EXPECT(s0_sandbox_get_network_policy(t.c, id, NULL, &err), err, S0_EINVAL, NULL);
	/* raw bodies the client never sends */
	char path[160], *reply = NULL;
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/network", id);
	static const char *const raw[] = {"[]", "{\"mode\":", "\"block-all\"", "{\"mode\":5}"};
	for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
		ck_assert_int_eq(lt_raw(&t, "PUT", path, raw[i], &reply), 400);
		ck_assert_msg(strstr(reply, "\"bad_request\""), "%s -> %s", raw[i], reply);
		free(reply);
	}
	ck_assert_int_eq(lt_raw(&t, "PUT", path, NULL, NULL), 400);
	ck_assert_int_eq(lt_raw(&t, "POST", path, "{}", NULL), 405);
	/* the stored policy and its enforcement are unchanged */
	char *pol = NULL;
	LT_OK(s0_sandbox_get_network_policy(t.c, id, &pol, &e_));
	ck_assert_str_eq(pol, BLOCK_ALL_PYPI);
	s0_free(pol);
	assert_denied_by(&t, id, "example.com", "block-all");
	/* null is "not given" in an update (docs/wire.md §3.5): the policy stays,
	 * and so does the memory (null inside resources too) */
	s0_sandbox_config mem = S0_SANDBOX_CONFIG_INIT;
	mem.memory = "256Mi";
	LT_OK(s0_sandbox_update(t.c, id, &mem, &info, &e_));
	s0_sandbox_info_free(info);
	cfg.extra_json = "{\"network\":null,\"env_vars\":null,\"resources\":{\"memory\":null}}";
	LT_OK(s0_sandbox_update(t.c, id, &cfg, &info, &e_));
	cJSON *ij = cJSON_Parse(s0_sandbox_info_json(info));
	ck_assert_str_eq(lt_str(ij, "resources.memory"), "256Mi");
	cJSON_Delete(ij);
	s0_sandbox_info_free(info);
	LT_OK(s0_sandbox_get_network_policy(t.c, id, &pol, &e_));
	ck_assert_str_eq(pol, BLOCK_ALL_PYPI);
	s0_free(pol);
	assert_denied_by(&t, id, "example.com", "block-all");
	/* a misspelt rule is refused, not stored as no rule */
	LT_EXPECT(s0_sandbox_update_network_policy(
		      t.c, id, "{\"mode\":\"allow-all\",\"egress\":{\"deniedDomain\":[\"x.io\"]}}",
		      NULL, &err),
	          err, S0_EINVAL, "bad_request");
	/* unknown and deleted ids */
	LT_EXPECT(s0_sandbox_get_network_policy(t.c, "sb_nope", &pol, &err), err, S0_ENOTFOUND,
	          NULL);
	LT_EXPECT(s0_sandbox_update_network_policy(t.c, "sb_nope", "{\"mode\":\"allow-all\"}", NULL,
	                                           &err),
	          err, S0_ENOTFOUND, NULL);
	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	LT_EXPECT(s0_sandbox_get_network_policy(t.c, id, &pol, &err), err, S0_ENOTFOUND, NULL);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_network_suite(void)
{
	Suite *s = suite_create("local-network");
	TCase *tc = tcase_create("network");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, rtx04_block_all_denies_egress_after_resume);
	tcase_add_test(tc, rtx04_policy_applied_after_memory_resume_and_recovery);
	tcase_add_test(tc, rtx04_network_failure_never_reports_running);
	tcase_add_test(tc, network_update_applies_to_running_and_paused);
	tcase_add_test(tc, network_bad_policies_change_nothing);
	suite_add_tcase(s, tc);
	return s;
}
