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

#endif
