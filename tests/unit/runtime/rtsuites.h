/* The suites of the runtime test program. */
#ifndef S0_TEST_RTSUITES_H
#define S0_TEST_RTSUITES_H

#include "rtfix.h"

Suite *rt_shell_suite(void);
Suite *rt_contexts_suite(void);
Suite *rt_sessions_suite(void);
Suite *rt_guest_suite(void);
Suite *rt_network_suite(void);
Suite *rt_restore_damaged_suite(void); /* damaged guest state blobs (fuzz findings) */

#endif
