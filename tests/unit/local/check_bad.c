#include "check_main.h"
#include "lt.h"
#include "suites.h"

Suite *s0_local_bad_suite(void)
{
	Suite *s = suite_create("local-bad");
	return s;
}
