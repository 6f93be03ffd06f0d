/*
 * The sessions registry as one blob (sessions.h): "S0SES003" = the
 * sessions, then the second-tier trailer (ses_tier2.c, since 002), then the
 * deadline trailer (since 003: creation and attempt-start virtual times,
 * why the attempt is being ended, a start waiting for a stop). 001 and 002
 * blobs are still read; their virtual times are taken at the next
 * reconciliation.
 */
#include "local/runtime/sim/ses_int.h"
#include "local/runtime/rtser.h"

#include <stdlib.h>
#include <string.h>

#define MAGIC "S0SES003"
#define MAGIC2 "S0SES002"
#define MAGIC1 "S0SES001"
#define STR_MAX ((size_t)64 << 20)

static void put_attempt(s0__ser *w, const ses_attempt *a)
{
	s0__ser_str(w, a->id);
	s0__ser_u32(w, (uint32_t)a->number);
	s0__ser_i64(w, a->generation);
	s0__ser_u32(w, (uint32_t)a->pid);
	s0__ser_i64(w, a->started_at_ms);
	s0__ser_i64(w, a->finished_at_ms);
	s0__ser_u8(w, a->finished);
	s0__ser_u8(w, a->has_exit);
	s0__ser_u32(w, (uint32_t)a->exit_code);
	s0__ser_str(w, a->reason);
}

static void put_ses(s0__ser *w, const ses *x)
{
	s0__ser_str(w, x->id);
	s0__ser_str(w, x->spec.canon);
	s0__ser_i64(w, x->spec_version);
	s0__ser_u8(w, (uint8_t)x->phase);
	s0__ser_i64(w, x->generation);
	s0__ser_u8(w, x->has_attempt);
	put_attempt(w, &x->att);
	s0__ser_u32(w, (uint32_t)x->restart_count);
	s0__ser_u32(w, (uint32_t)x->nrestarts);
	for (size_t i = 0; i < x->nrestarts; i++)
		s0__ser_i64(w, x->restarts_vt[i]);
	s0__ser_i64(w, x->next_start_vt);
	s0__ser_u8(w, x->ready);
	s0__ser_i64(w, x->created_ms);
	s0__ser_i64(w, x->updated_ms);
	s0__ser_i64(w, x->activity_ms);
	s0__ser_u8(w, x->idem_key != NULL);
	s0__ser_str(w, x->idem_key);
	s0__ser_i64(w, x->next_seq);
	s0__ser_u32(w, (uint32_t)x->nev);
	for (size_t i = 0; i < x->nev; i++) {
		s0__ser_i64(w, x->ev[i].seq);
		s0__ser_i64(w, x->ev[i].at_ms);
		s0__ser_str(w, x->ev[i].json);
	}
}

static void put_deadlines(s0__ser *w, const ses *x)
{
	s0__ser_i64(w, x->created_vt);
	s0__ser_i64(w, x->att_start_vt);
	s0__ser_u8(w, x->ending);
	s0__ser_u8(w, x->start_after_stop);
}

static void get_deadlines(s0__de *d, ses *x)
{
	x->created_vt = s0__de_i64(d);
	x->att_start_vt = s0__de_i64(d);
	x->ending = s0__de_u8(d);
	x->start_after_stop = s0__de_u8(d) != 0;
	if (x->created_vt < -1 || x->att_start_vt < -1 || x->ending > END_READINESS)
		s0__de_fail(d);
}

int s0__sessions_serialize(s0__sessions *s, void **buf_out, size_t *len_out, s0_error **err)
{
	s0__ser w = {0};
	pthread_mutex_lock(&s->mu);
	s0__ser_raw(&w, MAGIC, 8);
	s0__ser_i64(&w, s->generation);
	s0__ser_u32(&w, (uint32_t)s->n);
	for (size_t i = 0; i < s->n; i++)
		put_ses(&w, s->v[i]);
	for (size_t i = 0; i < s->n; i++)
		s0__ses_t2_put(&w, s->v[i]);
	for (size_t i = 0; i < s->n; i++)
		put_deadlines(&w, s->v[i]);
	pthread_mutex_unlock(&s->mu);
	if (w.oom) {
		s0__buf_free(&w.buf);
		return s0__error_nomem(err);
	}
	*buf_out = s0__buf_detach(&w.buf, len_out);
	return S0_OK;
}

/* Copy a string into a fixed field (too long: bad). */
static void get_fixed(s0__de *d, char *out, size_t cap)
{
	size_t n;
	const char *p = s0__de_bytes(d, cap - 1, &n);
	if (p) {
		memcpy(out, p, n);
		out[n] = 0;
	}
}

