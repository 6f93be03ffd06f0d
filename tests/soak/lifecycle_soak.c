/*
 * Soak: many workers x (claim, write, pause, resume, read back, delete)
 * against a real `s0 serve` process over HTTP (the public client), with a
 * fixed seed and a bounded number of cycles. Every byte read back is
 * checked; per-call p50/p99 and the server's RSS and open files over time
 * are reported. With KILLS > 0 it is the crash loop: a killer thread sends
 * SIGKILL to the server at seeded random moments of the workload and
 * restarts it on the same data directory, timing restart-to-healthy; a
 * write acknowledged before a completed pause must still read back after
 * the resume (a crash between a write's acknowledgement and its pause
 * loses it by design: such writes are counted, not checked), and at the end
 * no sandbox may stay in a transitional state.
 *
 *   lifecycle_soak S0_BINARY WORKERS CYCLES SEED [KILLS]
 *
 * Prints one summary line; exits 1 on a violation (a wrong or lost byte, a
 * sandbox left starting/terminating, a call or wait that ran into its
 * deadline, without KILLS any failed call, RSS growth over 64 MiB or
 * open-file growth over 64 since the first sample).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox0/sandbox0.h"

enum { OP_CLAIM, OP_WRITE, OP_PAUSE, OP_RESUME, OP_READ, OP_DELETE, OP_N };
static const char *const op_names[OP_N] = {"claim", "write", "pause", "resume", "read", "delete"};

#define TOKEN "s0_soak_token_0001"

static const char *s0_bin;
static char data_dir[4096], base_url[64];
static int port, nworkers, ncycles, nkills;
static uint64_t seed;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t server_pid;
static double *lat[OP_N];
static size_t nlat[OP_N];
static atomic_long calls_ok, calls_failed, violations, cycles_done, unverified;
static atomic_long superseded; /* pauses a restart superseded (paused again) */
static atomic_long kills_started; /* bumped before each SIGKILL */
static atomic_int workers_left;
static long rss_first = -1, rss_max, rss_last, fds_first = -1, fds_max, fds_last;
static long kills_done;
static double restart_max_ms;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

__attribute__((format(printf, 1, 2))) static void violation(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lifecycle_soak: VIOLATION: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	atomic_fetch_add(&violations, 1);
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
		perror("lifecycle_soak: port");
		exit(2);
	}
	close(fd);
	return ntohs(a.sin_port);
}

static s0_client *new_client(int64_t timeout_ms)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = base_url;
	o.token = TOKEN;
	o.request_timeout_ms = timeout_ms;
	o.connect_timeout_ms = 2000;
	s0_client *c = NULL;
	s0_error *err = NULL;
	if (s0_client_new(&o, &c, &err) != S0_OK) {
		fprintf(stderr, "lifecycle_soak: client: %s\n", err ? s0_error_message(err) : "?");
		exit(2);
	}
	return c;
}

/* Start s0 serve and wait until it answers a list; returns ms it took. */
static double start_server(void)
{
	double t0 = now_ms();
	char listen[64];
	snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) { /* its access log */
			dup2(null, 1);
			dup2(null, 2);
			close(null);
		}
		execl(s0_bin, s0_bin, "serve", "--data", data_dir, "--listen", listen, "--carriers",
		      "32", "--token", TOKEN, "--quiet", "--runtime", "sim", (char *)NULL);
		_exit(127);
	}
	pthread_mutex_lock(&mu);
	server_pid = pid;
	pthread_mutex_unlock(&mu);
	s0_client *c = new_client(2000);
	for (int i = 0; i < 3000; i++) {
		s0_list_options lo = S0_LIST_OPTIONS_INIT;
		lo.limit = 1;
		s0_sandbox_page *pg = NULL;
		if (s0_sandbox_list(c, &lo, &pg, NULL) == S0_OK) {
			s0_sandbox_page_free(pg);
			s0_client_free(c);
			return now_ms() - t0;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "lifecycle_soak: s0 serve exited at start\n");
			exit(2);
		}
		usleep(10000); /* polling a starting process: there is nothing to wait on */
	}
	fprintf(stderr, "lifecycle_soak: s0 serve not healthy after 30 s\n");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	exit(2);
}

