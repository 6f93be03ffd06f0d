/*
 * Shared by the gvisor engine tests (check_gvisor_local.c,
 * check_gvisor_memory.c): reopening a backend on a data directory and
 * finding what a killed backend left on the host.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gv_host.h"

/* A gvisor backend on @p dir (manual clock), not a fresh one. */
void gv_open_dir(lt *t, const char *dir)
{
	memset(t, 0, sizeof *t);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	t->opts = o;
	t->opts.manual_clock = 1;
	t->opts.manual_clock_start_unix_ms = 1700000000000LL;
	t->opts.runtime = "gvisor";
	t->dir = strdup(dir);
	t->keep_dir = true;
	s0_error *e = NULL;
	int rc = s0_local_open(t->dir, &t->opts, &t->local, &e);
	ck_assert_msg(rc == S0_OK, "open: %s", e ? s0_error_message(e) : "?");
	ck_assert_int_eq(s0_client_new_local(t->local, NULL, &t->c, NULL), S0_OK);
}

/* What of a killed backend's runtime @p key (a runtime id, or the data
 * directory) is still on the host: a process whose command line names it,
 * a loop device over a file whose path names it, a mount naming it — but
 * not naming @p except (nullable: the live runtime). "" when nothing. */
void gv_leftovers_except(const char *dir, const char *except, char *what, size_t n)
{
	what[0] = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && !what[0] && (de = readdir(d))) {
		char p[300], buf[4096];
		snprintf(p, sizeof p, "/proc/%s/cmdline", de->d_name);
		FILE *f = de->d_name[0] >= '1' && de->d_name[0] <= '9' ? fopen(p, "re") : NULL;
		size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		for (size_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[len] = 0;
		if (len && strstr(buf, dir) && !(except && strstr(buf, except))) {
			char st[300] = "", wc[64] = "";
			snprintf(p, sizeof p, "/proc/%s/stat", de->d_name);
			FILE *sf = fopen(p, "re");
			if (sf && fgets(st, sizeof st, sf))
				st[60] = 0;
			if (sf)
				fclose(sf);
			snprintf(p, sizeof p, "/proc/%s/wchan", de->d_name);
			sf = fopen(p, "re");
			if (sf && !fgets(wc, sizeof wc, sf))
				wc[0] = 0;
			if (sf)
				fclose(sf);
			snprintf(what, n, "process %s (%s; %s): %.200s", de->d_name, st, wc, buf);
		}
	}
	if (d)
		closedir(d);
	for (int i = 0; !what[0] && i < 64; i++) {
		char p[96], buf[512] = "";
		snprintf(p, sizeof p, "/sys/block/loop%d/loop/backing_file", i);
		FILE *f = fopen(p, "re");
		if (f && fgets(buf, sizeof buf, f) && strstr(buf, dir) &&
		    !(except && strstr(buf, except)))
			snprintf(what, n, "loop%d over %.300s", i, buf);
		if (f)
			fclose(f);
	}
	FILE *m = fopen("/proc/self/mounts", "re");
	char line[1024];
	while (m && !what[0] && fgets(line, sizeof line, m))
		if (strstr(line, dir) && !(except && strstr(line, except)))
			snprintf(what, n, "mount %.300s", line);
	if (m)
		fclose(m);
}

void gv_leftovers(const char *key, char *what, size_t n)
{
	gv_leftovers_except(key, NULL, what, n);
}

