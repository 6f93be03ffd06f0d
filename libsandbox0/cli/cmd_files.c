/*
 * `s0 sandbox files -s <id> ls|cat|stat|mkdir|rm|mv|upload|download|write`
 * (docs/wire.md §3.9, §5); `watch` is cmd_watch.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const cli_flag files_flags[] = {
	{"sandbox-id", 's', FLAG_STR, "ID", "sandbox ID (required)"},
	{0},
};

/* The -s sandbox, or a usage error. */
static const char *sandbox_id(cli *c)
{
	const char *id = opt_str(c, "sandbox-id");
	if (!id || !*id)
		cli_usage_error(c, "required flag \"sandbox-id\" not set");
	return id && *id ? id : NULL;
}

#define PREAMBLE                                  \
	const char *id = sandbox_id(c);           \
	if (!id)                                  \
		return CLI_EXIT_USAGE;            \
	s0_error *err = NULL;                     \
	int rc = cli_connect(c);                  \
	if (rc)                                   \
		return rc

/*
 * With --local the runtime lives in this process only (docs/decisions.md): when
 * the command exits, every running sandbox with auto-resume on is paused
 * filesystem-only (cli_disconnect) so what its files gained is committed,
 * and the next command's request resumes it. One with auto-resume off is
 * not paused (nothing would resume it) and is recovered from its last
 * committed RootFS on the next open. Say so after a change.
 */
static void local_note(cli *c)
{
	if (c->local)
		fprintf(stderr, "note: with --local the sandbox is paused when this command ends and "
		                "the next command resumes it; with auto-resume off, changes since its "
		                "last pause are not kept\n");
}

static const char *type_name(int type)
{
	return type == S0_FILE_TYPE_FILE ? "file" : type == S0_FILE_TYPE_DIR ? "dir" :
	       type == S0_FILE_TYPE_SYMLINK ? "symlink" : "";
}

/* ---- ls ---- */

static int run_ls(cli *c)
{
	PREAMBLE;
	const char *path = c->nargs ? c->args[0] : "/";
	s0_file_list *l = NULL;
	rc = s0_files_list(c->client, id, path, &l, &err);
	if (rc < 0)
		return cli_fail("listing files", err, rc);
	size_t n = s0_file_list_length(l);
	if (c->format != OUT_TABLE) {
		cj *arr = cj_array();
		for (size_t i = 0; i < n; i++)
			cj_push(arr, file_info_json(s0_file_list_at(l, i)));
		rc = out_value(c, arr);
		cj_free(arr);
	} else if (!n) {
		printf("No files found.\n");
	} else {
		tbl t;
		tbl_init(&t, 4);
		tbl_add(&t, "NAME", "TYPE", "SIZE", "MODIFIED");
		for (size_t i = 0; i < n; i++) {
			const s0_file_info *fi = s0_file_list_at(l, i);
			char size[32], mtime[32], *type;
			const char *target = s0_file_info_link_target(fi);
			snprintf(size, sizeof size, "%lld", (long long)s0_file_info_size_bytes(fi));
			fmt_time(s0_file_info_mod_time_unix_ms(fi), mtime, sizeof mtime);
			if (s0_file_info_is_link(fi) && target)
				type = xasprintf("%s -> %s", type_name(s0_file_info_type(fi)), target);
			else
				type = xstrdup(type_name(s0_file_info_type(fi)));
			tbl_add(&t, s0_file_info_name(fi), type, size, mtime);
			free(type);
		}
		tbl_print(&t, stdout);
		tbl_free(&t);
	}
	s0_file_list_free(l);
	return rc;
}

static const cli_cmd cmd_ls = {
	.name = "ls", .args = "[path]", .summary = "List directory contents (default /)",
	.min_args = 0, .max_args = 1, .run = run_ls,
};

/* ---- cat ---- */

