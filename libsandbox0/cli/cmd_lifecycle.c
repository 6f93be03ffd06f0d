/*
 * `s0 sandbox pause|resume|fork` (docs/wire.md §3.7, §3.8, §4.1, §5; docs/behaviours.md CL-17).
 *
 * Without --wait, pause and resume send one request and print the official
 * CLI's text. With --wait they run s0_sandbox_pause_and_wait /
 * s0_sandbox_resume_and_wait (--memory selects the memory body and rules,
 * --timeout the deadline) and show progress: a live line redrawn with \r on
 * a terminal, plain lines otherwise; `-o json|yaml --wait` prints the final
 * Sandbox object on stdout (progress then goes to stderr, and only when that
 * is a terminal).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const cli_flag pause_flags[] = {
	{"memory", 0, FLAG_BOOL, NULL, "memory mode: send {\"memory\":true} (processes kept)"},
	{"wait", 0, FLAG_BOOL, NULL, "wait until the sandbox is paused"},
	{"timeout", 0, FLAG_STR, "SEC", "deadline of --wait in seconds (default 60, 360 with "
	                                "--memory)"},
	{0},
};

static const cli_flag resume_flags[] = {
	{"memory", 0, FLAG_BOOL, NULL, "memory mode: send {\"memory\":true} (restore processes)"},
	{"wait", 0, FLAG_BOOL, NULL, "wait until a new runtime generation is running"},
	{"timeout", 0, FLAG_STR, "SEC", "deadline of --wait in seconds (default 60, 360 with "
	                                "--memory)"},
	{0},
};

/* ---- progress ---- */

typedef struct progress {
	FILE *f;       /* NULL: no progress */
	bool live;     /* a terminal: one line redrawn in place */
	const char *verb, *id;
	double t0;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t ticker;
	bool ticking, stop, seen;
	char state[160]; /* "status running, paused false, generation 1, runtime rt_…" */
} progress;

static void draw(progress *p)
{
	fprintf(p->f, "\r\033[K%s %s: %s, %.1fs", p->verb, p->id,
	        p->seen ? p->state : "requesting", mono_now_s() - p->t0);
	fflush(p->f);
}

