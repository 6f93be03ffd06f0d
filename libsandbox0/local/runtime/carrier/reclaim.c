/*
 * s0__carrier_reclaim (carrier.h): the orphans of a state dir after a
 * crash, found from the records (who is alive) and the kernel's own tables
 * (tags in loop devices' lo_file_name and in mountinfo's mount source).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local/runtime/carrier/carrier_int.h"

#define MAX_ITEMS 1024
#define KILL_WAIT_MS 10000

typedef struct rc_state {
	char real[PATH_MAX];
	char prefix[S0__CARRIER_TAG_MAX]; /* tag prefix of this state dir */
	char live[MAX_ITEMS][S0__CARRIER_TAG_MAX];
	int n_live;
	char orphan_ids[MAX_ITEMS][80];
	int n_orphans;
	int loops[MAX_ITEMS];
	int n_loops;
	pid_t victims[MAX_ITEMS];
	int n_victims;
	char my_ns[64], init_ns[64];
} rc_state;

static bool is_live(const rc_state *s, const char *tag)
{
	for (int i = 0; i < s->n_live; i++)
		if (strcmp(s->live[i], tag) == 0)
			return true;
	return false;
}

/* A tag of this state dir that no live carrier owns. */
static bool orphan_tag(const rc_state *s, const char *tag)
{
	return strncmp(tag, s->prefix, strlen(s->prefix)) == 0 && !is_live(s, tag);
}

static void ns_of(pid_t pid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
	ssize_t n = readlink(path, out, len - 1);
	out[n > 0 ? n : 0] = 0;
}

static void read_records(rc_state *s)
{
	DIR *d = opendir(s->real);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char path[PATH_MAX + 300];
		snprintf(path, sizeof path, "%s/%s", s->real, de->d_name);
		if (n > 12 && strcmp(de->d_name + n - 12, ".carrier.tmp") == 0) {
			unlink(path);
			continue;
		}
		if (n <= 8 || strcmp(de->d_name + n - 8, ".carrier") != 0)
			continue;
		s0__carrier_record r;
		s0_error *e = NULL;
		int rc = s0__carrier_record_read(path, &r, &e);
		s0_error_free(e);
		if (rc != S0_OK) {
			/* unreadable: an orphan named by its file */
			snprintf(r.id, sizeof r.id, "%.*s", (int)(n - 8), de->d_name);
			r.pid = 0;
		}
		bool alive = rc == S0_OK && r.start_time != 0 && s0__proc_start_time(r.pid) == r.start_time;
		if (alive && s->n_live < MAX_ITEMS)
			s0__carrier_tag(s->real, r.id, s->live[s->n_live++], S0__CARRIER_TAG_MAX);
		else if (!alive && s->n_orphans < MAX_ITEMS)
			snprintf(s->orphan_ids[s->n_orphans++], 80, "%s", r.id);
	}
	closedir(d);
}

static void find_loops(rc_state *s)
{
	DIR *d = opendir("/sys/block");
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		int idx;
		char tail;
		if (sscanf(de->d_name, "loop%d%c", &idx, &tail) != 1)
			continue;
		char tag[S0__CARRIER_TAG_MAX];
		if (s0__loop_tag(idx, tag, sizeof tag) && orphan_tag(s, tag) && s->n_loops < MAX_ITEMS)
			s->loops[s->n_loops++] = idx;
	}
	closedir(d);
}

static bool orphan_loop(const rc_state *s, unsigned maj, unsigned min)
{
	if (maj != 7)
		return false;
	for (int i = 0; i < s->n_loops; i++)
		if ((unsigned)s->loops[i] == min)
			return true;
	return false;
}

/* Whether some mount of pid's mount table matches: match(ctx, source, maj,
 * min) for each line of /proc/PID/mountinfo (source = the mount source, ""
 * when absent). False when the table cannot be read (pid gone). */
static bool mounts_match(pid_t pid, bool (*match)(const void *ctx, const char *source,
                                                  unsigned maj, unsigned min),
                         const void *ctx)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char *line = NULL;
	size_t cap = 0;
	bool hit = false;
	while (!hit && getline(&line, &cap, f) > 0) {
		unsigned maj = 0, min = 0;
		if (sscanf(line, "%*d %*d %u:%u", &maj, &min) != 2)
			continue;
		char *sep = strstr(line, " - ");
		char fstype[64] = "", source[256] = "";
		if (sep)
			sscanf(sep + 3, "%63s %255s", fstype, source);
		hit = match(ctx, source, maj, min);
	}
	free(line);
	fclose(f);
	return hit;
}

static bool orphan_match(const void *ctx, const char *source, unsigned maj, unsigned min)
{
	return orphan_tag(ctx, source) || orphan_loop(ctx, maj, min);
}

/* Whether pid's mount table holds a mount of an orphan (its FUSE mount by
 * source tag, or its ext4 by loop device). */
static bool holds_orphan(const rc_state *s, pid_t pid)
{
	return mounts_match(pid, orphan_match, s);
}

