/*
 * The process host of a sessions call (ses_int.h, sessions.h
 * s0__ses_procs): the registry's procs when set (a real runtime's init),
 * else the simulated guest the call passed.
 */
#include "local/runtime/sim/ses_int.h"

void s0__sessions_set_procs(s0__sessions *s, const s0__ses_procs *p)
{
	pthread_mutex_lock(&s->mu);
	s->has_procs = p != NULL;
	if (p)
		s->procs = *p;
	pthread_mutex_unlock(&s->mu);
}

bool s0__ses_host(const s0__sessions *s, const s0__guest *g)
{
	return s->has_procs || g;
}

int64_t s0__ses_p_vtime(s0__sessions *s, s0__guest *g)
{
	return s->has_procs ? s->procs.vtime_ms(s->procs.ctx) : s0__guest_vtime_ms(g);
}

int s0__ses_p_spawn(s0__sessions *s, s0__guest *g, const s0__spawn_req *r, int32_t *pid,
                    s0_error **err)
{
	return s->has_procs ? s->procs.spawn(s->procs.ctx, r, pid, err)
	                    : s0__guest_spawn(g, r, pid, err);
}

int s0__ses_p_get(s0__sessions *s, s0__guest *g, int32_t pid, s0__proc_info *out, s0_error **err)
{
	return s->has_procs ? s->procs.proc_get(s->procs.ctx, pid, out, err)
	                    : s0__guest_proc_get(g, pid, out, err);
}

int s0__ses_p_signal(s0__sessions *s, s0__guest *g, int32_t pid, int signo, s0_error **err)
{
	return s->has_procs ? s->procs.signal(s->procs.ctx, pid, signo, err)
	                    : s0__guest_signal(g, pid, signo, err);
}

int s0__ses_p_stop(s0__sessions *s, s0__guest *g, int32_t pid, int64_t grace_ms, bool disown,
                   s0_error **err)
{
	return s->has_procs ? s->procs.stop(s->procs.ctx, pid, grace_ms, disown, err)
	                    : s0__guest_stop(g, pid, grace_ms, disown, err);
}

int s0__ses_p_output(s0__sessions *s, s0__guest *g, int32_t pid, s0__buf *out, s0__buf *errb,
                     s0__buf *raw, s0_error **err)
{
	return s->has_procs ? s->procs.take_output(s->procs.ctx, pid, out, errb, raw, err)
	                    : s0__guest_take_output(g, pid, out, errb, raw, err);
}

int s0__ses_p_input(s0__sessions *s, s0__guest *g, int32_t pid, const void *data, size_t len,
                    bool eof, s0_error **err)
{
	return s->has_procs ? s->procs.write_input(s->procs.ctx, pid, data, len, eof, err)
	                    : s0__guest_write_input(g, pid, data, len, eof, err);
}

void s0__ses_p_reap(s0__sessions *s, s0__guest *g, int32_t pid)
{
	if (s->has_procs)
		s->procs.reap(s->procs.ctx, pid);
	else
		s0__guest_reap(g, pid);
}
