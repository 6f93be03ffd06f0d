/*
 * Memory checkpoints in the lifecycle (MEM-01..MEM-13; docs/decisions.md "Memory pause
 * acceptance", "Restore of memory"):
 * the checkpoint engine (checkpoint/ckpt.h) over the backend's object
 * store, fed with the image parts the runtime driver hands out
 * (runtime/runtime.h capture(); drivers without S0__RT_CAP_MEMORY answer
 * 503 memory_unavailable), its upload reservation budget, the fault hooks of its phases, the
 * captures in flight (node side: a manager restart keeps them) and the GC
 * roots of retained images.
 *
 * Fault points (docs/behaviours.md stand-ins): `prepare_stall` holds every
 * preparation attempt; `upload_budget_hold` holds the whole budget while
 * armed; `capture@authorize`, `capture@after-authorize` (capture phase),
 * `capture@commit` fail that phase; `capture_uncertain` makes the capture's
 * outcome unknown; `restore` fails a restore after its authorization.
 */
#include <stdlib.h>
#include <string.h>

#include "local/blocks/bstore.h"
#include "local/checkpoint/ckpt.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/webhook.h"

#define BUDGET_TOTAL (4ULL << 30)
#define BUDGET_IMAGE_LIMIT (2ULL << 30)
#define PREPARE_DEADLINE_MS 30000
#define PREPARE_RETRY_MS 250

struct s0__memprep {
	char id[S0__ID_MAX];
	s0__ckpt_prep *prep;
	s0__rt_image_src src; /* the driver's source, released at the end */
	bool failed; /* authorisation or capture failed: no image */
	char procd[64]; /* the source's procd version, kept by s0__engine_mem_seal() */
	/* the committed image, pinned as a GC root until the preparation ends
	 * (after the operation recording it is durable): a GC between the
	 * capture's batch commit and that record must not collect it */
	char image[S0__OBJID_HEX_BYTES + 1];
	struct s0__memprep *next;
};

static void src_release(s0__rt_image_src *src)
{
	if (src->release)
		src->release(src->self);
}

static void sync_budget_hold(s0__engine *e)
{
	bool want = s0__fault_armed(e->faults, "upload_budget_hold", NULL);
	pthread_mutex_lock(&e->mu);
	bool held = e->budget_held;
	e->budget_held = want;
	pthread_mutex_unlock(&e->mu);
	if (want && !held)
		s0__ckpt_budget_hold(e->budget, BUDGET_TOTAL);
	else if (!want && held)
		s0__ckpt_budget_unhold(e->budget, BUDGET_TOTAL);
}

static int hook(void *payload, int phase, const char *sandbox_id)
{
	s0__engine *e = payload;
	(void)sandbox_id;
	switch (phase) {
	case S0__CKPT_PREPARE:
		sync_budget_hold(e);
		return s0__fault_hit(e->faults, "prepare_stall", NULL) != S0__FAULT_NONE
		               ? S0__HOOK_HOLD
		               : S0__HOOK_PROCEED;
	case S0__CKPT_AUTHORIZE:
		return s0__fault_hit(e->faults, "capture", "authorize") != S0__FAULT_NONE
		               ? S0__HOOK_FAIL
		               : S0__HOOK_PROCEED;
	case S0__CKPT_CAPTURE:
		if (s0__fault_hit(e->faults, "capture_uncertain", NULL) != S0__FAULT_NONE)
			return S0__HOOK_UNCERTAIN;
		return s0__fault_hit(e->faults, "capture", "after-authorize") != S0__FAULT_NONE
		               ? S0__HOOK_FAIL
		               : S0__HOOK_PROCEED;
	case S0__CKPT_COMMIT:
		return s0__fault_hit(e->faults, "capture", "commit") != S0__FAULT_NONE
		               ? S0__HOOK_FAIL
		               : S0__HOOK_PROCEED;
	case S0__CKPT_RESTORE:
		return s0__fault_hit(e->faults, "restore", NULL) != S0__FAULT_NONE ? S0__HOOK_FAIL
		                                                                   : S0__HOOK_PROCEED;
	default:
		return S0__HOOK_PROCEED;
	}
}

/* Roots of every retained image (metadata) and of images restored into
 * runtimes still on the node (their lazy chunks are read later). */
