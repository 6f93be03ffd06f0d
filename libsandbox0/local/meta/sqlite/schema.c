/* The SQLite schema of the metadata store, one migration per version
 * (PRAGMA user_version counts those applied). Append only: a released
 * migration never changes, so a data directory of any older version opens. */
#include "local/meta/sqlite/msql.h"

const char *const s0__msql_migrations[] = {
	/* 1: the initial schema */
	"CREATE TABLE sandboxes("
	" id TEXT PRIMARY KEY, team_id TEXT NOT NULL, template_id TEXT NOT NULL,"
	" status INTEGER NOT NULL, paused INTEGER NOT NULL, auto_resume INTEGER NOT NULL,"
	" runtime_id TEXT NOT NULL DEFAULT '', runtime_generation INTEGER NOT NULL,"
	" head TEXT NOT NULL, config TEXT NOT NULL, ttl INTEGER NOT NULL, hard_ttl INTEGER NOT NULL,"
	" created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, claimed_at INTEGER NOT NULL,"
	" expires_at INTEGER NOT NULL, hard_expires_at INTEGER NOT NULL, pod_name TEXT NOT NULL,"
	" image TEXT NOT NULL, seq INTEGER NOT NULL);"
	"CREATE INDEX sandboxes_team ON sandboxes(team_id, seq);"
	"CREATE TABLE operations("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, sandbox_id TEXT NOT NULL, kind TEXT NOT NULL,"
	" state TEXT NOT NULL, memory INTEGER NOT NULL, runtime_id TEXT NOT NULL,"
	" generation INTEGER NOT NULL, new_head TEXT NOT NULL, created_at INTEGER NOT NULL,"
	" updated_at INTEGER NOT NULL);"
	"CREATE INDEX operations_sandbox ON operations(sandbox_id, state);"
	"CREATE TABLE snapshots("
	" id TEXT PRIMARY KEY, sandbox_id TEXT NOT NULL, team_id TEXT NOT NULL, name TEXT NOT NULL,"
	" description TEXT NOT NULL, generation TEXT NOT NULL, created_at INTEGER NOT NULL,"
	" expires_at INTEGER NOT NULL, seq INTEGER NOT NULL);"
	"CREATE TABLE templates("
	" name TEXT PRIMARY KEY, generation TEXT NOT NULL, ephemeral_mounts TEXT NOT NULL,"
	" volume_bytes INTEGER NOT NULL, image TEXT NOT NULL);"
	"CREATE TABLE fork_keys("
	" sandbox_id TEXT NOT NULL, key TEXT NOT NULL, child TEXT, error TEXT,"
	" PRIMARY KEY(sandbox_id, key));"
	"CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT NOT NULL);",
	/* 2: retained memory images (docs/decisions.md "Memory pause acceptance"):
	 * the image of a memory pause and the RootFS generation it matches, on
	 * the sandbox once committed and on the pause operation before */
	"ALTER TABLE sandboxes ADD COLUMN mem_image TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE sandboxes ADD COLUMN mem_image_gen TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE operations ADD COLUMN image TEXT NOT NULL DEFAULT '';",
	/* 3: each sandbox's supervised sessions (sessions.h blob), saved when
	 * they are created or deleted, at a pause commit and at close */
	"CREATE TABLE sessions(sandbox_id TEXT PRIMARY KEY, blob BLOB NOT NULL);",
	/* 4: teams and their API keys (key management, multi-node): only a
	 * keyed hash of each key is stored; revoked_at 0 = live */
	"CREATE TABLE teams(id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL);"
	"CREATE TABLE api_keys("
	" id TEXT PRIMARY KEY, name TEXT NOT NULL, team_id TEXT NOT NULL REFERENCES teams(id),"
	" hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, revoked_at INTEGER NOT NULL,"
	" seq INTEGER NOT NULL);"
	"CREATE INDEX api_keys_team ON api_keys(team_id, seq);",
	/* 5: templates of teams (team_id '' = public, e.g. `default`), their
	 * API spec and times (docs/local-backend.md "Templates") */
	"ALTER TABLE templates ADD COLUMN team_id TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE templates ADD COLUMN spec TEXT NOT NULL DEFAULT '{}';"
	"ALTER TABLE templates ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE templates ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;",
	/* 6: node leases and the owner of each sandbox's runtime generation
	 * (meta.h "nodes and fencing") */
	"CREATE TABLE nodes(id TEXT PRIMARY KEY, epoch INTEGER NOT NULL,"
	" lease_until INTEGER NOT NULL);"
	"CREATE TABLE gen_owners(sandbox_id TEXT PRIMARY KEY, generation INTEGER NOT NULL,"
	" node_id TEXT NOT NULL, epoch INTEGER NOT NULL);",
	/* 7: public services of sandboxes (their wire JSON) and the public ids
	 * of their routes (docs/wire.md "Public routes") */
	"CREATE TABLE services(sandbox_id TEXT PRIMARY KEY, spec TEXT NOT NULL);"
	"CREATE TABLE public_routes(public_id TEXT PRIMARY KEY, sandbox_id TEXT NOT NULL);"
	"CREATE INDEX public_routes_sandbox ON public_routes(sandbox_id);",
	/* 8: the failover scan and per-node lookups read gen_owners by node
	 * (docs/scaling.md "Where it stops") */
	"CREATE INDEX gen_owners_node ON gen_owners(node_id);",
	/* 9: the generation owners that deleted sandboxes left (a delete now
	 * removes its row with the sandbox's); a row without a sandbox but
	 * without a finished delete either is a start in progress and stays */
	"DELETE FROM gen_owners WHERE sandbox_id NOT IN (SELECT id FROM sandboxes)"
	" AND sandbox_id IN (SELECT sandbox_id FROM operations"
	" WHERE kind IN ('delete','hard_delete') AND state='done');",
};

const int s0__msql_migration_count =
	(int)(sizeof s0__msql_migrations / sizeof s0__msql_migrations[0]);
