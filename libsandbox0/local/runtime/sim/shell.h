/*
 * The built-in shell of the simulated runtime: what REPL contexts, cmd
 * contexts, background jobs and session attempts run. All its state —
 * variables, exported environment, cwd, $?, $!, open file descriptors,
 * where a sleeping script resumes — lives in the process record (process
 * memory), so a memory checkpoint carries it and a filesystem-only resume
 * loses it.
 *
 * THE LANGUAGE
 *
 *   script    := statement { (';' | '&' | newline) statement }
 *   statement := command { ('&&' | '||') command }     (`&` after it: background)
 *   command   := { NAME=value } word { word | redirection }
 *   redirection := [n]'>' word | [n]'>>' word | [n]'<' word | [n]'>&'m
 *
 * - Words: unquoted text, '…' (literal), "…" (with $ expansion and the
 *   escapes \" \\ \$ \`), and \c outside quotes. `#` at the start of a word
 *   comments to the end of the line.
 * - Expansion: $NAME, ${NAME}, $? (last status), $$ (this process), $!
 *   (last background PID). No field splitting and no globbing; an unquoted
 *   word that expands to nothing is dropped. Pipes (`|`), subshells,
 *   loops and functions are not part of the language (a syntax error,
 *   status 2).
 * - `NAME=value` alone sets a shell variable (exported if it was); before
 *   a command it exports NAME for that command only.
 * - Redirections: `>` truncates or creates, `>>` appends, `<` reads; n is
 *   0..9 (default 0 for `<`, 1 for the others); `2>&1` duplicates. Files
 *   are paths of the sandbox's files namespace (RootFS, or the tmpfs for
 *   /tmp and the other runtime-only mounts), relative to the cwd.
 * - `a && b` runs b when a succeeded, `a || b` when it failed.
 * - `statement &` starts a background job: a new process (child of the
 *   shell, a copy of its variables and cwd). A single command's
 *   redirections are opened once when the job starts and stay open with
 *   their offsets for the job's whole life; `sh -c 'S'` runs script S in
 *   the job. The job runs at once until it ends or sleeps; `$!` is its PID.
 * - Time is virtual: `sleep N` in the foreground advances the guest's
 *   virtual clock by N seconds (decimals allowed), running every
 *   background process that becomes due; past the exec timeout the exec
 *   stops with exec_timeout. In a background process `sleep` yields until
 *   virtual time reaches the wake-up, then the script goes on with the
 *   next command (a sleep nested in `sh -c` inside a background process
 *   returns at once).
 *
 * BUILTINS (status 0 on success, 1 on failure, 2 on usage errors; an
 * unknown command prints "sh: X: command not found" with status 127; a
 * path in argv[0] is reduced to its last component):
 *
 *   echo [-n] ARGS      printf FORMAT [ARGS]  (%s %d %i %u %x %o %c %%, \n \t \\;
 *                                              the format repeats for extra args)
 *   cat [FILES]         (no files: stdin)     read NAME  (one line of stdin; 1 at EOF)
 *                       (a session attempt's top-level `read` waits, in no virtual
 *                       time, until a whole line or EOF is queued on its stdin —
 *                       POST …/inputs — and its `cat` of stdin (no files, or `-`)
 *                       until EOF; a waiter stopped by STOP looks again on CONT;
 *                       elsewhere stdin reads never wait)
 *   ls [-a] [-l] [PATHS]                      pwd        cd [DIR]  (default $HOME or /)
 *   mkdir [-p] DIRS     rm [-r] [-f] PATHS    mv SRC DST   cp [-r] SRC DST
 *   touch FILES         chmod OCTAL PATHS
 *   export [NAME[=V]]   unset NAMES           env         true   false   exit [N]
 *   sh|bash -c SCRIPT   sleep SECONDS         ps          kill [-SIG|-n] PIDS
 *   alloc [-z] SIZE     grow the heap by SIZE bytes (K/M/G suffixes, powers of
 *                       1024) of heap-like content; -z: zero-filled (costs no
 *                       memory and no image bytes); fails past the guest's limit
 *   memtouch OFF LEN    overwrite heap bytes with fresh content (dirties chunks)
 *   memhash             print "<16 hex digits> <bytes>": the heap's fingerprint
 *   listen PORT         open a listening socket (dropped by any checkpoint)
 *   httpd [-f] -p PORT [-h DIR]
 *                       serve DIR (default: the cwd) over HTTP on PORT as a
 *                       daemon (procd holds the socket until the generation
 *                       ends; sim/httpd.h): GET/HEAD files, POST/PUT echo
 *   trap '' SIGS        ignore the signals (names or numbers; a job inherits it);
 *   trap - SIGS         back to the default; bare `trap` lists the ignored ones
 *                       ("trap -- '' N"). KILL and STOP cannot be trapped (status
 *                       1); any other action is a usage error (2). A session
 *                       attempt that ignores TERM ends with KILL after its
 *                       stop grace period (sessions.h).
 *   nc [-z] [-u] [-v] [-w SECS] HOST PORT
 *                       open a connection through the simulated network
 *                       (netpolicy.h) and close it; no data is exchanged.
 *                       Loopback reaches the guest's own listeners
 *                       ("Connection refused" when none listens); another
 *                       host is decided by the applied network policy:
 *                       allowed → status 0, denied → status 1 and "nc:
 *                       connect to HOST port PORT (tcp) failed: Operation
 *                       not permitted (network policy: WHY)"; before a
 *                       policy is applied → "Network is unreachable". -v
 *                       reports success on stderr; -z and -w are accepted.
 *
 * SIGNALS (kill, context and session signals): KILL ends a process
 * `killed` (exit 137); TERM, HUP, QUIT, USR1, USR2 end it `stopped` (exit
 * 128+n) unless ignored with `trap`; INT ends a script process the same way and is ignored by an
 * interactive (REPL) shell; STOP pauses (`paused`, nothing runs), CONT
 * resumes; WINCH is ignored. PID 1 (procd) cannot be signalled.
 *
 * A heap chunk that fails to load (a damaged lazily restored image) crashes
 * the process: state `crashed`, exit 139.
 */