static void kill_server(int sig)
{
	pthread_mutex_lock(&mu);
	pid_t pid = server_pid;
	server_pid = 0;
	pthread_mutex_unlock(&mu);
	if (pid > 0) {
		kill(pid, sig);
		waitpid(pid, NULL, 0);
	}
}

static void record(int op, double ms, int rc)
{
	if (rc != S0_OK) {
		atomic_fetch_add(&calls_failed, 1);
		return;
	}
	atomic_fetch_add(&calls_ok, 1);
	pthread_mutex_lock(&mu);
	lat[op][nlat[op]++] = ms;
	pthread_mutex_unlock(&mu);
}

/* Retry a call across server restarts (crash loop only): transport errors
 * and 503s are expected while the server is down or recovering, and so is a
 * pause that a restart's recovery superseded (its runtime died before it
 * published: the wait ends with `pause_superseded`, docs/decisions.md
 * "Superseded pause"), which is paused again. A wait's deadline is never
 * expected: every wait ends with a definite answer well inside its 120 s. */
static bool retryable(int rc, const s0_error *err)
{
	if (!nkills)
		return false;
	if (rc == S0_ELIFECYCLE && err && !strcmp(s0_error_reason(err), "pause_superseded")) {
		atomic_fetch_add(&superseded, 1);
		return true;
	}
	return rc == S0_ETRANSPORT || rc == S0_EUNAVAILABLE || rc == S0_ECONFLICT;
}

/* rc = expr, timed and recorded; retried while retryable (crash loop). */
#define CALL(rc, op, expr)                                                                \
	do {                                                                                  \
		int tries_ = 0;                                                                   \
		for (;;) {                                                                        \
			s0_error_free(err);                                                           \
			err = NULL;                                                                   \
			double t_ = now_ms();                                                         \
			(rc) = (expr);                                                                \
			record(op, now_ms() - t_, (rc));                                              \
			if ((rc) == S0_ETIMEDOUT)                                                     \
				violation("%s timed out: %s", op_names[op],                               \
				          err ? s0_error_message(err) : "?");                             \
			if (!retryable(rc, err) || ++tries_ >= 200)                                   \
				break;                                                                    \
			usleep(50000); /* the server is down or recovering: try again shortly */      \
		}                                                                                 \
	} while (0)

static void *worker(void *arg)
{
	int w = (int)(intptr_t)arg;
	uint64_t rnd = seed * 1000003u + (uint64_t)w + 1;
	s0_client *c = new_client(60000);
	s0_error *err = NULL;
	for (int cy = 0; cy < ncycles; cy++) {
		s0_sandbox_info *sb = NULL;
		int rc;
		CALL(rc, OP_CLAIM, s0_sandbox_claim(c, "default", NULL, NULL, &sb, &err));
		if (rc != S0_OK) {
			if (!nkills)
				violation("claim failed: %s", err ? s0_error_message(err) : "?");
			continue;
		}
		char id[128];
		snprintf(id, sizeof id, "%s", s0_sandbox_info_id(sb));
		s0_sandbox_info_free(sb);
		size_t len = 4096 + xorshift(&rnd) % 61440;
		uint8_t *bytes = malloc(len);
		for (size_t i = 0; i < len; i++)
			bytes[i] = (uint8_t)xorshift(&rnd);
		char path[128];
		snprintf(path, sizeof path, "/workspace/soak-%d-%d.bin", w, cy);
		/* read before the write is sent: a kill any time after it (even between
		 * the acknowledgement and this line) makes the write unverified */
		long kills_at_write = atomic_load(&kills_started);
		CALL(rc, OP_WRITE, s0_files_write(c, id, path, bytes, len, &err));
		bool written = rc == S0_OK;
		s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
		wo.timeout_ms = 120000;
		s0_sandbox_info *st = NULL;
		CALL(rc, OP_PAUSE, s0_sandbox_pause_and_wait(c, id, &wo, &st, &err));
		bool paused = rc == S0_OK;
		/* a crash between the write's acknowledgement and the completed pause
		 * loses the running sandbox's unpublished writes by design (it
		 * restarts from its committed head): such a write is not checked */
		if (written && paused && atomic_load(&kills_started) != kills_at_write) {
			written = false;
			atomic_fetch_add(&unverified, 1);
		}
		s0_sandbox_info_free(st);
		st = NULL;
		CALL(rc, OP_RESUME, s0_sandbox_resume_and_wait(c, id, &wo, &st, &err));
		bool resumed = rc == S0_OK;
		s0_sandbox_info_free(st);
		if (!nkills && !(written && paused && resumed))
			violation("lifecycle of %s failed: %s", id, err ? s0_error_message(err) : "?");
		if (written && paused && resumed) {
			/* acknowledged before a completed pause: must read back exactly */
			void *back = NULL;
			size_t blen = 0;
			CALL(rc, OP_READ, s0_files_read(c, id, path, &back, &blen, &err));
			if (rc != S0_OK)
				violation("read of %s failed: %s", path, err ? s0_error_message(err) : "?");
			else if (blen != len || memcmp(back, bytes, len))
				violation("bytes of %s in %s differ", path, id);
			free(back);
		}
		free(bytes);
		CALL(rc, OP_DELETE, s0_sandbox_delete(c, id, &err));
		if (rc != S0_OK && !(nkills && rc == S0_ENOTFOUND))
			violation("delete of %s failed: %s", id, err ? s0_error_message(err) : "?");
		atomic_fetch_add(&cycles_done, 1);
	}
	s0_error_free(err);
	s0_client_free(c);
	atomic_fetch_sub(&workers_left, 1);
	return NULL;
}

