/* Checkpoint test fixture (ckfix.h). */
#include "ckfix.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "local/objects/pack/objdir.h"

static int hook(void *payload, int phase, const char *sandbox_id)
{
	ckfix *f = payload;
	(void)sandbox_id;
	f->calls[phase]++;
	if (phase == S0__CKPT_PREPARE && f->unhold_at_call &&
	    (uint64_t)f->calls[phase] == f->unhold_at_call)
		s0__ckpt_budget_unhold(f->budget, UINT64_MAX);
	if (phase == S0__CKPT_PREPARE && f->calls[phase] <= f->hold_prepare_until)
		return S0__HOOK_HOLD;
	return f->verdict[phase];
}

static void on_damage(void *payload, int32_t pid, const s0_error *e)
{
	ckfix *f = payload;
	(void)e;
	f->damage_calls++;
	f->damage_pid = pid;
}

void ckfix_open(ckfix *f, uint64_t budget_total, uint64_t image_limit)
{
	memset(f, 0, sizeof *f);
	rtfix_open(&f->rt, NULL);
	f->dir = s0_test_tmpdir("ckpt");
	uint8_t key[32];
	memset(key, 7, sizeof key);
	ck_assert_int_eq(s0__objstore_open_dir(f->dir, key, NULL, &f->os, NULL), S0_OK);
	if (budget_total)
		ck_assert_int_eq(s0__ckpt_budget_new(budget_total, image_limit, &f->budget, NULL), S0_OK);
	s0__ckpt_opts o = {.budget = f->budget, .hook = hook, .hook_payload = f};
	ck_assert_int_eq(s0__ckpt_new(f->os, &o, &f->ck, NULL), S0_OK);
	s0__rt_fp_host(&f->fp, "s0-sim/1"); /* the simulated runtime's */
	snprintf(f->fp.template_image, sizeof f->fp.template_image, "tpl-default");
	snprintf(f->fp.procd_version, sizeof f->fp.procd_version, "procd-sim/1");
	f->fp.cpu_millis = 1000;
	f->fp.memory_bytes = 1 << 30;
	s0__sessions_opts so = {.clock = &f->rt.clock, .generation = 1};
	ck_assert_int_eq(s0__sessions_new(&so, &f->ses, NULL), S0_OK);
}

void ckfix_close(ckfix *f)
{
	s0__sessions_free(f->ses);
	rtfix_close(&f->rt);
	s0__ckpt_free(f->ck);
	s0__ckpt_budget_free(f->budget);
	s0__objstore_free(f->os);
	s0_test_rmrf(f->dir);
	free(f->dir);
}

const s0__rt_image_src *ckfix_src(ckfix *f)
{
	f->ref = (s0__sim_image_ref){.guest = f->rt.g, .tmpfs = f->rt.tmp};
	s0__sim_image_src(&f->ref, &f->src);
	return &f->src;
}

int ckfix_capture(ckfix *f, s0__ckpt_image_info *out, s0_error **err)
{
	void *ses = NULL;
	size_t ses_len = 0;
	ck_assert_int_eq(s0__sessions_serialize(f->ses, &ses, &ses_len, NULL), S0_OK);
	s0__ckpt_meta m = {.sandbox_id = "sb-1", .rootfs_generation = "gen-1",
	                   .runtime_generation = 1, .fingerprint = &f->fp, .sessions = ses,
	                   .sessions_len = ses_len};
	s0__ckpt_prepare_opts po = {.clock = &f->rt.clock};
	int rc = s0__ckpt_capture_all(f->ck, ckfix_src(f), &m, &po, out, err);
	free(ses);
	return rc;
}

s0__ckpt_image_info ckfix_capture_ok(ckfix *f)
{
	s0__ckpt_image_info info;
	s0_error *e = NULL;
	int rc = ckfix_capture(f, &info, &e);
	ck_assert_msg(rc == S0_OK, "capture: %s", e ? s0_error_message(e) : "?");
	return info;
}

void ck_restored_clear(ck_restored *r)
{
	if (!r)
		return;
	s0__guest_free(r->guest);
	s0__tmpfs_free(r->tmpfs);
	s0__sessions_free(r->sessions);
	memset(r, 0, sizeof *r);
}

int ckfix_restore(ckfix *f, const s0__objid *image, bool prefetch, ck_restored *r,
                  s0_error **err)
{
	memset(r, 0, sizeof *r);
	s0__ckpt_restore_opts o = {.sandbox_id = "sb-1", .rootfs_generation = "gen-1",
	                           .dest = &f->fp, .sessions = true};
	s0__ckpt_restored rs;
	int rc = s0__ckpt_restore(f->ck, image, &o, &rs, err);
	if (rc < 0)
		return rc;
	s0__guest_opts go = {.clock = &f->rt.clock};
	s0__rt_restore_opts ro = {.prefetch = prefetch, .on_damage = on_damage,
	                          .damage_payload = f};
	ck_restored out = {.info = rs.info};
	rc = s0__sim_image_build(&rs.data, &go, &ro, &out.guest, &out.tmpfs, err);
	s0__sessions_opts so = {.clock = &f->rt.clock, .generation = 2};
	if (rc == S0_OK && rs.sessions)
		rc = s0__sessions_deserialize(rs.sessions, rs.sessions_len, &so, &out.sessions, err);
	s0__ckpt_restored_clear(&rs);
	if (rc < 0) {
		ck_restored_clear(&out);
		return rc;
	}
	*r = out;
	return S0_OK;
}

void ckfix_adopt(ckfix *f, ck_restored *r)
{
	s0__files_ns_clear(&f->rt.ns);
	s0__tmpfs_free(f->rt.tmp);
	f->rt.tmp = r->tmpfs;
	ck_assert_int_eq(s0__files_ns_init(&f->rt.ns, f->rt.fs.fs, f->rt.tmp, NULL, 0, NULL), S0_OK);
	rtfix_set_guest(&f->rt, r->guest);
	if (r->sessions) {
		s0__sessions_free(f->ses);
		f->ses = r->sessions;
	}
	memset(r, 0, sizeof *r);
}

void ckfix_flip(ckfix *f, const s0__objid *id, int64_t delta)
{
	char *path = NULL;
	uint64_t off, len;
	ck_assert_int_eq(s0__objdir_locate(s0__objstore_backend(f->os), id, &path, &off, &len, NULL),
	                 S0_OK);
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint8_t b;
	off_t at = (off_t)((int64_t)off + (int64_t)len / 2 + delta);
	ck_assert_int_eq(pread(fd, &b, 1, at), 1);
	b ^= 0x5a;
	ck_assert_int_eq(pwrite(fd, &b, 1, at), 1);
	close(fd);
	free(path);
}
