/*
 * Durable records and tags of carriers (carrier_int.h). A record is a small
 * JSON file <state_dir>/<id>.carrier written atomically; a tag
 * "s0c:<state>:<id>" (16 hex each, BLAKE2b of the state dir's realpath and
 * of the id) names the carrier's FUSE mount (its fsname, the mountinfo
 * source) and loop device (lo_file_name), so reclaim finds both from the
 * kernel's tables even without a record.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local/runtime/carrier/carrier_int.h"

static void hex16(const char *s, char out[17])
{
	unsigned char h[8];
	crypto_generichash(h, sizeof h, (const unsigned char *)s, strlen(s), NULL, 0);
	sodium_bin2hex(out, 17, h, sizeof h);
}

void s0__carrier_state_tag(const char *state_real, char *out, size_t out_len)
{
	char a[17];
	hex16(state_real, a);
	snprintf(out, out_len, "s0c:%s:", a);
}

void s0__carrier_tag(const char *state_real, const char *id, char *out, size_t out_len)
{
	char a[17], b[17];
	hex16(state_real, a);
	hex16(id, b);
	snprintf(out, out_len, "s0c:%s:%s", a, b);
}

uint64_t s0__proc_start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	ssize_t n = read(f, buf, sizeof buf - 1);
	close(f);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "pid (comm) S ppid ... starttime(22)": comm may hold spaces and ')' */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return 0; /* exited: its namespaces and files are gone */
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	return strtoull(p, NULL, 10);
}

int s0__carrier_record_write(const char *state_dir, const s0__carrier_record *r,
                             s0_error **err)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return s0__error_nomem(err);
	char num[24];
	cJSON_AddStringToObject(j, "id", r->id);
	cJSON_AddNumberToObject(j, "pid", r->pid);
	snprintf(num, sizeof num, "%" PRIu64, r->start_time);
	cJSON_AddStringToObject(j, "start_time", num);
	cJSON_AddNumberToObject(j, "tid", r->tid);
	snprintf(num, sizeof num, "%" PRIu64, r->ns_ino);
	cJSON_AddStringToObject(j, "mnt_ns", num);
	cJSON_AddNumberToObject(j, "loop", r->loop_index);
	char *text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!text)
		return s0__error_nomem(err);
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/%s.carrier", state_dir, r->id);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int rc = S0_OK;
	int f = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t len = strlen(text);
	if (f < 0 || write(f, text, len) != (ssize_t)len || fsync(f) != 0) {
		rc = s0__error_set(err, S0_EIO, NULL, "carrier record %s: %s", tmp, strerror(errno));
	}
	if (f >= 0)
		close(f);
	free(text);
	if (rc == S0_OK && rename(tmp, path) != 0)
		rc = s0__error_set(err, S0_EIO, NULL, "carrier record %s: %s", path, strerror(errno));
	if (rc != S0_OK) {
		unlink(tmp);
		return rc;
	}
	int d = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		fsync(d);
		close(d);
	}
	return S0_OK;
}

int s0__carrier_record_read(const char *path, s0__carrier_record *r, s0_error **err)
{
	memset(r, 0, sizeof *r);
	r->loop_index = -1;
	FILE *f = fopen(path, "re");
	if (!f)
		return s0__error_set(err, errno == ENOENT ? S0_ENOTFOUND : S0_EIO, NULL,
		                     "carrier record %s: %s", path, strerror(errno));
	char buf[2048];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	cJSON *j = cJSON_Parse(buf);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(j, "pid");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "start_time");
	if (!cJSON_IsString(id) || !cJSON_IsNumber(pid) || !cJSON_IsString(st)) {
		cJSON_Delete(j);
		return s0__error_set(err, S0_ECORRUPT, NULL, "carrier record %s: unreadable", path);
	}
	snprintf(r->id, sizeof r->id, "%s", id->valuestring);
	r->pid = (pid_t)pid->valuedouble;
	r->start_time = strtoull(st->valuestring, NULL, 10);
	const cJSON *tid = cJSON_GetObjectItemCaseSensitive(j, "tid");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(j, "mnt_ns");
	const cJSON *loop = cJSON_GetObjectItemCaseSensitive(j, "loop");
	if (cJSON_IsNumber(tid))
		r->tid = (pid_t)tid->valuedouble;
	if (cJSON_IsString(ns))
		r->ns_ino = strtoull(ns->valuestring, NULL, 10);
	if (cJSON_IsNumber(loop))
		r->loop_index = (int)loop->valuedouble;
	cJSON_Delete(j);
	return S0_OK;
}

void s0__carrier_record_remove(const char *state_dir, const char *id)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.carrier", state_dir, id);
	if (unlink(path) == 0) {
		int d = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d >= 0) {
			fsync(d);
			close(d);
		}
	}
}
