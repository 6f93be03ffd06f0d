/*
 * Supervised sessions (docs/wire.md §8.3) on the gvisor runtime: the
 * simulated runtime's sessions registry (sim/sessions.h: specs, journal,
 * restart policy, idempotency, inputs, the same JSON and the same store)
 * with its attempts run by the sandbox's procd (s0__ses_procs over
 * gv_procd.h). An attempt is a real process leading its own process
 * group; its PID is the one inside the sandbox.
 *
 * Time is the engine's clock (wall ms): backoff, restart windows, the
 * stop grace, idle and lifetime deadlines follow it. The registry is
 * reconciled at each sessions call, as in the simulated runtime, and by a
 * supervisor thread of the generation every SUPERVISE_MS once a registry
 * is bound: output becomes events, ended attempts are recorded and
 * restarted by their policy, and a deadline (the grace's KILL, an idle or
 * lifetime expiry) is acted on, with nobody calling. The thread ends in
 * s0__gv_ses_free(), before anything it uses goes. No pty: a pty spec's
 * output is stdout then stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "common/deadline.h"
#include "common/json.h"
#include "local/runtime/gvisor/gv_int.h"
#include "local/runtime/sim/sessions.h"

typedef struct gv_sp {
	int32_t pid;
	s0__gv_pp *pp;
	int64_t ttl_at;       /* engine ms of the lifetime deadline (0: none) */
	int64_t idle_ms;      /* idle timeout (0: none) */
	int64_t activity;     /* engine ms of the last activity */
	int expire_signal;
	int64_t grace_ms;
	int64_t kill_at;      /* KILL at this engine ms if still alive (0: none) */
	int expired;          /* s0__proc_expiry */
	bool disowned;        /* reaped once it ends */
	struct gv_sp *next;
} gv_sp;

/** How often the supervisor thread reconciles the bound registry, ms. */
#define SUPERVISE_MS 100

struct s0__gv_ses {
	s0__rt_gen *g;
	gv_sp *head;          /* under the bound registry's lock; linked and unlinked
	                         under mu too (s0__gv_ses_save reads it under mu) */
	pthread_mutex_t mu;   /* reg, run, started */
	pthread_cond_t cv;
	s0__sessions *reg;    /* the bound registry (the engine's: it outlives the generation) */
	bool run, started;
	pthread_t thr;
};

static int64_t now_ms(void *ctx)
{
	struct s0__gv_ses *t = ctx;
	return t->g->h->clock.now_unix_ms(t->g->h->clock.ctx);
}

static gv_sp *find(struct s0__gv_ses *t, int32_t pid)
{
	for (gv_sp *p = t->head; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static int not_found(s0_error **err)
{
	return s0__error_set(err, S0_ENOTFOUND, "not_found", "no such process");
}

static void drop(struct s0__gv_ses *t, gv_sp *sp)
{
	pthread_mutex_lock(&t->mu);
	for (gv_sp **q = &t->head; *q; q = &(*q)->next)
		if (*q == sp) {
			*q = sp->next;
			break;
		}
	pthread_mutex_unlock(&t->mu);
	s0__gv_pp_free(sp->pp);
	free(sp);
}

/* Deadlines of one process (the grace's KILL, idle, lifetime), at @p now. */
static void enforce(gv_sp *sp, int64_t now)
{
	if (s0__gv_pp_exited(sp->pp, NULL))
		return;
	int expiry = sp->ttl_at && now >= sp->ttl_at ? S0__EXPIRY_TTL
	             : sp->idle_ms && now - sp->activity >= sp->idle_ms ? S0__EXPIRY_IDLE
	                                                                : S0__EXPIRY_NONE;
	if (!sp->expired && expiry) {
		sp->expired = expiry;
		int sig = sp->expire_signal ? sp->expire_signal : SIGKILL;
		s0__gv_pp_signal(sp->pp, sig, NULL);
		if (sig != SIGKILL && (!sp->kill_at || sp->kill_at > now + sp->grace_ms))
			sp->kill_at = now + sp->grace_ms;
	}
	if (sp->kill_at && now >= sp->kill_at)
		s0__gv_pp_signal(sp->pp, SIGKILL, NULL);
}

/* Disowned processes that ended are forgotten (a deleted session's). */
static void sweep(struct s0__gv_ses *t, int64_t now)
{
	for (gv_sp *p = t->head, *n; p; p = n) {
		n = p->next;
		enforce(p, now);
		if (p->disowned && s0__gv_pp_exited(p->pp, NULL))
			drop(t, p);
	}
}

static char **env_of(const cJSON *obj)
{
	int n = cJSON_IsObject(obj) ? cJSON_GetArraySize(obj) : 0;
	char **v = calloc((size_t)n + 1, sizeof *v);
	int i = 0;
	const cJSON *it;
	const cJSON *from = cJSON_IsObject(obj) ? obj : NULL;
	cJSON_ArrayForEach(it, from)
	{
		if (!v || !cJSON_IsString(it) || !it->string)
			continue;
		if (!(v[i++] = s0__asprintf("%s=%s", it->string, it->valuestring))) {
			s0__gv_argv_free(v);
			return NULL;
		}
	}
	return v;
}

static int sp_spawn(void *ctx, const s0__spawn_req *r, int32_t *pid_out, s0_error **err)
{
	struct s0__gv_ses *t = ctx;
	if (!r->argv || r->argc < 1)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "an empty command");
	char **argv = calloc(r->argc + 1, sizeof *argv);
	char **env = env_of(r->env);
	gv_sp *sp = calloc(1, sizeof *sp);
	int rc = argv && env && sp ? S0_OK : s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < r->argc; i++)
		argv[i] = (char *)r->argv[i];
	if (rc == S0_OK)
		rc = s0__gv_pp_spawn(t->g->procd, argv, env, r->cwd, true, 60000, &sp->pp, err);
	free(argv);
	s0__gv_argv_free(env);
	if (rc < 0) {
		free(sp);
		return rc;
	}
	int64_t now = now_ms(ctx);
	sp->pid = s0__gv_pp_pid(sp->pp);
	sp->ttl_at = r->ttl_ms > 0 ? now + r->ttl_ms : 0;
	sp->idle_ms = r->idle_timeout_ms;
	sp->activity = now;
	sp->expire_signal = r->expire_signal;
	sp->grace_ms = r->stop_grace_ms;
	pthread_mutex_lock(&t->mu);
	sp->next = t->head;
	t->head = sp;
	pthread_mutex_unlock(&t->mu);
	*pid_out = sp->pid;
	return S0_OK;
}

