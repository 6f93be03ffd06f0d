/*
 * The node agent model (docs/behaviours.md stand-ins "ctld primary and
 * synchronized standby" and "Node reboot"; REC-04, REC-06).
 *
 * ctld: two in-process instances ("a" and "b") share a durable
 * node-operation journal (rows of the metadata kv table keyed by operation
 * id and step: "nodeop:<op>:<step>"). The primary records each node
 * operation's effect in the journal before it answers; the fault
 * `ctld_primary_fail@<step>` kills it right after, before the answer. The
 * standby is then promoted (epoch + 1, durable) and, on the retry, finds
 * the effect in the journal and finishes the operation without doing it
 * again: one publication, one stop, no second writer.
 *
 * Node identity: a durable node UID kept in the data directory (file
 * `node-id`, made once: two data directories on one shared store are two
 * nodes; docs/scaling.md "Node identity"), a boot incarnation counter and a
 * boot credential (kv "node:<uid>:incarnation", "node:<uid>:credential"). The
 * fault `node_reboot` (hit when a pause retires its runtime) reboots the
 * node: every runtime of the old incarnation is gone, and the node stays
 * down — its capacity fenced, no terminal proof, no new leases — until a
 * successor boot of the same UID with the valid credential reconciles it
 * (s0__engine_node_boot), proving the old runtime state absent.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "local/lifecycle/engine_internal.h"

static int kv_int(s0__engine *e, const char *k, int64_t *out)
{
	char *v = NULL;
	int rc = s0__meta_kv_get(e->meta, k, &v, NULL);
	*out = v ? strtoll(v, NULL, 10) : 0;
	free(v);
	return rc;
}

static int kv_put_int(s0__engine *e, const char *k, int64_t v, s0_error **err)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%" PRId64, v);
	return s0__meta_kv_put(e->meta, k, buf, err);
}

static int kv_str(s0__engine *e, const char *k, char *out, size_t n)
{
	char *v = NULL;
	int rc = s0__meta_kv_get(e->meta, k, &v, NULL);
	out[0] = '\0';
	if (v)
		s0__strlcpy(out, v, n);
	free(v);
	return rc;
}

/* This node's kv key "node:<uid>:<what>" (per node: nodes share a store). */
static const char *node_key(const s0__engine *e, const char *what, char *k, size_t n)
{
	snprintf(k, n, "node:%s:%s", e->ctld.uid, what);
	return k;
}

int s0__ctld_init(s0__engine *e, s0_error **err)
{
	s0__ctld *c = &e->ctld;
	char k[S0__ID_MAX + 32];
	/* a data directory made before the node-id file kept its id in its
	 * own SQLite store; a shared store's kv is never adopted */
	char legacy[S0__ID_MAX] = "";
	if (!e->opt.meta)
		kv_str(e, "node_uid", legacy, sizeof legacy);
	int rc = s0__engine_node_id_load(e->dir, legacy, c->uid, err);
	if (rc == S0_OK) {
		char *cred = NULL;
		rc = s0__meta_kv_get(e->meta, node_key(e, "credential", k, sizeof k), &cred, err);
		if (rc == S0_OK && !cred) { /* first boot: a new boot credential */
			char fresh[S0__ID_MAX];
			s0__engine_new_id("bootcred_", fresh, sizeof fresh);
			rc = s0__meta_kv_put(e->meta, k, fresh, err);
		}
		free(cred);
	}
	if (rc == S0_OK)
		rc = kv_int(e, node_key(e, "incarnation", k, sizeof k), &c->incarnation);
	/* opening the data directory is a boot of the same node */
	if (rc == S0_OK && (rc = kv_put_int(e, k, c->incarnation + 1, err)) == S0_OK)
		c->incarnation++;
	if (rc == S0_OK)
		rc = kv_int(e, node_key(e, "ctld_epoch", k, sizeof k), &c->epoch);
	return rc;
}

static void journal_key(char *k, size_t n, int64_t op_id, const char *step)
{
	snprintf(k, n, "nodeop:%" PRId64 ":%s", op_id, step);
}

