/*
 * `s0 serve`: the local backend over HTTP (docs/architecture.md; docs/decisions.md).
 *
 * Opens the data directory with s0_local_open (one opener per directory),
 * serves it with s0_server_new on a loopback address, announces the address
 * in <data>/server.json for clients of the per-user local mode, and stops
 * cleanly on SIGINT/SIGTERM: the signals are blocked in every thread and
 * taken synchronously with sigwait() by the main thread, which then stops
 * accepting, lets requests in flight finish (s0_server_free drains them),
 * pauses every running sandbox filesystem-only (the runtimes live in this
 * process and close would abandon their writes) and closes the backend.
 * No work happens in a signal handler.
 *
 * Keys: requests need `Authorization: Bearer <key>`. The key the CLI uses
 * lives in <data>/cli-token (mode 0600); on first start a fresh one is made
 * and printed once, unless --token gives one.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <sandbox0/server.h>

#include "cli.h"
#include "localsrv.h"
#include "runtime_opt.h"

/* Team of the keys `s0 serve` makes: the team of s0_client_new_local()
 * clients, so `--local DIR` and the server on DIR see the same sandboxes. */
#define SERVE_TEAM "team_local"

static const cli_flag serve_flags[] = {
	{"data", 0, FLAG_STR, "DIR", "data directory (default $S0_DATA_DIR or "
	                             "~/.local/share/sandbox0)"},
	{"listen", 0, FLAG_STR, "ADDR", "address to listen on, HOST:PORT (default 127.0.0.1:0, "
	                                "an ephemeral port)"},
	{"token", 0, FLAG_STR, "KEY", "accept this API key (s0_…) instead of making one"},
	{"enable-admin", 0, FLAG_BOOL, NULL, "serve /admin/v1/faults, /admin/v1/clock and "
	                                     "/admin/v1/inspect (authenticated)"},
	{"manual-clock", 0, FLAG_BOOL, NULL, "run the backend on a manual clock, advanced through "
	                                     "/admin/v1/clock (implies --enable-admin)"},
	{"sdk-compat", 0, FLAG_BOOL, NULL, "zero times for unset expiries and 200 for accepted "
	                                   "pauses (published Python SDK)"},
	{"carriers", 0, FLAG_INT, "N", "warm carrier pool size, the most sandboxes running at "
	                               "once (default 16)"},
	{"runtime", 0, FLAG_STR, "NAME", "runtime running the sandboxes: auto (default, or "
	                                 "$S0_RUNTIME: gvisor where it can run, else sim, saying "
	                                 "why), sim (simulated) or gvisor (runsc, as root); "
	                                 "another name is refused"},
	{"object-store", 0, FLAG_STR, "NAME", "object store backend: pack (default) or files; a data "
	                                      "directory keeps the one it was made with"},
	{"run-limit", 0, FLAG_INT, "SECONDS", "longest continuous run of a sandbox before its timeout "
	                                      "action (UCloud: 86400); default 0, no limit"},
	{"meta", 0, FLAG_STR, "URL", "metadata store: a postgres:// URL (password from the URL or "
	                             "PGPASSWORD, never printed); default SQLite in the data directory"},
	{"objects", 0, FLAG_STR, "URL", "objects in an S3-compatible bucket: s3://BUCKET?endpoint="
	                                "http://HOST:PORT[&region=R] (credentials from "
	                                "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)"},
	{"key-file", 0, FLAG_STR, "FILE", "installation key file (default DATA/installation.key); "
	                                  "nodes sharing a bucket share one"},
	{"public-domain", 0, FLAG_STR, "DOMAIN", "also serve public routes by Host, "
	                                         "{public_id}.DOMAIN (path /r/{public_id}/ always)"},
	{"advertise", 0, FLAG_STR, "URL", "this node's URL for the other nodes on one --meta "
	                                  "store (default http://LISTEN when --meta is given); "
	                                  "they forward calls for sandboxes running here to it"},
	{"node-lease-ms", 0, FLAG_INT, "MS", "this node's lease in the metadata store: another node "
	                                     "takes its sandboxes over this long after it died "
	                                     "(default 30000)"},
	{"quiet", 'q', FLAG_BOOL, NULL, "no access log on stderr"},
	{0},
};