static int sp_get(void *ctx, int32_t pid, s0__proc_info *out, s0_error **err)
{
	struct s0__gv_ses *t = ctx;
	memset(out, 0, sizeof *out);
	out->pid = pid;
	if (pid == 1) { /* procd */
		out->ended = s0__gv_pd_gone(t->g->procd);
		out->state = out->ended ? S0__PS_KILLED : S0__PS_RUNNING;
		return S0_OK;
	}
	sweep(t, now_ms(ctx));
	gv_sp *sp = find(t, pid);
	if (!sp)
		return not_found(err);
	int status = 0;
	out->ppid = 1;
	out->ended = s0__gv_pp_exited(sp->pp, &status);
	out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	out->state = !out->ended            ? S0__PS_RUNNING
	             : WIFSIGNALED(status)  ? S0__PS_KILLED
	                                    : S0__PS_STOPPED;
	out->expired = sp->expired;
	out->stdin_closed = !s0__gv_pp_stdin_open(sp->pp);
	return S0_OK;
}

static int sp_signal(void *ctx, int32_t pid, int signo, s0_error **err)
{
	struct s0__gv_ses *t = ctx;
	gv_sp *sp = find(t, pid);
	if (!sp)
		return not_found(err);
	sp->activity = now_ms(ctx);
	return s0__gv_pp_signal(sp->pp, signo, err);
}

static int sp_stop(void *ctx, int32_t pid, int64_t grace_ms, bool disown, s0_error **err)
{
	struct s0__gv_ses *t = ctx;
	gv_sp *sp = find(t, pid);
	if (!sp)
		return not_found(err);
	sp->disowned = sp->disowned || disown;
	if (s0__gv_pp_exited(sp->pp, NULL))
		return S0_OK;
	int64_t now = now_ms(ctx);
	s0__gv_pp_signal(sp->pp, grace_ms > 0 ? SIGTERM : SIGKILL, NULL);
	if (grace_ms > 0 && (!sp->kill_at || sp->kill_at > now + grace_ms))
		sp->kill_at = now + grace_ms; /* an earlier KILL stays */
	return S0_OK;
}

static int sp_output(void *ctx, int32_t pid, s0__buf *out, s0__buf *errb, s0__buf *raw,
                     s0_error **err)
{
	struct s0__gv_ses *t = ctx;
	gv_sp *sp = find(t, pid);
	if (!sp)
		return not_found(err);
	s0__buf o = {0}, e = {0};
	size_t n = s0__gv_pp_read(sp->pp, &o, &e, 0);
	if (n)
		sp->activity = now_ms(ctx);
	int rc = 0;
	if (out && o.len)
		rc |= s0__buf_put(out, o.data, o.len);
	if (errb && e.len)
		rc |= s0__buf_put(errb, e.data, e.len);
	if (raw && o.len)
		rc |= s0__buf_put(raw, o.data, o.len);
	if (raw && e.len)
		rc |= s0__buf_put(raw, e.data, e.len);
	s0__buf_free(&o);
	s0__buf_free(&e);
	return rc ? s0__error_nomem(err) : S0_OK;
}

