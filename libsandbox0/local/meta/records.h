/*
 * The rows the metadata store keeps (meta.h), below the lifecycle engine:
 * the wire records of a sandbox and a snapshot, the engine's extra
 * columns beside them, durable operations, templates, retained memory
 * images, teams and API keys. Plain values: fixed buffers are NUL-
 * terminated, the few heap fields are owned by the row and freed by its
 * _clear function.
 */
#ifndef S0_META_RECORDS_H
#define S0_META_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

#define S0__ID_MAX 96

/* A sandbox as the wire shows it (docs/wire.md §3.3 plus runtime_id, §6.2). */
typedef struct s0__sandbox_rec {
	char id[S0__ID_MAX];
	char team_id[S0__ID_MAX];
	char template_id[256];
	char pod_name[S0__ID_MAX];
	char runtime_id[S0__ID_MAX]; /* "" while paused */
	int status;                  /* s0_status */
	bool paused;
	bool auto_resume;
	int64_t runtime_generation;
	int32_t ttl_sec, hard_ttl_sec;
	int64_t created_at_ms, updated_at_ms, claimed_at_ms;
	int64_t expires_at_ms, hard_expires_at_ms; /* 0 = unset */
	char *config_json; /* durable SandboxConfig (owned; free with s0__sandbox_rec_clear) */
} s0__sandbox_rec;

/* Free r's owned fields (config_json) and reset them; NULL-safe. */
void s0__sandbox_rec_clear(s0__sandbox_rec *r);

/* A named RootFS snapshot (docs/wire.md §3.8). */
typedef struct s0__snapshot_rec {
	char id[S0__ID_MAX];
	char sandbox_id[S0__ID_MAX];
	char name[256];
	char description[1024];
	int64_t created_at_ms;
	int64_t expires_at_ms; /* 0 = never */
} s0__snapshot_rec;

/* The filter of a sandbox listing (docs/wire.md §3.4). */
typedef struct s0__list_filter {
	int status;              /* 0 = any */
	int paused;              /* -1 any, 0 false, 1 true */
	const char *template_id; /* nullable */
	int32_t limit, offset;   /* validated by the router */
} s0__list_filter;

/* Extra sandbox columns the engine keeps beside the wire record. */
typedef struct s0__sandbox_row {
	s0__sandbox_rec rec;
	char head[128];    /* committed RootFS generation id */
	int64_t seq;       /* creation order */
	char image[64];    /* recorded template image id (RTX-02) */
	char mem_image[160];     /* retained memory image (hex object id), "" = none */
	char mem_image_gen[128]; /* the RootFS generation that image matches */
} s0__sandbox_row;

/*
 * The kinds of durable lifecycle operation. Stored by name (see
 * s0__op_kind_name); the values are not stored and may be renumbered.
 */
typedef enum s0__op_kind {
	S0__OP_PAUSE,           /* "pause": an explicit pause (filesystem or memory) */
	S0__OP_TTL_PAUSE,       /* "ttl_pause": the soft TTL's automatic pause */
	S0__OP_DELETE,          /* "delete": an explicit delete */
	S0__OP_HARD_DELETE,     /* "hard_delete": the hard TTL's delete */
	S0__OP_RECOVER,         /* "recover": replacement of a crashed runtime */
	S0__OP_RESUME_FALLBACK, /* "resume_fallback": replacement of a failed memory restore */
	S0__OP_KIND_COUNT
} s0__op_kind;

/* The states of an operation; done and failed are final. Stored by name. */
typedef enum s0__op_state {
	S0__OPS_INTENT,         /* "intent": recorded, no side effect committed */
	S0__OPS_PUBLISHED,      /* "published": a pause's branch is sealed and published */
	S0__OPS_COMMITTED,      /* "committed": a pause's head advanced, runtime unbound */
	S0__OPS_CAPTURE_FAILED, /* "capture_failed": a memory pause's capture failed */
	S0__OPS_RELEASED,       /* "released": a recovery's dead runtime proven absent */
	S0__OPS_DONE,           /* "done": finished */
	S0__OPS_FAILED,         /* "failed": abandoned or superseded */
	S0__OPS_STATE_COUNT
} s0__op_state;

