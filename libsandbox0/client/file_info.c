/* s0_file_info / s0_file_list: FileInfo objects (docs/wire.md §3.9). */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "client/results.h"
#include "common/json.h"

struct s0_file_info {
	char *name, *path, *link_target;
	int type;
	int64_t size, mod_time;
	uint32_t mode;
	bool is_link;
};

void s0_file_info_free(s0_file_info *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->path);
	free(f->link_target);
	free(f);
	s0__obj_dec();
}

static int type_of(const char *t)
{
	if (!t)
		return S0_FILE_TYPE_UNKNOWN;
	if (!strcmp(t, "file"))
		return S0_FILE_TYPE_FILE;
	if (!strcmp(t, "dir"))
		return S0_FILE_TYPE_DIR;
	if (!strcmp(t, "symlink"))
		return S0_FILE_TYPE_SYMLINK;
	return S0_FILE_TYPE_UNKNOWN;
}

int s0__file_info_from_json(const cJSON *o, s0_file_info **out, s0_error **err)
{
	if (!cJSON_IsObject(o))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "expected a FileInfo object");
	s0_file_info *f = calloc(1, sizeof *f);
	if (!f)
		return s0__error_nomem(err);
	s0__obj_inc();
	f->name = s0__strdup(s0__json_str0(o, "name"));
	f->path = s0__strdup(s0__json_str0(o, "path"));
	f->link_target = s0__strdup(s0__json_str(o, "link_target"));
	f->type = type_of(s0__json_str(o, "type"));
	f->size = s0__json_i64(o, "size", 0);
	f->mod_time = s0__json_time(o, "mod_time");
	f->mode = (uint32_t)strtoul(s0__json_str0(o, "mode"), NULL, 8) & 07777u;
	f->is_link = s0__json_bool(o, "is_link", f->type == S0_FILE_TYPE_SYMLINK);
	if (!f->name || !f->path) {
		s0_file_info_free(f);
		return s0__error_nomem(err);
	}
	*out = f;
	return S0_OK;
}

const char *s0_file_info_name(const s0_file_info *f) { return f->name; }
const char *s0_file_info_path(const s0_file_info *f) { return f->path; }
int s0_file_info_type(const s0_file_info *f) { return f->type; }
int64_t s0_file_info_size_bytes(const s0_file_info *f) { return f->size; }
uint32_t s0_file_info_mode(const s0_file_info *f) { return f->mode; }
int64_t s0_file_info_mod_time_unix_ms(const s0_file_info *f) { return f->mod_time; }
bool s0_file_info_is_link(const s0_file_info *f) { return f->is_link; }
const char *s0_file_info_link_target(const s0_file_info *f) { return f->link_target; }

struct s0_file_list {
	s0_file_info **items;
	size_t len;
};

void s0_file_list_free(s0_file_list *l)
{
	if (!l)
		return;
	s0__items_free((void **)l->items, l->len, (s0__item_free_fn)s0_file_info_free);
	free(l);
	s0__obj_dec();
}

int s0__file_list_from_json(const cJSON *o, s0_file_list **out, s0_error **err)
{
	s0_file_list *l = calloc(1, sizeof *l);
	if (!l)
		return s0__error_nomem(err);
	int rc = s0__items_from_json(o, "entries", (s0__item_fn)s0__file_info_from_json,
	                             (s0__item_free_fn)s0_file_info_free, (void ***)&l->items,
	                             &l->len, err);
	if (rc < 0) {
		free(l);
		return rc;
	}
	s0__obj_inc();
	*out = l;
	return S0_OK;
}

size_t s0_file_list_length(const s0_file_list *l) { return l->len; }
const s0_file_info *s0_file_list_at(const s0_file_list *l, size_t i)
{
	return i < l->len ? l->items[i] : NULL;
}
