/*
 * A real local backend for the fuzz targets and the router soak: a data
 * directory under $TMPDIR, a manual clock, a small RootFS, and fixture
 * sandboxes (one running, one paused, one snapshot) whose ids replace the
 * placeholders @0, @1 and @S in fuzzed paths, queries and bodies. The state
 * is bounded by fz_engine_tick(): every `reset_every` requests the backend is
 * closed, its directory removed and a fresh one opened.
 *
 * Not thread-safe: one fuzzing thread drives it.
 */
#ifndef S0_FZ_ENGINE_H
#define S0_FZ_ENGINE_H

#include <stddef.h>

#include "local/api/router.h"
#include "sandbox0/local.h"

typedef struct fz_engine {
	char *dir;          /* data directory (owned) */
	s0_local *local;    /* the open backend */
	s0__engine *engine; /* borrowed from local */
	char ids[3][64];    /* @0 running sandbox, @1 paused sandbox, @S snapshot */
	long reset_every;   /* requests between resets; 0 = never */
	long since_reset;   /* requests since the last (re)open */
} fz_engine;

/* Open a backend and make its fixtures; aborts the process on failure (a
 * harness that cannot set up must not report "no findings"). */
void fz_engine_open(fz_engine *f, long reset_every);
/* Close the backend and remove its directory. */
void fz_engine_close(fz_engine *f);
/* Use an already open backend (no fixtures made, no resets; the caller
 * fills ids and closes local itself). */
void fz_engine_adopt(fz_engine *f, s0_local *local);
/* Count one request; reopen a fresh backend when reset_every is reached. */
void fz_engine_tick(fz_engine *f);

/*
 * Copy n bytes of s into a new NUL-terminated string with @0/@1/@S replaced
 * by the fixture ids. *out_len receives the length (the text may hold NULs).
 */
char *fz_substitute(const fz_engine *f, const char *s, size_t n, size_t *out_len);

/*
 * Route one request (s0__router_handle_raw, team "team_a" unless team is
 * given; "" = no team) and check the response's invariants: a status in
 * 100..599, Content-Type and X-Request-ID headers, and a JSON body that
 * parses with a boolean "success" whenever Content-Type says JSON. Aborts on
 * a broken invariant. Returns the status.
 */
int fz_route(fz_engine *f, const char *team, const s0__http_request *req);

/* A request written as "METHOD PATH [BODY]" (placeholders allowed),
 * routed and checked like fz_route(); for fixtures and soak loops. */
int fz_call(fz_engine *f, const char *method, const char *path, const char *body);

/* fz_call() that also copies the string data.<key> of the reply into out
 * ("" when absent). Returns the status. */
int fz_call_get(fz_engine *f, const char *method, const char *path, const char *body,
                const char *key, char out[64]);

/* Current resident set size of this process in KiB (from /proc/self/statm). */
long fz_rss_kib(void);

#endif
