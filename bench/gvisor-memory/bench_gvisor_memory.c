/*
 * bench_gvisor_memory: memory pause and resume on the gvisor runtime
 * (docs/memory-gvisor.md), as ratios in one run, as root.
 *
 *  1. Memory pause of a sandbox holding 64 MiB and 1 GiB (half random,
 *     half text) in its kernel's memory (/dev/shm), end to end through the
 *     API, against `runsc checkpoint` alone of a plain runsc sandbox holding
 *     the same bytes to a local directory + `zstd -1` of its pages + sync.
 *     Goal: API / baseline <= 1.3.
 *  2. Memory resume to a first command, 1 GiB against 64 MiB. Goal <= 1.5.
 *  3. Recapture after touching 1 % of the 1 GiB: bytes the object store
 *     grew by against the first capture's growth. Goal <= 5 %.
 * Next to the wall times, the CPU seconds each pause spent (the backend's
 * own threads against the baseline's programs: runsc's CLI, zstd, sync;
 * the sandbox's sentry writing pages.img is in neither), a measure the
 * load of a shared machine changes less, and the load average at the start.
 * Prints a table; never a test. `build/bench/gvisor-memory/bench_gvisor_memory`.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sandbox0/local.h"
#include "sandbox0/sandbox0.h"

#define RUNSC "/var/cache/libsandbox0/runsc/go-20260905-160fafc42237/runsc"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time so far, ms: of this process's threads (@p children false: the
 * backend's own work — hashing, compressing, encrypting, packing), or of
 * the children it waited for (true: runsc's CLI, zstd, sync of the
 * baseline). The API's children are left out: a sandbox's runsc processes
 * are reaped by the backend and would bring the sandbox's whole life. */
static double cpu_ms(bool children)
{
	struct rusage u;
	getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &u);
	return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
	       (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static void die(const char *what, int rc, s0_error *e)
{
	fprintf(stderr, "bench_gvisor_memory: %s: %d %s\n", what, rc, e ? s0_error_message(e) : "");
	exit(1);
}

#define OK(what, call)                                                                        \
	do {                                                                                      \
		s0_error *e_ = NULL;                                                                  \
		int rc_ = (call);                                                                     \
		if (rc_ != S0_OK)                                                                     \
			die(what, rc_, e_);                                                               \
	} while (0)

/* The shell line that fills /dev/shm/blob with @p mib MiB, each MiB half
 * random and half text. */
static void fill_cmd(char *out, size_t n, int mib)
{
	snprintf(out, n,
	         "mkdir -p /dev/shm && cd /dev/shm && dd if=/dev/urandom of=r bs=512K count=%d "
	         "2>/dev/null && yes 'half of each MiB compresses well' | head -c 524288 > t && "
	         "i=0; while [ $i -lt %d ]; do dd if=r bs=512K skip=$i count=1 2>/dev/null; cat t; "
	         "i=$((i+1)); done > blob && rm r t",
	         mib, mib);
}

static void sh(s0_client *c, const char *id, const char *cmd)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *cm = cJSON_AddObjectToObject(body, "cmd");
	cJSON *argv = cJSON_AddArrayToObject(cm, "command");
	cJSON_AddItemToArray(argv, cJSON_CreateString("/bin/sh"));
	cJSON_AddItemToArray(argv, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(argv, cJSON_CreateString(cmd));
	cJSON_AddStringToObject(body, "type", "cmd");
	cJSON_AddBoolToObject(body, "wait_until_done", 1);
	char *text = cJSON_PrintUnformatted(body);
	char *out = NULL;
	OK("context", s0_context_create(c, id, text, &out, &e_));
	s0_free(out);
	free(text);
	cJSON_Delete(body);
}

/* Bytes of the files under @p dir (the object store's growth). */
static unsigned long long du(const char *dir)
{
	unsigned long long n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) < 0)
			continue;
		n += S_ISDIR(st.st_mode) ? du(p) : (unsigned long long)st.st_size;
	}
	if (d)
		closedir(d);
	return n;
}

typedef struct api_run {
	double pause_ms, pause_cpu_ms, resume_ms, recap_ms;
	unsigned long long first_bytes, recap_bytes;
} api_run;

static api_run through_api(int mib, bool recapture)
{
	char dir[] = "/tmp/s0-bench-gvm.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", -1, NULL);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.runtime = "gvisor";
	s0_local *l = NULL;
	s0_client *c = NULL;
	s0_error *e = NULL;
	int rc = s0_local_open(dir, &o, &l, &e);
	if (rc != S0_OK)
		die("open", rc, e);
	OK("client", s0_client_new_local(l, NULL, &c, &e_));
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.memory = "3Gi";
	s0_sandbox_info *sb = NULL;
	OK("claim", s0_sandbox_claim(c, "default", NULL, &cfg, &sb, &e_));
	char id[128];
	snprintf(id, sizeof id, "%s", s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	char cmd[1024];
	fill_cmd(cmd, sizeof cmd, mib);
	sh(c, id, cmd);
	char objs[600];
	snprintf(objs, sizeof objs, "%s/objects", dir);
	api_run r = {0};
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	wo.memory = S0_BOOL_TRUE;
	unsigned long long b0 = du(objs);
	double t0 = now_ms(), c0 = cpu_ms(false);
	s0_sandbox_info *p = NULL;
	OK("memory pause", s0_sandbox_pause_and_wait(c, id, &wo, &p, &e_));
	r.pause_ms = now_ms() - t0;
	r.pause_cpu_ms = cpu_ms(false) - c0;
	s0_sandbox_info_free(p);
	r.first_bytes = du(objs) - b0;
	t0 = now_ms();
	OK("memory resume", s0_sandbox_resume_and_wait(c, id, &wo, &p, &e_));
	s0_sandbox_info_free(p);
	sh(c, id, "true"); /* the first command */
	r.resume_ms = now_ms() - t0;
	if (recapture) { /* 1 % of the bytes rewritten in place */
		snprintf(cmd, sizeof cmd,
		         "dd if=/dev/urandom of=/dev/shm/blob bs=1M count=%d seek=%d conv=notrunc "
		         "2>/dev/null",
		         mib / 100 > 0 ? mib / 100 : 1, mib / 2);
		sh(c, id, cmd);
		b0 = du(objs);
		t0 = now_ms();
		OK("memory pause 2", s0_sandbox_pause_and_wait(c, id, &wo, &p, &e_));
		r.recap_ms = now_ms() - t0;
		s0_sandbox_info_free(p);
		r.recap_bytes = du(objs) - b0;
	}
	s0_client_free(c);
	s0_local_close(l);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_gvisor_memory: cannot remove %s\n", dir);
	return r;
}

