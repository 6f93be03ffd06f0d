/* FileInfo and listings: ownership helpers and the docs/wire.md §3.9 JSON form. */
#include "local/rootfs/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

void s0__fileinfo_clear(s0__fileinfo *fi)
{
	if (!fi)
		return;
	free(fi->name);
	free(fi->path);
	free(fi->link_target);
	memset(fi, 0, sizeof *fi);
}

void s0__fileinfo_free(s0__fileinfo *fi)
{
	s0__fileinfo_clear(fi);
	free(fi);
}

void s0__filelist_free(s0__filelist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->len; i++)
		s0__fileinfo_clear(&l->items[i]);
	free(l->items);
	free(l);
}

int s0__filelist_push(s0__filelist *l, s0__fileinfo *fi, s0_error **err)
{
	if (l->len == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		s0__fileinfo *ni = realloc(l->items, nc * sizeof *ni);
		if (!ni)
			return s0__error_nomem(err);
		l->items = ni;
		l->cap = nc;
	}
	l->items[l->len++] = *fi;
	memset(fi, 0, sizeof *fi);
	return S0_OK;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const s0__fileinfo *)a)->name, ((const s0__fileinfo *)b)->name);
}

void s0__filelist_sort(s0__filelist *l)
{
	if (l->len > 1)
		qsort(l->items, l->len, sizeof l->items[0], by_name);
}

int s0__fileinfo_set_path(s0__fileinfo *fi, const char *path, s0_error **err)
{
	char *p = s0__strdup(path);
	if (!p)
		return s0__error_nomem(err);
	free(fi->path);
	fi->path = p;
	return S0_OK;
}

static const char *type_name(int32_t t)
{
	switch (t) {
	case S0_FILE_TYPE_DIR:
		return "dir";
	case S0_FILE_TYPE_SYMLINK:
		return "symlink";
	default:
		return "file";
	}
}

cJSON *s0__fileinfo_to_json(const s0__fileinfo *fi)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	char mode[8], when[40];
	snprintf(mode, sizeof mode, "%04o", (unsigned)(fi->mode & 07777));
	int64_t ms = fi->mod_time_unix_ns / 1000000;
	if (fi->mod_time_unix_ns < 0 && fi->mod_time_unix_ns % 1000000)
		ms--;
	s0__time_format_rfc3339(ms, when, sizeof when);
	bool ok = !s0__json_add_str(o, "name", fi->name ? fi->name : "") &&
	          !s0__json_add_str(o, "path", fi->path ? fi->path : "") &&
	          !s0__json_add_str(o, "type", type_name(fi->type)) &&
	          !s0__json_add_i64(o, "size", fi->size_bytes) &&
	          !s0__json_add_str(o, "mode", mode) && !s0__json_add_str(o, "mod_time", when) &&
	          !s0__json_add_bool(o, "is_link", fi->is_link) &&
	          (!fi->link_target || !s0__json_add_str(o, "link_target", fi->link_target));
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *s0__filelist_to_json(const s0__filelist *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *a = o ? cJSON_AddArrayToObject(o, "entries") : NULL;
	if (!a) {
		cJSON_Delete(o);
		return NULL;
	}
	for (size_t i = 0; l && i < l->len; i++) {
		cJSON *e = s0__fileinfo_to_json(&l->items[i]);
		if (!e) {
			cJSON_Delete(o);
			return NULL;
		}
		cJSON_AddItemToArray(a, e);
	}
	return o;
}

void s0__files_route_reset(s0__files_route *route)
{
	if (!route)
		return;
	for (int i = 0; i < 2; i++) {
		free(route->redirect[i]);
		route->redirect[i] = NULL;
	}
}