static int image_roots(void *payload, int (*emit)(void *, int, const s0__objid *), void *ctx,
                       s0_error **err)
{
	s0__engine *e = payload;
	char **ids = NULL;
	size_t n = 0;
	int rc = s0__meta_mem_images(e->meta, &ids, &n, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		s0__objid id;
		if (s0__objid_parse(ids[i], &id, NULL) == S0_OK)
			s0__ckpt_image_roots(e->ckpt, &id, emit, ctx, NULL);
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	pthread_mutex_lock(&e->mu);
	for (s0__runtime *rt = e->node.runtimes; rc == S0_OK && rt; rt = rt->next) {
		s0__objid id;
		if (rt->restored_image[0] && s0__objid_parse(rt->restored_image, &id, NULL) == S0_OK)
			s0__ckpt_image_roots(e->ckpt, &id, emit, ctx, NULL);
	}
	for (s0__memprep *m = e->mempreps; rc == S0_OK && m; m = m->next) {
		s0__objid id;
		if (m->image[0] && s0__objid_parse(m->image, &id, NULL) == S0_OK)
			s0__ckpt_image_roots(e->ckpt, &id, emit, ctx, NULL);
	}
	pthread_mutex_unlock(&e->mu);
	return rc;
}

int s0__engine_mem_init(s0__engine *e, s0_error **err)
{
	uint64_t limit = e->opt.memory_image_limit_bytes ? e->opt.memory_image_limit_bytes
	                                                 : BUDGET_IMAGE_LIMIT;
	int rc = s0__ckpt_budget_new(BUDGET_TOTAL, limit, &e->budget, err);
	if (rc == S0_OK) {
		s0__ckpt_opts o = {.budget = e->budget, .hook = hook, .hook_payload = e};
		rc = s0__ckpt_new(s0__storage_objstore(e->storage), &o, &e->ckpt, err);
	}
	if (rc == S0_OK)
		s0__storage_set_object_roots(e->storage, image_roots, e);
	if (rc == S0_OK) /* MFB-15 */
		rc = s0__webhooks_new(e, !e->opt.no_webhook_outbox, &e->webhooks, err);
	return rc;
}

void s0__engine_mem_close(s0__engine *e)
{
	s0__webhooks_free(e->webhooks);
	e->webhooks = NULL;
	while (e->mempreps) {
		s0__memprep *m = e->mempreps;
		e->mempreps = m->next;
		s0__ckpt_finish(m->prep);
		src_release(&m->src);
		free(m);
	}
	if (e->storage)
		s0__storage_set_object_roots(e->storage, NULL, NULL);
	s0__ckpt_free(e->ckpt);
	e->ckpt = NULL;
	s0__ckpt_budget_free(e->budget);
	e->budget = NULL;
}

/* The destination fingerprint. The test hook `carrier_fingerprint@<field>`
 * (armed: not consumed) changes one field of this node's carriers
 * (runtime_version, platform, cpu_features; MFB-02). */
void s0__engine_fingerprint(s0__engine *e, const s0__sandbox_row *row, s0__ckpt_fp *fp)
{
	e->rt_drv->fingerprint(e->rt_host, fp);
	s0__strlcpy(fp->template_image, row->image, sizeof fp->template_image);
	s0__engine_resources(row, &fp->cpu_millis, &fp->memory_bytes);
	if (s0__fault_armed(e->faults, "carrier_fingerprint", "runtime_version"))
		s0__strlcpy(fp->runtime_version, "s0-sim/changed", sizeof fp->runtime_version);
	if (s0__fault_armed(e->faults, "carrier_fingerprint", "platform"))
		s0__strlcpy(fp->platform, "other/arch", sizeof fp->platform);
	if (s0__fault_armed(e->faults, "carrier_fingerprint", "cpu_features"))
		s0__strlcpy(fp->cpu_features, "changed", sizeof fp->cpu_features);
}

/* The answer to a memory request this deployment cannot serve: 503
 * memory_unavailable (MEM-02), its message naming the missing piece the
 * driver gave (@p why, consumed: memory_unsupported and its text) so the
 * wire answer says what to install or change, not only that it failed. */
static int mem_unavailable(s0_error *why, s0_error **err)
{
	const char *missing = why ? s0_error_message(why) : NULL;
	char *m = missing && *missing
	                  ? s0__asprintf("memory unavailable: this deployment does not support "
	                                 "memory checkpoints (%s)",
	                                 missing)
	                  : NULL;
	s0_error *w = s0__error_make(S0_EUNAVAILABLE, "memory_unavailable",
	                             m ? m
	                               : "memory unavailable: this deployment does not support "
	                                 "memory checkpoints");
	free(m);
	s0__error_set_cause(w, why);
	return s0__error_put(err, w);
}

/* The generation's memory image source, or 503 memory_unavailable: never
 * downgraded to a filesystem pause (MEM-02); the driver's reason
 * (memory_unsupported, naming what is missing) is the cause. */
static int capture(s0__engine *e, s0__runtime *rt, s0__rt_image_src *src, s0_error **err)
{
	s0_error *why = NULL;
	int crc = rt->drv->capture(rt->gen, src, &why);
	if (!(e->rt_caps & S0__RT_CAP_MEMORY) || crc < 0) {
		if (crc == S0_OK)
			src_release(src);
		return mem_unavailable(why, err);
	}
	return S0_OK;
}

int s0__engine_mem_prepare(s0__engine *e, const char *id, s0__runtime *rt,
                           s0_cancel_token *cancel, s0_error **err)
{
	s0__rt_image_src src;
	int crc = capture(e, rt, &src, err);
	if (crc < 0)
		return crc;
	s0__ckpt_prepare_opts po = {
		.sandbox_id = id,
		.clock = &e->opt.clock,
		.deadline_ms = s0__engine_now(e) + PREPARE_DEADLINE_MS,
		.retry_ms = PREPARE_RETRY_MS,
		.cancel = cancel,
	};
	/* webhooks: a durable outbox, drained before capture (MFB-15) */
	int wrc = s0__webhook_before_capture(e, id, po.deadline_ms, cancel, err);
	s0__memprep *m = wrc < 0 ? NULL : calloc(1, sizeof *m);
	if (!m) {
		src_release(&src);
		return wrc < 0 ? wrc : s0__error_nomem(err);
	}
	int rc = s0__ckpt_prepare(e->ckpt, &src, &po, &m->prep, err);
	if (rc < 0) {
		free(m);
		src_release(&src);
		sync_budget_hold(e);
		return rc;
	}
	m->src = src; /* kept for the capture (a driver may seal it first) */
	/* authorised from here: a failure is a failed capture, reported by status */
	s0_error *aerr = NULL;
	if (s0__ckpt_authorize(m->prep, &aerr) < 0)
		m->failed = true;
	s0_error_free(aerr);
	s0__strlcpy(m->id, id, sizeof m->id);
	pthread_mutex_lock(&e->mu);
	m->next = e->mempreps;
	e->mempreps = m;
	pthread_mutex_unlock(&e->mu);
	return S0_OK;
}

static s0__memprep *find_prep(s0__engine *e, const char *id)
{
	pthread_mutex_lock(&e->mu);
	s0__memprep *m = e->mempreps;
	while (m && strcmp(m->id, id))
		m = m->next;
	pthread_mutex_unlock(&e->mu);
	return m;
}

int s0__engine_mem_capture(s0__engine *e, const s0__op_row *op, s0__runtime *rt, const char *gen,
                           char *image_hex)
{
	s0__memprep *m = find_prep(e, op->sandbox_id);
	if (!m || m->failed)
		return S0_EMEMCAPTURE;
	s0__rt_image_src src = m->src; /* the preparation's (a sealed one outlives rt->gen) */
	s0__sandbox_row row = {0};
	if (s0__meta_sandbox_get(e->meta, NULL, op->sandbox_id, &row, NULL) < 0)
		return S0_EMEMCAPTURE;
	s0__ckpt_fp fp;
	s0__engine_fingerprint(e, &row, &fp);
	s0__strlcpy(fp.procd_version, rt->gen ? rt->drv->procd_version(rt->gen) : m->procd,
	            sizeof fp.procd_version);
	s0__sandbox_rec_clear(&row.rec);
	s0__ckpt_meta meta = {
		.sandbox_id = op->sandbox_id,
		.rootfs_generation = gen,
		.runtime_generation = op->generation,
		.fingerprint = &fp,
	};
	/* sessions ride along, for a backend that reopens before the resume */
	struct s0__sessions *ses = s0__engine_sessions_find(e, op->sandbox_id);
	void *ses_blob = NULL;
	if (ses && rt->drv->sessions_save(ses, &ses_blob, &meta.sessions_len, NULL) == S0_OK)
		meta.sessions = ses_blob;
	s0__ckpt_image_info info;
	s0_error *cerr = NULL;
	s0__webhook_capture_started(e, op->sandbox_id); /* MFB-15 inspection */
	int rc = s0__ckpt_capture(m->prep, &src, &meta, &info, &cerr);
	free(ses_blob);
	s0_error_free(cerr);
	if (rc < 0) {
		m->failed = true; /* never retried (MFB-08) */
		return S0_EMEMCAPTURE;
	}
	pthread_mutex_lock(&e->mu);
	memcpy(m->image, info.image_hex, S0__OBJID_HEX_BYTES);
	m->image[S0__OBJID_HEX_BYTES] = '\0';
	pthread_mutex_unlock(&e->mu);
	memcpy(image_hex, info.image_hex, S0__OBJID_HEX_BYTES);
	s0__webhook_event(e, op->sandbox_id, "sandbox.paused");
	/* test hook: hold between the batch commit and the operation record */
	s0__fault_pass(e->faults, "capture", "before-record");
	return S0_OK;
}

void s0__engine_mem_seal(s0__engine *e, const char *id, s0__runtime *rt)
{
	s0__memprep *m = find_prep(e, id);
	if (!m || m->failed)
		return;
	s0__strlcpy(m->procd, rt->gen ? rt->drv->procd_version(rt->gen) : "", sizeof m->procd);
	if (m->src.seal && m->src.seal(m->src.self, NULL) < 0)
		m->failed = true; /* no image: the capture fails (MFB-07) */
}

void s0__engine_mem_finish(s0__engine *e, const char *id)
{
	s0__memprep *gone = NULL;
	pthread_mutex_lock(&e->mu);
	for (s0__memprep **p = &e->mempreps; *p; p = &(*p)->next)
		if (!strcmp((*p)->id, id)) {
			gone = *p;
			*p = gone->next;
			break;
		}
	pthread_mutex_unlock(&e->mu);
	if (gone) {
		s0__ckpt_finish(gone->prep); /* the reservation returns (MFB-12) */
		src_release(&gone->src);
		free(gone);
	}
	sync_budget_hold(e);
}

cJSON *s0__engine_mem_inspect(s0__engine *e)
{
	cJSON *m = cJSON_CreateObject();
	if (!m)
		return NULL;
	cJSON_AddBoolToObject(m, "supported", (e->rt_caps & S0__RT_CAP_MEMORY) != 0);
	s0__ckpt_budget_usage u;
	s0__ckpt_budget_usage_get(e->budget, &u);
	cJSON *r = cJSON_AddObjectToObject(m, "reservation");
	if (r) {
		cJSON_AddNumberToObject(r, "total_bytes", (double)u.total_bytes);
		cJSON_AddNumberToObject(r, "image_limit_bytes", (double)u.image_limit_bytes);
		cJSON_AddNumberToObject(r, "reserved_bytes", (double)u.reserved_bytes);
		cJSON_AddNumberToObject(r, "held_bytes", (double)u.held_bytes);
		cJSON_AddNumberToObject(r, "reservations", (double)u.reservations);
		cJSON_AddNumberToObject(r, "refused", (double)u.refused);
	}
	s0__ckpt_stats st;
	s0__ckpt_stats_get(e->ckpt, &st);
	cJSON_AddNumberToObject(m, "captures", (double)st.captures);
	cJSON_AddNumberToObject(m, "restores", (double)st.restores);
	cJSON_AddNumberToObject(m, "chunks_fetched", (double)st.chunks_fetched);
	int preps = 0;
	pthread_mutex_lock(&e->mu);
	for (s0__memprep *p = e->mempreps; p; p = p->next)
		preps++;
	pthread_mutex_unlock(&e->mu);
	cJSON_AddNumberToObject(m, "captures_in_flight", preps);
	cJSON *imgs = cJSON_AddArrayToObject(m, "retained_images");
	s0__mem_image_row *rows = NULL;
	size_t n = 0;
	if (imgs && s0__meta_mem_image_rows(e->meta, &rows, &n, NULL) == S0_OK) {
		for (size_t i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			if (!o)
				break;
			cJSON_AddStringToObject(o, "sandbox_id", rows[i].sandbox_id);
			cJSON_AddStringToObject(o, "image", rows[i].image);
			cJSON_AddStringToObject(o, "rootfs_generation", rows[i].generation);
			cJSON_AddItemToArray(imgs, o);
		}
	}
	free(rows);
	cJSON *wh = s0__webhooks_inspect(e);
	if (wh)
		cJSON_AddItemToObject(m, "webhooks", wh);
	return m;
}

/*
 * Capture a running fork parent (docs/decisions.md "Memory fork"): one
 * preparation attempt (held or short of budget: 503 capture_pending, the
 * caller repeats the request and key); then, with the runtime barriered,
 * publish its branch as a generation (the running branch is rebased on it,
 * as a filesystem fork does) and capture the guest into an image matching
 * it, without retiring the parent: the image is not the parent's, the
 * parent's guest is "restored" in place (fault `restore` fails that, MFB-14)
 * and keeps running with its runtime_id and generation.
 *
 * On success *gen is pinned (the caller unpins it once the child records
 * it) and the image stays a GC root until s0__engine_mem_finish(parent).
 * *recorded: the failure is final for the key (after authorisation).
 */
int s0__engine_mem_fork_capture(s0__engine *e, const s0__sandbox_row *row, s0__runtime *rt,
                                char gen[S0__GEN_MAX], char *image_hex,
                                bool *recorded, s0_error **err)
{
	*recorded = false;
	s0__rt_image_src src;
	int crc = capture(e, rt, &src, err);
	if (crc < 0)
		return crc;
	s0__ckpt_prepare_opts po = {
		.sandbox_id = row->rec.id,
		.clock = &e->opt.clock,
		.deadline_ms = 0, /* one attempt: a pending capture is the caller's retry */
		.retry_ms = PREPARE_RETRY_MS,
	};
	s0__memprep *m = calloc(1, sizeof *m);
	if (!m) {
		src_release(&src);
		return s0__error_nomem(err);
	}
	s0_error *perr = NULL;
	int rc = s0__ckpt_prepare(e->ckpt, &src, &po, &m->prep, &perr);
	if (rc < 0) {
		free(m);
		src_release(&src);
		sync_budget_hold(e);
		if (rc == S0_EUNAVAILABLE) { /* held or no reservation yet */
			s0_error *w = s0__error_make(S0_EUNAVAILABLE, "capture_pending",
			                             "memory fork capture is pending");
			s0__error_set_cause(w, perr);
			return s0__error_put(err, w);
		}
		return s0__error_put(err, perr);
	}
	s0__strlcpy(m->id, row->rec.id, sizeof m->id);
	m->src = src;
	pthread_mutex_lock(&e->mu);
	m->next = e->mempreps;
	e->mempreps = m;
	pthread_mutex_unlock(&e->mu);
	/* authorised from here: any failure is final for the key */
	*recorded = true;
	s0_error *cerr = NULL;
	if (s0__ckpt_authorize(m->prep, &cerr) < 0) {
		s0_error_free(cerr);
		s0__engine_mem_finish(e, row->rec.id);
		return s0__error_set(err, S0_EINTERNAL, "operation_failed",
		                     "memory fork capture failed");
	}
	pthread_mutex_lock(&e->mu);
	rt->barrier = true; /* new requests wait, in-flight ones finish */
	while (rt->pins > 0)
		pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	rc = s0__volume_checkpoint(rt->volume, gen, NULL);
	bool have_gen = rc == S0_OK;
	if (rc == S0_OK) {
		s0__ckpt_fp fp;
		s0__engine_fingerprint(e, row, &fp);
		s0__strlcpy(fp.procd_version, rt->drv->procd_version(rt->gen),
		            sizeof fp.procd_version);
		s0__ckpt_meta meta = {
		        .sandbox_id = row->rec.id,
		        .rootfs_generation = gen,
		        .runtime_generation = row->rec.runtime_generation,
		        .fingerprint = &fp,
		};
		s0__ckpt_image_info info;
		rc = s0__ckpt_capture(m->prep, &src, &meta, &info, &cerr);
		s0_error_free(cerr);
		if (rc == S0_OK) {
			pthread_mutex_lock(&e->mu);
			memcpy(m->image, info.image_hex, S0__OBJID_HEX_BYTES);
			m->image[S0__OBJID_HEX_BYTES] = '\0';
			pthread_mutex_unlock(&e->mu);
			memcpy(image_hex, info.image_hex, S0__OBJID_HEX_BYTES);
			image_hex[S0__OBJID_HEX_BYTES] = '\0';
		}
	}
	/* the parent's guest resumes where it was captured */
	bool parent_failed = rc == S0_OK && s0__fault_hit(e->faults, "restore", NULL) != S0__FAULT_NONE;
	pthread_mutex_lock(&e->mu);
	rt->barrier = false;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	if (rc == S0_OK && !parent_failed)
		return S0_OK;
	if (have_gen)
		s0__storage_unpin(e->storage, gen);
	s0__engine_mem_finish(e, row->rec.id);
	if (parent_failed)
		return s0__error_set(err, S0_ERESUME, "resume_failed",
		                     "memory fork failed: restoring the parent failed");
	return s0__error_set(err, S0_EINTERNAL, "operation_failed", "memory fork capture failed");
}
