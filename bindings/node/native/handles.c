/* Reference-counted holders of library objects behind JS externals.
 *
 * A holder's library object lives while anything uses it: the JS handle
 * (until close() or garbage collection), each call in flight, and for a
 * local backend each client made on it. The holder struct itself lives
 * until both the library object is freed and the external is collected,
 * so a closed handle still reads as "closed" instead of dangling. */
#include "addon.h"

#include <stdlib.h>

/* Atomic: each environment (main thread, Workers) has its own JS thread. */
static int64_t live_objects;

/* Type tags: only externals this addon made are accepted as handles. */
static const napi_type_tag kind_tags[] = {
	{0, 0},
	{0x5a0c11e47d1e4a01ull, 0x9b3f2e6c1d0a7701ull},
	{0x5a0c11e47d1e4a02ull, 0x9b3f2e6c1d0a7702ull},
	{0x5a0c11e47d1e4a03ull, 0x9b3f2e6c1d0a7703ull},
};

static const char *kind_name(nx_kind k)
{
	switch (k) {
	case NX_CLIENT: return "client";
	case NX_LOCAL: return "local backend";
	default: return "cancel token";
	}
}

static void lib_free(nx_obj *o)
{
	switch (o->kind) {
	case NX_CLIENT:
		s0_client_free(o->ptr);
		break;
	case NX_LOCAL:
		s0_local_close(o->ptr);
		break;
	case NX_TOKEN:
		s0_cancel_token_free(o->ptr);
		break;
	}
	o->ptr = NULL;
	__atomic_sub_fetch(&live_objects, 1, __ATOMIC_RELAXED);
	if (o->on_free) {
		/* Only set by localClose, after which the last reference drops on
		 * the JS thread in a call's settle or a client's close(), never in
		 * a finalizer (LocalBackend.close() closes its clients first). */
		napi_value undef;
		napi_get_undefined(o->env, &undef);
		napi_resolve_deferred(o->env, o->on_free, undef);
		o->on_free = NULL;
	}
}

void nx_obj_ref(nx_obj *o)
{
	o->refs++;
}

void nx_obj_unref(nx_obj *o)
{
	if (!o || --o->refs > 0)
		return;
	nx_obj *parent = o->parent;
	lib_free(o);
	o->parent = NULL;
	if (o->js_gone)
		free(o);
	if (parent)
		nx_obj_unref(parent);
}

void nx_obj_close(nx_obj *o)
{
	if (o->js_closed)
		return;
	o->js_closed = true;
	nx_obj_unref(o);
}

int64_t nx_obj_live(void)
{
	return __atomic_load_n(&live_objects, __ATOMIC_RELAXED);
}

static void obj_finalize(napi_env env, void *data, void *hint)
{
	(void)env;
	(void)hint;
	nx_obj *o = data;
	o->js_gone = true;
	if (!o->js_closed) {
		o->js_closed = true;
		nx_obj_unref(o); /* frees the struct when this was the last use */
	} else if (o->refs == 0) {
		free(o);
	}
}

napi_value nx_obj_wrap(napi_env env, nx_kind kind, void *ptr, nx_obj *parent)
{
	napi_value ext;
	nx_obj *o = calloc(1, sizeof *o);
	if (!o) {
		napi_throw_error(env, NULL, "out of memory");
		return NULL;
	}
	o->kind = kind;
	o->refs = 1;
	o->ptr = ptr;
	o->env = env;
	__atomic_add_fetch(&live_objects, 1, __ATOMIC_RELAXED);
	if (napi_create_external(env, o, obj_finalize, NULL, &ext) != napi_ok) {
		lib_free(o);
		free(o);
		return nx_throw_last(env);
	}
	if (napi_type_tag_object(env, ext, &kind_tags[kind]) != napi_ok)
		return nx_throw_last(env); /* the finalizer frees the holder */
	if (parent) {
		o->parent = parent;
		nx_obj_ref(parent);
	}
	return ext;
}

nx_obj *nx_obj_get(napi_env env, napi_value v, nx_kind kind, const char *what)
{
	char msg[160];
	napi_valuetype t;
	void *data = NULL;
	bool tagged = false;
	if (!v || napi_typeof(env, v, &t) != napi_ok || t != napi_external ||
	    napi_check_object_type_tag(env, v, &kind_tags[kind], &tagged) != napi_ok || !tagged ||
	    napi_get_value_external(env, v, &data) != napi_ok || !data ||
	    ((nx_obj *)data)->kind != kind) {
		snprintf(msg, sizeof msg, "%s must be a %s handle", what, kind_name(kind));
		nx_throw_type(env, msg);
		return NULL;
	}
	nx_obj *o = data;
	if (o->js_closed || !o->ptr) {
		snprintf(msg, sizeof msg, "the %s is closed", kind_name(kind));
		napi_throw_error(env, "ERR_SANDBOX0_CLOSED", msg);
		return NULL;
	}
	return o;
}
