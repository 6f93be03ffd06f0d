/* The fault registry: the table of known points; arm, release and hit them. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "common/cancel.h"
#include "common/deadline.h"
#include "local/lifecycle/faults.h"

typedef struct fault {
	char *name;
	int mode;
	int64_t count; /* remaining; 0 = unlimited */
	int64_t delay_ms;
	int64_t hits;
	struct fault *next;
} fault;

struct s0__faults {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	fault *list;
	uint64_t release_gen;
	s0_clock clock;
};

/*
 * Every fault point the local backend hits, with the steps each accepts
 * ("a|b": `name@a`, `name@b`; "" only the plain name; "*" any non-empty
 * step, e.g. a sandbox id). Arming anything else is refused; hitting
 * anything else is a bug (asserted). scripts/check_fault_names.py checks
 * that every literal name and step the code hits is here; keep one entry a
 * line. docs/behaviours.md "Fault points" says what each stands in for.
 */
static const struct fault_point {
	const char *name, *steps;
} points[] = {
	{"alloc_record_purge", ""},
	{"capacity", "resume"},
	{"capture", "authorize|after-authorize|commit|before-record"},
	{"capture_uncertain", ""},
	{"carrier", "resume|fallback"},
	{"carrier_fingerprint", "runtime_version|platform|cpu_features"},
	{"ctld_primary_fail", "publish|commit|release"},
	{"driver_exit", ""},
	{"manager_restart", "intent-recorded|published|committed|released|fallback-recorded|"
	                    "resume-ready|delete-recorded|delete-reclaimed|recover-recorded|"
	                    "recover-released"},
	{"meta_store", "intent|commit"},
	{"nbd_device", "resume"},
	{"network_policy", ""},
	{"node_channel", "pause|resume"},
	{"node_reboot", "release"},
	{"object_store", "after-seal|attach"},
	{"port_no_answer", ""},
	{"prepare_stall", ""},
	{"procd_not_ready", ""},
	{"resource_leak:alloc_dir", ""},
	{"resource_leak:lease_cgroup", ""},
	{"resource_leak:mount", ""},
	{"resource_leak:network", ""},
	{"resource_leak:runsc", ""},
	{"resource_leak:writer", ""},
	{"restore", ""},
	{"resume_delay", ""},
	{"runtime_crash", "*"},
	{"upload_budget_hold", ""},
	{"webhook_ack_delay", ""},
};
#define N_POINTS (sizeof points / sizeof points[0])

static const struct fault_point *point(const char *name, size_t len)
{
	for (size_t i = 0; i < N_POINTS; i++)
		if (strlen(points[i].name) == len && !strncmp(points[i].name, name, len))
			return &points[i];
	return NULL;
}

/* Whether steps ("a|b", "" or "*") lists step. */
static bool has_step(const char *steps, const char *step)
{
	if (!strcmp(steps, "*"))
		return *step != '\0';
	size_t n = strlen(step);
	for (const char *p = steps; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, step, n))
			return true;
		p += len + (bar != NULL);
	}
	return false;
}

bool s0__fault_known(const char *name, const char *step)
{
	if (!name)
		return false;
	const struct fault_point *pt = point(name, strlen(name));
	return pt && (!step || has_step(pt->steps, step));
}

/* S0_OK when spec ("name" or "name@step") names a point of the table. */
static int check_known(const char *spec, s0_error **err)
{
	const char *at = strchr(spec, '@');
	size_t len = at ? (size_t)(at - spec) : strlen(spec);
	const struct fault_point *pt = point(spec, len);
	if (!pt)
		return s0__error_set(err, S0_EINVAL, "invalid_fault",
		                     "unknown fault point \"%.*s\" (s0_local_fault_arm lists them)",
		                     (int)len, spec);
	if (at && !has_step(pt->steps, at + 1))
		return s0__error_set(err, S0_EINVAL, "invalid_fault",
		                     "fault point \"%s\" has no step \"%s\" (steps: %s)", pt->name,
		                     at + 1,
		                     !*pt->steps                ? "none"
		                     : !strcmp(pt->steps, "*") ? "any non-empty id"
		                                               : pt->steps);
	return S0_OK;
}

int s0__faults_new(const s0_clock *clock, s0__faults **out, s0_error **err)
{
	s0__faults *f = calloc(1, sizeof *f);
	if (!f)
		return s0__error_nomem(err);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->clock = *clock;
	*out = f;
	return S0_OK;
}

static void free_list(fault *x)
{
	while (x) {
		fault *n = x->next;
		free(x->name);
		free(x);
		x = n;
	}
}

void s0__faults_free(s0__faults *f)
{
	if (!f)
		return;
	free_list(f->list);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f);
}

