/*
 * Capture -> restore round trips of the checkpoint engine: PIDs,
 * variables, cwd, fd offsets, /tmp, sessions, heaps (memhash) come back;
 * heaps are lazy (chunks fetched only on touch); recapture rewrites only
 * dirty chunks; zero chunks cost nothing. Behaviour rows at module level:
 * MEM-03 (execution image kept), MEM-10 (sockets dropped), MEM-11 (procd
 * version recorded, kept by the restored guest), SES-06 (sessions keep
 * their PID), COST-05 (image bytes and restore reads follow the working
 * set).
 */
#include "cksuites.h"

#include <stdio.h>
#include <stdlib.h>

static ckfix F;

static void setup(void)
{
	ckfix_open(&F, 0, 0);
}

static void teardown(void)
{
	ckfix_close(&F);
}

static char *pids_and_fds(s0__guest *g)
{
	cJSON *insp = s0__guest_inspect(g), *p, *out = cJSON_CreateArray();
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(insp, "processes"))
	{
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "pid", cJSON_Duplicate(cJSON_GetObjectItem(p, "pid"), 1));
		cJSON_AddItemToObject(o, "argv", cJSON_Duplicate(cJSON_GetObjectItem(p, "argv"), 1));
		cJSON_AddItemToObject(o, "cwd", cJSON_Duplicate(cJSON_GetObjectItem(p, "cwd"), 1));
		cJSON_AddItemToObject(o, "fds", cJSON_Duplicate(cJSON_GetObjectItem(p, "fds"), 1));
		cJSON_AddItemToObject(o, "state", cJSON_Duplicate(cJSON_GetObjectItem(p, "state"), 1));
		cJSON_AddItemToArray(out, o);
	}
	char *s = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	cJSON_Delete(insp);
	return s;
}

static char *session_id(const char *spec)
{
	cJSON *b = rtfix_json(spec), *d;
	int st;
	ck_assert_int_eq(s0__sessions_create_json(F.ses, F.rt.g, b, NULL, &d, &st, NULL), S0_OK);
	char *id = strdup(rtfix_str(d, "id"));
	cJSON_Delete(b);
	cJSON_Delete(d);
	return id;
}

START_TEST(round_trip)
{
	char *r = rtfix_repl(&F.rt);
	free(rtfix_out(&F.rt, r, "X=42; export Y=y; cd /tmp; alloc 5M; alloc -z 3M; listen 9000"));
	free(rtfix_out(&F.rt, r, "sh -c 'echo start; sleep 100; echo after' >> /tmp/log &"));
	free(rtfix_out(&F.rt, r, "printf 'a\\nb\\n' > /tmp/in; sh -c 'read A; sleep 50; read B; "
	                         "echo $A$B > /tmp/ab' < /tmp/in &"));
	free(rtfix_out(&F.rt, r, "echo data > /tmp/data; mkdir -p /tmp/d/e"));
	char *h1 = rtfix_out(&F.rt, r, "memhash");
	char *sid = session_id("{\"command\":[\"sh\",\"-c\",\"echo s1; sleep 80; echo s2\"]}");
	int32_t spid;
	ck_assert_int_eq(s0__sessions_pid(F.ses, sid, &spid, NULL), S0_OK);
	ck_assert_int_eq(s0__sessions_sync(F.ses, F.rt.g, NULL), S0_OK);
	char *before = pids_and_fds(F.rt.g);
	int64_t vt = s0__guest_vtime_ms(F.rt.g);
	s0__ckpt_image_info info = ckfix_capture_ok(&F);
	ck_assert_uint_eq(info.chunks_zero, 3);
	ck_assert_uint_eq(info.chunks_written, 5);
	ck_assert_uint_eq(info.sockets_dropped, 1);
	ck_assert_uint_eq(info.parts, 3);
	ck_restored res;
	s0_error *e = NULL;
	int rc = ckfix_restore(&F, &info.image_id, false, &res, &e);
	ck_assert_msg(rc == S0_OK, "restore: %s", e ? s0_error_message(e) : "");
	ASSERT_STR(res.info.rootfs_generation, "gen-1");
	ASSERT_STR(s0__guest_procd_version(res.guest), "procd-sim/1");
	ckfix_adopt(&F, &res);
	char *after = pids_and_fds(F.rt.g);
	ASSERT_STR(before, after);
	ck_assert_int_eq(s0__guest_vtime_ms(F.rt.g), vt);
	s0__heap_stats hs;
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.resident, 0);
	ck_assert_uint_eq(hs.lazy, 8); /* chunk ids not even read yet */
	ck_assert_uint_eq(hs.fetched_on_touch, 0);
	char *o = rtfix_out(&F.rt, r, "echo $X $Y; pwd; cat /tmp/data; ls /tmp/d; cat /tmp/log");
	ASSERT_STR(o, "42 y\n/tmp\ndata\ne\nstart\n");
	free(o);
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.fetched_on_touch, 0);
	char *h2 = rtfix_out(&F.rt, r, "memhash");
	ASSERT_STR(h1, h2);
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.fetched_on_touch, 5);
	ck_assert_uint_eq(hs.zero, 3);
	s0__proc_info pi;
	int32_t rpid;
	ck_assert_int_eq(s0__ctx_pid(F.rt.g, r, &rpid, NULL), S0_OK);
	ck_assert_int_eq(s0__guest_proc_get(F.rt.g, rpid, &pi, NULL), S0_OK);
	ck_assert_uint_eq(pi.sockets, 0); /* MEM-10 */
	/* SES-06: same attempt and PID, no recovery attempt */
	ck_assert_int_eq(s0__sessions_memory_restored(F.ses, F.rt.g, 2, NULL), S0_OK);
	int32_t spid2;
	ck_assert_int_eq(s0__sessions_pid(F.ses, sid, &spid2, NULL), S0_OK);
	ck_assert_int_eq(spid, spid2);
	/* background processes go on from where they were, at their offsets */
	ck_assert_int_eq(s0__guest_advance(F.rt.g, 100000, NULL), S0_OK);
	o = rtfix_out(&F.rt, r, "cat /tmp/log /tmp/ab");
	ASSERT_STR(o, "start\nafter\nab\n");
	free(o);
	cJSON *d;
	ck_assert_int_eq(s0__sessions_get_json(F.ses, F.rt.g, sid, &d, NULL), S0_OK);
	ASSERT_STR(rtfix_str(d, "phase"), "exited");
	ck_assert_int_eq(rtfix_int(d, "restart_count"), 0);
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 1);
	cJSON_Delete(d);
	free(before);
	free(after);
	free(h1);
	free(h2);
	free(sid);
	free(r);
}
END_TEST

