/*
 * Internals of the carrier (carrier.h): the FUSE disk server, loop device
 * helpers, durable records and the tags that name a carrier's kernel objects.
 */
#ifndef S0_CARRIER_INT_H
#define S0_CARRIER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "local/runtime/carrier/carrier.h"

/* ---- FUSE disk server (fusedisk.c) ---- */

typedef struct s0__fusedisk s0__fusedisk;

/* Counters kept by the server (atomics). */
typedef struct s0__fusedisk_counters {
	uint64_t reads, read_bytes, writes, write_bytes, io_errors, fsyncs;
} s0__fusedisk_counters;

/*
 * Make a session serving /disk.img over dev (copied; ctx borrowed) and mount
 * it at mnt in the calling thread's mount namespace, with fsname `tag`.
 * Then start `threads` server threads. Returns 0 or -errno with msg set.
 */
int s0__fusedisk_start(const s0__blockdev *dev, const char *mnt, const char *tag, int threads,
                       s0__fusedisk **out, char *msg, size_t msg_len);
/* Unmount (calling thread's namespace), stop and join the threads, free. */
void s0__fusedisk_stop(s0__fusedisk *fd);
void s0__fusedisk_counters_get(const s0__fusedisk *fd, s0__fusedisk_counters *out);
/* The first device error the server saw ("" if none). */
void s0__fusedisk_first_error(s0__fusedisk *fd, char *buf, size_t len);
/* Whether every server thread got PR_SET_IO_FLUSHER. */
bool s0__fusedisk_io_flusher(const s0__fusedisk *fd);

/* ---- loop devices (loopdev.c) ---- */

/* Size of a loop device's name tag (LO_NAME_SIZE). */
#define S0__CARRIER_TAG_MAX 64

/*
 * Bind a free loop device to file_fd with direct I/O and autoclear, name
 * tag. *index = N of /dev/loopN, *loop_fd = an open descriptor (O_CLOEXEC)
 * whose close is the last one once nothing else uses the device. 0 or
 * -errno with msg.
 */
int s0__loop_attach(int file_fd, const char *tag, int *index, int *loop_fd, bool *dio,
                    char *msg, size_t msg_len);
/* The name tag of bound /dev/loopN (false if unbound or unreadable). */
bool s0__loop_tag(int index, char *tag, size_t tag_len);
/* Whether /dev/loopN is bound (sysfs loop/backing_file exists). */
bool s0__loop_bound(int index);
/* Detach a bound loop device (LOOP_CLR_FD, then our close is the last).
 * 0 or -errno. */
int s0__loop_clear(int index);

/* ---- tags (record.c) ---- */

/* "s0c:<16 hex of the state dir>:" — prefix of every tag of state_dir (its
 * realpath). */
void s0__carrier_state_tag(const char *state_real, char *out, size_t out_len);
/* "s0c:<16 hex of the state dir>:<16 hex of id>" */
void s0__carrier_tag(const char *state_real, const char *id, char *out, size_t out_len);

/* Processes (other than this one) whose mount namespace is not skip_ns
 * (an inode; 0: none skipped) and whose mount table shows the FUSE mount
 * tagged tag or loop device loop (-1: none): copies of the carrier's mounts
 * in namespaces made from it, which keep the filesystem alive after our
 * unmount. Writes up to max pids; returns how many were found (reclaim.c). */
int s0__carrier_holders(const char *tag, int loop, uint64_t skip_ns, pid_t *pids, int max);

/* ---- memory cgroup guard (memcg.c) ---- */

/* Whether this process's cgroup v1 memory cgroup (or an ancestor) has a
 * limit below the machine's memory, where a carrier would deadlock in
 * reclaim (SEC-75); why says which and what to do. False on cgroup v2. */
bool s0__carrier_memcg_limited(char *why, size_t why_len);

/* ---- records (record.c) ---- */

typedef struct s0__carrier_record {
	char id[80];
	pid_t pid;               /* owner process */
	uint64_t start_time;     /* its start time (clock ticks since boot, /proc stat 22) */
	pid_t tid;               /* namespace thread */
	uint64_t ns_ino;         /* mount namespace inode */
	int loop_index;          /* -1 when unknown */
} s0__carrier_record;

/* Write <state_dir>/<id>.carrier atomically (tmp, fsync, rename, fsync dir). */
int s0__carrier_record_write(const char *state_dir, const s0__carrier_record *r,
                             s0_error **err);
/* Read one record file; S0_ENOTFOUND if missing, S0_ECORRUPT if unparsable. */
int s0__carrier_record_read(const char *path, s0__carrier_record *r, s0_error **err);
/* Remove the record (and fsync the directory). */
void s0__carrier_record_remove(const char *state_dir, const char *id);
/* Start time of pid (0 if gone or a zombie). */
uint64_t s0__proc_start_time(pid_t pid);

#endif
