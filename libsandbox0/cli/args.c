/*
 * Command-line parsing: a command tree walked by the positional words, with
 * flags allowed anywhere after the command they belong to (cobra-style: a
 * flag of a group applies to its subcommands, the root's flags everywhere),
 * "--flag value", "--flag=value", "-f value", "-fvalue", and "--" to end
 * the flags.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *opt_str(const cli *c, const char *name)
{
	for (int i = c->nopts - 1; i >= 0; i--)
		if (!strcmp(c->opts[i].name, name))
			return c->opts[i].value;
	return NULL;
}

bool opt_has(const cli *c, const char *name)
{
	return opt_str(c, name) != NULL;
}

bool opt_bool(const cli *c, const char *name)
{
	const char *v = opt_str(c, name);
	return v && !strcmp(v, "true");
}

const char *opt_nth(const cli *c, const char *name, int n)
{
	for (int i = 0; i < c->nopts; i++)
		if (!strcmp(c->opts[i].name, name) && n-- == 0)
			return c->opts[i].value;
	return NULL;
}

int opt_int(cli *c, const char *name, long long lo, long long hi, long long *out)
{
	const char *v = opt_str(c, name);
	char *end = NULL;
	if (!v)
		return 0;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (!*v || *end || errno || n < lo || n > hi) {
		cli_usage_error(c, "invalid argument \"%s\" for \"--%s\": want an integer in %lld..%lld",
		                v, name, lo, hi);
		return -1;
	}
	*out = n;
	return 1;
}

static void command_path(const cli *c, FILE *f)
{
	for (int i = 0; i < c->depth; i++)
		fprintf(f, "%s%s", i ? " " : "", c->path[i]->name);
}

void cli_print_usage_line(const cli *c, FILE *f)
{
	const cli_cmd *cmd = c->path[c->depth - 1];
	fputs("Usage: ", f);
	command_path(c, f);
	if (cmd->children)
		fputs(cmd->run ? " [<command>]" : " <command>", f);
	if (cmd->args && *cmd->args)
		fprintf(f, " %s", cmd->args);
	fputs(" [flags]\n", f);
}

int cli_usage_error(const cli *c, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("Error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_print_usage_line(c, stderr);
	fputs("Run '", stderr);
	command_path(c, stderr);
	fputs(" --help' for more information.\n", stderr);
	return CLI_EXIT_USAGE;
}

static void print_flags(const cli_flag *flags, FILE *f)
{
	for (const cli_flag *fl = flags; fl && fl->name; fl++) {
		char left[64];
		if (fl->short_name)
			snprintf(left, sizeof left, "-%c, --%s%s%s", fl->short_name, fl->name,
			         fl->arg ? " " : "", fl->arg ? fl->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", fl->name, fl->arg ? " " : "",
			         fl->arg ? fl->arg : "");
		fprintf(f, "  %-30s %s\n", left, fl->help);
	}
}

void cli_print_help(const cli *c, FILE *f)
{
	const cli_cmd *cmd = c->path[c->depth - 1];
	fprintf(f, "%s\n\n", cmd->summary);
	cli_print_usage_line(c, f);
	if (cmd->children) {
		fputs("\nCommands:\n", f);
		for (const cli_cmd *const *ch = cmd->children; *ch; ch++)
			fprintf(f, "  %-10s %s\n", (*ch)->name, (*ch)->summary);
	}
	if (cmd->flags && cmd->flags->name && c->depth > 1) {
		fputs("\nFlags:\n", f);
		print_flags(cmd->flags, f);
	}
	for (int i = c->depth - 2; i >= 1; i--)
		if (c->path[i]->flags && c->path[i]->flags->name) {
			fprintf(f, "\nFlags of \"%s\":\n", c->path[i]->name);
			print_flags(c->path[i]->flags, f);
		}
	fputs(c->depth > 1 ? "\nGlobal Flags:\n" : "\nFlags:\n", f);
	print_flags(c->path[0]->flags, f);
	if (cmd->details)
		fprintf(f, "\n%s", cmd->details);
}

/* The flag @name (long) or @short_name of the command path, leaf first. */
static const cli_flag *find_flag(const cli *c, const char *name, size_t name_len, char short_name)
{
	for (int i = c->depth - 1; i >= 0; i--)
		for (const cli_flag *fl = c->path[i]->flags; fl && fl->name; fl++)
			if (name ? strlen(fl->name) == name_len && !strncmp(fl->name, name, name_len)
			         : fl->short_name == short_name)
				return fl;
	return NULL;
}

