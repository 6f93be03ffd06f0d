#include "check_main.h"
#include "server_test.h"

S0_TEST_MAIN(s0_server_core_suite, s0_server_admin_suite, s0_router_engine_suite,
             s0_server_local_suite, s0_server_teams_suite, s0_server_templates_suite,
             s0_pause_join_suite, s0_server_longpoll_suite,
             s0_streams_local_suite, s0_streams_http_suite)
