/* The SQL of every prepared statement of the PostgreSQL metadata store,
 * indexed by mpg_stmt (mpg.h). Parameters are $n, never spliced text;
 * semantics mirror the SQLite statements of meta/sqlite/. */
#include "local/meta/postgres/mpg.h"

#define SB_COLS                                                                         \
	"id, team_id, template_id, status, paused, auto_resume, runtime_id,"             \
	" runtime_generation, head, config, ttl, hard_ttl, created_at, updated_at,"       \
	" claimed_at, expires_at, hard_expires_at, pod_name, image, seq, mem_image, mem_image_gen"
#define SB_WHERE                                                                        \
	" WHERE team_id=$1 AND ($2::bigint=0 OR status=$2) AND ($3::bigint<0 OR paused=$3)" \
	" AND ($4::text IS NULL OR template_id=$4)"
#define OP_COLS                                                                         \
	"id, sandbox_id, kind, state, memory, runtime_id, generation, new_head, created_at," \
	" updated_at, image"
#define OPEN_OP " state NOT IN ('done','failed')"
#define SNAP_COLS "id, sandbox_id, team_id, name, description, generation, created_at, expires_at"
#define KEY_COLS "id, name, team_id, hash, created_at, revoked_at"

/* Template columns (read_tpl in snap.c reads them in this order). */
#define TPL_COLS                                                                           \
	"name, generation, ephemeral_mounts, volume_bytes, image, team_id, spec, created_at," \
	" updated_at"