static void *tick(void *arg)
{
	progress *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
		if (!p->stop)
			draw(p);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int on_progress(const s0_sandbox_info *sb, int64_t elapsed_ms, void *payload)
{
	progress *p = payload;
	(void)elapsed_ms;
	if (!p->f)
		return 0;
	const char *rid = s0_sandbox_info_runtime_id(sb);
	pthread_mutex_lock(&p->mu);
	p->seen = true;
	snprintf(p->state, sizeof p->state, "status %s, paused %s, generation %lld, runtime %s",
	         s0_status_name(s0_sandbox_info_status(sb)),
	         s0_sandbox_info_paused(sb) ? "true" : "false",
	         (long long)s0_sandbox_info_runtime_generation(sb), *rid ? rid : "-");
	if (p->live)
		draw(p);
	else
		fprintf(p->f, "%s %s: %s, %.1fs\n", p->verb, p->id, p->state, mono_now_s() - p->t0);
	fflush(p->f);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

static void progress_start(progress *p, cli *c, const char *verb, const char *id)
{
	memset(p, 0, sizeof *p);
	p->verb = verb;
	p->id = id;
	p->t0 = mono_now_s();
	if (c->format == OUT_TABLE) {
		p->f = stdout;
		p->live = c->stdout_tty;
	} else if (c->stderr_tty) {
		p->f = stderr;
		p->live = true;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (p->live) {
		draw(p);
		p->ticking = pthread_create(&p->ticker, NULL, tick, p) == 0;
	}
}

static void progress_end(progress *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->ticking)
		pthread_join(p->ticker, NULL);
	if (p->live) {
		fputs("\r\033[K", p->f);
		fflush(p->f);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}

/* ---- pause / resume ---- */

/* --timeout SEC into ms (0 = the helper's default); -1 on a usage error. */
static int timeout_flag(cli *c, int64_t *ms)
{
	const char *v = opt_str(c, "timeout");
	*ms = 0;
	if (!v)
		return 0;
	if (!opt_bool(c, "wait")) {
		cli_usage_error(c, "--timeout needs --wait");
		return -1;
	}
	char *end;
	errno = 0;
	double sec = strtod(v, &end);
	if (!*v || *end || errno || sec < 0 || sec > 86400.0 * 365) {
		cli_usage_error(c, "invalid --timeout \"%s\": want seconds >= 0", v);
		return -1;
	}
	*ms = (int64_t)(sec * 1000.0 + 0.5);
	if (sec > 0 && *ms == 0)
		*ms = 1;
	return 0;
}

static int lifecycle(cli *c, bool pause)
{
	const char *id = c->args[0];
	bool memory = opt_bool(c, "memory");
	int64_t timeout_ms;
	if (timeout_flag(c, &timeout_ms) < 0)
		return CLI_EXIT_USAGE;
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_error *err = NULL;
	const char *doing = pause ? "pausing sandbox" : "resuming sandbox";
	if (!opt_bool(c, "wait")) {
		s0_lifecycle_result *res = NULL;
		int32_t m = memory ? S0_BOOL_TRUE : S0_BOOL_UNSET;
		rc = pause ? s0_sandbox_pause(c->client, id, m, &res, &err)
		           : s0_sandbox_resume(c->client, id, m, &res, &err);
		if (rc < 0)
			return cli_fail(doing, err, rc);
		s0_lifecycle_result_free(res);
		printf("%s requested for sandbox %s\n", pause ? "Pause" : "Resume", id);
		return CLI_EXIT_OK;
	}
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	progress p;
	s0_sandbox_info *sb = NULL;
	wo.memory = memory ? S0_BOOL_TRUE : S0_BOOL_UNSET;
	wo.timeout_ms = timeout_ms;
	wo.progress_cb = on_progress;
	wo.payload = &p;
	progress_start(&p, c, pause ? "pausing" : "resuming", id);
	rc = pause ? s0_sandbox_pause_and_wait(c->client, id, &wo, &sb, &err)
	           : s0_sandbox_resume_and_wait(c->client, id, &wo, &sb, &err);
	double took = mono_now_s() - p.t0;
	progress_end(&p);
	if (rc < 0) {
		const s0_sandbox_info *last = err ? s0_error_last_sandbox(err) : NULL;
		if (rc == S0_ETIMEDOUT && last) {
			char *text = cli_error_text(err, rc);
			rc = cli_failf(doing, "%s (last seen: status %s, paused %s, generation %lld)", text,
			               s0_status_name(s0_sandbox_info_status(last)),
			               s0_sandbox_info_paused(last) ? "true" : "false",
			               (long long)s0_sandbox_info_runtime_generation(last));
			free(text);
			s0_error_free(err);
			return rc;
		}
		return cli_fail(doing, err, rc);
	}
	if (c->format != OUT_TABLE) {
		rc = out_json_text(c, s0_sandbox_info_json(sb));
	} else if (pause) {
		printf("Sandbox %s paused%s (runtime_generation %lld) in %.1fs\n", id,
		       memory ? " with memory" : "", (long long)s0_sandbox_info_runtime_generation(sb),
		       took);
	} else {
		printf("Sandbox %s resumed%s: running, runtime_generation %lld, runtime_id %s, in "
		       "%.1fs\n",
		       id, memory ? " with memory" : "", (long long)s0_sandbox_info_runtime_generation(sb),
		       s0_sandbox_info_runtime_id(sb), took);
	}
	s0_sandbox_info_free(sb);
	return rc;
}

static int run_pause(cli *c)
{
	return lifecycle(c, true);
}

static int run_resume(cli *c)
{
	return lifecycle(c, false);
}

const cli_cmd cmd_sandbox_pause = {
	.name = "pause", .args = "<sandbox-id>", .summary = "Pause a sandbox",
	.flags = pause_flags, .min_args = 1, .max_args = 1, .run = run_pause,
	.details = "Without --wait prints \"Pause requested for sandbox <id>\". With --wait the\n"
	           "command returns once the sandbox reads status paused and paused true; with\n"
	           "--memory a `failed` observation is an error (the capture failed), never a\n"
	           "filesystem-only pause instead.\n",
};

const cli_cmd cmd_sandbox_resume = {
	.name = "resume", .args = "<sandbox-id>", .summary = "Resume a sandbox",
	.flags = resume_flags, .min_args = 1, .max_args = 1, .run = run_resume,
	.details = "Without --wait prints \"Resume requested for sandbox <id>\". With --wait the\n"
	           "command returns once a new runtime generation is running.\n",
};

/* ---- fork ---- */

static const cli_flag fork_flags[] = {
	{"ttl", 0, FLAG_INT, "SEC", "soft TTL in seconds of the fork (0 disables)"},
	{"hard-ttl", 0, FLAG_INT, "SEC", "hard TTL in seconds of the fork (0 disables)"},
	{0},
};

static int run_fork(cli *c)
{
	s0_fork_options fo = S0_FORK_OPTIONS_INIT;
	long long v;
	int r;
	if ((r = opt_int(c, "ttl", 0, INT32_MAX, &v)) < 0)
		return CLI_EXIT_USAGE;
	if (r) {
		fo.set |= S0_CONFIG_SET_TTL;
		fo.ttl_sec = (int32_t)v;
	}
	if ((r = opt_int(c, "hard-ttl", 0, INT32_MAX, &v)) < 0)
		return CLI_EXIT_USAGE;
	if (r) {
		fo.set |= S0_CONFIG_SET_HARD_TTL;
		fo.hard_ttl_sec = (int32_t)v;
	}
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_sandbox_info *child = NULL;
	s0_error *err = NULL;
	rc = s0_sandbox_fork(c->client, c->args[0], fo.set ? &fo : NULL, &child, &err);
	if (rc < 0)
		return cli_fail("forking sandbox", err, rc);
	if (c->format != OUT_TABLE) {
		const char *json = s0_sandbox_info_json(child);
		cj *o = cj_object(), *sb = cj_parse(json, strlen(json), NULL);
		cj_set(o, "source_sandbox_id", cj_str(c->args[0]));
		cj_set(o, "sandbox", sb ? sb : cj_null());
		rc = out_value(c, o);
		cj_free(o);
	} else {
		tbl t;
		tbl_init(&t, 2);
		kv_add(&t, "Source Sandbox ID:", c->args[0]);
		kv_add(&t, "Fork Sandbox ID:", s0_sandbox_info_id(child));
		kv_add(&t, "Template ID:", s0_sandbox_info_template_id(child));
		kv_add(&t, "Status:", s0_status_name(s0_sandbox_info_status(child)));
		kv_add(&t, "Paused:", s0_sandbox_info_paused(child) ? "true" : "false");
		tbl_print(&t, stdout);
		tbl_free(&t);
	}
	s0_sandbox_info_free(child);
	return rc;
}

const cli_cmd cmd_sandbox_fork = {
	.name = "fork", .args = "<sandbox-id>", .summary = "Fork a sandbox into a new paused one",
	.flags = fork_flags, .min_args = 1, .max_args = 1, .run = run_fork,
};
