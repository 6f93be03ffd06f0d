#ifndef S0_COMMON_SUITES_H
#define S0_COMMON_SUITES_H

#include <check.h>

Suite *s0_error_map_suite(void);
Suite *s0_time_suite(void);
Suite *s0_buf_query_suite(void);
Suite *s0_cancel_clock_suite(void);

#endif
