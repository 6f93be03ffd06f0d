/* The row helpers of records.h: clearing, id lists, and the one table of
 * operation kind and state names. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/records.h"

void s0__sandbox_rec_clear(s0__sandbox_rec *r)
{
	if (!r)
		return;
	free(r->config_json);
	r->config_json = NULL;
}

void s0__template_row_clear(s0__template_row *t)
{
	if (!t)
		return;
	free(t->ephemeral_mounts_json);
	t->ephemeral_mounts_json = NULL;
	free(t->spec_json);
	t->spec_json = NULL;
}

void s0__meta_free_ids(char **ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* The stored names, indexed by the enums (the only place they are spelt). */
static const char *const kind_names[S0__OP_KIND_COUNT] = {
	[S0__OP_PAUSE] = "pause",
	[S0__OP_TTL_PAUSE] = "ttl_pause",
	[S0__OP_DELETE] = "delete",
	[S0__OP_HARD_DELETE] = "hard_delete",
	[S0__OP_RECOVER] = "recover",
	[S0__OP_RESUME_FALLBACK] = "resume_fallback",
};

static const char *const state_names[S0__OPS_STATE_COUNT] = {
	[S0__OPS_INTENT] = "intent",
	[S0__OPS_PUBLISHED] = "published",
	[S0__OPS_COMMITTED] = "committed",
	[S0__OPS_CAPTURE_FAILED] = "capture_failed",
	[S0__OPS_RELEASED] = "released",
	[S0__OPS_DONE] = "done",
	[S0__OPS_FAILED] = "failed",
};

const char *s0__op_kind_name(s0__op_kind k)
{
	return (unsigned)k < S0__OP_KIND_COUNT ? kind_names[k] : "?";
}

const char *s0__op_state_name(s0__op_state s)
{
	return (unsigned)s < S0__OPS_STATE_COUNT ? state_names[s] : "?";
}

static int lookup(const char *const *names, int n, const char *name)
{
	for (int i = 0; name && i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int s0__op_kind_parse(const char *name, s0__op_kind *out, s0_error **err)
{
	int i = lookup(kind_names, S0__OP_KIND_COUNT, name);
	if (i < 0)
		return s0__error_set(err, S0_EINVAL, "unknown_op_kind",
		                     "metadata store: unknown operation kind \"%s\"",
		                     name ? name : "(null)");
	*out = (s0__op_kind)i;
	return S0_OK;
}

int s0__op_state_parse(const char *name, s0__op_state *out, s0_error **err)
{
	int i = lookup(state_names, S0__OPS_STATE_COUNT, name);
	if (i < 0)
		return s0__error_set(err, S0_EINVAL, "unknown_op_state",
		                     "metadata store: unknown operation state \"%s\"",
		                     name ? name : "(null)");
	*out = (s0__op_state)i;
	return S0_OK;
}

bool s0__op_kind_is_pause(s0__op_kind k)
{
	return k == S0__OP_PAUSE || k == S0__OP_TTL_PAUSE;
}

bool s0__op_kind_is_delete(s0__op_kind k)
{
	return k == S0__OP_DELETE || k == S0__OP_HARD_DELETE;
}

bool s0__op_state_final(s0__op_state s)
{
	return s == S0__OPS_DONE || s == S0__OPS_FAILED;
}