static int add_opt(cli *c, const cli_flag *fl, const char *value)
{
	if (c->nopts == (int)(sizeof c->opts / sizeof c->opts[0]))
		return cli_usage_error(c, "too many flags");
	if (fl->kind == FLAG_BOOL) {
		if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "t"))
			value = "true";
		else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "f"))
			value = "false";
		else
			return cli_usage_error(c, "invalid argument \"%s\" for \"--%s\": want true or false",
			                       value, fl->name);
	}
	c->opts[c->nopts].name = fl->name;
	c->opts[c->nopts].value = value;
	c->nopts++;
	return 0;
}

/* One flag at argv[*i]; may consume argv[*i + 1]. */
static int parse_flag(cli *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	const cli_flag *fl;
	const char *value = NULL;
	if (a[1] == '-') {
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		fl = find_flag(c, name, len, 0);
		if (!fl)
			return cli_usage_error(c, "unknown flag: --%.*s", (int)len, name);
		if (eq)
			value = eq + 1;
	} else {
		fl = find_flag(c, NULL, 0, a[1]);
		if (!fl)
			return cli_usage_error(c, "unknown shorthand flag: '%c' in %s", a[1], a);
		if (a[2] && fl->kind == FLAG_BOOL)
			return cli_usage_error(c, "unknown shorthand flag: '%c' in %s", a[2], a);
		if (a[2])
			value = a[2] == '=' ? a + 3 : a + 2;
	}
	if (!value && fl->kind == FLAG_BOOL)
		value = "true";
	if (!value) {
		if (*i + 1 >= argc)
			return cli_usage_error(c, "flag needs an argument: --%s", fl->name);
		value = argv[++*i];
	}
	return add_opt(c, fl, value);
}

int cli_parse(cli *c, const cli_cmd *root, int argc, char **argv)
{
	bool flags_done = false;
	c->path[0] = root;
	c->depth = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!flags_done && !strcmp(a, "--")) {
			flags_done = true;
			continue;
		}
		if (!flags_done && a[0] == '-' && a[1]) {
			int rc = parse_flag(c, argc, argv, &i);
			if (rc)
				return rc;
			continue;
		}
		const cli_cmd *cur = c->path[c->depth - 1];
		if (cur->children && c->nargs == 0) {
			const cli_cmd *next = NULL;
			for (const cli_cmd *const *ch = cur->children; *ch; ch++)
				if (!strcmp((*ch)->name, a))
					next = *ch;
			if (!next) {
				fflush(stdout);
				fprintf(stderr, "Error: unknown command \"%s\" for \"", a);
				for (int d = 0; d < c->depth; d++)
					fprintf(stderr, "%s%s", d ? " " : "", c->path[d]->name);
				fputs("\"\n", stderr);
				cli_print_usage_line(c, stderr);
				fputs("\nCommands:\n", stderr);
				for (const cli_cmd *const *ch = cur->children; *ch; ch++)
					fprintf(stderr, "  %-10s %s\n", (*ch)->name, (*ch)->summary);
				return CLI_EXIT_USAGE;
			}
			if (c->depth == (int)(sizeof c->path / sizeof c->path[0]))
				return cli_usage_error(c, "commands nested too deeply");
			c->path[c->depth++] = next;
			continue;
		}
		if (c->nargs == (int)(sizeof c->args / sizeof c->args[0]))
			return cli_usage_error(c, "too many arguments");
		c->args[c->nargs++] = a;
		if (cur->flags_end_after > 0 && c->nargs >= cur->flags_end_after)
			flags_done = true;
	}
	return 0;
}
