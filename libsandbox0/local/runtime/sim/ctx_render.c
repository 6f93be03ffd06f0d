/* ContextResponse and ContextExecResponse rendering (docs/wire.md §8.1). */
#include "local/runtime/sim/ctx_int.h"

#include "common/json.h"

cJSON *s0__ctx_render_flag(const char *key)
{
	cJSON *o = cJSON_CreateObject();
	if (o && s0__json_add_bool(o, key, true)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* output_raw, stdout, stderr (and exit_code, state once ended). */
static int add_output(cJSON *o, const s0__shout *out, const s0__proc *p, bool raw_always)
{
	int rc = 0;
	if (raw_always || out->raw.len)
		rc |= s0__json_add_str(o, "output_raw", out->raw.data ? out->raw.data : "");
	if (out->out.len || raw_always)
		rc |= s0__json_add_str(o, "stdout", out->out.data ? out->out.data : "");
	if (out->err.len || raw_always)
		rc |= s0__json_add_str(o, "stderr", out->err.data ? out->err.data : "");
	if (p && p->ended) {
		rc |= s0__json_add_i64(o, "exit_code", p->exit_code);
		rc |= s0__json_add_str(o, "state", s0__proc_state_name(p->state));
	}
	return rc;
}

cJSON *s0__ctx_render_exec(const s0__shout *o, const s0__proc *p)
{
	cJSON *r = cJSON_CreateObject();
	if (r && add_output(r, o, p, true)) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

static int add_env(cJSON *o, const s0__vars *v)
{
	cJSON *e = cJSON_AddObjectToObject(o, "env_vars");
	if (!e)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < v->n; i++)
		rc |= s0__json_add_str(e, v->v[i].name, v->v[i].value);
	return rc;
}

cJSON *s0__ctx_render(s0__guest *g, const s0__ctx *c, bool with_output)
{
	s0__proc *p = s0__gproc_find(g, c->pid);
	char ts[40];
	s0__time_format_rfc3339(c->created_at_ms, ts, sizeof ts);
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool ended = !p || p->ended;
	int rc = s0__json_add_str(o, "id", c->id);
	rc |= s0__json_add_str(o, "type", c->type == S0__CTX_REPL ? "repl" : "cmd");
	rc |= s0__json_add_str(o, "alias", c->alias ? c->alias : "");
	rc |= s0__json_add_str(o, "cwd", c->cwd ? c->cwd : "");
	rc |= add_env(o, &c->env_vars);
	rc |= s0__json_add_bool(o, "running", !ended);
	rc |= s0__json_add_bool(o, "paused", p && !ended && p->state == S0__PS_PAUSED);
	rc |= s0__json_add_str(o, "created_at", ts);
	if (with_output && p)
		rc |= add_output(o, c->type == S0__CTX_CMD ? &p->io : &c->last, p, false);
	else if (p && p->ended)
		rc |= add_output(o, &(s0__shout){0}, p, false);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