static void get_attempt(s0__de *d, ses_attempt *a)
{
	get_fixed(d, a->id, sizeof a->id);
	a->number = (int32_t)s0__de_u32(d);
	a->generation = s0__de_i64(d);
	a->pid = (int32_t)s0__de_u32(d);
	a->started_at_ms = s0__de_i64(d);
	a->finished_at_ms = s0__de_i64(d);
	a->finished = s0__de_u8(d) != 0;
	a->has_exit = s0__de_u8(d) != 0;
	a->exit_code = (int32_t)s0__de_u32(d);
	get_fixed(d, a->reason, sizeof a->reason);
}

static int get_events(s0__de *d, ses *x, bool *oom)
{
	uint32_t n = s0__de_u32(d);
	if (n > (1u << 24)) {
		s0__de_fail(d);
		return 0;
	}
	if (n && !(x->ev = calloc(n, sizeof *x->ev))) {
		*oom = true;
		return 0;
	}
	x->capev = n;
	for (uint32_t i = 0; i < n && !d->bad; i++) {
		ses_event *e = &x->ev[i];
		e->seq = s0__de_i64(d);
		e->at_ms = s0__de_i64(d);
		if (!(e->json = s0__de_str(d, STR_MAX, oom)))
			break;
		e->bytes = strlen(e->json);
		x->ev_bytes += e->bytes;
		x->nev++;
		if (e->seq >= x->next_seq || (i && e->seq <= x->ev[i - 1].seq))
			s0__de_fail(d);
	}
	return 0;
}

static ses *get_ses(s0__de *d, bool *oom, s0_error **err)
{
	ses *x = calloc(1, sizeof *x);
	if (!x)
		return *oom = true, NULL;
	get_fixed(d, x->id, sizeof x->id);
	char *canon = s0__de_str(d, STR_MAX, oom);
	x->spec_version = s0__de_i64(d);
	x->phase = s0__de_u8(d);
	x->generation = s0__de_i64(d);
	x->has_attempt = s0__de_u8(d) != 0;
	get_attempt(d, &x->att);
	x->restart_count = (int32_t)s0__de_u32(d);
	uint32_t nr = s0__de_u32(d);
	if (nr > 1u << 20)
		s0__de_fail(d);
	else if (nr && !(x->restarts_vt = calloc(nr, sizeof *x->restarts_vt)))
		*oom = true;
	for (uint32_t i = 0; x->restarts_vt && i < nr; i++)
		x->restarts_vt[x->nrestarts++] = s0__de_i64(d);
	x->next_start_vt = s0__de_i64(d);
	x->ready = s0__de_u8(d) != 0;
	x->created_ms = s0__de_i64(d);
	x->updated_ms = s0__de_i64(d);
	x->activity_ms = s0__de_i64(d);
	bool has_key = s0__de_u8(d) != 0;
	char *key = s0__de_str(d, STR_MAX, oom);
	if (has_key)
		x->idem_key = key;
	else
		free(key);
	x->next_seq = s0__de_i64(d);
	get_events(d, x, oom);
	if (x->phase > SES_SUSPENDED || x->next_seq < 1)
		s0__de_fail(d);
	if (canon && !d->bad && !*oom && s0__ses_spec_from_canon(canon, &x->spec, err) < 0)
		s0__de_fail(d);
	free(canon);
	return x;
}

int s0__sessions_deserialize(const void *buf, size_t len, const s0__sessions_opts *o,
                             s0__sessions **out, s0_error **err)
{
	s0__sessions *s;
	int rc = s0__sessions_new(o, &s, err);
	if (rc < 0)
		return rc;
	s0__de d;
	bool oom = false;
	s0__de_init(&d, buf, len);
	char magic[8];
	s0__de_raw(&d, magic, 8);
	int version = !memcmp(magic, MAGIC, 8)    ? 3
	              : !memcmp(magic, MAGIC2, 8) ? 2
	              : !memcmp(magic, MAGIC1, 8) ? 1
	                                          : 0;
	if (!version)
		s0__de_fail(&d);
	int64_t gen = s0__de_i64(&d);
	uint32_t n = s0__de_u32(&d);
	if (n > 1u << 20)
		s0__de_fail(&d);
	else if (n && !(s->v = calloc(n, sizeof *s->v)))
		oom = true;
	s->cap = s->v ? n : 0;
	for (uint32_t i = 0; s->v && i < n && !d.bad && !oom; i++) {
		ses *x = get_ses(&d, &oom, NULL);
		if (x)
			s->v[s->n++] = x;
	}
	for (size_t i = 0; version >= 2 && i < s->n && !d.bad && !oom; i++)
		s0__ses_t2_get(&d, s->v[i], &oom);
	for (size_t i = 0; i < s->n && !d.bad && !oom; i++) {
		s->v[i]->created_vt = s->v[i]->att_start_vt = -1;
		if (version >= 3)
			get_deadlines(&d, s->v[i]);
	}
	if (!o || !o->generation)
		s->generation = gen;
	rc = oom ? s0__error_nomem(err) : s0__de_done(&d, true, "sessions state", err);
	if (rc < 0) {
		s0__sessions_free(s);
		return rc;
	}
	*out = s;
	return S0_OK;
}
