/*
 * Soak: the router's memory over many requests on ONE engine (issue 21's
 * memory question). A real local backend (tests/fuzz/fz_engine.h, never
 * reset) takes a fixed, repeating mix of requests — reads, lists, file
 * writes/reads/stats/lists/deletes, config updates, refreshes, network
 * policy round trips, snapshot lists, bad requests (400/404/405/413), a
 * claim + delete, a pause + resume — whose retained state is bounded, so
 * whatever grows is retained per request.
 *
 *   router_rss FIRST TOTAL BOUND_MB [GROWTH_MB]
 *
 * prints RSS after a warm-up of 1000 requests, after FIRST and after TOTAL
 * requests, and one summary line; exits 1 when the RSS after TOTAL is over
 * BOUND_MB, or when it grew by more than GROWTH_MB (default 32) between
 * FIRST and TOTAL, or when a response broke the router's invariants
 * (fz_route aborts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fz_engine.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Request number i of the repeating mix (the cycle is 40 requests long). */
static void one(fz_engine *f, long i)
{
	char path[256];
	int k = (int)(i % 40);
	int slot = (int)((i / 40) % 16); /* 16 file names, rewritten in turn */
	switch (k) {
	case 0: fz_call(f, "GET", "/api/v1/sandboxes", NULL); break;
	case 1: fz_call(f, "GET", "/api/v1/sandboxes/@0", NULL); break;
	case 2: fz_call(f, "GET", "/api/v1/sandboxes/@1/status", NULL); break;
	case 3:
		snprintf(path, sizeof path, "/api/v1/sandboxes/@0/files?path=/workspace/f%d", slot);
		fz_call(f, "POST", path, "0123456789abcdef0123456789abcdef");
		break;
	case 4:
		snprintf(path, sizeof path, "/api/v1/sandboxes/@0/files?path=/workspace/f%d", slot);
		fz_call(f, "GET", path, NULL);
		break;
	case 5:
		snprintf(path, sizeof path, "/api/v1/sandboxes/@0/files/stat?path=/workspace/f%d", slot);
		fz_call(f, "GET", path, NULL);
		break;
	case 6: fz_call(f, "GET", "/api/v1/sandboxes/@0/files/list?path=/workspace", NULL); break;
	case 7: fz_call(f, "PUT", "/api/v1/sandboxes/@0", "{\"config\":{\"ttl\":3600}}"); break;
	case 8: fz_call(f, "POST", "/api/v1/sandboxes/@0/refresh", "{\"duration\":60}"); break;
	case 9: fz_call(f, "GET", "/api/v1/sandboxes/@0/network", NULL); break;
	case 10:
		fz_call(f, "PUT", "/api/v1/sandboxes/@0/network",
		        "{\"mode\":\"allow-all\",\"egress\":{\"denied_cidrs\":[\"10.0.0.0/8\"]}}");
		break;
	case 11: fz_call(f, "GET", "/api/v1/sandboxes/@0/snapshots", NULL); break;
	case 12: fz_call(f, "GET", "/api/v1/sandbox-rootfs-snapshots/@S", NULL); break;
	case 13: fz_call(f, "POST", "/api/v1/sandboxes", "{\"template\":"); break;          /* 400 */
	case 14: fz_call(f, "GET", "/api/v1/sandboxes/sb_nope", NULL); break;              /* 404 */
	case 15: fz_call(f, "PATCH", "/api/v1/sandboxes/@0", NULL); break;                 /* 405 */
	case 16: fz_call(f, "POST", "/api/v1/sandboxes", "{\"template\":\"default\",\"template\":1}"); break;
	case 17: fz_call(f, "GET", "/api/v1/nothing/here", NULL); break;
	case 18: fz_call(f, "GET", "/api/v1/sandboxes?status=paused&limit=5", NULL); break;
	case 19:
		snprintf(path, sizeof path, "/api/v1/sandboxes/@0/files?path=/tmp/t%d", slot);
		fz_call(f, "POST", path, "tmpfs bytes");
		break;
	case 20:
		snprintf(path, sizeof path, "/api/v1/sandboxes/@0/files?path=/tmp/t%d", slot);
		fz_call(f, "DELETE", path, NULL);
		break;
	case 21: fz_call(f, "GET", "/healthz", NULL); break;
	case 22: fz_call(f, "GET", "/metadata", NULL); break;
	case 23: fz_call(f, "GET", "/api/v1/sandboxes/@1/files?path=/workspace/a.txt", NULL); break;
	case 24:
		if (i % 400 == 24) { /* a whole claim/delete cycle every 400 requests */
			char id[64];
			if (fz_call_get(f, "POST", "/api/v1/sandboxes", "{\"template\":\"default\"}",
			                "sandbox_id", id) != 201 || !*id) {
				fprintf(stderr, "router_rss: claim failed at request %ld\n", i);
				exit(1);
			}
			snprintf(path, sizeof path, "/api/v1/sandboxes/%s", id);
			fz_call(f, "DELETE", path, NULL);
			s0_local_quiesce(f->local, 30000, NULL);
		} else {
			fz_call(f, "GET", "/api/v1/sandboxes/@1", NULL);
		}
		break;
	case 25:
		if (i % 2000 == 25) { /* pause and resume @1 every 2000 requests */
			fz_call(f, "POST", "/api/v1/sandboxes/@1/resume", "{}");
			s0_local_quiesce(f->local, 30000, NULL);
			fz_call(f, "POST", "/api/v1/sandboxes/@1/pause", "{}");
			s0_local_quiesce(f->local, 30000, NULL);
		} else {
			fz_call(f, "GET", "/api/v1/sandboxes/@0/status", NULL);
		}
		break;
	default: fz_call(f, "GET", "/api/v1/sandboxes/@0", NULL); break;
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: router_rss FIRST TOTAL BOUND_MB [GROWTH_MB]\n");
		return 2;
	}
	long first = atol(argv[1]), total = atol(argv[2]);
	long bound_kib = atol(argv[3]) * 1024, growth_kib = (argc > 4 ? atol(argv[4]) : 32) * 1024;
	if (first <= 1000 || total < first || bound_kib <= 0) {
		fprintf(stderr, "router_rss: need 1000 < FIRST <= TOTAL and BOUND_MB > 0\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines as they happen */
	fz_engine f;
	fz_engine_open(&f, 0);
	double t0 = now_s();
	long rss_warm = 0, rss_first = 0;
	for (long i = 0; i < total; i++) {
		one(&f, i);
		if (i + 1 == 1000) {
			rss_warm = fz_rss_kib();
			printf("router_rss: %ld requests, RSS %ld KiB\n", i + 1, rss_warm);
		}
		if (i + 1 == first) {
			rss_first = fz_rss_kib();
			printf("router_rss: %ld requests, RSS %ld KiB\n", i + 1, rss_first);
		}
	}
	long rss_total = fz_rss_kib();
	double secs = now_s() - t0;
	printf("router_rss: %ld requests, RSS %ld KiB\n", total, rss_total);
	/* the fixtures' sandboxes and the claimed ones: count what is left */
	fz_engine_close(&f);
	bool ok = rss_total <= bound_kib && rss_total - rss_first <= growth_kib;
	printf("router_rss: %s: RSS %ld KiB after 1000, %ld KiB after %ld, %ld KiB after %ld "
	       "requests (bound %ld KiB, growth bound %ld KiB), %.0f requests/s\n",
	       ok ? "ok" : "FAILED", rss_warm, rss_first, first, rss_total, total, bound_kib,
	       growth_kib, (double)total / secs);
	return ok ? 0 : 1;
}
