/*
 * Internals of the built-in shell (shell.h): the parsed program, word
 * expansion, the per-command file-descriptor view, and the builtins'
 * I/O helpers. Used by sh_*.c and bi_*.c only.
 *
 * @threadsafety guest lock held throughout.
 */
#ifndef S0_RUNTIME_SIM_SH_INT_H
#define S0_RUNTIME_SIM_SH_INT_H

#include "local/runtime/sim/shell.h"

/** A raw word: a slice of the program text (quotes still in it). */
typedef struct sh_word {
	const char *s;
	size_t n;
} sh_word;

/** Redirection operators. */
enum { SH_R_IN = 1, SH_R_OUT, SH_R_APPEND, SH_R_DUP };

typedef struct sh_redir {
	int fd;        /**< 0..9 */
	int op;        /**< SH_R_* */
	sh_word target;/**< file word (not for DUP) */
	int dupfd;     /**< DUP: the source fd */
} sh_redir;

typedef struct sh_cmd {
	sh_word *w;
	size_t nw, capw;
	sh_redir *r;
	size_t nr, capr;
} sh_cmd;

/** Connectors between the commands of a statement. */
enum { SH_AND = 1, SH_OR = 2 };

typedef struct sh_stmt {
	sh_cmd *c;
	size_t nc, capc;
	uint8_t *ops;  /**< ops[i] joins c[i] and c[i+1] */
	bool bg;       /**< ended by `&` */
	size_t lo, hi; /**< source text of the statement (without `&`) */
} sh_stmt;

typedef struct sh_prog {
	sh_stmt *s;
	size_t n, cap;
} sh_prog;

/**
 * Parse @p text.
 * @return 0; -1 on a syntax error (*msg: a static description); -2 when
 *         out of memory. The program borrows @p text.
 */
int s0__sh_parse(const char *text, sh_prog *out, const char **msg);
/** Whether @p text fails to parse only because it stops early (open quote, trailing && or ||). */
bool s0__sh_incomplete(const char *text);
/** Free a parsed program. */
void s0__sh_prog_free(sh_prog *p);

/**
 * Expand one word in the run's process (quotes removed, $ expanded).
 * @param[out] drop true when the word was unquoted and expanded to nothing.
 * @return (transfer full) the text, or NULL when out of memory.
 */
char *s0__sh_expand(s0__sh_run *r, sh_word w, bool *drop);

/** A write not yet applied to a file descriptor. */
typedef struct sh_pending {
	s0__fd *fd;
	s0__buf buf;
} sh_pending;

/** What one command runs with. */
typedef struct sh_cmdctx {
	s0__sh_run *r;
	s0__fd *view[S0__NFD]; /**< the fds the command sees */
	s0__fd temp[S0__NFD];  /**< fds opened by its redirections */
	sh_pending pend[S0__NFD];
	size_t npend;
	bool oom;
} sh_cmdctx;

/** A builtin: argv[0] is its name. @return the exit status. */
typedef int (*sh_builtin_fn)(sh_cmdctx *x, int argc, char **argv);

/** The builtin called @p name, or NULL. */
sh_builtin_fn s0__sh_builtin(const char *name);

/** One builtin of a group's table. */
typedef struct sh_bi {
	const char *name;
	sh_builtin_fn fn;
} sh_bi;

/** The builtin tables (bi_text.c, bi_files.c, bi_copy.c, bi_env.c, bi_proc.c, bi_net.c); *n entries. */
const sh_bi *s0__bi_text(size_t *n);
const sh_bi *s0__bi_files(size_t *n);
const sh_bi *s0__bi_copy(size_t *n);
const sh_bi *s0__bi_env(size_t *n);
const sh_bi *s0__bi_proc(size_t *n);
const sh_bi *s0__bi_net(size_t *n);

/* ---- sh_io.c ---- */
/** Write to fd @p fd of the command (pipes at once, files at flush). -1: not writable. */
int s0__sh_write(sh_cmdctx *x, int fd, const void *data, size_t len);
/** printf to fd @p fd. */
int s0__sh_printf(sh_cmdctx *x, int fd, const char *fmt, ...) S0__PRINTF(3, 4);
/** An error line on fd 2. */
void s0__sh_errf(sh_cmdctx *x, const char *fmt, ...) S0__PRINTF(2, 3);
/** The words for an s0_error of a files operation ("No such file or directory"…). */
const char *s0__sh_strerror(const s0_error *e);
/** Read fd @p fd to its end into @p out. -1 after printing an error. */
int s0__sh_read_all(sh_cmdctx *x, int fd, s0__buf *out);
/** Read one line (without its newline) of fd @p fd; *eof when nothing was left. */
int s0__sh_read_line(sh_cmdctx *x, int fd, s0__buf *line, bool *eof);
/**
 * Canonical absolute path of @p word relative to the cwd.
 * @return (transfer full) or NULL after printing "@p who: word: error".
 */
char *s0__sh_path(sh_cmdctx *x, const char *who, const char *word);
/** Apply pending file writes. -1 after printing an error. */
int s0__sh_flush(sh_cmdctx *x);
/** The files namespace, or NULL after printing "@p who: filesystem unavailable". */
const struct s0__files_ns *s0__sh_ns(sh_cmdctx *x, const char *who);
/** Set up the fds of a command from its redirections. -1 after printing an error. */
int s0__sh_redirect(sh_cmdctx *x, const sh_cmd *c);
/** Release the fds opened by the redirections and the pending buffers. */
void s0__sh_cmdctx_clear(sh_cmdctx *x);
/** Report heap damage met by a builtin: the process crashes. */
void s0__sh_crash(sh_cmdctx *x, s0_error *e);
/** Parse a size with K/M/G suffixes (powers of 1024). -1 when bad. */
int s0__sh_parse_size(const char *s, uint64_t *out);

/* ---- sh_exec.c ---- */
/** Start statement @p st of the program in @p text as a background job. */
int s0__sh_spawn_job(s0__sh_run *r, const char *text, const sh_stmt *st);

#endif
