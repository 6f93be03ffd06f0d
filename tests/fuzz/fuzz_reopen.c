/*
 * Fuzz target: every on-disk format a reopen reads back. Once per process a
 * data directory is made by a real backend (fz_engine.h fixtures, then a
 * memory pause of @0 so checkpoint manifests and guest images exist too)
 * and closed: the pristine copy. Each input damages a fresh copy of it and
 * reopens it with s0_local_open(); when the open succeeds, a fixed set of
 * requests (list, get, status, a file read that wakes @0 from its memory
 * checkpoint, resume of @1, snapshot get) runs against it, then the backend
 * is quiesced and closed. Errors are fine; crashes, sanitizer reports and
 * hangs are findings.
 *
 * Input: a sequence of damage records.
 *   'B' file off32 len8 bytes… — overwrite len bytes of file number `file`
 *       (regular files of the directory in path order, modulo their count)
 *       at off32 modulo its size: pack files, catalog and object files,
 *       generation descriptors, map pages, manifests, images;
 *   'T' file len32 — truncate that file to len32 modulo (size + 1);
 *   'S' db tab col row kind len8 bytes… — in SQLite file number `db` (files
 *       whose first bytes are the SQLite header), set column `col` of row
 *       `row` of table `tab` (all modulo their counts) to a value of `kind`
 *       (0 NULL, 1 integer from the bytes, 2 text, 3 blob, 4 real):
 *       metadata rows no byte flip would reach;
 *   'D' file — delete that file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fz_engine.h"

#define MAX_FILES 4096

static char *pristine;
static char *files[MAX_FILES]; /* paths relative to the directory, sorted */
static size_t nfiles;
static size_t dbs[64];         /* indexes into files[] of SQLite files */
static size_t ndbs;
static char ids[3][64];

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_reopen: %s: %s (%s)\n", what, detail ? detail : "?", strerror(errno));
	abort();
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t base_len;

static int list_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_F && S_ISREG(sb->st_mode) && nfiles < MAX_FILES)
		files[nfiles++] = strdup(path + base_len + 1);
	return 0;
}

/* Copy a regular file keeping its holes (RootFS images are sparse). */
static void copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 07777);
	if (in < 0 || out < 0)
		die("open", from);
	struct stat st;
	fstat(in, &st);
	off_t pos = 0;
	static char buf[1 << 16];
	while (pos < st.st_size) {
		off_t data = lseek(in, pos, SEEK_DATA);
		if (data < 0)
			break;
		off_t hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			hole = st.st_size;
		for (off_t o = data; o < hole;) {
			size_t want = (size_t)(hole - o) < sizeof buf ? (size_t)(hole - o) : sizeof buf;
			ssize_t r = pread(in, buf, want, o);
			if (r <= 0)
				die("pread", from);
			if (pwrite(out, buf, (size_t)r, o) != r)
				die("pwrite", to);
			o += r;
		}
		pos = hole;
	}
	if (ftruncate(out, st.st_size) < 0)
		die("ftruncate", to);
	close(in);
	close(out);
}

static const char *copy_to;

static int copy_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)ftw;
	char dst[8192];
	snprintf(dst, sizeof dst, "%s%s", copy_to, path + base_len);
	if (flag == FTW_D) {
		if (mkdir(dst, sb->st_mode & 07777) < 0 && errno != EEXIST)
			die("mkdir", dst);
	} else if (flag == FTW_F && S_ISREG(sb->st_mode)) {
		copy_file(path, dst, sb->st_mode);
	} else if (flag == FTW_SL) {
		char t[4096];
		ssize_t n = readlink(path, t, sizeof t - 1);
		if (n >= 0) {
			t[n] = 0;
			if (symlink(t, dst) < 0)
				die("symlink", dst);
		}
	}
	return 0;
}

static void copy_tree(const char *from, const char *to)
{
	base_len = strlen(from);
	copy_to = to;
	if (nftw(from, copy_one, 16, FTW_PHYS) != 0)
		die("copy", from);
}