static int run_cmd(const char *cmd)
{
	int rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "bench_gvisor_memory: `%s` failed (%d)\n", cmd, rc);
	return rc;
}

/* runsc alone: a sandbox on a copy of the busybox tree holding the same
 * bytes, `runsc checkpoint` to a directory on the data disk, `zstd -1` of
 * its pages, sync. */
static double baseline(const char *tree, int mib, double *cpu)
{
	char dir[] = "/var/tmp/s0-bench-gvm-base.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", -1, NULL);
	char cmd[4096], raw[1024], fill[2048];
	fill_cmd(raw, sizeof raw, mib);
	size_t k = 0; /* for the host shell: its $ stays for the sandbox's */
	for (const char *c = raw; *c && k + 2 < sizeof fill; c++) {
		if (*c == '$')
			fill[k++] = '\\';
		fill[k++] = *c;
	}
	fill[k] = '\0';
	snprintf(cmd, sizeof cmd,
	         "cd %s && mkdir b st img && cd b && " RUNSC " spec -- /bin/sh -c 'while :; do sleep "
	         "3600; done' && sed -i 's|\"path\": \"rootfs\"|\"path\": \"%s\"|; "
	         "s|\"readonly\": true|\"readonly\": true|; s|\"terminal\": true|\"terminal\": "
	         "false|' config.json && " RUNSC " --root=%s/st --network=none run --detach "
	         "--bundle=%s/b bgvm </dev/null >/dev/null 2>&1 && " RUNSC
	         " --root=%s/st --network=none exec bgvm /bin/sh -c \"%s\"",
	         dir, tree, dir, dir, dir, fill);
	if (run_cmd(cmd) != 0)
		die("baseline setup", -1, NULL);
	double t0 = now_ms(), c0 = cpu_ms(true);
	snprintf(cmd, sizeof cmd,
	         RUNSC " --root=%s/st --network=none checkpoint --image-path=%s/img bgvm && "
	               "zstd -q -1 %s/img/pages.img -o %s/img/pages.img.zst && sync",
	         dir, dir, dir, dir);
	int rc = run_cmd(cmd);
	double ms = now_ms() - t0;
	*cpu = cpu_ms(true) - c0;
	snprintf(cmd, sizeof cmd,
	         RUNSC " --root=%s/st delete --force bgvm >/dev/null 2>&1; umount %s/st/null-netns "
	               "2>/dev/null; rm -rf %s",
	         dir, dir, dir);
	run_cmd(cmd);
	if (rc != 0)
		die("baseline checkpoint", rc, NULL);
	return ms;
}

int main(void)
{
	const char *tree = getenv("S0_GVISOR_TEMPLATE");
	if (!tree) {
		fprintf(stderr, "bench_gvisor_memory: set S0_GVISOR_TEMPLATE to a root tree with "
		                "/bin/sh (e.g. /var/cache/libsandbox0/trees/python3)\n");
		return 2;
	}
	double load[3] = {0};
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	api_run small = through_api(64, false), big = through_api(1024, true);
	double c64 = 0, c1g = 0, b64 = baseline(tree, 64, &c64), b1g = baseline(tree, 1024, &c1g);
	printf("load average at the start: %.2f\n", load[0]);
	printf("%-44s %10s %10s %8s %s\n", "measure", "64 MiB", "1 GiB", "ratio", "goal");
	printf("%-44s %7.0f ms %7.0f ms\n", "memory pause through the API", small.pause_ms,
	       big.pause_ms);
	printf("%-44s %7.0f ms %7.0f ms\n", "runsc checkpoint + zstd -1 + sync", b64, b1g);
	printf("%-44s %10.2f %10.2f %8s %s\n", "  API / runsc alone", small.pause_ms / b64,
	       big.pause_ms / b1g, "", "<= 1.3");
	printf("%-44s %7.0f ms %7.0f ms\n", "  CPU: the backend's threads in the pause",
	       small.pause_cpu_ms, big.pause_cpu_ms);
	printf("%-44s %7.0f ms %7.0f ms\n", "  CPU: runsc CLI + zstd -1 + sync", c64, c1g);
	printf("%-44s %7.0f ms %7.0f ms %8.2f %s\n", "memory resume to a first command",
	       small.resume_ms, big.resume_ms, big.resume_ms / small.resume_ms, "<= 1.5");
	printf("%-44s %10s %7.1f MiB\n", "first capture stored", "",
	       big.first_bytes / 1048576.0);
	printf("%-44s %10s %7.1f MiB %7.1f %% %s\n", "recapture after touching 1 % stored", "",
	       big.recap_bytes / 1048576.0, 100.0 * big.recap_bytes / (double)big.first_bytes,
	       "<= 5 %");
	printf("%-44s %10s %7.0f ms\n", "recapture time", "", big.recap_ms);
	return 0;
}