static void access_log(const char *line, void *payload)
{
	(void)payload;
	char now[40];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	fmt_rfc3339((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, now, sizeof now);
	fprintf(stderr, "%s %s\n", now, line);
}

/* HOST:PORT, [V6]:PORT, :PORT or PORT; "localhost" means 127.0.0.1. */
static int parse_listen(const char *s, char *host, size_t host_len, int *port)
{
	const char *colon = strrchr(s, ':');
	const char *p = colon ? colon + 1 : s;
	if (!colon || colon == s) {
		snprintf(host, host_len, "127.0.0.1");
	} else if (s[0] == '[' && colon[-1] == ']') {
		snprintf(host, host_len, "%.*s", (int)(colon - s - 2), s + 1);
	} else {
		snprintf(host, host_len, "%.*s", (int)(colon - s), s);
		if (!strcmp(host, "localhost"))
			snprintf(host, host_len, "127.0.0.1");
	}
	char *end;
	errno = 0;
	long n = strtol(p, &end, 10);
	if (!*p || *end || errno || n < 0 || n > 65535)
		return -1;
	*port = (int)n;
	return 0;
}

static bool is_loopback(const char *host)
{
	return !strncmp(host, "127.", 4) || !strcmp(host, "::1");
}

static char *new_key(void)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[40];
	size_t got = 0;
	while (got < sizeof rnd) {
		ssize_t r = getrandom(rnd + got, sizeof rnd - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return NULL;
		got += (size_t)r;
	}
	char *key = xmalloc(3 + sizeof rnd + 1);
	memcpy(key, "s0_", 3);
	for (size_t i = 0; i < sizeof rnd; i++) /* 252 = 7 * 36: reject nothing, bias < 2% */
		key[3 + i] = alphabet[rnd[i] % 36];
	key[3 + sizeof rnd] = 0;
	return key;
}

static int write_token(const char *path, const char *key)
{
	char *text = xasprintf("%s\n", key);
	int rc = write_file_atomic(path, text, strlen(text), 0600);
	free(text);
	return rc;
}

/* What s0_server_new accepts (server/auth.c): "s0_" then 8..250 printable
 * ASCII characters, no spaces. */
static bool key_valid(const char *key)
{
	size_t len = strlen(key);
	if (strncmp(key, "s0_", 3) || len < 11 || len > 253)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)key[i] < 0x21 || (unsigned char)key[i] > 0x7e)
			return false;
	return true;
}

/*
 * The keys the server accepts: --token and/or <data>/cli-token, made if
 * neither. Every key is checked before anything is written; when there is no
 * cli-token yet, *store is the key to write there (keys[*nkeys - 1] or
 * the given one), which run_serve does once the server has accepted it.
 */
static int setup_keys(cli *c, const char *data, char **keys, int *nkeys, char **store,
                      bool *made)
{
	const char *given = opt_str(c, "token");
	char *why = NULL, *path = xasprintf("%s/cli-token", data);
	char *stored = localsrv_read_token(data, &why);
	int rc = CLI_EXIT_OK;
	*nkeys = 0;
	*store = NULL;
	*made = false;
	if (why) {
		rc = cli_failf("reading the API key", "%s", why);
		goto out;
	}
	if (stored && !key_valid(stored)) {
		rc = cli_failf("reading the API key",
		               "%s does not hold a valid key (\"s0_\" followed by 8..250 printable "
		               "characters); fix or remove it",
		               path);
		goto out;
	}
	if (given)
		keys[(*nkeys)++] = xstrdup(given);
	if (stored && (!given || strcmp(stored, given)))
		keys[(*nkeys)++] = xstrdup(stored);
	if (!stored) {
		char *key = given ? xstrdup(given) : new_key();
		if (!key) {
			rc = cli_failf("making an API key", "getrandom: %s", strerror(errno));
			goto out;
		}
		if (!given)
			keys[(*nkeys)++] = xstrdup(key);
		*store = key;
		*made = !given;
	}
out:
	free(stored);
	free(why);
	free(path);
	return rc;
}

static int write_server_json(const char *data, const char *url, const char *address)
{
	char started[40];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	fmt_rfc3339((int64_t)ts.tv_sec * 1000, started, sizeof started);
	cj *o = cj_object();
	cj_set(o, "url", cj_str(url));
	cj_set(o, "address", cj_str(address));
	cj_set(o, "pid", cj_int(getpid()));
	cj_set(o, "data_dir", cj_str(data));
	cj_set(o, "started_at", cj_str(started));
	char *text = cj_pretty(o), *path = xasprintf("%s/server.json", data);
	int rc = write_file_atomic(path, text, strlen(text), 0644);
	free(text);
	free(path);
	cj_free(o);
	return rc;
}

/* Remove server.json if it still names this process. */
static void remove_server_json(const char *data)
{
	char *path = xasprintf("%s/server.json", data);
	size_t len;
	char *text = read_all(path, &len);
	cj *v = text ? cj_parse(text, len, NULL) : NULL;
	const cj *pid = cj_get(v, "pid");
	if (cJSON_IsNumber(pid) && pid->valueint == (int)getpid())
		unlink(path);
	cj_free(v);
	free(text);
	free(path);
}