static bool is_sqlite(const char *path)
{
	char h[16] = "";
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return false;
	size_t n = fread(h, 1, sizeof h, fp);
	fclose(fp);
	return n == 16 && !memcmp(h, "SQLite format 3", 16);
}

static void make_pristine(void)
{
	fz_engine f;
	fz_engine_open(&f, 0);
	/* a memory checkpoint of @0: manifests and guest images on disk */
	fz_call(&f, "POST", "/api/v1/sandboxes/@0/pause", "{\"memory\":true}");
	if (s0_local_quiesce(f.local, 30000, NULL) != S0_OK)
		die("quiesce", f.dir);
	memcpy(ids, f.ids, sizeof ids);
	s0_local_close(f.local); /* keep the directory: it is the pristine copy */
	pristine = f.dir;
	base_len = strlen(pristine);
	nftw(pristine, list_one, 16, FTW_PHYS);
	qsort(files, nfiles, sizeof files[0], cmp_str);
	for (size_t i = 0; i < nfiles && ndbs < 64; i++) {
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", pristine, files[i]);
		if (is_sqlite(p))
			dbs[ndbs++] = i;
	}
	if (getenv("FUZZ_REOPEN_LIST"))
		for (size_t i = 0; i < nfiles; i++)
			fprintf(stderr, "file %zu: %s\n", i, files[i]);
	if (!nfiles || !ndbs)
		die("pristine directory has no files or no SQLite database", pristine);
}