#ifndef S0_RUNTIME_SIM_SHELL_H
#define S0_RUNTIME_SIM_SHELL_H

#include <stdbool.h>
#include <stdint.h>

#include "local/runtime/sim/guest_impl.h"

/** One execution of shell text in a process (guest lock held). */
typedef struct s0__sh_run {
	s0__guest *g;
	s0__proc *p;          /**< whose variables, cwd, fds and heap are used */
	s0__shout *sink;      /**< where pipe fds 1 and 2 write; NULL: p->io */
	bool fg;              /**< foreground: `sleep` advances virtual time */
	int64_t deadline_vt;  /**< fg: virtual time of the exec timeout; < 0: none */
	int depth;            /**< `sh -c` nesting (0 at the top) */
	s0__fd **base;        /**< (nullable) the fds commands start from (S0__NFD
	                           pointers); NULL: the process's own */
	bool yielded;         /**< out: a background `sleep` yielded (resume at pc) */
	bool again;           /**< out: with yielded, resume at the yielding command
	                           itself (a session's `read` waiting for input) */
	bool exited;          /**< out: `exit` ran at depth 0 */
	bool timed_out;       /**< out: the deadline passed */
	bool crashed;         /**< out: the process crashed (heap damage) */
	bool stop;            /**< internal: stop running the rest */
} s0__sh_run;

/**
 * Run @p text from statement *pc_stmt, command *pc_cmd (both 0 to start),
 * updating them when the run yields.
 * @return the exit status of the last command run (the `exit` status when
 *         r->exited).
 */
int s0__sh_exec(s0__sh_run *r, const char *text, uint32_t *pc_stmt, uint32_t *pc_cmd);

/**
 * The script a process started as argv runs: argv[2] for [sh|bash, -c,
 * S, …], else argv single-quoted and joined.
 * @return (transfer full) or NULL when out of memory.
 */
char *s0__sh_argv_script(const char *const *argv, size_t argc);

#endif
