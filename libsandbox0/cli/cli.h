/*
 * The s0 command line (docs/architecture.md; docs/decisions.md; docs/wire.md §1.2, §5): shared
 * types.
 *
 * The program uses the public API only (<sandbox0/sandbox0.h> and
 * <sandbox0/server.h>) plus libyaml for YAML output and config files. Each
 * command group lives in its own file (cmd_*.c); this header is what they
 * share: the parsed command line, the connection, output and errors.
 *
 * Exit codes: 0 success, 1 an operation failed ("Error <doing x>: <why>" on
 * stderr), 2 a usage error (the reason, then a usage line, on stderr).
 */
#ifndef S0_CLI_H
#define S0_CLI_H

#include <sandbox0/sandbox0.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* Output formats of -o/--output. */
enum { OUT_TABLE = 0, OUT_JSON = 1, OUT_YAML = 2 };

/* Kinds of flag values. */
enum { FLAG_BOOL = 0, FLAG_STR = 1, FLAG_INT = 2, FLAG_LIST = 3 };

/* One flag a command accepts. */
typedef struct cli_flag {
	const char *name;  /* long name without "--" */
	char short_name;   /* single-letter alias, 0 = none */
	int kind;          /* FLAG_* */
	const char *arg;   /* value placeholder for help ("SEC"), NULL for bools */
	const char *help;
} cli_flag;

typedef struct cli cli;

/* A node of the command tree: a group (children) or a leaf (run). */
typedef struct cli_cmd {
	const char *name;
	const char *args;    /* positional arguments for the usage line */
	const char *summary;
	const cli_flag *flags; /* terminated by a zero entry; NULL = none */
	int min_args, max_args;
	/* > 0: words after this many positional arguments are never flags (a
	 * guest command's own options: `exec ID sh -c …`) */
	int flags_end_after;
	int (*run)(cli *c);
	const struct cli_cmd *const *children; /* NULL-terminated; NULL for leaves */
	const char *details; /* extra help text, nullable */
} cli_cmd;

/* A parsed flag value. */
typedef struct cli_opt {
	const char *name; /* the flag's long name (static) */
	const char *value; /* argv string, or "true" for a bare bool */
} cli_opt;

/* Everything one run of the program shares. */
struct cli {
	/* the command line */
	const cli_cmd *path[8]; /* root .. leaf */
	int depth;
	cli_opt opts[64];
	int nopts;
	const char *args[256];
	int nargs;

	/* resolved global settings */
	int format;          /* OUT_* */
	bool format_set;     /* -o given on the command line */
	bool stdout_tty, stderr_tty;

	/* the connection, made on demand by cli_connect() */
	s0_client *client;
	s0_local *local;     /* --local DIR: the embedded backend */
};