static void cleanup(void)
{
	if (pristine)
		nftw(pristine, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

typedef struct rd {
	const uint8_t *p, *end;
} rd;

static bool get(rd *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	memcpy(out, r->p, n);
	r->p += n;
	return true;
}

static void path_of(char *out, size_t n, const char *dir, size_t idx)
{
	snprintf(out, n, "%s/%s", dir, files[idx % nfiles]);
}

static void damage_bytes(const char *dir, rd *r)
{
	uint8_t fi = 0, len = 0;
	uint32_t off = 0;
	if (!get(r, &fi, 1) || !get(r, &off, 4) || !get(r, &len, 1))
		return;
	uint8_t bytes[256];
	if (!get(r, bytes, len))
		return;
	char p[8192];
	path_of(p, sizeof p, dir, fi);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (pwrite(fd, bytes, len, (off_t)(off % (uint64_t)st.st_size)) < 0)
		die("pwrite", p);
	close(fd);
}

static void damage_truncate(const char *dir, rd *r)
{
	uint8_t fi = 0;
	uint32_t len = 0;
	if (!get(r, &fi, 1) || !get(r, &len, 4))
		return;
	char p[8192];
	path_of(p, sizeof p, dir, fi);
	struct stat st;
	if (stat(p, &st) == 0 && truncate(p, (off_t)(len % ((uint64_t)st.st_size + 1))) < 0)
		die("truncate", p);
}

static void damage_sql(const char *dir, rd *r)
{
	uint8_t db = 0, tab = 0, col = 0, row = 0, kind = 0, len = 0;
	uint8_t bytes[256];
	if (!get(r, &db, 1) || !get(r, &tab, 1) || !get(r, &col, 1) || !get(r, &row, 1) ||
	    !get(r, &kind, 1) || !get(r, &len, 1) || !get(r, bytes, len))
		return;
	char p[8192];
	path_of(p, sizeof p, dir, dbs[db % ndbs]);
	sqlite3 *h = NULL;
	if (sqlite3_open_v2(p, &h, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return;
	}
	sqlite3_stmt *st = NULL;
	char names[64][128];
	int nt = 0;
	sqlite3_prepare_v2(h, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", -1,
	                   &st, NULL);
	while (st && sqlite3_step(st) == SQLITE_ROW && nt < 64)
		snprintf(names[nt++], sizeof names[0], "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (!nt) {
		sqlite3_close(h);
		return;
	}
	const char *t = names[tab % nt];
	char sql[1024];
	snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" LIMIT 0", t);
	st = NULL;
	sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	int ncol = st ? sqlite3_column_count(st) : 0;
	char cname[128] = "";
	if (ncol)
		snprintf(cname, sizeof cname, "%s", sqlite3_column_name(st, col % ncol));
	sqlite3_finalize(st);
	if (!ncol) {
		sqlite3_close(h);
		return;
	}
	snprintf(sql, sizeof sql,
	         "UPDATE \"%s\" SET \"%s\" = ?1 WHERE rowid = (SELECT rowid FROM \"%s\" "
	         "LIMIT 1 OFFSET (?2 %% max(1, (SELECT count(*) FROM \"%s\"))))",
	         t, cname, t, t);
	st = NULL;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
		int64_t iv = 0;
		memcpy(&iv, bytes, len < 8 ? len : 8);
		double dv = 0;
		memcpy(&dv, bytes, len < 8 ? len : 8);
		switch (kind % 5) {
		case 0: sqlite3_bind_null(st, 1); break;
		case 1: sqlite3_bind_int64(st, 1, len ? iv : -1); break;
		case 2: sqlite3_bind_text(st, 1, (const char *)bytes, len, SQLITE_TRANSIENT); break;
		case 3: sqlite3_bind_blob(st, 1, bytes, len, SQLITE_TRANSIENT); break;
		default: sqlite3_bind_double(st, 1, dv); break;
		}
		sqlite3_bind_int(st, 2, row);
		sqlite3_step(st); /* constraint failures are fine: nothing changes */
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
}

static void damage_delete(const char *dir, rd *r)
{
	uint8_t fi = 0;
	if (!get(r, &fi, 1))
		return;
	char p[8192];
	path_of(p, sizeof p, dir, fi);
	unlink(p);
}

/* The reads a user does after a reopen; every answer is checked by fz_route. */
static void exercise(fz_engine *f)
{
	fz_call(f, "GET", "/api/v1/sandboxes", NULL);
	fz_call(f, "GET", "/api/v1/sandboxes/@0", NULL);
	fz_call(f, "GET", "/api/v1/sandboxes/@1/status", NULL);
	fz_call(f, "GET", "/api/v1/sandbox-rootfs-snapshots/@S", NULL);
	fz_call(f, "GET", "/api/v1/sandboxes/@0/files?path=/workspace/a.txt", NULL);
	fz_call(f, "POST", "/api/v1/sandboxes/@1/resume", "{}");
	fz_call(f, "GET", "/api/v1/sandboxes/@1/files/list?path=/workspace", NULL);
	fz_call(f, "POST", "/api/v1/sandboxes/@0/rootfs/restore", "{\"snapshot_id\":\"@S\"}");
	s0_local_quiesce(f->local, 10000, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pristine) {
		make_pristine();
		atexit(cleanup);
	}
	if (size > 4096)
		return 0;
	char work[8192];
	snprintf(work, sizeof work, "%s.work", pristine);
	nftw(work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	copy_tree(pristine, work);
	rd r = {data, data + size};
	uint8_t op;
	while (get(&r, &op, 1)) {
		switch (op) {
		case 'B': damage_bytes(work, &r); break;
		case 'T': damage_truncate(work, &r); break;
		case 'S': damage_sql(work, &r); break;
		case 'D': damage_delete(work, &r); break;
		default: break;
		}
	}
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.manual_clock_start_unix_ms = 1767225600000LL;
	o.rootfs_size_bytes = 64ull << 20;
	fz_engine f;
	s0_local *l = NULL;
	s0_error *err = NULL;
	if (s0_local_open(work, &o, &l, &err) == S0_OK) {
		fz_engine_adopt(&f, l);
		memcpy(f.ids, ids, sizeof ids);
		exercise(&f);
		s0_local_close(f.local);
	}
	s0_error_free(err);
	nftw(work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
