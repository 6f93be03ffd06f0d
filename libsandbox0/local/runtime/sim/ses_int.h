/*
 * Internals of the supervised sessions (sessions.h): records, the
 * normalised spec, the journal. Used by ses*.c only.
 *
 * @threadsafety the registry lock is held by every caller.
 */
#ifndef S0_RUNTIME_SIM_SES_INT_H
#define S0_RUNTIME_SIM_SES_INT_H

#include <pthread.h>

#include "local/runtime/sim/sessions.h"
#include "local/runtime/sim/vars.h"

#define S0__SES_ID_MAX 40

/** Session phases (docs/wire.md §8.3). */
enum {
	SES_PENDING = 0, SES_STARTING, SES_RUNNING, SES_BACKOFF, SES_STOPPING,
	SES_STOPPED, SES_EXITED, SES_FAILED, SES_PAUSED, SES_SUSPENDED,
};

/** Why the engine is ending an attempt (ses.ending): not a request. */
enum { END_NONE = 0, END_IDLE, END_LIFETIME, END_READINESS };

/** Restart policies. */
enum { RESTART_NEVER = 0, RESTART_ON_FAILURE, RESTART_ALWAYS };

/** What the engine uses of a normalised spec (the JSON is kept too). */
typedef struct ses_spec {
	cJSON *json;        /**< normalised ExecutionSessionSpec (owned) */
	char *canon;        /**< its compact text: the idempotency comparison */
	char **argv;
	size_t argc;
	bool pty;
	bool want_running;
	int restart;        /**< RESTART_* */
	int64_t max_restarts, window_s, backoff0_ms, backoff_max_ms;
	bool recover_restart; /**< runtime_recovery: restart (else stop) */
	int64_t idle_s;     /**< lifecycle.idle_timeout_seconds (0: off) */
	int64_t max_life_s; /**< lifecycle.max_lifetime_seconds (0: off) */
	int64_t grace_s;    /**< lifecycle.stop_grace_period_seconds */
	int readiness;      /**< 0 process, 1 delay, 2 output */
	int64_t ready_delay_ms, ready_timeout_ms; /**< readiness delay_ms, timeout_ms (0: off) */
	char *ready_output;
	int64_t keep_bytes, keep_age_s;
} ses_spec;

/** One journal event: its JSON text. */
typedef struct ses_event {
	int64_t seq;
	int64_t at_ms;
	char *json;
	size_t bytes;
} ses_event;

/** The current attempt. */
typedef struct ses_attempt {
	char id[S0__SES_ID_MAX];
	int32_t number;
	int64_t generation;
	int32_t pid;
	int64_t started_at_ms, finished_at_ms;
	bool finished, has_exit;
	int32_t exit_code;
	char reason[32];
} ses_attempt;

/** An accepted input (POST …/inputs): its id, attempt and content digest. */
typedef struct ses_input {
	char *id;
	char attempt[S0__SES_ID_MAX];
	uint8_t digest[16]; /**< BLAKE2b of eof flag + bytes */
} ses_input;

/** Input ids remembered per session for replays (the oldest go first). */
#define S0__SES_INPUTS_KEEP 1024
/** Largest stdin backlog of an attempt (bytes queued, not yet read). */
#define S0__SES_STDIN_MAX ((size_t)64 << 10)

typedef struct ses {
	char id[S0__SES_ID_MAX];
	ses_spec spec;
	int64_t spec_version;
	int phase;
	int64_t generation;
	bool has_attempt;
	ses_attempt att;
	int32_t restart_count;
	int64_t *restarts_vt;    /**< virtual times of policy restarts (window) */
	size_t nrestarts;
	int64_t next_start_vt;   /**< BACKOFF: when the next attempt starts */
	bool ready;
	int64_t created_ms, updated_ms, activity_ms;
	char *idem_key;          /**< (nullable) */
	ses_event *ev;
	size_t nev, capev;
	int64_t next_seq;
	size_t ev_bytes;
	ses_input *inputs;       /**< second tier (ses_tier2.c): accepted inputs */
	size_t ninputs;
	int32_t term_rows, term_cols; /**< the attempt's terminal after a resize (0: spec's) */
	/* deadlines (blob S0SES003; -1: not known yet, taken at the next reconciliation) */
	int64_t created_vt;      /**< virtual ms of the creation: max_lifetime counts from it */
	int64_t att_start_vt;    /**< virtual ms the current attempt started (readiness) */
	uint8_t ending;          /**< END_*: the current attempt is being ended, and why */
	bool start_after_stop;   /**< a stopping attempt is replaced once it has exited */
} ses;

struct s0__sessions {
	pthread_mutex_t mu;
	s0_clock clock;
	int64_t generation;
	s0__sessions_sink sink;
	ses **v;
	size_t n, cap;
	bool has_procs;        /**< attempts run on procs, not on the calls' guest */
	s0__ses_procs procs;
};

/* ---- ses_procs.c: the process host of a call (the registry's procs, else the guest) ----
 * Each s0__ses_p_* is its guest.h namesake on the registry's procs when
 * set (sessions.h s0__sessions_set_procs), else on @p g; same errors. */
/** Whether a process host is there (procs set, or @p g given). */
bool s0__ses_host(const s0__sessions *s, const s0__guest *g);
/** s0__guest_vtime_ms(). */
int64_t s0__ses_p_vtime(s0__sessions *s, s0__guest *g);
/** s0__guest_spawn(). */
int s0__ses_p_spawn(s0__sessions *s, s0__guest *g, const s0__spawn_req *r, int32_t *pid,
                    s0_error **err);