static void find_victims(rc_state *s)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	pid_t self = getpid();
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (*end || v <= 1 || (pid_t)v == self)
			continue;
		pid_t pid = (pid_t)v;
		if (!holds_orphan(s, pid))
			continue;
		char ns[64];
		ns_of(pid, ns, sizeof ns);
		/* Never kill a process of the host's (or our) namespace: there the
		 * mounts are unmounted instead. */
		if (!ns[0] || !strcmp(ns, s->my_ns) || !strcmp(ns, s->init_ns))
			continue;
		if (s->n_victims < MAX_ITEMS)
			s->victims[s->n_victims++] = pid;
	}
	closedir(d);
}

/* Wait until every victim has exited (its namespaces released). */
static int wait_victims(rc_state *s)
{
	struct timespec step = {0, 5 * 1000 * 1000};
	for (int waited = 0; waited < KILL_WAIT_MS; waited += 5) {
		int alive = 0;
		for (int i = 0; i < s->n_victims; i++) {
			char ns[64];
			ns_of(s->victims[i], ns, sizeof ns);
			alive += ns[0] != 0;
		}
		if (!alive)
			return 0;
		nanosleep(&step, NULL);
	}
	return -1;
}

int s0__carrier_reclaim2(const char *state_dir, s0__carrier_reclaimed *out, s0_error **err)
{
	s0__carrier_reclaimed done = {0};
	if (out)
		*out = done;
	if (!state_dir || state_dir[0] != '/')
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "carrier reclaim: an absolute state_dir is required");
	rc_state *s = calloc(1, sizeof *s);
	if (!s)
		return s0__error_nomem(err);
	if (!realpath(state_dir, s->real)) {
		int e = errno;
		free(s);
		if (e == ENOENT)
			return S0_OK;
		return s0__error_set(err, S0_EIO, NULL, "carrier reclaim: %s: %s", state_dir, strerror(e));
	}
	s0__carrier_state_tag(s->real, s->prefix, sizeof s->prefix);
	ns_of(getpid(), s->my_ns, sizeof s->my_ns);
	ns_of(1, s->init_ns, sizeof s->init_ns);
	read_records(s);
	find_loops(s);
	find_victims(s);

	int rc = S0_OK;
	for (int i = 0; i < s->n_victims; i++)
		if (kill(s->victims[i], SIGKILL) == 0)
			done.processes++;
	if (s->n_victims && wait_victims(s) != 0)
		rc = s0__error_set(err, S0_EIO, NULL,
		                   "carrier reclaim: processes inside orphan namespaces did not exit");
	/* Orphans' mounts in this namespace (none unless someone mounted them
	 * here), then their mount points and records. */
	for (int i = 0; i < s->n_orphans; i++) {
		char p[PATH_MAX + 200];
		const char *subs[] = {"root", "fuse"};
		for (int k = 0; k < 2; k++) {
			snprintf(p, sizeof p, "%s/%s.d/%s", s->real, s->orphan_ids[i], subs[k]);
			if (umount2(p, MNT_DETACH) == 0)
				done.mounts++;
		}
	}
	/* Loops: a victim's exit or the namespace's end usually cleared them
	 * already (autoclear); clear the rest. */
	for (int i = 0; i < s->n_loops; i++) {
		char tag[S0__CARRIER_TAG_MAX];
		if (!s0__loop_tag(s->loops[i], tag, sizeof tag) || !orphan_tag(s, tag))
			continue;
		/* The last user's exit releases the device a moment after the
		 * process is gone (the namespace's mounts are freed after it):
		 * wait for that, bounded. */
		int lr = s0__loop_clear(s->loops[i]);
		struct timespec step = {0, 5 * 1000 * 1000};
		for (int waited = 0; lr == -EBUSY && waited < KILL_WAIT_MS; waited += 5) {
			nanosleep(&step, NULL);
			lr = s0__loop_bound(s->loops[i]) ? -EBUSY : 0;
		}
		if (lr == 0)
			done.loops++;
		else if (rc == S0_OK)
			rc = s0__error_set(err, S0_EIO, NULL, "carrier reclaim: /dev/loop%d: %s",
			                   s->loops[i], strerror(-lr));
	}
	for (int i = 0; i < s->n_orphans; i++) {
		char p[PATH_MAX + 200];
		snprintf(p, sizeof p, "%s/%s.d/root", s->real, s->orphan_ids[i]);
		rmdir(p);
		snprintf(p, sizeof p, "%s/%s.d/fuse", s->real, s->orphan_ids[i]);
		rmdir(p);
		snprintf(p, sizeof p, "%s/%s.d", s->real, s->orphan_ids[i]);
		rmdir(p);
		s0__carrier_record_remove(s->real, s->orphan_ids[i]);
		done.records++;
	}
	/* Mount points a crash left before the record was written: empty
	 * directories <id>.d of no live carrier (rmdir fails on anything else). */
	DIR *d = opendir(s->real);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n <= 2 || strcmp(de->d_name + n - 2, ".d") != 0)
			continue;
		char id[80], tag[S0__CARRIER_TAG_MAX], p[PATH_MAX + 200];
		snprintf(id, sizeof id, "%.*s", (int)(n - 2), de->d_name);
		s0__carrier_tag(s->real, id, tag, sizeof tag);
		if (is_live(s, tag))
			continue;
		snprintf(p, sizeof p, "%s/%s/root", s->real, de->d_name);
		rmdir(p);
		snprintf(p, sizeof p, "%s/%s/fuse", s->real, de->d_name);
		rmdir(p);
		snprintf(p, sizeof p, "%s/%s", s->real, de->d_name);
		rmdir(p);
	}
	if (d)
		closedir(d);
	free(s);
	if (out)
		*out = done;
	return rc;
}

