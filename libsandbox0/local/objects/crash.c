/* S0_CRASH_AT crash points. */
#include "local/objects/crash.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char target[128];
static long target_n = 1;
static atomic_long hits;
static atomic_bool armed;

static void load(void)
{
	const char *v = getenv("S0_CRASH_AT");
	if (!v || !*v || strlen(v) >= sizeof target)
		return;
	strcpy(target, v);
	char *colon = strchr(target, ':');
	if (colon) {
		*colon = '\0';
		target_n = atol(colon + 1);
		if (target_n < 1)
			target_n = 1;
	}
	atomic_store(&armed, true);
}

void s0__crash_point(const char *point)
{
	pthread_once(&once, load);
	if (!atomic_load(&armed) || strcmp(point, target) != 0)
		return;
	if (atomic_fetch_add(&hits, 1) + 1 >= target_n) {
		kill(getpid(), SIGKILL);
		for (;;)
			pause();
	}
}