/** s0__guest_proc_get(). */
int s0__ses_p_get(s0__sessions *s, s0__guest *g, int32_t pid, s0__proc_info *out, s0_error **err);
/** s0__guest_signal(). */
int s0__ses_p_signal(s0__sessions *s, s0__guest *g, int32_t pid, int signo, s0_error **err);
/** s0__guest_stop(). */
int s0__ses_p_stop(s0__sessions *s, s0__guest *g, int32_t pid, int64_t grace_ms, bool disown,
                   s0_error **err);
/** s0__guest_take_output(). */
int s0__ses_p_output(s0__sessions *s, s0__guest *g, int32_t pid, s0__buf *out, s0__buf *errb,
                     s0__buf *raw, s0_error **err);
/** s0__guest_write_input(). */
int s0__ses_p_input(s0__sessions *s, s0__guest *g, int32_t pid, const void *data, size_t len,
                    bool eof, s0_error **err);
/** s0__guest_reap(). */
void s0__ses_p_reap(s0__sessions *s, s0__guest *g, int32_t pid);

/* ---- ses_spec.c ---- */
/** Validate and normalise a spec body. @retval S0_EINVAL `invalid_request`. */
int s0__ses_spec_parse(const cJSON *body, ses_spec *out, s0_error **err);
/** Rebuild the engine view from a normalised spec's JSON text (deserialize). */
int s0__ses_spec_from_canon(const char *canon, ses_spec *out, s0_error **err);
/** Free a parsed spec. */
void s0__ses_spec_clear(ses_spec *sp);

/* ---- ses_journal.c ---- */
/**
 * Append an event (type; the rest nullable / negative = absent) with the
 * next seq, apply retention, and tell the sink.
 */
void s0__ses_event(s0__sessions *s, ses *x, const char *type, const char *stream,
                   const void *data, size_t len, const int32_t *exit_code, const char *reason);
/** Drop events past the retention limits. */
void s0__ses_retain(s0__sessions *s, ses *x);
/** First retained and last assigned seq. */
void s0__ses_cursor(const ses *x, int64_t *earliest, int64_t *latest);
/** Free every event of a session. */
void s0__ses_events_free(ses *x);

/* ---- ses_core.c ---- */
/** Wall-clock now (ms) of the registry's clock. */
int64_t s0__ses_now(s0__sessions *s);
/** The session @p id, or NULL after setting S0_ENOTFOUND `session_not_found`. */
ses *s0__ses_find(s0__sessions *s, const char *id, s0_error **err);
/** Start a new attempt in @p g (nullable: phase pending). */
int s0__ses_start_attempt(s0__sessions *s, ses *x, s0__guest *g, s0_error **err);
/** Reconcile one session with the guest. */
void s0__ses_sync_one(s0__sessions *s, ses *x, s0__guest *g);
/** Reconcile all (skipped when the guest's procd has stopped). */
void s0__ses_sync_all(s0__sessions *s, s0__guest *g);
/** Stop the attempt (TERM, KILL after the stop grace) and record the stop; the
 * phase stays `stopping` while the grace runs. */
void s0__ses_stop(s0__sessions *s, ses *x, s0__guest *g, const char *reason);
/** Tell the sink about a changed session. */
void s0__ses_changed(s0__sessions *s, ses *x);
/** Free a session record (not its process). */
void s0__ses_free(ses *x);
/** Whether a phase is terminal (exited, stopped, failed). */
bool s0__ses_terminal(int phase);
/** Whether the current attempt's process has not been seen to end. */
bool s0__ses_attempt_live(const ses *x);
/** Whether lifecycle.max_lifetime_seconds has passed at virtual time @p vt. */
bool s0__ses_lifetime_over(const ses *x, int64_t vt);

/* ---- ses_tier2.c ---- */
struct s0__ser;
struct s0__de;
/**
 * Take the registry lock, reconcile with @p g and find the session @p id;
 * *rc is S0_OK, or S0_ENOTFOUND (`session_not_found` set) with NULL. The
 * caller unlocks.
 */
ses *s0__ses_lock_find(s0__sessions *s, s0__guest *g, const char *id, int *rc, s0_error **err);
/**
 * S0_OK when the session's current attempt runs in @p g (and is
 * @p expected, nullable); else S0_ECONFLICT `session_conflict`.
 */
int s0__ses_need_running(s0__sessions *s, const ses *x, s0__guest *g, const char *expected,
                         s0_error **err);
/** Free the second-tier state of a session (inputs). */
void s0__ses_t2_free(ses *x);
/** Write / read the second-tier state of a session (blob "S0SES002" on). */
void s0__ses_t2_put(struct s0__ser *w, const ses *x);
void s0__ses_t2_get(struct s0__de *d, ses *x, bool *oom);

/* ---- ses_json.c ---- */
/** ExecutionSession JSON. NULL: OOM. */
cJSON *s0__ses_render(const ses *x);
/** Phase name. */
const char *s0__ses_phase_name(int phase);
/** Hand @p data out on success (an absent one is OOM); free it otherwise. */
int s0__ses_done(int rc, cJSON *data, cJSON **data_out, s0_error **err);
/** A `{key: true}` object. NULL: OOM. */
cJSON *s0__ses_flag(const char *key);

#endif
