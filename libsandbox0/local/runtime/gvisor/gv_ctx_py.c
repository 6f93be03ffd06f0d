/*
 * The Python REPL of a gvisor context (gv_int.h): a `repl` context whose
 * alias is "python" or "python3" (the official SDKs' default language of
 * `run`) runs python3 with a small driver instead of a shell. The driver
 * keeps one globals dict across execs; each exec is a block framed by a
 * random marker line before and after the code. The block runs as a
 * module (statements, then the value of a final expression printed as
 * its repr, as the interactive interpreter does); an exception prints
 * its traceback (the code's frames only) on stderr and the REPL lives on (KeyboardInterrupt too,
 * so INT interrupts the running code); then the marker is printed on
 * stdout and stderr, which is how gv_ctx.c knows the exec is done (each
 * in one write, marker and newline: under -u print() writes them apart,
 * and a newline coming after the exec ended would open the next one's
 * output).
 */
#include <string.h>

#include "common/internal.h"
#include "local/runtime/gvisor/gv_int.h"

static const char DRIVER[] =
	"import ast, sys, traceback\n"
	"g = {'__name__': '__main__', '__builtins__': __builtins__}\n"
	"rd = sys.stdin.readline\n"
	"while True:\n"
	"    m = rd()\n"
	"    if not m:\n"
	"        break\n"
	"    m = m.rstrip('\\n')\n"
	"    b = []\n"
	"    while True:\n"
	"        l = rd()\n"
	"        if not l or l.rstrip('\\n') == m:\n"
	"            break\n"
	"        b.append(l)\n"
	"    try:\n"
	"        t = ast.parse(''.join(b), '<stdin>')\n"
	"        e = t.body.pop() if t.body and isinstance(t.body[-1], ast.Expr) else None\n"
	"        exec(compile(t, '<stdin>', 'exec'), g)\n"
	"        if e is not None:\n"
	"            v = eval(compile(ast.Expression(e.value), '<stdin>', 'eval'), g)\n"
	"            if v is not None:\n"
	"                print(repr(v))\n"
	"    except SystemExit:\n"
	"        raise\n"
	"    except BaseException as x:\n"
	"        tb = None if isinstance(x, SyntaxError) else x.__traceback__.tb_next\n"
	"        traceback.print_exception(type(x), x, tb)\n"
	"    sys.stdout.flush()\n"
	"    sys.stderr.flush()\n"
	"    sys.stdout.write(m + '\\n')\n"
	"    sys.stderr.write(m + '\\n')\n";

static char *const PY_ARGV[] = {"python3", "-u", "-c", (char *)DRIVER, NULL};

bool s0__gv_ctx_py_alias(const char *alias)
{
	return alias && (!strcmp(alias, "python") || !strcmp(alias, "python3"));
}

char *const *s0__gv_ctx_py_argv(void)
{
	return PY_ARGV;
}

char *s0__gv_ctx_py_block(const char *code, const char *mark)
{
	size_t n = strlen(code);
	return s0__asprintf("%s\n%s%s%s\n", mark, code, n && code[n - 1] == '\n' ? "" : "\n", mark);
}