static int sp_input(void *ctx, int32_t pid, const void *data, size_t len, bool eof,
                    s0_error **err)
{
	struct s0__gv_ses *t = ctx;
	gv_sp *sp = find(t, pid);
	if (!sp)
		return not_found(err);
	if (s0__gv_pp_exited(sp->pp, NULL))
		return s0__error_set(err, S0_ECONFLICT, "process_not_running",
		                     "process is not running");
	sp->activity = now_ms(ctx);
	int rc = len ? s0__gv_pp_write(sp->pp, data, len, err) : S0_OK;
	if (rc == S0_OK && eof)
		s0__gv_pp_close_stdin(sp->pp);
	return rc;
}

static void sp_reap(void *ctx, int32_t pid)
{
	struct s0__gv_ses *t = ctx;
	gv_sp *sp = find(t, pid);
	if (sp && s0__gv_pp_exited(sp->pp, NULL))
		drop(t, sp);
}

struct s0__gv_ses *s0__gv_ses_new(s0__rt_gen *g)
{
	struct s0__gv_ses *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->g = g;
	pthread_mutex_init(&t->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	return t;
}

/* The supervisor: reconcile the bound registry every SUPERVISE_MS. */
static void *supervise(void *arg)
{
	struct s0__gv_ses *t = arg;
	pthread_mutex_lock(&t->mu);
	while (t->run) {
		struct timespec dl = s0__deadline_after_ms(CLOCK_MONOTONIC, SUPERVISE_MS);
		while (t->run && pthread_cond_timedwait(&t->cv, &t->mu, &dl) != ETIMEDOUT)
			;
		if (!t->run)
			break;
		s0__sessions *reg = t->reg;
		pthread_mutex_unlock(&t->mu);
		s0__sessions_sync(reg, NULL, NULL); /* the registry's lock, then ours: never held together */
		pthread_mutex_lock(&t->mu);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

void s0__gv_ses_free(struct s0__gv_ses *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->run = false;
	pthread_cond_broadcast(&t->cv);
	bool started = t->started;
	pthread_mutex_unlock(&t->mu);
	if (started)
		pthread_join(t->thr, NULL);
	while (t->head)
		drop(t, t->head); /* SIGKILL to what still runs */
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* Hand registry @p s this generation's procd; the supervisor follows it. */
static void bind(struct s0__gv_ses *t, s0__sessions *s)
{
	s0__ses_procs p = {.ctx = t, .vtime_ms = now_ms, .spawn = sp_spawn, .proc_get = sp_get,
	                   .signal = sp_signal, .stop = sp_stop, .take_output = sp_output,
	                   .write_input = sp_input, .reap = sp_reap};
	s0__sessions_set_procs(s, &p);
	pthread_mutex_lock(&t->mu);
	t->reg = s;
	if (!t->started) {
		t->run = true;
		t->started = pthread_create(&t->thr, NULL, supervise, t) == 0;
		t->run = t->started;
	}
	pthread_mutex_unlock(&t->mu);
}

void s0__gv_ses_adopt(struct s0__gv_ses *t, s0__sessions *s, bool restored)
{
	bind(t, s);
	if (restored) /* the attempts s0__gv_ses_restore() took over keep running */
		s0__sessions_memory_restored(s, NULL, t->g->generation, NULL);
	else
		s0__sessions_runtime_replaced(s, NULL, t->g->generation, NULL); /* SES-01..05 */
}

/* One attempt's process as text: procd's id, PID, deadlines (engine ms). */
static cJSON *sp_save(const gv_sp *sp)
{
	cJSON *o = cJSON_CreateObject();
	int rc = !o || s0__json_add_i64(o, "pp", s0__gv_pp_id(sp->pp)) ||
	         s0__json_add_i64(o, "pid", sp->pid) ||
	         s0__json_add_bool(o, "stdin", s0__gv_pp_stdin_open(sp->pp)) ||
	         s0__json_add_i64(o, "ttl_at", sp->ttl_at) ||
	         s0__json_add_i64(o, "idle_ms", sp->idle_ms) ||
	         s0__json_add_i64(o, "activity", sp->activity) ||
	         s0__json_add_i64(o, "expire_signal", sp->expire_signal) ||
	         s0__json_add_i64(o, "grace_ms", sp->grace_ms) ||
	         s0__json_add_i64(o, "kill_at", sp->kill_at) ||
	         s0__json_add_i64(o, "expired", sp->expired) ||
	         s0__json_add_bool(o, "disowned", sp->disowned);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

char *s0__gv_ses_save(struct s0__gv_ses *t)
{
	cJSON *a = cJSON_CreateArray();
	pthread_mutex_lock(&t->mu);
	for (gv_sp *sp = t->head; a && sp; sp = sp->next) {
		if (s0__gv_pp_exited(sp->pp, NULL))
			continue; /* ended: the registry records it from the old channel */
		cJSON *o = sp_save(sp);
		if (!o || !cJSON_AddItemToArray(a, o)) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			a = NULL;
		}
	}
	pthread_mutex_unlock(&t->mu);
	char *s = a ? cJSON_PrintUnformatted(a) : NULL;
	cJSON_Delete(a);
	return s;
}

int s0__gv_ses_restore(struct s0__gv_ses *t, const char *saved, s0_error **err)
{
	cJSON *a = saved ? cJSON_Parse(saved) : NULL;
	int rc = !saved || cJSON_IsArray(a)
	             ? S0_OK
	             : s0__error_set(err, S0_ECORRUPT, "image_corrupt",
	                             "gvisor memory image: bad sessions record");
	const cJSON *o, *list = rc == S0_OK ? a : NULL;
	cJSON_ArrayForEach(o, list)
	{
		int64_t id = s0__json_i64(o, "pp", 0), pid = s0__json_i64(o, "pid", 0);
		gv_sp *sp = calloc(1, sizeof *sp);
		if (!sp) {
			rc = s0__error_nomem(err);
			break;
		}
		if (id <= 0 || id > UINT32_MAX || pid <= 1 || pid > INT32_MAX) {
			free(sp);
			rc = s0__error_set(err, S0_ECORRUPT, "image_corrupt",
			                   "gvisor memory image: bad session attempt record");
			break;
		}
		rc = s0__gv_pp_adopt(t->g->procd, (uint32_t)id, (int32_t)pid,
		                     cJSON_IsTrue(cJSON_GetObjectItem(o, "stdin")), &sp->pp, err);
		if (rc < 0) {
			free(sp);
			break;
		}
		sp->pid = (int32_t)pid;
		sp->ttl_at = s0__json_i64(o, "ttl_at", 0);
		sp->idle_ms = s0__json_i64(o, "idle_ms", 0);
		sp->activity = s0__json_i64(o, "activity", 0);
		sp->expire_signal = (int)s0__json_i64(o, "expire_signal", 0);
		sp->grace_ms = s0__json_i64(o, "grace_ms", 0);
		sp->kill_at = s0__json_i64(o, "kill_at", 0);
		sp->expired = (int)s0__json_i64(o, "expired", 0);
		sp->disowned = cJSON_IsTrue(cJSON_GetObjectItem(o, "disowned"));
		pthread_mutex_lock(&t->mu);
		sp->next = t->head;
		t->head = sp;
		pthread_mutex_unlock(&t->mu);
	}
	cJSON_Delete(a);
	return rc;
}

int s0__gv_ses_call(struct s0__gv_ses *t, const s0__rt_proc_call *c, cJSON **data_out,
                    int *status_out, s0_error **err)
{
	s0__sessions *s = c->sessions;
	if (!s)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "a sessions call needs the sandbox's registry");
	bind(t, s);
	*status_out = 200;
	switch (c->op) {
	case S0__RT_SES_CREATE:
		return s0__sessions_create_json(s, NULL, c->body, c->idempotency_key, data_out,
		                                status_out, err);
	case S0__RT_SES_LIST:
		return s0__sessions_list_json(s, NULL, data_out, err);
	case S0__RT_SES_GET:
		return s0__sessions_get_json(s, NULL, c->id, data_out, err);
	case S0__RT_SES_DELETE:
		return s0__sessions_delete_json(s, NULL, c->id, data_out, err);
	case S0__RT_SES_DESIRED:
		return s0__sessions_desired_json(s, NULL, c->id, c->body, data_out, err);
	case S0__RT_SES_SIGNAL:
		*status_out = 202;
		return s0__sessions_signal_json(s, NULL, c->id, c->body, data_out, err);
	case S0__RT_SES_EVENTS:
		return s0__sessions_events_json(s, NULL, c->id, c->after, c->limit, data_out, err);
	case S0__RT_SES_REPLACE:
		return s0__sessions_replace_json(s, NULL, c->id, c->body, data_out, err);
	case S0__RT_SES_ATTEMPT:
		*status_out = 201;
		return s0__sessions_attempt_json(s, NULL, c->id, c->body, data_out, err);
	case S0__RT_SES_INPUT:
		*status_out = 202;
		return s0__sessions_input_json(s, NULL, c->id, c->body, data_out, err);
	case S0__RT_SES_TERMINAL:
		return s0__sessions_terminal_json(s, NULL, c->id, c->body, data_out, err);
	default:
		return s0__error_set(err, S0_EINVAL, "invalid_request", "unknown process call %d",
		                     c->op);
	}
}
