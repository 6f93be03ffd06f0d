/*
 * Running the s0 program from tests: spawn it with a controlled
 * environment, capture stdout, stderr and the exit status (bounded in
 * time), build a transcript, normalise what varies between runs (ids,
 * timestamps, ports, durations) and compare it with a golden file.
 *
 * The binary comes from $S0_CLI and the golden files from $S0_CLI_GOLDEN
 * (set by tests/unit/cli/meson.build). S0_UPDATE_GOLDEN=1 rewrites the
 * golden files instead of comparing.
 */
#ifndef S0_CLI_HARNESS_H
#define S0_CLI_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct cli_run {
	int status;  /* exit status, or 128 + signal, or -1 on a timeout */
	char *out;   /* stdout (NUL-terminated) */
	char *err;   /* stderr */
} cli_run;

/* The environment every run gets: HOME and S0_DATA_DIR point into @home;
 * SANDBOX0_* and S0_* of the caller are removed. */
void h_env_reset(const char *home);
/* Add or replace NAME=value in that environment (value NULL removes it). */
void h_env_set(const char *name, const char *value);

/* Run `s0 <argv…>` (NULL-terminated), feeding @stdin_data (nullable). */
cli_run h_run(const char *const *argv, const char *stdin_data);
void h_run_free(cli_run *r);

/* A transcript of command runs, normalised, compared against golden/<name>.txt. */
typedef struct transcript transcript;
transcript *t_new(const char *name);
/* Run a command, append "$ s0 …", exit status, stdout and stderr; returns the run
 * (owned by the caller). */
cli_run t_cmd(transcript *t, const char *const *argv);
void t_note(transcript *t, const char *text);
/* Normalise and compare (or rewrite with S0_UPDATE_GOLDEN=1); false on a mismatch,
 * after printing where the actual text was written. */
bool t_check(transcript *t);
void t_free(transcript *t);

/* Normalise one text: ids (sb_, snap_, rt_, pod-) numbered by first sight
 * within @t, RFC 3339 and table timestamps, loopback ports, durations. */
char *h_normalise(transcript *t, const char *text);

/* The value of "key": "value" in a JSON text (first match), malloc'd or NULL. */
char *h_json_str(const char *json, const char *key);

/* A started `s0 serve` (stdout piped), its URL and printed key. */
typedef struct serve_proc {
	pid_t pid;
	int out_fd;
	char url[128];
	char key[128];
	char *out; /* stdout so far */
} serve_proc;
/* Start it on @data (extra args NULL-terminated, nullable); false when it did
 * not print "Listening on" within 30 s. */
bool h_serve_start(serve_proc *s, const char *data, const char *const *extra);
/* SIGTERM, then wait (bounded) for the exit; returns the exit status. */
int h_serve_stop(serve_proc *s);

/* Raw HTTP/1.1 request to @url with an optional Authorization header value;
 * returns the status code (0 on failure). */
int h_http(const char *url, const char *method, const char *path, const char *auth,
           const char *body);

/* A TCP connection to the server of @url (-1 on failure), and the status code
 * of the response read from it (0 when none came within 10 s). */
int h_connect(const char *url);
int h_read_status(int fd);

/* Start `s0 <argv…>` with stdout on a pipe (*out_fd, the caller closes it) and
 * stderr dropped; returns the pid (wait for it with h_wait_gone / waitpid). */
pid_t h_spawn(const char *const *argv, int *out_fd);
/* Read fd until what was read contains @want (malloc'd text), or NULL (and
 * what came printed) after timeout_ms. */
char *h_read_until(int fd, const char *want, int timeout_ms);

/* Wait (bounded, pidfd) until process @pid is gone; false on a timeout. */
bool h_wait_gone(pid_t pid, int timeout_ms);

/* A TCP port on 127.0.0.1 nobody listens on (bound, then closed). */
int h_closed_port(void);

#endif
