/* Process-wide initialisation of libcurl and libsodium (once). */
#include "common/internal.h"

#include <curl/curl.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc = S0_OK;
static atomic_int refs;

static void do_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		init_rc = S0_ERROR;
	else if (sodium_init() < 0)
		init_rc = S0_ERROR;
}

int s0__global_ensure(void)
{
	pthread_once(&once, do_init);
	return init_rc;
}

int s0_global_init(s0_error **err)
{
	int rc = s0__global_ensure();
	if (rc < 0)
		return s0__error_set(err, rc, "global_init", "libcurl or libsodium failed to initialise");
	atomic_fetch_add(&refs, 1);
	return S0_OK;
}

void s0_global_shutdown(void)
{
	atomic_fetch_sub(&refs, 1);
}
