/* The process-wide libext2fs lock. */
#include "local/rootfs/rootfs.h"

#include <et/com_err.h>
#include <ext2fs/ext2fs.h>
#include <pthread.h>

#include "local/rootfs/crc32c.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock;

static void init_once(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&lock, &a);
	pthread_mutexattr_destroy(&a);
	/* So error_message() names libext2fs codes in our messages. */
	initialize_ext2_error_table();
#ifdef S0__HAVE_CRC32C
	s0__crc32c_init(); /* the metadata checksum (crc32c.h) */
#endif
}

void s0__rootfs_lock(void)
{
	pthread_once(&once, init_once);
	pthread_mutex_lock(&lock);
}

void s0__rootfs_unlock(void)
{
	pthread_mutex_unlock(&lock);
}
