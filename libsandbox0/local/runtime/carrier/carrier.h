/*
 * The carrier: a RootFS branch (an s0__blockdev, e.g. s0__branch_blockdev()
 * of a copy-on-write branch of a block-store generation) exposed to the host
 * kernel as a mounted ext4 directory, e.g. the root of a runsc sandbox
 * (docs/local-backend.md "Carrier").
 *
 * Route: a libfuse3 low-level server in threads of this process serves one
 * file, disk.img, whose reads and writes go to the device (so a branch
 * fetches untouched chunks lazily from the store and records dirty chunks);
 * a loop device over it (LOOP_CONFIGURE, LO_FLAGS_DIRECT_IO |
 * LO_FLAGS_AUTOCLEAR); the kernel's ext4 mounted on the loop device.
 *
 * Mount isolation: both mounts (FUSE and ext4) live in a private mount
 * namespace owned by one dedicated thread of this process (unshare of
 * CLONE_NEWNS in that thread, propagation private). The host's mount table
 * never shows them, and they vanish with the namespace if the process dies.
 * A forked child joins them with s0__carrier_enter() before exec; any thread
 * of this process reaches the tree through s0__carrier_host_root().
 *
 * Memory-pressure deadlock (loop over FUSE served by the same host):
 * disk.img is opened FOPEN_DIRECT_IO and the loop uses direct I/O, so no
 * page cache of disk.img exists whose writeback could wait for the server;
 * the loop workers run PF_MEMALLOC_NOIO (kernel); the server threads ask for
 * PR_SET_IO_FLUSHER (needs CAP_SYS_RESOURCE; s0__carrier_stats says whether
 * the kernel granted it) and never touch files of the mounts they
 * serve. docs/local-backend.md "Carrier" discusses the residual risk.
 *
 * Coherence: while a carrier is attached, the kernel owns the filesystem on
 * the device. Nobody may edit the same device through libext2fs
 * (local/rootfs/, s0__rootfs_open read-write) until s0__carrier_detach()
 * returned; reads through libext2fs see only what s0__carrier_sync() put on
 * the device, and while mounted the superblock of a journal-less ext4 says
 * "not clean" (the kernel clears EXT2_VALID_FS at mount; detach sets it
 * again).
 *
 * Records: attach writes <state_dir>/<id>.carrier (JSON: owner pid and start
 * time, mount namespace, loop device, mount points) before it creates
 * anything and updates it as it goes; detach removes it. After a crash,
 * s0__carrier_reclaim() finds what is left from the records and the kernel's
 * own tables (loop backing files and mount tables naming state_dir).
 *
 * Needs root (CAP_SYS_ADMIN), /dev/fuse, /dev/loop-control and kernel ext4:
 * s0__carrier_probe() names what is missing.
 *
 * Thread safety: every function may be called from any thread; calls on one
 * carrier are serialised internally, except s0__carrier_enter() (meant for a
 * forked child) and the accessors, which only read fields fixed at attach.
 */
#ifndef S0_CARRIER_H
#define S0_CARRIER_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/blocks/blockdev.h"

typedef struct s0__carrier s0__carrier;

/**
 * Whether carriers can run here: effective root with CAP_SYS_ADMIN,
 * /dev/fuse openable, /dev/loop-control openable, "ext4" in
 * /proc/filesystems. Cheap (no mount); blocks only on those opens.
 * @retval S0_OK
 * @retval S0_EUNAVAILABLE reason `carrier_unavailable`, the message naming
 *         the first missing piece (e.g. "/dev/fuse: No such file or
 *         directory").
 * @threadsafety safe
 */
int s0__carrier_probe(s0_error **err);

/** What to attach. All pointers borrowed for the call, except dev->ctx. */
typedef struct s0__carrier_opts {
	/** The device holding an ext4 filesystem (size a multiple of 512 bytes).
	 *  The struct is copied; dev->ctx must stay valid until detach returns,
	 *  and its read/write must be safe from several threads at once (a
	 *  block-store branch is). */
	const s0__blockdev *dev;
	/** Directory for the records and mount points (created 0700 if
	 *  missing). One state_dir may hold many carriers. Absolute; the
	 *  mount points under it must fit PATH_MAX. */
	const char *state_dir;
	/** Carrier name, unique in state_dir: [A-Za-z0-9._-], 1..64 bytes, not
	 *  "." or "..". */
	const char *id;
	/** ext4 mount options (nullable; default "errors=remount-ro"). */
	const char *mount_options;
} s0__carrier_opts;

/**
 * Attach: start the FUSE server and the namespace thread, configure a loop
 * device, mount ext4. On return the filesystem is mounted at
 * s0__carrier_root() in the carrier's namespace. Blocks for the mount
 * (milliseconds; the reads ext4 makes at mount go through the device).
 *
 * @param[out] out (transfer full) the carrier; release with
 *             s0__carrier_detach() then s0__carrier_free(). Untouched on
 *             failure.
 * @retval S0_EINVAL       bad options (NULL dev, relative state_dir, bad id,
 *                         device size 0 or not a multiple of 512).
 * @retval S0_ECONFLICT    reason `carrier_exists`: a record for id exists
 *                         in state_dir (attached, or an orphan to reclaim).
 * @retval S0_EUNAVAILABLE reason `carrier_unavailable`: as probe.
 * @retval S0_EIO          a step failed (FUSE mount, loop, ext4 mount: e.g.
 *                         not ext4, or a device read error); the message
 *                         names the step and errno.
 * On failure nothing is left behind: no mount, loop device, thread or
 * record.
 * @threadsafety safe
 */
