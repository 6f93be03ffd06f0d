/* Constructors of the client's list and snapshot results from JSON. */
#ifndef S0_CLIENT_RESULTS_H
#define S0_CLIENT_RESULTS_H

#include <cjson/cJSON.h>

#include "common/buf.h"
#include "common/internal.h"

int s0__sandbox_page_from_json(const cJSON *o, s0_sandbox_page **out, s0_error **err);
int s0__snapshot_info_from_json(const cJSON *o, s0_snapshot_info **out, s0_error **err);
int s0__snapshot_list_from_json(const cJSON *o, s0_snapshot_list **out, s0_error **err);
int s0__file_info_from_json(const cJSON *o, s0_file_info **out, s0_error **err);
int s0__file_list_from_json(const cJSON *o, s0_file_list **out, s0_error **err);
/* Build and validate the list query (shared by list and the iterator). */
int s0__list_query(const s0_list_options *o, int32_t offset, s0__buf *q, s0_error **err);

/* Arrays of result objects, shared by the page and list types. */
typedef int (*s0__item_fn)(const cJSON *o, void **out, s0_error **err);
typedef void (*s0__item_free_fn)(void *item);
/*
 * Build one object per element of o's array member `key` (absent or null:
 * none). On failure nothing is returned and everything built is freed.
 * S0_EPROTOCOL when o is not an object or the member is not an array.
 */
int s0__items_from_json(const cJSON *o, const char *key, s0__item_fn fn, s0__item_free_fn fr,
                        void ***items, size_t *len, s0_error **err);
void s0__items_free(void **items, size_t len, s0__item_free_fn fr);

#endif