static bool valid_name(const char *name)
{
	if (s0__is_blank(name) || strlen(name) > 128)
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p == '_' || *p == '@' || *p == ':' || *p == '-' || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

int s0__faults_arm(s0__faults *f, const char *name, int mode, int64_t count, int64_t delay_ms,
                   s0_error **err)
{
	if (!valid_name(name))
		return s0__error_set(err, S0_EINVAL, "invalid_fault", "invalid fault point name");
	if (mode < S0_FAULT_FAIL || mode > S0_FAULT_CRASH || count < 0 || delay_ms < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_fault", "invalid fault mode or count");
	int rc = check_known(name, err);
	if (rc < 0)
		return rc;
	fault *x = calloc(1, sizeof *x);
	if (!x || !(x->name = s0__strdup(name))) {
		free(x);
		return s0__error_nomem(err);
	}
	x->mode = mode;
	x->count = count;
	x->delay_ms = delay_ms;
	pthread_mutex_lock(&f->mu);
	for (fault **p = &f->list; *p; p = &(*p)->next) {
		if (!strcmp((*p)->name, name)) { /* re-arming replaces */
			fault *old = *p;
			*p = old->next;
			old->next = NULL;
			free_list(old);
			break;
		}
	}
	x->next = f->list;
	f->list = x;
	pthread_mutex_unlock(&f->mu);
	return S0_OK;
}

void s0__faults_release(s0__faults *f, const char *name)
{
	if (!name)
		return;
	pthread_mutex_lock(&f->mu);
	for (fault **p = &f->list; *p; p = &(*p)->next) {
		if (!strcmp((*p)->name, name)) {
			fault *old = *p;
			*p = old->next;
			old->next = NULL;
			free_list(old);
			break;
		}
	}
	f->release_gen++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

void s0__faults_release_all(s0__faults *f)
{
	pthread_mutex_lock(&f->mu);
	free_list(f->list);
	f->list = NULL;
	f->release_gen++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Find the armed fault for (name, step): "name@step" first, then "name". */
static fault *find(s0__faults *f, const char *name, const char *step)
{
	fault *plain = NULL;
	size_t nl = strlen(name);
	for (fault *x = f->list; x; x = x->next) {
		if (step && !strncmp(x->name, name, nl) && x->name[nl] == '@' &&
		    !strcmp(x->name + nl + 1, step))
			return x;
		if (!strcmp(x->name, name))
			plain = x;
	}
	return plain;
}

static s0__fault_act hit(s0__faults *f, const char *name, const char *step, bool block)
{
	assert(s0__fault_known(name, step));
	pthread_mutex_lock(&f->mu);
	fault *x = find(f, name, step);
	if (!x) {
		pthread_mutex_unlock(&f->mu);
		return S0__FAULT_NONE;
	}
	x->hits++;
	int mode = x->mode;
	int64_t delay = x->delay_ms;
	if (x->count > 0 && --x->count == 0 && mode != S0_FAULT_HOLD) {
		for (fault **p = &f->list; *p; p = &(*p)->next)
			if (*p == x) {
				*p = x->next;
				x->next = NULL;
				free_list(x);
				break;
			}
	}
	if (mode == S0_FAULT_HOLD && block) {
		char *key = s0__strdup(name);
		while (key && find(f, key, step) && find(f, key, step)->mode == S0_FAULT_HOLD)
			pthread_cond_wait(&f->cv, &f->mu);
		free(key);
		pthread_mutex_unlock(&f->mu);
		return S0__FAULT_NONE;
	}
	pthread_mutex_unlock(&f->mu);
	switch (mode) {
	case S0_FAULT_FAIL:
		return S0__FAULT_FAIL;
	case S0_FAULT_HOLD:
		return S0__FAULT_HELD;
	case S0_FAULT_DELAY:
		f->clock.sleep_ms(f->clock.ctx, delay, NULL);
		return S0__FAULT_NONE;
	case S0_FAULT_CRASH:
		raise(SIGKILL);
		return S0__FAULT_FAIL;
	default:
		return S0__FAULT_NONE;
	}
}

s0__fault_act s0__fault_hit(s0__faults *f, const char *name, const char *step)
{
	return hit(f, name, step, false);
}

s0__fault_act s0__fault_pass(s0__faults *f, const char *name, const char *step)
{
	return hit(f, name, step, true);
}

bool s0__fault_armed(s0__faults *f, const char *name, const char *step)
{
	assert(s0__fault_known(name, step));
	pthread_mutex_lock(&f->mu);
	bool r = find(f, name, step) != NULL;
	pthread_mutex_unlock(&f->mu);
	return r;
}

bool s0__fault_any_armed(s0__faults *f, const char *prefix)
{
	size_t n = strlen(prefix);
	pthread_mutex_lock(&f->mu);
	bool r = false;
	for (fault *x = f->list; x && !r; x = x->next)
		r = !strncmp(x->name, prefix, n);
	pthread_mutex_unlock(&f->mu);
	return r;
}

int64_t s0__fault_hits(s0__faults *f, const char *name)
{
	pthread_mutex_lock(&f->mu);
	int64_t h = 0;
	for (fault *x = f->list; x; x = x->next)
		if (!strcmp(x->name, name))
			h = x->hits;
	pthread_mutex_unlock(&f->mu);
	return h;
}

void s0__faults_wait_change(s0__faults *f, int64_t ms)
{
	pthread_mutex_lock(&f->mu);
	uint64_t g = f->release_gen;
	struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, ms);
	while (f->release_gen == g)
		if (pthread_cond_timedwait(&f->cv, &f->mu, &dl))
			break;
	pthread_mutex_unlock(&f->mu);
}

cJSON *s0__faults_json(s0__faults *f)
{
	static const char *const modes[] = {"", "fail", "hold", "delay", "crash"};
	cJSON *o = cJSON_CreateObject();
	pthread_mutex_lock(&f->mu);
	for (fault *x = f->list; o && x; x = x->next) {
		cJSON *e = cJSON_CreateObject();
		if (!e)
			break;
		cJSON_AddStringToObject(e, "mode", modes[x->mode]);
		cJSON_AddNumberToObject(e, "remaining", (double)x->count);
		cJSON_AddNumberToObject(e, "hits", (double)x->hits);
		cJSON_AddItemToObject(o, x->name, e);
	}
	pthread_mutex_unlock(&f->mu);
	return o;
}
