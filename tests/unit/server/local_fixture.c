#include "local_fixture.h"

#include <check.h>
#include <stdlib.h>

#include "check_main.h"
#include "local/lifecycle/engine_open.h" /* s0__engine_controller_stop */
#include "local/local_internal.h"

static void open_dir(lf *f, bool zero_time)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.manual_clock_start_unix_ms = 1767225600000LL;
	o.rootfs_size_bytes = 64ull << 20;
	o.zero_time_compat = zero_time;
	s0_error *err = NULL;
	int rc = s0_local_open(f->dir, &o, &f->local, &err);
	ck_assert_msg(rc == S0_OK, "s0_local_open: %s", err ? s0_error_message(err) : "?");
	f->engine = s0__local_engine(f->local);
	f->zero_time = zero_time;
}

void lf_open(lf *f, bool zero_time)
{
	f->dir = s0_test_tmpdir("srv-local");
	ck_assert_ptr_nonnull(f->dir);
	open_dir(f, zero_time);
}

void lf_restart(lf *f)
{
	s0__engine_controller_stop(f->engine);
	s0_local_close(f->local);
	open_dir(f, f->zero_time);
}

void lf_close(lf *f)
{
	s0_local_close(f->local);
	s0_test_rmrf(f->dir);
	free(f->dir);
}

void lf_quiesce(lf *f)
{
	s0_error *err = NULL;
	int rc = s0_local_quiesce(f->local, 30000, &err);
	ck_assert_msg(rc == S0_OK, "quiesce: %s", err ? s0_error_message(err) : "?");
}