bool s0__ctld_journal_get(s0__engine *e, int64_t op_id, const char *step, char *result, size_t n)
{
	char k[96];
	journal_key(k, sizeof k, op_id, step);
	char *v = NULL;
	if (s0__meta_kv_get(e->meta, k, &v, NULL) < 0 || !v)
		return false;
	if (result)
		s0__strlcpy(result, v, n);
	free(v);
	pthread_mutex_lock(&e->mu);
	e->ctld.journal_replays++;
	pthread_mutex_unlock(&e->mu);
	return true;
}

int s0__ctld_journal_put(s0__engine *e, int64_t op_id, const char *step, const char *result)
{
	char k[96];
	journal_key(k, sizeof k, op_id, step);
	int rc = s0__meta_kv_put(e->meta, k, result ? result : "", NULL);
	if (rc == S0_OK) {
		pthread_mutex_lock(&e->mu);
		e->ctld.journaled++;
		pthread_mutex_unlock(&e->mu);
	}
	return rc;
}

bool s0__ctld_primary_fails(s0__engine *e, const char *step)
{
	if (s0__fault_hit(e->faults, "ctld_primary_fail", step) == S0__FAULT_NONE)
		return false;
	/* the primary is gone; the synchronized standby takes over (durable epoch) */
	pthread_mutex_lock(&e->mu);
	int64_t epoch = e->ctld.epoch + 1;
	pthread_mutex_unlock(&e->mu);
	char k[S0__ID_MAX + 32];
	kv_put_int(e, node_key(e, "ctld_epoch", k, sizeof k), epoch, NULL);
	pthread_mutex_lock(&e->mu);
	e->ctld.epoch = epoch;
	e->ctld.primary ^= 1;
	e->ctld.promotions++;
	pthread_mutex_unlock(&e->mu);
	return true;
}

bool s0__ctld_node_down(s0__engine *e)
{
	pthread_mutex_lock(&e->mu);
	bool down = e->node.down;
	pthread_mutex_unlock(&e->mu);
	return down;
}

bool s0__ctld_reboot_hit(s0__engine *e, const char *step)
{
	if (s0__fault_hit(e->faults, "node_reboot", step) == S0__FAULT_NONE)
		return false;
	pthread_mutex_lock(&e->mu);
	e->node.down = true; /* no leases, no proofs until a successor boot */
	e->ctld.reboots++;
	pthread_mutex_unlock(&e->mu);
	/* the old incarnation's runtimes are gone: processes, writers, mounts */
	for (;;) {
		s0__runtime *victim = NULL;
		pthread_mutex_lock(&e->mu);
		for (s0__runtime *rt = e->node.runtimes; rt && !victim; rt = rt->next)
			if (rt->ready && !rt->halted)
				victim = rt;
		pthread_mutex_unlock(&e->mu);
		if (!victim)
			break;
		s0__engine_halt_runtime(e, victim);
	}
	return true;
}

void s0__engine_node_identity(s0__engine *e, char uid[S0__ID_MAX], char credential[S0__ID_MAX],
                              int64_t *incarnation)
{
	char k[S0__ID_MAX + 32];
	s0__strlcpy(uid, e->ctld.uid, S0__ID_MAX);
	kv_str(e, node_key(e, "credential", k, sizeof k), credential, S0__ID_MAX);
	kv_int(e, node_key(e, "incarnation", k, sizeof k), incarnation);
}

