/* runtime_recovery after a runtime replacement or a memory restore (sessions.h). */
#include "local/runtime/sim/ses_int.h"

#include <stdio.h>
#include <string.h>

/* An active session whose process did not survive: record it, then recover. */
static void recover(s0__sessions *s, ses *x, s0__guest *g)
{
	if (x->has_attempt && !x->att.finished) {
		x->att.finished = true;
		x->att.finished_at_ms = s0__ses_now(s);
		snprintf(x->att.reason, sizeof x->att.reason, "runtime_replaced");
		s0__ses_event(s, x, "attempt.exited", NULL, NULL, 0, NULL, "runtime_replaced");
	}
	int ending = x->ending;
	bool again = x->start_after_stop;
	x->ending = END_NONE;
	x->start_after_stop = false;
	if (x->spec.want_running && (ending == END_IDLE || ending == END_LIFETIME)) {
		x->phase = SES_EXITED; /* it was expiring: an expiry is not restarted */
		s0__ses_event(s, x, "session.expired", NULL, NULL, 0, NULL,
		              ending == END_IDLE ? "idle_timeout" : "max_lifetime");
	} else if (x->spec.want_running && x->spec.recover_restart &&
	           (x->phase != SES_STOPPING || again)) {
		s0__ses_start_attempt(s, x, g, NULL);
		return;
	} else {
		x->phase = SES_STOPPED;
	}
	s0__ses_changed(s, x);
}

int s0__sessions_runtime_replaced(s0__sessions *s, s0__guest *g, int64_t generation,
                                  s0_error **err)
{
	(void)err;
	pthread_mutex_lock(&s->mu);
	s->generation = generation;
	for (size_t i = 0; i < s->n; i++) {
		ses *x = s->v[i];
		x->generation = generation;
		if (s0__ses_terminal(x->phase))
			s0__ses_changed(s, x);
		else
			recover(s, x, g);
	}
	pthread_mutex_unlock(&s->mu);
	return S0_OK;
}

int s0__sessions_memory_restored(s0__sessions *s, s0__guest *g, int64_t generation,
                                 s0_error **err)
{
	(void)err;
	pthread_mutex_lock(&s->mu);
	s->generation = generation;
	for (size_t i = 0; i < s->n; i++) {
		ses *x = s->v[i];
		x->generation = generation;
		s0__proc_info pi;
		bool alive = x->has_attempt && !x->att.finished &&
		             s0__ses_p_get(s, g, x->att.pid, &pi, NULL) == S0_OK;
		if (s0__ses_terminal(x->phase) || alive || x->phase == SES_BACKOFF)
			s0__ses_changed(s, x);
		else
			recover(s, x, g);
	}
	s0__ses_sync_all(s, g);
	pthread_mutex_unlock(&s->mu);
	return S0_OK;
}
