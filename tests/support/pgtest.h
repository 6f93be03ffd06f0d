/*
 * The metadata store of a parametrised test run: $S0_TEST_META, when set,
 * is the URL of a PostgreSQL database the tests may create databases
 * through (scripts/test.d/47-postgres.sh starts a throwaway cluster and
 * sets it). Each data directory gets its own database, named from the
 * directory's path, so a crasher and the test that reopens its directory
 * find the same one; it is dropped when the directory is removed.
 * Plain C and libpq (no check): the crash programs use it too.
 */
#ifndef S0_TEST_PGTEST_H
#define S0_TEST_PGTEST_H

#include <stdbool.h>

/* The metadata URL for data directory dir (malloc'd; free it): NULL when
 * $S0_TEST_META is unset (SQLite in the directory). The database is
 * created when missing. Aborts the process on a failure to create it, and
 * when $S0_TEST_META_REQUIRED is set without $S0_TEST_META (a run meant for
 * PostgreSQL never falls back to SQLite). */
char *s0_test_meta_url(const char *dir);
/* The database name of dir: "s0t_" and a 64-bit FNV-1a hash of the path
 * in hex (out holds 24 bytes). */
void s0_test_meta_dbname(const char *dir, char out[24]);
/* Drop the database of dir (no error when absent, or when $S0_TEST_META
 * is unset). Connections still open to it are ended. */
void s0_test_meta_drop(const char *dir);
/* Run one SQL statement on the database at url; true when it succeeded and
 * changed at least one row. A one-byte SQLite blob literal x'NN' in sql is
 * written as chr(NN) (the same byte as text), so damage tests run alike on
 * both stores. */
bool s0_test_meta_exec(const char *url, const char *sql);
/* Run `$S0_TEST_PG_CTL VERB $S0_TEST_PG_DIR` (scripts/pg-cluster: verb
 * "stop" or "start"): the test part's control of the server, for outage
 * tests. false when either is unset or the command failed. */
bool s0_test_pg_ctl(const char *verb);

#endif