int s0__carrier_reclaim(const char *state_dir, s0_error **err)
{
	return s0__carrier_reclaim2(state_dir, NULL, err);
}

/* Absolute path of state_dir (its realpath, else as given: it may be gone). */
static void state_real(const char *state_dir, char *out)
{
	if (!realpath(state_dir, out))
		snprintf(out, PATH_MAX, "%s", state_dir);
}

/* One carrier to look for: its FUSE source tag and loop device index (-1 = none). */
typedef struct shows_ctx {
	const char *tag;
	int idx;
} shows_ctx;

static bool shows_match(const void *ctx, const char *source, unsigned maj, unsigned min)
{
	const shows_ctx *c = ctx;
	return !strcmp(source, c->tag) || (c->idx >= 0 && maj == 7 && (int)min == c->idx);
}

/* Whether pid's mount table shows tag (FUSE source) or loop device idx. */
static bool shows(pid_t pid, const char *tag, int idx)
{
	shows_ctx c = {tag, idx};
	return mounts_match(pid, shows_match, &c);
}

int s0__carrier_proof(const char *state_dir, const char *id, s0_error **err)
{
	if (!state_dir || state_dir[0] != '/' || !id || !id[0])
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "carrier proof: an absolute state_dir and an id are required");
	char real[PATH_MAX], tag[S0__CARRIER_TAG_MAX], left[512] = "";
	state_real(state_dir, real);
	s0__carrier_tag(real, id, tag, sizeof tag);
	int loop = -1;
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int idx;
		char t[S0__CARRIER_TAG_MAX], tail;
		if (sscanf(de->d_name, "loop%d%c", &idx, &tail) == 1 && s0__loop_tag(idx, t, sizeof t) &&
		    !strcmp(t, tag)) {
			loop = idx;
			snprintf(left + strlen(left), sizeof left - strlen(left), " loop%d", idx);
		}
	}
	if (d)
		closedir(d);
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (*end || v <= 0)
			continue;
		/* every thread of this process too: the namespace thread's view */
		if ((pid_t)v == getpid()) {
			char tdir[64];
			snprintf(tdir, sizeof tdir, "/proc/%ld/task", v);
			DIR *td = opendir(tdir);
			struct dirent *te;
			while (td && (te = readdir(td))) {
				long tid = strtol(te->d_name, &end, 10);
				if (!*end && tid > 0 && shows((pid_t)tid, tag, loop))
					snprintf(left + strlen(left), sizeof left - strlen(left),
					         " mount in thread %ld", tid);
			}
			if (td)
				closedir(td);
			continue;
		}
		if (shows((pid_t)v, tag, loop))
			snprintf(left + strlen(left), sizeof left - strlen(left), " mount in pid %ld", v);
	}
	if (d)
		closedir(d);
	if (left[0])
		return s0__error_set(err, S0_EUNAVAILABLE, "resource_leak",
		                     "carrier %s still has:%s", id, left);
	return S0_OK;
}

int s0__carrier_holders(const char *tag, int loop, uint64_t skip_ns, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	pid_t self = getpid();
	struct dirent *de;
	/* one mount table read per namespace and root (what a process's
	 * mountinfo shows depends on both): most processes share a few */
	uint64_t seen[64][3];
	bool held[64];
	int nseen = 0;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (*end || v <= 0 || (pid_t)v == self)
			continue;
		char path[64];
		struct stat st;
		snprintf(path, sizeof path, "/proc/%ld/ns/mnt", v);
		if (stat(path, &st) != 0 || (skip_ns && (uint64_t)st.st_ino == skip_ns))
			continue;
		uint64_t key[3] = {(uint64_t)st.st_ino, 0, 0};
		snprintf(path, sizeof path, "/proc/%ld/root", v);
		if (stat(path, &st) == 0) {
			key[1] = (uint64_t)st.st_dev;
			key[2] = (uint64_t)st.st_ino;
		}
		int k = 0;
		while (k < nseen && (!key[2] || memcmp(seen[k], key, sizeof key)))
			k++;
		bool shown = k < nseen ? held[k] : shows((pid_t)v, tag, loop);
		if (k == nseen && nseen < 64 && key[2]) {
			memcpy(seen[nseen], key, sizeof key);
			held[nseen++] = shown;
		}
		if (!shown)
			continue;
		if (n < max)
			pids[n] = (pid_t)v;
		n++;
	}
	closedir(d);
	return n;
}
