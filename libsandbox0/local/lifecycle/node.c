/* The simulated node: capacity, carriers, attach slots, runtimes. */
#include <ctype.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/node.h"

void s0__node_init(s0__node *n, int64_t cpu, int64_t mem, int carriers)
{
	memset(n, 0, sizeof *n);
	n->cpu_total = cpu;
	n->memory_total = mem;
	n->carriers_total = carriers;
	n->nbd_total = carriers;
}

int s0__node_lease(s0__node *n, const char *sandbox_id, int64_t cpu, int64_t mem,
                   s0__runtime **out, s0_error **err)
{
	if (n->down)
		return s0__error_set(err, S0_EUNAVAILABLE, "node_rebooting",
		                     "the node rebooted and is not reconciled yet");
	if (n->carriers_used >= n->carriers_total)
		return s0__error_set(err, S0_EUNAVAILABLE, "carrier",
		                     "no compatible ready carrier is available");
	if (n->nbd_used >= n->nbd_total)
		return s0__error_set(err, S0_EUNAVAILABLE, "nbd_device",
		                     "no block device attach slot is available");
	if (n->cpu_used + cpu > n->cpu_total || n->memory_used + mem > n->memory_total)
		return s0__error_set(err, S0_EUNAVAILABLE, "capacity",
		                     "node capacity is exhausted");
	s0__runtime *rt = calloc(1, sizeof *rt);
	if (!rt)
		return s0__error_nomem(err);
	s0__engine_new_id("rt_", rt->id, sizeof rt->id);
	s0__strlcpy(rt->sandbox_id, sandbox_id, sizeof rt->sandbox_id);
	rt->cpu_millis = cpu;
	rt->memory_bytes = mem;
	rt->carrier = n->carriers_used++;
	n->nbd_used++;
	n->cpu_used += cpu;
	n->memory_used += mem;
	n->runtimes_started++;
	rt->next = n->runtimes;
	n->runtimes = rt;
	*out = rt;
	return S0_OK;
}

void s0__node_release(s0__node *n, s0__runtime *rt)
{
	for (s0__runtime **p = &n->runtimes; *p; p = &(*p)->next) {
		if (*p == rt) {
			*p = rt->next;
			break;
		}
	}
	n->carriers_used--;
	n->nbd_used--;
	n->cpu_used -= rt->cpu_millis;
	n->memory_used -= rt->memory_bytes;
	n->runtimes_stopped++;
	free(rt->alloc_dir);
	free(rt);
}

s0__runtime *s0__node_find(s0__node *n, const char *runtime_id)
{
	for (s0__runtime *rt = n->runtimes; rt; rt = rt->next)
		if (!strcmp(rt->id, runtime_id))
			return rt;
	return NULL;
}

s0__runtime *s0__node_find_sandbox(s0__node *n, const char *sandbox_id)
{
	for (s0__runtime *rt = n->runtimes; rt; rt = rt->next)
		if (!strcmp(rt->sandbox_id, sandbox_id))
			return rt;
	return NULL;
}

int s0__node_pick_ids(s0__node *n, bool (*pick)(const s0__runtime *rt),
                      char (**out)[S0__ID_MAX], size_t *k)
{
	size_t all = 0;
	*k = 0;
	for (s0__runtime *rt = n->runtimes; rt; rt = rt->next)
		all++;
	*out = all ? calloc(all, sizeof **out) : NULL;
	if (all && !*out)
		return S0_ENOMEM;
	for (s0__runtime *rt = n->runtimes; rt && all; rt = rt->next)
		if (pick(rt))
			s0__strlcpy((*out)[(*k)++], rt->sandbox_id, S0__ID_MAX);
	return S0_OK;
}

int s0__node_terminal_proof(struct s0__faults *f, const s0__runtime *rt, s0_error **err)
{
	struct stat st;
	/* the driver's resources: processes, mounts, devices of the generation */
	if (rt && rt->drv && rt->host && rt->drv->terminal_proof(rt->host, rt->id, err) < 0)
		return S0_EUNAVAILABLE;
	if (rt && rt->alloc_dir && stat(rt->alloc_dir, &st) == 0)
		return s0__error_set(err, S0_EUNAVAILABLE, "terminal_proof",
		                     "allocation directory %s is still present", rt->alloc_dir);
	static const char *const kinds[] = {"runsc", "writer", "mount", "network", "alloc_dir",
	                                    "lease_cgroup"};
	char name[64];
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		snprintf(name, sizeof name, "resource_leak:%s", kinds[i]);
		if (s0__fault_armed(f, name, NULL))
			return s0__error_set(err, S0_EUNAVAILABLE, "terminal_proof",
			                     "runtime %s is not proven absent", kinds[i]);
	}
	return S0_OK;
}

int64_t s0__parse_memory(const char *q)
{
	if (!q || !isdigit((unsigned char)*q))
		return -1;
	char *end;
	double v = strtod(q, &end);
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {{"", 1},          {"Ki", 1024.0},     {"Mi", 1048576.0}, {"Gi", 1073741824.0},
	             {"Ti", 1099511627776.0}, {"k", 1e3}, {"K", 1e3},        {"M", 1e6},
	             {"G", 1e9},       {"T", 1e12}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(end, units[i].suffix))
			return v * units[i].mult > 9e18 ? -1 : (int64_t)(v * units[i].mult);
	return -1;
}

int s0__strv_from_json(const char *json, char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	cJSON *arr = json && *json ? cJSON_Parse(json) : NULL;
	if (!arr)
		return json && *json ? -1 : 0;
	size_t cap = (size_t)cJSON_GetArraySize(arr);
	char **v = cap ? calloc(cap, sizeof *v) : NULL;
	const cJSON *it;
	size_t len = 0;
	int rc = cap && !v ? -1 : 0;
	cJSON_ArrayForEach(it, arr)
	{
		if (rc < 0 || !cJSON_IsString(it))
			continue;
		if (!(v[len] = s0__strdup(it->valuestring)))
			rc = -1;
		else
			len++;
	}
	cJSON_Delete(arr);
	if (rc < 0) {
		s0__strv_free(v, len);
		return -1;
	}
	*out = v;
	*n = len;
	return 0;
}

void s0__strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