/* The stored name of a kind or state ("?" for a value out of range). */
const char *s0__op_kind_name(s0__op_kind k);
const char *s0__op_state_name(s0__op_state s);
/* Parse a stored name (exact, case-sensitive). S0_EINVAL "unknown_op_kind" /
 * "unknown_op_state" naming the string for anything not in the table;
 * *out is untouched then. */
int s0__op_kind_parse(const char *name, s0__op_kind *out, s0_error **err);
int s0__op_state_parse(const char *name, s0__op_state *out, s0_error **err);
/* True for a pause of either kind (pause, ttl_pause). */
bool s0__op_kind_is_pause(s0__op_kind k);
/* True for a delete of either kind (delete, hard_delete). */
bool s0__op_kind_is_delete(s0__op_kind k);
/* True for the final states (done, failed). */
bool s0__op_state_final(s0__op_state s);

/* A durable lifecycle operation. */
typedef struct s0__op_row {
	int64_t id; /* assigned by the store on insert */
	char sandbox_id[S0__ID_MAX];
	s0__op_kind kind;
	s0__op_state state;
	bool memory;
	char runtime_id[S0__ID_MAX];
	int64_t generation;
	char new_head[128];
	int64_t created_at_ms, updated_at_ms;
	char image[160]; /* memory pause: the captured image (hex), once published */
} s0__op_row;

/* A retained image committed on a sandbox (inspection, MEM-04). */
typedef struct s0__mem_image_row {
	char sandbox_id[S0__ID_MAX];
	char image[160];
	char generation[128];
} s0__mem_image_row;

/* A snapshot with the columns the wire does not show. */
typedef struct s0__snapshot_row {
	s0__snapshot_rec rec;
	char team_id[S0__ID_MAX];
	char generation[128];
} s0__snapshot_row;

/* A template: its RootFS generation and runtime-only mounts; team_id ""
 * = public (every team sees it; only the C API makes those). */
typedef struct s0__template_row {
	char name[256];
	char generation[128];
	char *ephemeral_mounts_json; /* owned JSON array of mount paths */
	int64_t volume_bytes;
	char image[64];
	char team_id[S0__ID_MAX];
	char *spec_json; /* owned JSON object (the API's spec); NULL stores "{}" */
	int64_t created_at_ms, updated_at_ms;
} s0__template_row;

/* Free t's owned fields and reset them; NULL-safe. */
void s0__template_row_clear(s0__template_row *t);

/* A team: the owner of sandboxes, snapshots and API keys. */
typedef struct s0__team_row {
	char id[S0__ID_MAX];
	char name[256];
	int64_t created_at_ms;
} s0__team_row;

/* The hex digest an API key is stored and looked up by (s0__apikey_hash). */
#define S0__APIKEY_HASH_HEX 65 /* 32-byte keyed BLAKE2b as hex, plus NUL */

/*
 * An API key of a team. The key itself is never stored, only its keyed
 * hash (meta.h s0__apikey_hash); revoked_at_ms 0 = live.
 */
typedef struct s0__apikey_row {
	char id[S0__ID_MAX];
	char name[256];
	char team_id[S0__ID_MAX];
	char hash[S0__APIKEY_HASH_HEX];
	int64_t created_at_ms;
	int64_t revoked_at_ms;
} s0__apikey_row;

/*
 * The node that owns a sandbox's runtime generation (meta.h "nodes and
 * fencing"): a node id and the epoch of its lease when it claimed it.
 */
typedef struct s0__gen_owner_row {
	char sandbox_id[S0__ID_MAX];
	int64_t generation;
	char node_id[S0__ID_MAX]; /* "" once released (no node runs it) */
	int64_t epoch;
	/* when node_id's current lease expires (unix ms), whatever its epoch
	 * (a restarted node recovers its earlier epochs' claims itself); 0
	 * when released */
	int64_t lease_until;
} s0__gen_owner_row;

/* Free an id list returned by the store (each string, then the array). */
void s0__meta_free_ids(char **ids, size_t n);

#endif