static int write_stdout(const void *data, size_t len)
{
	const char *p = data;
	fflush(stdout);
	while (len) {
		ssize_t w = write(STDOUT_FILENO, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int run_cat(cli *c)
{
	PREAMBLE;
	void *data = NULL;
	size_t len = 0;
	rc = s0_files_read(c->client, id, c->args[0], &data, &len, &err);
	if (rc < 0)
		return cli_fail("reading file", err, rc);
	rc = write_stdout(data, len) < 0 ? cli_failf("writing output", "%s", strerror(errno))
	                                 : CLI_EXIT_OK;
	s0_free(data);
	return rc;
}

static const cli_cmd cmd_cat = {
	.name = "cat", .args = "<path>", .summary = "Read a file to stdout",
	.min_args = 1, .max_args = 1, .run = run_cat,
};

/* ---- stat ---- */

static int run_stat(cli *c)
{
	PREAMBLE;
	s0_file_info *fi = NULL;
	rc = s0_files_stat(c->client, id, c->args[0], &fi, &err);
	if (rc < 0)
		return cli_fail("getting file info", err, rc);
	if (c->format != OUT_TABLE) {
		cj *o = file_info_json(fi);
		rc = out_value(c, o);
		cj_free(o);
	} else {
		tbl t;
		char size[48], mode[16], mtime[32];
		snprintf(size, sizeof size, "%lld bytes", (long long)s0_file_info_size_bytes(fi));
		snprintf(mode, sizeof mode, "%04o", (unsigned)s0_file_info_mode(fi));
		fmt_time(s0_file_info_mod_time_unix_ms(fi), mtime, sizeof mtime);
		tbl_init(&t, 2);
		kv_add(&t, "Name:", s0_file_info_name(fi));
		kv_add(&t, "Path:", s0_file_info_path(fi));
		kv_add(&t, "Type:", type_name(s0_file_info_type(fi)));
		kv_add(&t, "Size:", size);
		kv_add(&t, "Mode:", mode);
		kv_add(&t, "Modified:", mtime);
		if (s0_file_info_is_link(fi)) {
			kv_add(&t, "Is Link:", "true");
			if (s0_file_info_link_target(fi))
				kv_add(&t, "Link Target:", s0_file_info_link_target(fi));
		}
		tbl_print(&t, stdout);
		tbl_free(&t);
	}
	s0_file_info_free(fi);
	return rc;
}

static const cli_cmd cmd_stat = {
	.name = "stat", .args = "<path>", .summary = "Get file metadata",
	.min_args = 1, .max_args = 1, .run = run_stat,
};

/* ---- mkdir ---- */

static const cli_flag mkdir_flags[] = {
	{"parents", 0, FLAG_BOOL, NULL, "create parent directories as needed"},
	{0},
};

static int run_mkdir(cli *c)
{
	PREAMBLE;
	rc = s0_files_mkdir(c->client, id, c->args[0], opt_bool(c, "parents"), &err);
	if (rc < 0)
		return cli_fail("creating directory", err, rc);
	printf("Directory %s created successfully\n", c->args[0]);
	local_note(c);
	return CLI_EXIT_OK;
}

static const cli_cmd cmd_mkdir = {
	.name = "mkdir", .args = "<path>", .summary = "Create a directory",
	.flags = mkdir_flags, .min_args = 1, .max_args = 1, .run = run_mkdir,
};

/* ---- rm ---- */

static int run_rm(cli *c)
{
	PREAMBLE;
	rc = s0_files_delete(c->client, id, c->args[0], &err);
	if (rc < 0)
		return cli_fail("deleting file", err, rc);
	printf("File %s deleted successfully\n", c->args[0]);
	local_note(c);
	return CLI_EXIT_OK;
}

static const cli_cmd cmd_rm = {
	.name = "rm", .args = "<path>", .summary = "Delete a file or directory",
	.min_args = 1, .max_args = 1, .run = run_rm,
};

/* ---- mv ---- */

static int run_mv(cli *c)
{
	PREAMBLE;
	rc = s0_files_move(c->client, id, c->args[0], c->args[1], &err);
	if (rc < 0)
		return cli_fail("moving file", err, rc);
	printf("File moved from %s to %s\n", c->args[0], c->args[1]);
	local_note(c);
	return CLI_EXIT_OK;
}

static const cli_cmd cmd_mv = {
	.name = "mv", .args = "<source> <destination>", .summary = "Move or rename a file",
	.min_args = 2, .max_args = 2, .run = run_mv,
};

/* ---- upload / download / write ---- */

static int run_upload(cli *c)
{
	PREAMBLE;
	size_t len;
	char *data = read_all(c->args[0], &len);
	if (!data)
		return cli_failf("reading local file", "%s: %s", c->args[0], strerror(errno));
	rc = s0_files_write(c->client, id, c->args[1], data, len, &err);
	free(data);
	if (rc < 0)
		return cli_fail("uploading file", err, rc);
	printf("File uploaded to %s\n", c->args[1]);
	local_note(c);
	return CLI_EXIT_OK;
}

static const cli_cmd cmd_upload = {
	.name = "upload", .args = "<local-path> <remote-path>", .summary = "Upload a local file",
	.min_args = 2, .max_args = 2, .run = run_upload,
};

static int run_download(cli *c)
{
	PREAMBLE;
	void *data = NULL;
	size_t len = 0;
	rc = s0_files_read(c->client, id, c->args[0], &data, &len, &err);
	if (rc < 0)
		return cli_fail("downloading file", err, rc);
	FILE *f = fopen(c->args[1], "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		int e = errno;
		rc = cli_failf("writing local file", "%s: %s", c->args[1], strerror(e));
	} else {
		printf("File downloaded to %s\n", c->args[1]);
		rc = CLI_EXIT_OK;
	}
	s0_free(data);
	return rc;
}

static const cli_cmd cmd_download = {
	.name = "download", .args = "<remote-path> <local-path>",
	.summary = "Download a file to the local filesystem",
	.min_args = 2, .max_args = 2, .run = run_download,
};

static const cli_flag write_flags[] = {
	{"stdin", 0, FLAG_BOOL, NULL, "read the content from stdin"},
	{"data", 0, FLAG_STR, "TEXT", "the content"},
	{0},
};

static int run_write(cli *c)
{
	const char *id = sandbox_id(c);
	if (!id)
		return CLI_EXIT_USAGE;
	bool from_stdin = opt_bool(c, "stdin");
	const char *text = opt_str(c, "data");
	if (from_stdin == (text != NULL))
		return cli_usage_error(c, "must specify either --stdin or --data");
	size_t len = 0;
	char *buf = NULL;
	if (from_stdin && !(buf = read_all("-", &len)))
		return cli_failf("reading stdin", "%s", strerror(errno));
	s0_error *err = NULL;
	int rc = cli_connect(c);
	if (!rc) {
		int r = s0_files_write(c->client, id, c->args[0], buf ? buf : text,
		                       buf ? len : strlen(text), &err);
		if (r < 0) {
			rc = cli_fail("writing file", err, r);
		} else {
			printf("File %s written successfully\n", c->args[0]);
			local_note(c);
		}
	}
	free(buf);
	return rc;
}

static const cli_cmd cmd_write = {
	.name = "write", .args = "<path>", .summary = "Write content to a file",
	.flags = write_flags, .min_args = 1, .max_args = 1, .run = run_write,
};

const cli_cmd cmd_sandbox_files = {
	.name = "files",
	.summary = "Manage files in a sandbox",
	.flags = files_flags,
	.children = (const cli_cmd *const[]){&cmd_ls, &cmd_cat, &cmd_stat, &cmd_mkdir, &cmd_rm,
	                                     &cmd_mv, &cmd_upload, &cmd_download, &cmd_write,
	                                     &cmd_files_watch, NULL},
};
