/* Suites of the unit-wait test program. */
#ifndef S0_TEST_WAIT_SUITES_H
#define S0_TEST_WAIT_SUITES_H

#include <check.h>

Suite *s0_wait_schedule_suite(void);
Suite *s0_wait_script_suite(void);
Suite *s0_wait_control_suite(void);

#endif