/* Tell a starting CLI (localsrv.c) that server.json is in place. */
static void signal_ready(void)
{
	const char *fd_text = getenv("S0_SERVE_READY_FD");
	if (!fd_text)
		return;
	int fd = atoi(fd_text);
	unsetenv("S0_SERVE_READY_FD");
	if (fd > 2) {
		if (write(fd, "ready\n", 6) < 0) {
			/* the CLI gave up waiting; nothing to do */
		}
		close(fd);
	}
}

static int run_serve(cli *c)
{
	char host[64];
	int port = 0, rc;
	sigset_t sigs;
	if (parse_listen(opt_str(c, "listen") ? opt_str(c, "listen") : "127.0.0.1:0", host,
	                 sizeof host, &port) < 0)
		return cli_usage_error(c, "invalid --listen \"%s\": want HOST:PORT",
		                       opt_str(c, "listen"));

	/* block the stop signals in this thread and every thread started from now on */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	long long carriers = 0, run_limit = 0, lease_ms = 0;
	if (opt_int(c, "carriers", 1, 4096, &carriers) < 0 ||
	    opt_int(c, "node-lease-ms", 300, 86400000, &lease_ms) < 0 ||
	    opt_int(c, "run-limit", 0, 100LL * 365 * 86400, &run_limit) < 0)
		return CLI_EXIT_USAGE;

	const char *given = opt_str(c, "token");
	if (given && !key_valid(given)) /* before the data directory is touched */
		return cli_failf("reading the API key", "--token must be \"s0_\" followed by 8..250 "
		                                       "printable characters without spaces");
	char *data = opt_str(c, "data") ? xstrdup(opt_str(c, "data")) : cli_default_data_dir();
	char *keys[2] = {NULL, NULL}, *store = NULL, *admin = NULL, *admin_path = NULL;
	char *advertise = NULL;
	int nkeys = 0;
	bool made = false;
	s0_local *local = NULL;
	s0_server *srv = NULL;
	s0_error *err = NULL;
	if (mkdir_p(data, 0700) < 0) {
		rc = cli_failf("opening the data directory", "%s: %s", data, strerror(errno));
		goto out;
	}
	double t0 = mono_now_s();
	s0_local_options lo = S0_LOCAL_OPTIONS_INIT;
	lo.manual_clock = opt_bool(c, "manual-clock");
	lo.warm_carriers = (int32_t)carriers; /* 0 = the default */
	lo.runtime = cli_runtime_wanted(c); /* auto by default; an unknown one fails the open */
	lo.object_store = opt_str(c, "object-store"); /* NULL: as recorded, pack when new */
	lo.continuous_run_limit_ms = run_limit * 1000; /* 0 = no limit */
	lo.meta = opt_str(c, "meta"); /* NULL: SQLite in the data directory */
	if (opt_str(c, "objects") && lo.object_store) {
		rc = cli_failf("reading the options", "give --objects or --object-store, not both");
		goto out;
	}
	if (opt_str(c, "objects"))
		lo.object_store = opt_str(c, "objects");
	lo.key_file = opt_str(c, "key-file");
	lo.node_lease_ms = lease_ms;
	/* other nodes reach this one here: the given URL, or the listen
	 * address when it names a port (an ephemeral one is known only later) */
	if (opt_str(c, "advertise"))
		advertise = xstrdup(opt_str(c, "advertise"));
	else if (lo.meta && port)
		advertise = xasprintf(strchr(host, ':') ? "http://[%s]:%d" : "http://%s:%d", host, port);
	lo.advertise_url = advertise;
	rc = s0_local_open(data, &lo, &local, &err);
	if (rc < 0) {
		bool locked = rc == S0_ECONFLICT && !strcmp(s0_error_reason(err), "data_dir_locked");
		cli_fail("opening the data directory", err, rc);
		rc = locked ? SERVE_EXIT_LOCKED : CLI_EXIT_FAIL;
		goto out;
	}
	double open_ms = (mono_now_s() - t0) * 1000;
	cli_runtime_say("s0 serve", lo.runtime, local); /* auto: which one and why */
	char *why = NULL, *rt_name = cli_runtime_chosen(local, &why);
	printf("s0 serve: data in %s (opened in %.0f ms, runtime %s)%s\n", data, open_ms, rt_name,
	       lo.manual_clock ? "; manual clock" : "");
	free(rt_name);
	free(why);
	rc = setup_keys(c, data, keys, &nkeys, &store, &made);
	if (rc)
		goto out;

	s0_server_api_key api_keys[2];
	for (int i = 0; i < nkeys; i++)
		api_keys[i] = (s0_server_api_key){keys[i], SERVE_TEAM};
	s0_server_options so = S0_SERVER_OPTIONS_INIT;
	so.listen_address = host;
	so.port = port;
	so.api_keys = api_keys;
	so.api_keys_len = (size_t)nkeys;
	if (opt_bool(c, "enable-admin") || lo.manual_clock)
		so.flags |= S0_SERVER_ENABLE_ADMIN;
	if (opt_bool(c, "sdk-compat"))
		so.flags |= S0_SERVER_ZERO_TIME_COMPAT | S0_SERVER_PAUSE_200_ONLY;
	if (!opt_bool(c, "quiet"))
		so.log_cb = access_log;
	admin = new_key(); /* the admin credential of this run: s0 serve keys */
	if (!admin) {
		rc = cli_failf("making the admin credential", "getrandom: %s", strerror(errno));
		goto out;
	}
	memcpy(admin, "s0admin", 7); /* never taken for a team key ("s0_…") */
	so.admin_token = admin;
	rc = s0_server_new(local, &so, &srv, &err);
	if (rc == S0_OK && opt_str(c, "public-domain"))
		rc = s0_server_set_public_domain(srv, opt_str(c, "public-domain"), &err);
	if (rc < 0) {
		rc = cli_fail("starting the server", err, rc);
		goto out;
	}
	if (store) {
		char *path = xasprintf("%s/cli-token", data);
		if (write_token(path, store) < 0) {
			rc = cli_failf("storing the API key", "%s: %s", path, strerror(errno));
			free(path);
			goto out;
		}
		if (made)
			printf("API key (shown once; stored for the s0 command in %s): %s\n", path,
			       store);
		free(path);
	}
	admin_path = xasprintf("%s/admin-token", data);
	if (write_token(admin_path, admin) < 0) {
		rc = cli_failf("storing the admin credential", "%s: %s", admin_path, strerror(errno));
		goto out;
	}
	bool v6 = strchr(host, ':') != NULL;
	char *address = xasprintf(v6 ? "[%s]:%d" : "%s:%d", host, s0_server_port(srv));
	char *url = xasprintf("http://%s", address);
	if (write_server_json(data, url, address) < 0) {
		rc = cli_failf("writing server.json", "%s/server.json: %s", data, strerror(errno));
		free(address);
		free(url);
		goto out;
	}
	if (!is_loopback(host))
		fprintf(stderr, "warning: listening on %s, not a loopback address: plain HTTP, keys "
		                "travel unencrypted\n", host);
	printf("Listening on %s%s\n", url,
	       so.flags & S0_SERVER_ENABLE_ADMIN ? " (admin endpoints enabled)" : "");
	printf("Use it with: s0 --api-url %s --token \"$(cat %s/cli-token)\" sandbox list\n", url,
	       data);
	printf("Manage API keys of teams with: s0 serve keys --data %s create --team TEAM\n", data);
	fflush(stdout);
	signal_ready();
	free(address);
	free(url);

	int sig = 0;
	while (sigwait(&sigs, &sig) != 0)
		;
	printf("Received %s: stopping (finishing requests in flight)\n",
	       sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
	fflush(stdout);
	remove_server_json(data);
	s0_server_free(srv);
	srv = NULL;
	/* runtimes live in this process: pause them so their writes are committed */
	cli_pause_running(local, false, 30000, stdout);
	rc = CLI_EXIT_OK;
out:
	s0_server_free(srv);
	s0_local_close(local);
	free(advertise);
	if (rc == CLI_EXIT_OK)
		printf("Stopped.\n");
	for (int i = 0; i < nkeys; i++)
		free(keys[i]);
	if (admin_path) /* the credential ends with this run */
		unlink(admin_path);
	free(admin_path);
	free(admin);
	free(store);
	free(data);
	return rc;
}

const cli_cmd cmd_serve = {
	.name = "serve",
	.summary = "Serve a local backend over HTTP (the Sandbox0 API on loopback)",
	.flags = serve_flags,
	.run = run_serve,
	.children = (const cli_cmd *const[]){&cmd_serve_keys, NULL},
	.details = "Writes <data>/server.json ({\"url\", \"address\", \"pid\"}) for clients and keeps\n"
	           "the CLI's key in <data>/cli-token (0600). Stop with SIGINT or SIGTERM: requests\n"
	           "in flight finish, running sandboxes are paused (their files are kept), then\n"
	           "the backend closes. Exit status 3: another process holds the data directory.\n"
	           "\n"
	           "Keys: --token and <data>/cli-token belong to team \"team_local\" (the team of\n"
	           "--local DIR); keys made with `s0 serve keys create --team T` belong to T and\n"
	           "are honoured at once, also by a running server. Each run makes a fresh admin\n"
	           "credential in <data>/admin-token (0600), the only key /admin/v1/api-keys takes.\n",
};