START_TEST(incremental_recapture)
{
	char *r = rtfix_repl(&F.rt);
	free(rtfix_out(&F.rt, r, "alloc 100M"));
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	ck_assert_uint_eq(a.chunks_written, 100);
	s0__objstore_counters c0, c1;
	s0__objstore_counters_get(F.os, &c0);
	free(rtfix_out(&F.rt, r, "memtouch 10M 1M"));
	s0__ckpt_image_info b = ckfix_capture_ok(&F);
	s0__objstore_counters_get(F.os, &c1);
	ck_assert_uint_eq(b.chunks_written, 1);
	ck_assert_uint_eq(b.chunks_reused, 99);
	ck_assert_uint_lt(c1.plain_bytes_written - c0.plain_bytes_written, 2u << 20);
	ck_assert(!s0__objid_eq(&a.image_id, &b.image_id));
	/* unchanged: nothing dirty, nothing written but the small state */
	s0__ckpt_image_info c = ckfix_capture_ok(&F);
	ck_assert_uint_eq(c.chunks_written, 0);
	ck_assert_uint_eq(c.chunks_reused, 100);
	/* after a restore the clean, never touched chunks are reused without a fetch */
	ck_restored res;
	ck_assert_int_eq(ckfix_restore(&F, &b.image_id, false, &res, NULL), S0_OK);
	ckfix_adopt(&F, &res);
	free(rtfix_out(&F.rt, r, "memtouch 50M 4K"));
	s0__ckpt_image_info d = ckfix_capture_ok(&F);
	ck_assert_uint_eq(d.chunks_written, 1);
	ck_assert_uint_eq(d.chunks_reused, 99);
	s0__heap_stats hs;
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.fetched_on_touch, 1);
	ck_assert_uint_eq(hs.dirty, 0);
	/* the recaptured image restores to the same bytes */
	char *h1 = rtfix_out(&F.rt, r, "memhash");
	ck_assert_int_eq(ckfix_restore(&F, &d.image_id, true, &res, NULL), S0_OK);
	ckfix_adopt(&F, &res);
	s0__guest_prefetch_wait(F.rt.g);
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.prefetched, 100);
	ck_assert_uint_eq(hs.lazy, 0);
	char *h2 = rtfix_out(&F.rt, r, "memhash");
	ASSERT_STR(h1, h2);
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.fetched_on_touch, 0);
	free(h1);
	free(h2);
	free(r);
}
END_TEST

START_TEST(zero_chunks_cost_nothing)
{
	char *r = rtfix_repl(&F.rt);
	free(rtfix_out(&F.rt, r, "alloc -z 256M; alloc 1M; alloc -z 1G"));
	s0__objstore_counters c0, c1;
	s0__objstore_counters_get(F.os, &c0);
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	s0__objstore_counters_get(F.os, &c1);
	ck_assert_uint_eq(a.heap_chunks, 1281);
	ck_assert_uint_eq(a.chunks_zero, 1280);
	ck_assert_uint_eq(a.chunks_written, 1);
	ck_assert_uint_lt(c1.plain_bytes_written - c0.plain_bytes_written, 2u << 20);
	ck_restored res;
	s0__ckpt_manifest_info mi;
	ck_assert_int_eq(s0__ckpt_image_read(F.ck, &a.image_id, &mi, NULL), S0_OK);
	ck_assert_uint_eq(mi.objects, 3 + 2 + 1); /* parts, table pages, one chunk */
	ck_assert_int_eq(ckfix_restore(&F, &a.image_id, false, &res, NULL), S0_OK);
	ckfix_adopt(&F, &res);
	char *h = rtfix_out(&F.rt, r, "memhash");
	ck_assert_ptr_nonnull(strstr(h, " 1343225856\n"));
	free(h);
	free(r);
}
END_TEST