/* ---- command line (args.c) ---- */
int cli_parse(cli *c, const cli_cmd *root, int argc, char **argv);
const char *opt_str(const cli *c, const char *name); /* last value or NULL */
bool opt_has(const cli *c, const char *name);
bool opt_bool(const cli *c, const char *name);
/* the n-th value of a repeatable flag, NULL past the end */
const char *opt_nth(const cli *c, const char *name, int n);
/* parse an integer flag in [lo, hi]; usage error (returns -1) otherwise */
int opt_int(cli *c, const char *name, long long lo, long long hi, long long *out);
/* print "Error: <msg>" and the usage line of the current command; returns 2 */
int cli_usage_error(const cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_print_help(const cli *c, FILE *f);
void cli_print_usage_line(const cli *c, FILE *f);

/* ---- connection (connect.c, localsrv.c) ---- */
/* Make c->client per docs/wire.md §1.2 and docs/decisions.md; prints the error itself. */
int cli_connect(cli *c);
void cli_disconnect(cli *c);
/*
 * Pause every running sandbox of @p local (only those with auto_resume on
 * when @p only_auto_resume) filesystem-only (at most @p timeout_ms each) so its files survive s0_local_close, which abandons
 * live runtimes. One line per sandbox on @p log when not NULL; failures go
 * to stderr. Returns the number of sandboxes that could not be paused.
 */
int cli_pause_running(s0_local *local, bool only_auto_resume, int64_t timeout_ms, FILE *log);
/* default per-user data directory: $S0_DATA_DIR or ~/.local/share/sandbox0 */
char *cli_default_data_dir(void);
/* find or start the per-user local server; *url_out and *token_out are malloc'd */
int localsrv_ensure(const char *data_dir, char **url_out, char **token_out, char **why_out);
/* read <data>/cli-token (NULL when absent); *why_out on a bad file */
char *localsrv_read_token(const char *data_dir, char **why_out);

/* ---- output (output.c, yaml_out.c) ---- */
/* print a JSON value as -o json (2-space indent) or -o yaml */
int out_value(const cli *c, const cj *v);
int out_yaml(const cj *v, FILE *f);
/* a raw JSON object text from the library, re-indented, or as YAML */
int out_json_text(const cli *c, const char *json);
/* "Error <doing>: <message>" for a library error; frees err; returns 1 */
int cli_fail(const char *doing, s0_error *err, int rc);
/* "Error <doing>: <printf message>"; returns 1 */
int cli_failf(const char *doing, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* one-line text of a library error (Go SDK style for API errors) */
char *cli_error_text(const s0_error *err, int rc);
/* "2006-01-02 15:04:05" in UTC, "-" for 0 */
void fmt_time(int64_t unix_ms, char *buf, size_t len);
/* RFC 3339 UTC with milliseconds, "" for 0 */
void fmt_rfc3339(int64_t unix_ms, char *buf, size_t len);
/* parse an RFC 3339 timestamp; -1 when malformed */
int parse_rfc3339(const char *s, int64_t *unix_ms_out);

/* Aligned text tables like the official CLI's borderless ones. */
typedef struct tbl {
	char **cells;
	size_t ncols, nrows, cap;
} tbl;
void tbl_init(tbl *t, size_t ncols);
void tbl_add(tbl *t, ...); /* ncols strings (NULL prints "") */
void tbl_print(tbl *t, FILE *f);
void tbl_free(tbl *t);
/* JSON object text json as -o json/yaml asks, or else table t (its titles
 * added) with one row per item of json's array `key` (added by row) and a
 * "Total: N" line; frees t's cells either way; returns the exit code */
int out_rows(const cli *c, const char *json, const char *key, tbl *t,
             void (*row)(tbl *t, const cj *item));
/* a two-column "Key:  value" table */
void kv_add(tbl *t, const char *key, const char *value);

/* ---- commands ---- */
extern const cli_cmd cmd_root;
extern const cli_cmd cmd_sandbox_create, cmd_sandbox_get, cmd_sandbox_list, cmd_sandbox_status,
	cmd_sandbox_update, cmd_sandbox_delete, cmd_sandbox_refresh;
extern const cli_cmd cmd_sandbox_pause, cmd_sandbox_resume, cmd_sandbox_fork;
extern const cli_cmd cmd_sandbox_snapshot;
extern const cli_cmd cmd_sandbox_files;
extern const cli_cmd cmd_files_watch; /* cmd_watch.c */
extern const cli_cmd cmd_sandbox_exec, cmd_sandbox_run;
extern const cli_cmd cmd_sandbox_attach; /* cmd_attach.c */
extern const cli_cmd cmd_sandbox_service; /* cmd_service.c */
extern const cli_cmd cmd_serve, cmd_demo;
extern const cli_cmd cmd_serve_keys, cmd_template;

/* the Sandbox table of `get`, `update` and `resume --wait` */
void print_sandbox_table(const s0_sandbox_info *sb, FILE *f);
/* a FileInfo as the API's JSON object */
cj *file_info_json(const s0_file_info *fi);

/* ---- small helpers (util.c) ---- */
void out_of_memory(void); /* "s0: out of memory", exit */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* read a whole file ("-" = stdin); NULL with errno set on failure */
char *read_all(const char *path, size_t *len_out);
/* write a whole file atomically (temp + rename) with @mode */
int write_file_atomic(const char *path, const void *data, size_t len, unsigned mode);
int mkdir_p(const char *path, unsigned mode);
double mono_now_s(void);

#endif
