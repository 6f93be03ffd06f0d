/*
 * Several nodes on one metadata store (docs/scaling.md "Several nodes"):
 * this node's id (kept in its data directory), its advertised address,
 * where a sandbox's runtime generation runs (this node, a live peer, or a
 * node whose lease lapsed), and the failover of a lapsed node's sandboxes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "local/lifecycle/engine_internal.h"

#define NODE_ID_FILE "node-id"

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A node id as written by this file: "node_" and lowercase base32. */
static bool valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n < 6 || n >= S0__ID_MAX || strncmp(s, "node", 4))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

/* Write id to dir/node-id durably (temp file, fsync, rename, fsync dir). */
static int write_id(const char *dir, const char *id, s0_error **err)
{
	char *tmp = s0__asprintf("%s/" NODE_ID_FILE ".tmp", dir);
	char *path = s0__asprintf("%s/" NODE_ID_FILE, dir);
	int rc = tmp && path ? S0_OK : s0__error_nomem(err);
	int fd = rc == S0_OK ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
	if (rc == S0_OK && fd < 0)
		rc = s0__error_set(err, S0_EIO, "node_id", "cannot create %s: %s", tmp, strerror(errno));
	size_t len = strlen(id);
	if (rc == S0_OK && (write(fd, id, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	                    fsync(fd) < 0))
		rc = s0__error_set(err, S0_EIO, "node_id", "cannot write %s: %s", tmp, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (rc == S0_OK && rename(tmp, path) < 0)
		rc = s0__error_set(err, S0_EIO, "node_id", "cannot rename %s: %s", tmp, strerror(errno));
	int dfd = rc == S0_OK ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(tmp);
	free(path);
	return rc;
}

int s0__engine_node_id_load(const char *dir, const char *legacy, char uid[S0__ID_MAX],
                            s0_error **err)
{
	char *path = s0__asprintf("%s/" NODE_ID_FILE, dir);
	if (!path)
		return s0__error_nomem(err);
	FILE *f = fopen(path, "re");
	char buf[S0__ID_MAX + 2] = "";
	if (f) {
		if (!fgets(buf, sizeof buf, f))
			buf[0] = '\0';
		fclose(f);
		buf[strcspn(buf, "\r\n")] = '\0';
		if (!valid_id(buf)) {
			int rc = s0__error_set(err, S0_ECORRUPT, "node_id",
			                       "%s does not hold a node id", path);
			free(path);
			return rc;
		}
		s0__strlcpy(uid, buf, S0__ID_MAX);
		free(path);
		return S0_OK;
	}
	free(path);
	if (errno != ENOENT)
		return s0__error_set(err, S0_EIO, "node_id", "cannot read %s/" NODE_ID_FILE ": %s", dir,
		                     strerror(errno));
	/* first open: a new id, or the one an older data directory kept */
	if (legacy && valid_id(legacy))
		s0__strlcpy(uid, legacy, S0__ID_MAX);
	else
		s0__engine_new_id("node_", uid, S0__ID_MAX);
	return write_id(dir, uid, err);
}

const char *s0__engine_node_id(const s0__engine *e)
{
	return e->ctld.uid;
}

const char *s0__engine_advertise(const s0__engine *e)
{
	return e->opt.advertise ? e->opt.advertise : "";
}

/* kv key of a node's advertised URL. */
static void addr_key(const char *node_id, char *k, size_t n)
{
	snprintf(k, n, "node:%s:advertise", node_id);
}

int s0__engine_advertise_open(s0__engine *e, s0_error **err)
{
	if (!e->opt.advertise || !*e->opt.advertise)
		return S0_OK;
	char k[S0__ID_MAX + 32];
	addr_key(e->ctld.uid, k, sizeof k);
	return s0__meta_kv_put(e->meta, k, e->opt.advertise, err);
}

int s0__engine_owner(s0__engine *e, const char *sandbox_id, s0__owner_kind *kind, char *addr,
                     size_t addr_len, s0_error **err)
{
	s0__gen_owner_row o;
	*kind = S0__OWNER_HERE;
	if (addr_len)
		addr[0] = '\0';
	s0_error *oerr = NULL;
	int rc = s0__meta_gen_owner(e->meta, sandbox_id, &o, &oerr);
	if (rc == S0_ENOTFOUND) { /* never claimed: nothing runs anywhere */
		s0_error_free(oerr);
		return S0_OK;
	}
	if (rc < 0) {
		if (err)
			*err = oerr;
		else
			s0_error_free(oerr);
		return rc;
	}
	if (!o.node_id[0] || !strcmp(o.node_id, e->ctld.uid))
		return S0_OK; /* released, or this node's (this or an earlier process) */
	if (o.lease_until <= wall_ms()) {
		*kind = S0__OWNER_LOST;
		return S0_OK;
	}
	*kind = S0__OWNER_PEER;
	char k[S0__ID_MAX + 32];
	addr_key(o.node_id, k, sizeof k);
	char *v = NULL;
	if (s0__meta_kv_get(e->meta, k, &v, NULL) == S0_OK && v && addr_len)
		s0__strlcpy(addr, v, addr_len);
	free(v);
	return S0_OK;
}

/* A sandbox row changed, by this or another node: long-polls and streams
 * waiting here on it wake (watch.h), wherever the change was made. */
static void on_store_change(void *arg, const char *sandbox_id, bool deleted)
{
	s0__engine_watch *w = arg;
	if (deleted)
		s0__engine_watch_forget(w, sandbox_id);
	else
		s0__engine_watch_bump(w, sandbox_id);
}

int s0__engine_listen_open(s0__engine *e, s0_error **err)
{
	return s0__meta_listen(e->meta, on_store_change, e->watch, err);
}

bool s0__engine_acts_on(s0__engine *e, const char *sandbox_id)
{
	s0__owner_kind k;
	if (s0__engine_owner(e, sandbox_id, &k, NULL, 0, NULL) < 0)
		return false; /* the store is unreachable: retried on a later pass */
	return k == S0__OWNER_HERE;
}

/* In the pause's last transaction: the finished generation is released,
 * so whichever node resumes the sandbox next may claim the next one. */
int s0__engine_release_claim(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err)
{
	(void)ctx;
	return s0__meta_gen_release(e->meta, op->sandbox_id, e->ctld.uid, err);
}

/*
 * Take over one sandbox of a node whose lease lapsed (sandbox lock held):
 * claim the generation after the one it held, which fences every other
 * node trying the same, then recover it as after a restart of its own
 * node (recover.c): a runtime that ran there is recovered from the last
 * committed head onto this node; a published pause or a delete goes on
 * from the controller, whose pass now finds this node the owner.
 */
static void take_over(s0__engine *e, const char *id, const s0__gen_owner_row *o)
{
	s0__sandbox_row row = {0};
	int rc = s0__meta_sandbox_get(e->meta, NULL, id, &row, NULL);
	if (rc == S0_ENOTFOUND) { /* deleted: the claim is left over */
		s0__meta_gen_release(e->meta, id, o->node_id, NULL);
		return;
	}
	if (rc < 0)
		return;
	int64_t gen = o->generation + 1;
	if (s0__engine_fence_claim(e, id, gen, NULL) == S0_OK) {
		/* the replacement claims row generation + 1: at least this one */
		if (row.rec.runtime_generation < gen - 1) {
			row.rec.runtime_generation = gen - 1;
			s0__engine_save(e, &row, NULL);
		}
		pthread_mutex_lock(&e->mu);
		e->fence.takeovers++;
		pthread_mutex_unlock(&e->mu);
		s0__engine_recover_locked(e, id);
		/* nothing ran there (a resume that died before it committed):
		 * still paused, and any node may resume it */
		s0__op_row op;
		s0__sandbox_rec_clear(&row.rec);
		if (s0__meta_sandbox_get(e->meta, NULL, id, &row, NULL) == S0_OK && row.rec.paused &&
		    s0__meta_op_active(e->meta, id, &op, NULL) == S0_ENOTFOUND) {
			/* the claimed generation is consumed: later operations act
			 * on it (the fencing check compares with the released one) */
			if (row.rec.runtime_generation < gen) {
				row.rec.runtime_generation = gen;
				s0__engine_save(e, &row, NULL);
			}
			s0__meta_gen_release(e->meta, id, e->ctld.uid, NULL);
		}
		s0__engine_kick(e);
	}
	s0__sandbox_rec_clear(&row.rec);
}

/* Whether this node has held its lease for a whole lease: only such a node
 * takes others over (after an outage of the store every lease looks
 * lapsed, and the live nodes need that long to renew theirs). */
static bool steady(s0__engine *e, int64_t now)
{
	pthread_mutex_lock(&e->fence.mu);
	bool ok = e->fence.epoch && now - e->fence.held_since_mono >= e->opt.lease_ms;
	pthread_mutex_unlock(&e->fence.mu);
	return ok;
}

int s0__engine_take_over_now(s0__engine *e, const char *id, s0_error **err)
{
	s0__gen_owner_row o;
	s0_error *oerr = NULL;
	int rc = s0__meta_gen_owner(e->meta, id, &o, &oerr);
	if (rc == S0_ENOTFOUND || (rc == S0_OK && (!o.node_id[0] || !strcmp(o.node_id, e->ctld.uid)))) {
		s0_error_free(oerr);
		return S0_OK; /* never claimed, released, or this node's */
	}
	if (rc < 0) {
		if (err && !*err)
			*err = oerr;
		else
			s0_error_free(oerr);
		return rc;
	}
	if (o.lease_until > wall_ms())
		return S0_OK; /* a live node's: its claim decides (resume.c) */
	if (steady(e, s0__real_monotonic_ms()) && s0__engine_lease_valid(e)) {
		take_over(e, id, &o); /* the claim fences any other node doing the same */
		if (s0__meta_gen_owner(e->meta, id, &o, NULL) == S0_OK &&
		    (!o.node_id[0] || !strcmp(o.node_id, e->ctld.uid)))
			return S0_OK;
	}
	rc = s0__error_set(err, S0_EUNAVAILABLE, "unavailable",
	                   "the node that ran this sandbox lost its lease and it is being "
	                   "taken over; retry");
	if (err && *err)
		s0__error_set_http(*err, 0, NULL, NULL, 1000);
	return rc;
}

static bool running(const s0__runtime *rt)
{
	return rt->ready && !rt->halted;
}

/*
 * After this node's lease lapsed and was taken again (a stall longer than
 * the lease), another node may have taken some of its sandboxes over: each
 * runtime here whose sandbox's generation is now another node's is halted
 * and released unpublished (its writes since the last commit are lost, as
 * in any takeover), so one sandbox never runs on two nodes for longer than
 * the stall.
 */
static void drop_superseded(s0__engine *e)
{
	size_t k;
	char (*ids)[S0__ID_MAX];
	pthread_mutex_lock(&e->mu);
	s0__node_pick_ids(&e->node, running, &ids, &k);
	pthread_mutex_unlock(&e->mu);
	for (size_t i = 0; i < k; i++) {
		s0__sblock *l = s0__engine_lock(e, ids[i]);
		s0__gen_owner_row o;
		pthread_mutex_lock(&e->mu);
		s0__runtime *rt = s0__node_find_sandbox(&e->node, ids[i]);
		int64_t gen = rt ? rt->generation : 0;
		pthread_mutex_unlock(&e->mu);
		/* another node holds it, or claimed a newer generation and released it */
		if (rt && s0__meta_gen_owner(e->meta, ids[i], &o, NULL) == S0_OK &&
		    (o.node_id[0] ? strcmp(o.node_id, e->ctld.uid) != 0 : o.generation > gen)) {
			if (rt) {
				s0__engine_halt_runtime(e, rt);
				if (s0__node_terminal_proof(e->faults, rt, NULL) == S0_OK)
					s0__engine_release_runtime(e, rt);
				pthread_mutex_lock(&e->mu);
				e->fence.superseded++;
				pthread_mutex_unlock(&e->mu);
			}
		}
		s0__engine_unlock(e, l);
	}
	free(ids);
}

void s0__engine_failover_scan(s0__engine *e)
{
	/* runtimes the lease watchdog halted, once the lease is proven again */
	if (s0__engine_lease_fenced_any(e) && s0__engine_lease_valid(e))
		s0__engine_lease_recover(e);
	int64_t now = s0__real_monotonic_ms();
	if (e->fence.scanned_mono && now - e->fence.scanned_mono < e->opt.lease_ms / 3)
		return;
	int64_t reacq = e->fence.reacquisitions;
	if (reacq != e->fence.reacq_seen) { /* the lease lapsed since the last look */
		e->fence.reacq_seen = reacq;
		drop_superseded(e);
	}
	if (!steady(e, now)) /* only a node that held its lease a whole lease */
		return;
	e->fence.scanned_mono = now;
	char **ids = NULL;
	size_t n = 0;
	if (s0__meta_gen_orphans(e->meta, wall_ms(), &ids, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		s0__sblock *l = s0__engine_lock(e, ids[i]);
		s0__gen_owner_row o;
		if (s0__meta_gen_owner(e->meta, ids[i], &o, NULL) == S0_OK && o.node_id[0] &&
		    o.lease_until <= wall_ms()) {
			if (!strcmp(o.node_id, e->ctld.uid)) /* ours under a lapsed epoch: renew it */
				s0__engine_fence_claim(e, ids[i], o.generation, NULL);
			else
				take_over(e, ids[i], &o);
		}
		s0__engine_unlock(e, l);
	}
	s0__meta_free_ids(ids, n);
}