static long proc_value(pid_t pid, const char *key)
{
	char p[64], line[256];
	snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	FILE *fp = fopen(p, "r");
	long v = -1;
	while (fp && fgets(line, sizeof line, fp))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	if (fp)
		fclose(fp);
	return v;
}

static long count_fds(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(p);
	long n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n : -1;
}

static void *sampler(void *arg)
{
	(void)arg;
	while (atomic_load(&workers_left) > 0) {
		pthread_mutex_lock(&mu);
		pid_t pid = server_pid;
		pthread_mutex_unlock(&mu);
		long rss = pid > 0 ? proc_value(pid, "VmRSS:") : -1;
		long fds = pid > 0 ? count_fds(pid) : -1;
		if (rss > 0 && fds >= 0 && !nkills) {
			if (rss_first < 0)
				rss_first = rss, fds_first = fds;
			rss_max = rss > rss_max ? rss : rss_max;
			fds_max = fds > fds_max ? fds : fds_max;
			rss_last = rss;
			fds_last = fds;
		}
		usleep(200000); /* a sampling period, not a wait for state */
	}
	return NULL;
}

/*
 * The crash moments: kill k comes once a seeded share (5..80 %) of all
 * cycles is done, plus a seeded 0..20 ms, so every kill lands inside the
 * workload however fast it runs (a time-based schedule outlasted a workload
 * of a few seconds and killed less than asked) and in the middle of calls.
 */