int s0__engine_node_boot(s0__engine *e, const char *node_uid, const char *credential,
                         s0_error **err)
{
	char uid[S0__ID_MAX], cred[S0__ID_MAX];
	int64_t inc = 0;
	s0__engine_node_identity(e, uid, cred, &inc);
	if (!node_uid || !credential || strcmp(node_uid, uid) || strcmp(credential, cred)) {
		pthread_mutex_lock(&e->mu);
		e->ctld.boot_rejections++;
		pthread_mutex_unlock(&e->mu);
		return s0__error_set(err, S0_EFORBIDDEN, "boot_rejected",
		                     "a boot of another node or with a bad credential cannot "
		                     "reconcile node %s",
		                     uid);
	}
	if (!s0__ctld_node_down(e))
		return S0_OK; /* nothing to reconcile */
	/* prove the old incarnation's runtime state absent */
	pthread_mutex_lock(&e->mu);
	int present = 0;
	struct stat st;
	for (s0__runtime *rt = e->node.runtimes; rt; rt = rt->next) {
		if (rt->alloc_dir && stat(rt->alloc_dir, &st) == 0 && rmdir(rt->alloc_dir) < 0)
			present++;
		if (rt->ready && !rt->halted)
			present++;
	}
	pthread_mutex_unlock(&e->mu);
	if (present)
		return s0__error_set(err, S0_EUNAVAILABLE, "terminal_proof",
		                     "the old incarnation's runtime state is still present");
	char k[S0__ID_MAX + 32];
	int rc = kv_put_int(e, node_key(e, "incarnation", k, sizeof k), inc + 1, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&e->mu);
	for (s0__runtime *rt = e->node.runtimes; rt; rt = rt->next)
		e->node.reconciled_stops++;
	e->ctld.incarnation = inc + 1;
	e->ctld.successor_boots++;
	e->node.down = false;
	pthread_mutex_unlock(&e->mu);
	s0__engine_kick(e);
	return S0_OK;
}

/* Inspection (under e->mu). */
void s0__ctld_json(s0__engine *e, cJSON *node)
{
	s0__ctld *c = &e->ctld;
	cJSON *j = cJSON_AddObjectToObject(node, "ctld");
	if (j) {
		cJSON_AddStringToObject(j, "primary", c->primary ? "b" : "a");
		cJSON_AddStringToObject(j, "standby", c->primary ? "a" : "b");
		cJSON_AddNumberToObject(j, "epoch", (double)c->epoch);
		cJSON_AddNumberToObject(j, "promotions", (double)c->promotions);
		cJSON_AddNumberToObject(j, "journaled", (double)c->journaled);
		cJSON_AddNumberToObject(j, "journal_replays", (double)c->journal_replays);
	}
	cJSON *id = cJSON_AddObjectToObject(node, "identity");
	if (id) {
		cJSON_AddStringToObject(id, "node_uid", c->uid);
		cJSON_AddNumberToObject(id, "incarnation", (double)c->incarnation);
		cJSON_AddBoolToObject(id, "awaiting_successor", e->node.down);
		cJSON_AddNumberToObject(id, "reboots", (double)c->reboots);
		cJSON_AddNumberToObject(id, "successor_boots", (double)c->successor_boots);
		cJSON_AddNumberToObject(id, "boot_rejections", (double)c->boot_rejections);
		/* atomics: fence.mu is never taken under e->mu */
		cJSON_AddNumberToObject(id, "lease_epoch", (double)e->fence.epoch);
		cJSON_AddNumberToObject(id, "lease_renewals", (double)e->fence.renewals);
		cJSON_AddNumberToObject(id, "lease_reacquisitions", (double)e->fence.reacquisitions);
		cJSON_AddNumberToObject(id, "lease_ms", (double)e->opt.lease_ms);
		cJSON_AddStringToObject(id, "advertise", e->opt.advertise ? e->opt.advertise : "");
		cJSON_AddNumberToObject(id, "takeovers", (double)e->fence.takeovers);
		cJSON_AddNumberToObject(id, "superseded", (double)e->fence.superseded);
		cJSON_AddNumberToObject(id, "lease_renew_failures", (double)e->fence.renew_failures);
		cJSON_AddNumberToObject(id, "self_fenced", (double)e->fence.self_fenced);
		cJSON_AddNumberToObject(id, "self_fenced_at_ms", (double)e->fence.self_fenced_at);
		cJSON_AddNumberToObject(id, "stale_refused", (double)e->fence.refused);
	}
}
