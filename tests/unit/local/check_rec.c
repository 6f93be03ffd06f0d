#include "check_main.h"
#include "lt.h"
#include "suites.h"

Suite *s0_local_rec_suite(void)
{
	Suite *s = suite_create("local-rec");
	return s;
}
