/*
 * Retained bytes in the inspection (UC-16; docs/decisions.md "Faults and
 * inspection"): what a sandbox's committed RootFS head and each of its
 * snapshots occupy in the object store — the stand-in for the storage that
 * paused sandboxes and snapshots are billed for. Shared objects (the
 * template's, a parent's) count in each; GC after a delete frees only
 * what nothing else reaches.
 */
#include <stdlib.h>

#include "local/lifecycle/engine_internal.h"

void s0__engine_inspect_usage(s0__engine *e, cJSON *s, const s0__sandbox_row *row)
{
	uint64_t bytes = 0;
	if (row->head[0] && s0__storage_gen_bytes(e->storage, row->head, &bytes, NULL) == S0_OK)
		cJSON_AddNumberToObject(s, "retained_bytes", (double)bytes);
	cJSON *arr = cJSON_AddArrayToObject(s, "snapshots");
	s0__snapshot_rec *recs = NULL;
	size_t n = 0;
	if (!arr || s0__meta_snapshot_list(e->meta, row->rec.team_id, row->rec.id, &recs, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		s0__snapshot_row snap = {0};
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			break;
		}
		cJSON_AddStringToObject(o, "id", recs[i].id);
		if (s0__meta_snapshot_get(e->meta, NULL, recs[i].id, &snap, NULL) < 0)
			continue; /* deleted meanwhile */
		cJSON_AddStringToObject(o, "generation", snap.generation);
		if (s0__storage_gen_bytes(e->storage, snap.generation, &bytes, NULL) == S0_OK)
			cJSON_AddNumberToObject(o, "retained_bytes", (double)bytes);
	}
	free(recs);
}