const char *const s0__mpg_sql[Q_COUNT] = {
	[Q_SB_GET] = "SELECT " SB_COLS " FROM sandboxes WHERE id=$1"
	             " AND ($2::text IS NULL OR team_id=$2)",
	/* a write of a sandbox row notifies the other nodes at its commit (listen.c) */
	[Q_SB_PUT] = "WITH w AS (INSERT INTO sandboxes(" SB_COLS ") VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,"
	             "$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22) ON CONFLICT(id) DO UPDATE SET"
	             " team_id=excluded.team_id, template_id=excluded.template_id,"
	             " status=excluded.status, paused=excluded.paused,"
	             " auto_resume=excluded.auto_resume, runtime_id=excluded.runtime_id,"
	             " runtime_generation=excluded.runtime_generation, head=excluded.head,"
	             " config=excluded.config, ttl=excluded.ttl, hard_ttl=excluded.hard_ttl,"
	             " created_at=excluded.created_at, updated_at=excluded.updated_at,"
	             " claimed_at=excluded.claimed_at, expires_at=excluded.expires_at,"
	             " hard_expires_at=excluded.hard_expires_at, pod_name=excluded.pod_name,"
	             " image=excluded.image, seq=excluded.seq, mem_image=excluded.mem_image,"
	             " mem_image_gen=excluded.mem_image_gen RETURNING id)"
	             " SELECT pg_notify('s0_sandbox', id) FROM w",
	/* its generation owner goes with it, in the same statement */
	[Q_SB_DEL] = "WITH g AS (DELETE FROM gen_owners WHERE sandbox_id=$1),"
	             " d AS (DELETE FROM sandboxes WHERE id=$1 RETURNING id)"
	             " SELECT pg_notify('s0_sandbox', '-' || id) FROM d",
	[Q_SB_COUNT] = "SELECT COUNT(*) FROM sandboxes" SB_WHERE,
	[Q_SB_LIST] = "SELECT " SB_COLS " FROM sandboxes" SB_WHERE
	              " ORDER BY created_at DESC, seq DESC LIMIT $5 OFFSET $6",
	[Q_SB_DUE] = "SELECT id FROM sandboxes WHERE"
	             " (expires_at > 0 AND expires_at <= $1 AND paused = 0)"
	             " OR (hard_expires_at > 0 AND hard_expires_at <= $1) ORDER BY seq",
	[Q_SB_ALL] = "SELECT id FROM sandboxes ORDER BY seq",
	[Q_OP_INS] = "INSERT INTO operations(sandbox_id, kind, state, memory, runtime_id, generation,"
	             " new_head, created_at, updated_at, image)"
	             " VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) RETURNING id",
	[Q_OP_UPD] = "UPDATE operations SET sandbox_id=$1, kind=$2, state=$3, memory=$4,"
	             " runtime_id=$5, generation=$6, new_head=$7, created_at=$8, updated_at=$9,"
	             " image=$10 WHERE id=$11",
	[Q_OP_ACTIVE] = "SELECT " OP_COLS " FROM operations WHERE sandbox_id=$1 AND" OPEN_OP
	                " ORDER BY id LIMIT 1",
	[Q_OP_PENDING] = "SELECT " OP_COLS " FROM operations WHERE" OPEN_OP " ORDER BY id",
	[Q_OP_COUNT] = "SELECT COUNT(*) FROM operations WHERE sandbox_id=$1 AND kind=$2",
	[Q_MEM_IMAGES] = "SELECT mem_image FROM sandboxes WHERE mem_image != ''"
	                 " UNION SELECT image FROM operations WHERE image != '' AND" OPEN_OP,
	[Q_MEM_ROWS] = "SELECT id, mem_image, mem_image_gen FROM sandboxes WHERE mem_image != ''"
	               " ORDER BY id COLLATE \"C\"",
	[Q_LIVE_GENS] = "SELECT head FROM sandboxes WHERE head != ''"
	                " UNION SELECT generation FROM snapshots"
	                " UNION SELECT generation FROM templates"
	                " UNION SELECT new_head FROM operations WHERE new_head != '' AND" OPEN_OP,
	[Q_LATEST] = "SELECT COALESCE(GREATEST((SELECT MAX(updated_at) FROM sandboxes),"
	             " (SELECT MAX(claimed_at) FROM sandboxes),"
	             " (SELECT MAX(updated_at) FROM operations),"
	             " (SELECT MAX(created_at) FROM snapshots)), 0)",
	[Q_SNAP_PUT] = "INSERT INTO snapshots(" SNAP_COLS ") VALUES($1,$2,$3,$4,$5,$6,$7,$8)"
	               " ON CONFLICT(id) DO UPDATE SET sandbox_id=excluded.sandbox_id,"
	               " team_id=excluded.team_id, name=excluded.name,"
	               " description=excluded.description, generation=excluded.generation,"
	               " created_at=excluded.created_at, expires_at=excluded.expires_at,"
	               " seq=excluded.seq",
	[Q_SNAP_GET] = "SELECT " SNAP_COLS " FROM snapshots WHERE id=$1"
	               " AND ($2::text IS NULL OR team_id=$2)",
	[Q_SNAP_DEL] = "DELETE FROM snapshots WHERE id=$1",
	[Q_SNAP_LIST] = "SELECT " SNAP_COLS " FROM snapshots WHERE sandbox_id=$1 AND team_id=$2"
	                " ORDER BY created_at DESC, seq DESC",
	[Q_SNAP_EXPIRE] = "DELETE FROM snapshots WHERE expires_at > 0 AND expires_at <= $1",
	[Q_TMPL_GET] = "SELECT " TPL_COLS " FROM templates WHERE name=$1",
	[Q_TMPL_PUT] = "INSERT INTO templates(" TPL_COLS ") VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9)"
	               " ON CONFLICT(name) DO UPDATE SET generation=excluded.generation,"
	               " ephemeral_mounts=excluded.ephemeral_mounts,"
	               " volume_bytes=excluded.volume_bytes, image=excluded.image,"
	               " team_id=excluded.team_id, spec=excluded.spec,"
	               " created_at=excluded.created_at, updated_at=excluded.updated_at",
	[Q_TMPL_LIST] = "SELECT " TPL_COLS " FROM templates WHERE team_id='' OR team_id=$1"
	                " ORDER BY created_at, name",
	[Q_TMPL_DEL] = "DELETE FROM templates WHERE name=$1",
	[Q_TMPL_USERS] = "SELECT COUNT(*) FROM sandboxes WHERE template_id=$1",
	[Q_KV_GET] = "SELECT v FROM kv WHERE k=$1",
	[Q_KV_PUT] = "INSERT INTO kv(k, v) VALUES($1,$2) ON CONFLICT(k) DO UPDATE SET v=excluded.v",
	[Q_SES_GET] = "SELECT blob FROM sessions WHERE sandbox_id=$1",
	[Q_SES_PUT] = "INSERT INTO sessions(sandbox_id, blob) VALUES($1,$2)"
	              " ON CONFLICT(sandbox_id) DO UPDATE SET blob=excluded.blob",
	[Q_SES_DEL] = "DELETE FROM sessions WHERE sandbox_id=$1",
	[Q_SVC_GET] = "SELECT spec FROM services WHERE sandbox_id=$1",
	[Q_SVC_DEL] = "DELETE FROM services WHERE sandbox_id=$1",
	[Q_SVC_PUT] = "INSERT INTO services(sandbox_id, spec) VALUES($1,$2)",
	[Q_RT_DEL] = "DELETE FROM public_routes WHERE sandbox_id=$1",
	[Q_RT_PUT] = "INSERT INTO public_routes(public_id, sandbox_id) VALUES($1,$2)",
	[Q_RT_FIND] = "SELECT sandbox_id FROM public_routes WHERE public_id=$1",
	[Q_FK_GET] = "SELECT child, error FROM fork_keys WHERE sandbox_id=$1 AND key=$2",
	[Q_FK_PUT] = "INSERT INTO fork_keys(sandbox_id, key, child, error) VALUES($1,$2,$3,$4)"
	             " ON CONFLICT(sandbox_id, key) DO UPDATE SET child=excluded.child,"
	             " error=excluded.error",
	[Q_TEAM_PUT] = "INSERT INTO teams(id, name, created_at) VALUES($1,$2,$3)"
	               " ON CONFLICT(id) DO UPDATE SET name=excluded.name",
	[Q_TEAM_GET] = "SELECT id, name, created_at FROM teams WHERE id=$1",
	[Q_TEAM_LIST] = "SELECT id, name, created_at FROM teams ORDER BY id",
	/* no row back: the team is missing or the id/hash is taken */
	[Q_KEY_CREATE] = "INSERT INTO api_keys(" KEY_COLS ") SELECT $1,$2,$3,$4,$5,0"
	                 " WHERE EXISTS(SELECT 1 FROM teams WHERE id=$3)"
	                 " ON CONFLICT DO NOTHING RETURNING 1",
	[Q_KEY_GET] = "SELECT " KEY_COLS " FROM api_keys WHERE id=$1",
	[Q_KEY_BYHASH] = "SELECT " KEY_COLS " FROM api_keys WHERE hash=$1",
	[Q_KEY_LIST] = "SELECT " KEY_COLS " FROM api_keys WHERE $1::text IS NULL OR team_id=$1"
	               " ORDER BY seq",
	/* a revoked key keeps its first time */
	[Q_KEY_REVOKE] = "UPDATE api_keys SET revoked_at=CASE WHEN revoked_at=0 THEN $2"
	                 " ELSE revoked_at END WHERE id=$1 RETURNING 1",
	[Q_VERSION] = "SELECT version FROM s0_schema",
	/* node leases and generation owners (meta.h "nodes and fencing") */
	[Q_NODE_ACQUIRE] = "INSERT INTO nodes(id, epoch, lease_until) VALUES($1, 1, $2)"
	                   " ON CONFLICT(id) DO UPDATE SET epoch = nodes.epoch + 1,"
	                   " lease_until = excluded.lease_until RETURNING epoch",
	[Q_NODE_RENEW] = "UPDATE nodes SET lease_until = $2 WHERE id = $1 AND epoch = $3"
	                 " AND lease_until > $4 RETURNING epoch",
	[Q_NODE_LIVE] = "SELECT 1 FROM nodes WHERE id = $1 AND epoch = $2 AND lease_until > $3",
	/* the row is the claimant's already, or its node's under an earlier
	 * (fenced) epoch and not newer, or older and either its own node's or
	 * under a lease no longer live; the claimant's lease is live */
	[Q_GEN_CLAIM] = "INSERT INTO gen_owners(sandbox_id, generation, node_id, epoch)"
	                " SELECT $1, $2, $3, $4 WHERE EXISTS(SELECT 1 FROM nodes WHERE id = $3"
	                " AND epoch = $4 AND lease_until > $5)"
	                " ON CONFLICT(sandbox_id) DO UPDATE SET generation = excluded.generation,"
	                " node_id = excluded.node_id, epoch = excluded.epoch"
	                " WHERE (gen_owners.generation = excluded.generation"
	                " AND gen_owners.node_id = excluded.node_id"
	                " AND gen_owners.epoch = excluded.epoch)"
	                " OR (gen_owners.node_id = excluded.node_id"
	                " AND gen_owners.epoch < excluded.epoch"
	                " AND gen_owners.generation <= excluded.generation)"
	                " OR (gen_owners.generation < excluded.generation"
	                " AND (gen_owners.node_id = excluded.node_id OR NOT EXISTS(SELECT 1"
	                " FROM nodes n WHERE n.id = gen_owners.node_id"
	                " AND n.epoch = gen_owners.epoch AND n.lease_until > $5)))"
	                " OR (gen_owners.node_id = ''"
	                " AND gen_owners.generation <= excluded.generation)"
	                " RETURNING 1",
	[Q_GEN_OWNER] = "SELECT g.sandbox_id, g.generation, g.node_id, g.epoch,"
	                " COALESCE(n.lease_until, 0) FROM gen_owners g LEFT JOIN nodes n"
	                " ON n.id = g.node_id WHERE g.sandbox_id = $1",
	/* a released generation keeps its number with node id '' */
	[Q_GEN_RELEASE] = "UPDATE gen_owners SET node_id = '' WHERE sandbox_id = $1"
	                  " AND node_id = $2",
	[Q_GEN_ORPHANS] = "SELECT g.sandbox_id FROM gen_owners g WHERE g.node_id <> ''"
	                  " AND NOT EXISTS(SELECT 1 FROM nodes n WHERE n.id = g.node_id"
	                  " AND n.lease_until > $1) ORDER BY g.sandbox_id",
	/* one row: the node's current epoch, and the sandbox's owner row held
	 * FOR SHARE (a concurrent claim waits for the transaction, or the
	 * transaction fails to serialise if the claim committed first) */
	[Q_GEN_CHECK] = "SELECT (SELECT epoch FROM nodes WHERE id = $2), g.node_id, g.generation"
	                " FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT node_id, generation"
	                " FROM gen_owners WHERE sandbox_id = $1 FOR SHARE) g ON true",
};
