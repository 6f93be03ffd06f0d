/*
 * The carrier suites (local/runtime/carrier/carrier.h), as root: a real
 * template generation attached through FUSE + loop + kernel ext4. Skipped
 * (exit 77) only where s0__carrier_probe() fails, naming the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cartest.h"
#include "check_main.h"

int main(void)
{
	s0_error *err = NULL;
	if (s0__carrier_probe(&err) != S0_OK) {
		printf("SKIP carrier suites: %s\n", s0_error_message(err));
		s0_error_free(err);
		return 77;
	}
	/* Orphans of killed test processes come back to us to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	ct_root = s0_test_tmpdir("carrier");
	if (!ct_root)
		return 1;
	static const s0_suite_fn suites[] = {carrier_basic_suite, carrier_hostile_suite,
	                                     carrier_lazy_suite, carrier_crash_suite,
	                                     carrier_tamper_suite, carrier_pressure_suite};
	int rc = s0_test_run_suites(suites, 6);
	/* Whatever a failed test left: reclaim it, then prove the host clean. */
	char what[2048];
	if (ct_sweep(ct_root, what, sizeof what) != 0) {
		fprintf(stderr, "carrier: left on the host after the suites:%s\n", what);
		rc = 1;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	s0_test_rmrf(ct_root);
	free(ct_root);
	return rc;
}