int s0__carrier_attach(const s0__carrier_opts *o, s0__carrier **out, s0_error **err);

/**
 * The mounted ext4 directory, a path valid in the carrier's mount
 * namespace (s0__carrier_enter()): <state_dir>/<id>.d/root. In the host's
 * namespace that path is an empty directory. Borrowed; valid until
 * s0__carrier_free().
 */
const char *s0__carrier_root(const s0__carrier *c);

/**
 * The same tree reached from this process without changing namespace:
 * "/proc/<pid>/task/<tid>/root<root>" (the namespace thread's view). Any
 * thread of this process (or root on the host) may open paths below it
 * while the carrier is attached. Borrowed; valid until s0__carrier_free().
 */
const char *s0__carrier_host_root(const s0__carrier *c);

/**
 * Join the carrier's mount namespace: setns(2) on a descriptor opened at
 * attach. Meant for a forked, single-threaded child before exec (e.g. of
 * runsc); async-signal-safe (one system call). Afterwards the child's root
 * and working directory are the namespace's "/" and s0__carrier_root() is
 * the mounted tree. The descriptor is O_CLOEXEC: exec'd programs do not
 * keep it.
 * @return 0, or -errno (EINVAL in a multi-threaded caller, EPERM without
 *         CAP_SYS_ADMIN, EBADF once the carrier is detached).
 */
int s0__carrier_enter(const s0__carrier *c);

/**
 * Put every byte written through the mount on the device: syncfs(2) of the
 * ext4 (dirty pages, inodes, superblock, a cache flush through the loop
 * device to the FUSE server), then the device's flush. When it returns,
 * every write made through the mount before the call is on the device.
 * Blocks for the writeback.
 * @retval S0_ECONFLICT reason `carrier_detached`
 * @retval S0_EIO       syncfs failed (a device write failed: the error is
 *                      the first one the server saw)
 * @threadsafety safe
 */
int s0__carrier_sync(s0__carrier *c, s0_error **err);

/**
 * Detach: sync, unmount the ext4, detach the loop device, unmount FUSE and
 * stop the server threads, end the namespace, remove the record. After
 * S0_OK the device holds a cleanly unmounted ext4 and is no longer touched.
 * Idempotent in effect: a second call returns S0_OK.
 * @retval S0_ECONFLICT reason `carrier_busy`: a process still uses the
 *         mount (e.g. a sandbox not yet stopped); nothing was undone, retry
 *         once it is gone.
 * @retval S0_EIO  a step failed; the message names it. What could be
 *         undone was; the record stays so that s0__carrier_reclaim() can
 *         finish.
 * @threadsafety safe; blocks for the writeback and the unmounts.
 */
int s0__carrier_detach(s0__carrier *c, s0_error **err);

/**
 * Free a carrier, detaching it first (an error is printed to stderr). If the
 * mount is still busy the handle is leaked on purpose: its namespace
 * thread keeps the mounts, the record stays for s0__carrier_reclaim().
 * NULL is a no-op.
 */
void s0__carrier_free(s0__carrier *c);

/** Counters of a carrier since attach. */
typedef struct s0__carrier_stats {
	uint64_t reads;        /**< FUSE read requests served */
	uint64_t read_bytes;
	uint64_t writes;       /**< FUSE write requests served */
	uint64_t write_bytes;
	uint64_t io_errors;    /**< requests answered EIO (device errors) */
	int64_t attach_us;     /**< wall time of attach, microseconds */
	int64_t detach_us;     /**< wall time of the last detach (0 before) */
	int loop_index;        /**< N of /dev/loopN (-1 when detached) */
	bool io_flusher;       /**< PR_SET_IO_FLUSHER granted to the server threads */
	bool direct_io;        /**< the loop device runs with direct I/O */
} s0__carrier_stats;

/** Snapshot of the counters. @threadsafety safe */
void s0__carrier_stats_get(const s0__carrier *c, s0__carrier_stats *out);

/** What s0__carrier_reclaim() did. */
typedef struct s0__carrier_reclaimed {
	uint32_t records;   /**< orphan records removed */
	uint32_t processes; /**< processes killed (still inside a dead carrier's namespace) */
	uint32_t mounts;    /**< mounts detached in this process's namespace */
	uint32_t loops;     /**< loop devices detached */
} s0__carrier_reclaimed;

/**
 * After a crash: remove the orphans of state_dir. A carrier is an orphan
 * when its record's owner (pid + start time) is gone; carriers of live
 * processes (this one included) are left alone. For each orphan: SIGKILL
 * every process still inside its mount namespace (they keep the dead
 * server's mounts alive; e.g. a sandbox that survived its server), detach
 * any mount under its directory from this namespace, detach every loop
 * device whose backing file lies under it (a loop over a dead FUSE server
 * answers EIO), remove its mount points and record. Loop devices whose
 * backing file lies under state_dir but that no live record owns are
 * orphans too (a crash between the loop's creation and its record).
 * Blocks until the killed processes are gone (they are reaped by their
 * parent; the caller should be their subreaper) and the loops detached.
 * @param[out] out (nullable) what was done.
 * @retval S0_EINVAL  state_dir NULL or relative.
 * @retval S0_EIO     something could not be removed (named); the rest was.
 * A missing state_dir is S0_OK with nothing done.
 * @threadsafety safe; do not run it concurrently with attach in the same
 *               state_dir from another process.
 */
int s0__carrier_reclaim2(const char *state_dir, s0__carrier_reclaimed *out, s0_error **err);

/** s0__carrier_reclaim2() without the counts. */
int s0__carrier_reclaim(const char *state_dir, s0_error **err);

#endif