static void *killer(void *arg)
{
	(void)arg;
	uint64_t rnd = seed ^ 0x9e3779b97f4a7c15ull;
	long total = (long)nworkers * ncycles, at[64];
	int n = nkills;
	for (int k = 0; k < n; k++)
		at[k] = total * 5 / 100 + (long)(xorshift(&rnd) % (uint64_t)(total * 75 / 100 + 1));
	for (int k = 1; k < n; k++) /* in order */
		for (int j = k; j > 0 && at[j - 1] > at[j]; j--) {
			long t = at[j];
			at[j] = at[j - 1];
			at[j - 1] = t;
		}
	for (int k = 0; k < n; k++) {
		while (atomic_load(&cycles_done) < at[k] && atomic_load(&workers_left) > 0)
			usleep(1000); /* polling a counter of the workload */
		usleep((useconds_t)(xorshift(&rnd) % 20000)); /* a random moment of it */
		if (atomic_load(&workers_left) == 0)
			break;
		atomic_fetch_add(&kills_started, 1);
		kill_server(SIGKILL);
		double ms = start_server();
		pthread_mutex_lock(&mu);
		kills_done++;
		restart_max_ms = ms > restart_max_ms ? ms : restart_max_ms;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sandboxes left starting or terminating after the workload settles. */
static long transitional_left(void)
{
	s0_client *c = new_client(30000);
	long bad = 0;
	for (int round = 0; round < 600; round++) {
		bad = 0;
		s0_sandbox_iter *it = NULL;
		if (s0_sandbox_iter_new(c, NULL, &it, NULL) != S0_OK) {
			bad = -1;
		} else {
			const s0_sandbox_info *i;
			while (s0_sandbox_iter_next(it, &i, NULL) == S0_OK && i) {
				int s = s0_sandbox_info_status(i);
				bad += s == S0_STATUS_STARTING || s == S0_STATUS_TERMINATING;
			}
			s0_sandbox_iter_free(it);
		}
		if (bad == 0)
			break;
		usleep(100000); /* the server settles on its own clock */
	}
	s0_client_free(c);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: lifecycle_soak S0_BINARY WORKERS CYCLES SEED [KILLS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	s0_bin = argv[1];
	nworkers = atoi(argv[2]);
	ncycles = atoi(argv[3]);
	seed = strtoull(argv[4], NULL, 0);
	nkills = argc > 5 ? atoi(argv[5]) : 0;
	if (nworkers < 1 || nworkers > 64 || ncycles < 1 || nkills < 0 || nkills > 64) {
		fprintf(stderr, "lifecycle_soak: 1..64 workers, at least one cycle, 0..64 kills\n");
		return 2;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(data_dir, sizeof data_dir, "%s/s0-soak-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(data_dir)) {
		perror("mkdtemp");
		return 2;
	}
	port = free_port();
	snprintf(base_url, sizeof base_url, "http://127.0.0.1:%d", port);
	size_t cap = (size_t)nworkers * (size_t)ncycles * 200 + 16;
	for (int i = 0; i < OP_N; i++)
		lat[i] = calloc(cap, sizeof(double));
	double first_start = start_server();
	double t0 = now_ms();
	atomic_store(&workers_left, nworkers);
	pthread_t th[64], samp, kil;
	pthread_create(&samp, NULL, sampler, NULL);
	if (nkills)
		pthread_create(&kil, NULL, killer, NULL);
	for (int w = 0; w < nworkers; w++)
		pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w);
	for (int w = 0; w < nworkers; w++)
		pthread_join(th[w], NULL);
	pthread_join(samp, NULL);
	if (nkills)
		pthread_join(kil, NULL);
	double secs = (now_ms() - t0) / 1e3;
	if (kills_done < nkills)
		violation("%ld of %d kills happened before the workload ended", kills_done, nkills);
	long left = transitional_left();
	if (left != 0)
		violation("%ld sandboxes left in a transitional state (-1: could not list)", left);
	kill_server(SIGTERM);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", data_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "lifecycle_soak: could not remove %s\n", data_dir);

	char figs[1024] = "";
	for (int i = 0; i < OP_N; i++) {
		qsort(lat[i], nlat[i], sizeof(double), cmp_d);
		double p50 = nlat[i] ? lat[i][nlat[i] / 2] : 0;
		double p99 = nlat[i] ? lat[i][(nlat[i] * 99) / 100] : 0;
		size_t l = strlen(figs);
		snprintf(figs + l, sizeof figs - l, " %s %.1f/%.1f", op_names[i], p50, p99);
		free(lat[i]);
	}
	if (nkills) /* the server process changes with every kill: no series */
		rss_first = fds_first = -1;
	bool grew = !nkills && (rss_last - rss_first > 64 * 1024 || fds_last - fds_first > 64);
	long v = atomic_load(&violations);
	bool ok = v == 0 && !grew && (nkills || atomic_load(&calls_failed) == 0);
	printf("lifecycle_soak: %s: %d workers x %d cycles (seed %llu), %ld cycles, %ld calls ok, %ld "
	       "failed, %ld violations, %ld writes unverified (crash before their pause), %ld pauses "
	       "superseded, %.1f s; p50/p99 ms%s; server RSS KiB first/max/last "
	       "%ld/%ld/%ld, open files %ld/%ld/%ld; kills %ld, start %.0f ms, restart-to-healthy "
	       "max %.0f ms\n",
	       ok ? "ok" : "FAILED", nworkers, ncycles, (unsigned long long)seed,
	       atomic_load(&cycles_done), atomic_load(&calls_ok), atomic_load(&calls_failed), v, atomic_load(&unverified),
	       atomic_load(&superseded), secs,
	       figs, rss_first, rss_max, rss_last, fds_first, fds_max, fds_last, kills_done,
	       first_start, restart_max_ms);
	return ok ? 0 : 1;
}
