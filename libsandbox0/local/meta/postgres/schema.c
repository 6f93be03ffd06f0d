/* The PostgreSQL schema of the metadata store, one migration per version
 * (table s0_schema holds how many are applied). Append only: a released
 * migration never changes. Version 1 has the shape of the SQLite schema
 * at its version 4; text that is sorted on is compared bytewise
 * (COLLATE "C", like SQLite), whatever the database's locale. */
#include "local/meta/postgres/mpg.h"

const char *const s0__mpg_migrations[] = {
	/* 1: every table of meta.h */
	"CREATE TABLE sandboxes("
	" id TEXT COLLATE \"C\" PRIMARY KEY, team_id TEXT NOT NULL, template_id TEXT NOT NULL,"
	" status BIGINT NOT NULL, paused BIGINT NOT NULL, auto_resume BIGINT NOT NULL,"
	" runtime_id TEXT NOT NULL DEFAULT '', runtime_generation BIGINT NOT NULL,"
	" head TEXT NOT NULL, config TEXT NOT NULL, ttl BIGINT NOT NULL, hard_ttl BIGINT NOT NULL,"
	" created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, claimed_at BIGINT NOT NULL,"
	" expires_at BIGINT NOT NULL, hard_expires_at BIGINT NOT NULL, pod_name TEXT NOT NULL,"
	" image TEXT NOT NULL, seq BIGINT NOT NULL, mem_image TEXT NOT NULL DEFAULT '',"
	" mem_image_gen TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX sandboxes_team ON sandboxes(team_id, seq);"
	"CREATE INDEX sandboxes_due ON sandboxes(expires_at, hard_expires_at);"
	"CREATE TABLE operations("
	" id BIGSERIAL PRIMARY KEY, sandbox_id TEXT NOT NULL, kind TEXT NOT NULL,"
	" state TEXT NOT NULL, memory BIGINT NOT NULL, runtime_id TEXT NOT NULL,"
	" generation BIGINT NOT NULL, new_head TEXT NOT NULL, created_at BIGINT NOT NULL,"
	" updated_at BIGINT NOT NULL, image TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX operations_sandbox ON operations(sandbox_id, state);"
	"CREATE INDEX operations_open ON operations(id) WHERE state NOT IN ('done','failed');"
	"CREATE SEQUENCE snapshots_seq;"
	"CREATE TABLE snapshots("
	" id TEXT PRIMARY KEY, sandbox_id TEXT NOT NULL, team_id TEXT NOT NULL, name TEXT NOT NULL,"
	" description TEXT NOT NULL, generation TEXT NOT NULL, created_at BIGINT NOT NULL,"
	" expires_at BIGINT NOT NULL, seq BIGINT NOT NULL DEFAULT nextval('snapshots_seq'));"
	"CREATE INDEX snapshots_sandbox ON snapshots(sandbox_id, team_id);"
	"CREATE TABLE templates("
	" name TEXT PRIMARY KEY, generation TEXT NOT NULL, ephemeral_mounts TEXT NOT NULL,"
	" volume_bytes BIGINT NOT NULL, image TEXT NOT NULL);"
	"CREATE TABLE fork_keys("
	" sandbox_id TEXT NOT NULL, key TEXT NOT NULL, child TEXT, error TEXT,"
	" PRIMARY KEY(sandbox_id, key));"
	"CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT NOT NULL);"
	"CREATE TABLE sessions(sandbox_id TEXT PRIMARY KEY, blob BYTEA NOT NULL);"
	"CREATE TABLE teams(id TEXT COLLATE \"C\" PRIMARY KEY, name TEXT NOT NULL,"
	" created_at BIGINT NOT NULL);"
	"CREATE SEQUENCE api_keys_seq;"
	"CREATE TABLE api_keys("
	" id TEXT PRIMARY KEY, name TEXT NOT NULL, team_id TEXT COLLATE \"C\" NOT NULL"
	" REFERENCES teams(id), hash TEXT NOT NULL UNIQUE, created_at BIGINT NOT NULL,"
	" revoked_at BIGINT NOT NULL, seq BIGINT NOT NULL DEFAULT nextval('api_keys_seq'));"
	"CREATE INDEX api_keys_team ON api_keys(team_id, seq);",
	/* 2: node leases and the owner of each sandbox's runtime generation
	 * (meta.h "nodes and fencing") */
	"CREATE TABLE nodes(id TEXT PRIMARY KEY, epoch BIGINT NOT NULL,"
	" lease_until BIGINT NOT NULL);"
	"CREATE TABLE gen_owners(sandbox_id TEXT PRIMARY KEY, generation BIGINT NOT NULL,"
	" node_id TEXT NOT NULL, epoch BIGINT NOT NULL);",
	/* 3: templates of teams (team_id '' = public, e.g. `default`), their
	 * API spec and times (docs/local-backend.md "Templates") */
	"ALTER TABLE templates ADD COLUMN team_id TEXT COLLATE \"C\" NOT NULL DEFAULT '';"
	"ALTER TABLE templates ADD COLUMN spec TEXT NOT NULL DEFAULT '{}';"
	"ALTER TABLE templates ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;"
	"ALTER TABLE templates ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;"
	"CREATE INDEX sandboxes_template ON sandboxes(template_id);",
	/* 4: public services of sandboxes (their wire JSON) and the public ids
	 * of their routes (docs/wire.md "Public routes") */
	"CREATE TABLE services(sandbox_id TEXT PRIMARY KEY, spec TEXT NOT NULL);"
	"CREATE TABLE public_routes(public_id TEXT PRIMARY KEY, sandbox_id TEXT NOT NULL);"
	"CREATE INDEX public_routes_sandbox ON public_routes(sandbox_id);",
	/* 5: the failover scan and per-node lookups read gen_owners by node
	 * (docs/scaling.md "Where it stops") */
	"CREATE INDEX gen_owners_node ON gen_owners(node_id);",
	/* 6: the generation owners that deleted sandboxes left (a delete now
	 * removes its row with the sandbox's); a row without a sandbox but
	 * without a finished delete either is a start in progress (on another
	 * node, while this one migrates) and stays */
	"DELETE FROM gen_owners WHERE sandbox_id NOT IN (SELECT id FROM sandboxes)"
	" AND sandbox_id IN (SELECT sandbox_id FROM operations"
	" WHERE kind IN ('delete','hard_delete') AND state='done');",
};

const int s0__mpg_migration_count =
	(int)(sizeof s0__mpg_migrations / sizeof s0__mpg_migrations[0]);