START_TEST(cost_follows_working_set)
{
	/* COST-05: image bytes and the bytes a restore reads scale with the
	 * working set; a warm guest still reads the image objects. */
	uint64_t written[2], fetched[2];
	for (int i = 0; i < 2; i++) {
		teardown();
		setup();
		char *r = rtfix_repl(&F.rt);
		free(rtfix_out(&F.rt, r, i ? "alloc 128M" : "alloc 64M"));
		s0__objstore_counters c0, c1;
		s0__objstore_counters_get(F.os, &c0);
		s0__ckpt_image_info a = ckfix_capture_ok(&F);
		s0__objstore_counters_get(F.os, &c1);
		written[i] = c1.bytes_written - c0.bytes_written;
		ck_restored res;
		ck_assert_int_eq(ckfix_restore(&F, &a.image_id, false, &res, NULL), S0_OK);
		ckfix_adopt(&F, &res);
		free(rtfix_out(&F.rt, r, "memhash"));
		s0__ckpt_stats st;
		s0__ckpt_stats_get(F.ck, &st);
		fetched[i] = st.chunk_bytes_fetched;
		free(r);
	}
	double wr = (double)written[1] / (double)written[0];
	ck_assert_msg(wr > 1.8 && wr < 2.2, "image bytes ratio %.2f", wr);
	ck_assert_uint_eq(fetched[0], 64u << 20);
	ck_assert_uint_eq(fetched[1], 128u << 20);
}
END_TEST

START_TEST(prefetch_races_touch)
{
	char *r = rtfix_repl(&F.rt);
	free(rtfix_out(&F.rt, r, "alloc 32M; alloc -z 4M"));
	char *h1 = rtfix_out(&F.rt, r, "memhash");
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	for (int i = 0; i < 3; i++) {
		ck_restored res;
		ck_assert_int_eq(ckfix_restore(&F, &a.image_id, true, &res, NULL), S0_OK);
		ckfix_adopt(&F, &res);
		char *h2 = rtfix_out(&F.rt, r, "memhash"); /* races the prefetch thread */
		ASSERT_STR(h1, h2);
		free(h2);
		s0__guest_prefetch_wait(F.rt.g);
		s0__heap_stats hs;
		s0__guest_heap_stats(F.rt.g, &hs);
		ck_assert_uint_eq(hs.fetched_on_touch + hs.prefetched, 32);
		ck_assert_uint_eq(hs.lazy, 0);
	}
	free(h1);
	free(r);
}
END_TEST

static int count_root(void *ctx, int kind, const s0__objid *id)
{
	ck_assert_int_eq(kind, 2); /* S0__GC_ROOT_OBJECT */
	ck_assert(!s0__objid_is_zero(id));
	(*(int *)ctx)++;
	return 0;
}

START_TEST(gc_roots)
{
	char *r = rtfix_repl(&F.rt);
	free(rtfix_out(&F.rt, r, "alloc 3M; alloc -z 2M"));
	s0__ckpt_image_info a = ckfix_capture_ok(&F);
	s0__ckpt_manifest_info mi;
	ck_assert_int_eq(s0__ckpt_image_read(F.ck, &a.image_id, &mi, NULL), S0_OK);
	ASSERT_STR(mi.sandbox_id, "sb-1");
	ck_assert_int_eq(mi.runtime_generation, 1);
	ck_assert_uint_eq(mi.heap_chunks, 5);
	int n = 0;
	ck_assert_int_eq(s0__ckpt_image_roots(F.ck, &a.image_id, count_root, &n, NULL), S0_OK);
	ck_assert_int_eq(n, (int)(1 + mi.objects));
	ck_assert_int_eq(n, 1 + 3 + 1 + 3); /* manifest, parts, the REPL's table page, chunks */
	free(r);
}
END_TEST

Suite *ck_capture_suite(void)
{
	Suite *s = suite_create("checkpoint-capture");
	TCase *t = tcase_create("capture");
	tcase_set_timeout(t, 60);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, round_trip);
	tcase_add_test(t, incremental_recapture);
	tcase_add_test(t, zero_chunks_cost_nothing);
	tcase_add_test(t, cost_follows_working_set);
	tcase_add_test(t, gc_roots);
	tcase_add_test(t, prefetch_races_touch);
	suite_add_tcase(s, t);
	return s;
}
