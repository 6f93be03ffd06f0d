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
 * of this process opens files of the tree with s0__carrier_open(), which
 * resolves paths as inside the sandbox.
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
 * again). A cut of the device taken right after s0__carrier_sync() (e.g.
 * s0__branch_fork, or a publish with S0__PUBLISH_CONTINUE while the
 * sandbox is paused) is an `e2fsck -fn`-clean filesystem, provided nothing
 * wrote through the mount between the sync and the cut.
 *
 * Records: attach writes <state_dir>/<id>.carrier (JSON: owner pid and start
 * time, namespace thread, mount namespace, loop device) before it mounts
 * anything and updates it as it goes; detach removes it. The kernel objects
 * carry a tag naming the carrier (the loop device's lo_file_name, the FUSE
 * mount's source). After a crash, s0__carrier_reclaim() finds what is left
 * from the records (who is alive) and the kernel's own tables (the tags);
 * s0__carrier_proof() checks the kernel's tables alone.
 *
 * Needs root (CAP_SYS_ADMIN), /dev/fuse, /dev/loop-control and kernel ext4:
 * s0__carrier_probe() names what is missing.
 *
 * Thread safety: every function may be called from any thread; calls on one
 * carrier are serialised internally, except s0__carrier_enter() (meant for a
 * forked child) and the accessors, which only read fields fixed at attach.
 *
 * Beyond the API first agreed for the gVisor driver (probe, opts {dev,
 * state_dir, id}, attach, root, enter, sync, detach, reclaim — unchanged),
 * this header adds: opts.mount_options, s0__carrier_host_root(),
 * s0__carrier_open(), s0__carrier_free(), s0__carrier_stats_get(),
 * s0__carrier_reclaim2() and s0__carrier_proof().
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
 * /proc/filesystems, and this process not in a cgroup v1 memory cgroup
 * limited below the machine's memory (reclaim there deadlocks the FUSE
 * server: docs/security.md SEC-75). Cheap (no mount); blocks only on those
 * opens and reads of /proc and the cgroup files.
 * @retval S0_OK
 * @retval S0_EUNAVAILABLE reason `carrier_unavailable`, the message naming
 *         the first missing piece (e.g. "/dev/fuse: No such file or
 *         directory").
 * @threadsafety safe
 */
int s0__carrier_probe(s0_error **err);

/**
 * The ext4 mount options of a carrier unless its opts name others.
 * `nobarrier`: the route below ext4 has no volatile cache (the loop device's
 * direct I/O on a FOPEN_DIRECT_IO file whose writes are on the branch when
 * the server replies; the server's fsync does nothing), so ext4's cache
 * flushes were round trips through the server for nothing — six in a
 * detach (docs/decisions.md "Kernel mounts of a RootFS").
 */
#define S0__CARRIER_MOUNT_OPTIONS "errors=remount-ro,nobarrier"

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
	/** ext4 mount options (nullable; default S0__CARRIER_MOUNT_OPTIONS). */
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
 *
 * Warning: a path walk through it follows the tree's symlinks with the
 * caller's root, so an absolute symlink a sandbox made (/workspace/x ->
 * /etc/shadow) leads to the HOST's file, and ".." may leave the tree. Use
 * s0__carrier_open() for anything a sandbox could have written; this path
 * is for tests and trusted tools.
 */
const char *s0__carrier_host_root(const s0__carrier *c);

/**
 * Open a file of the mounted tree from any thread of this process, resolved
 * as inside the sandbox: openat2(2) on the tree's root with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, so absolute
 * symlinks and ".." stay inside the tree and no other mount is crossed.
 * @param path   absolute or relative to the tree's root.
 * @param flags  open(2) flags (O_CLOEXEC is added); mode as open(2).
 * @return a descriptor (the caller closes it), or -errno (ENOENT, ELOOP,
 *         EXDEV, ...; EBADF once the carrier is detached).
 * @threadsafety safe; serialised with detach.
 */
int s0__carrier_open(s0__carrier *c, const char *path, int flags, unsigned mode);

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
 * @retval S0_EIO       syncfs failed (a device write failed; the message
 *                      quotes the first device error the server saw)
 * @threadsafety safe
 */
int s0__carrier_sync(s0__carrier *c, s0_error **err);

/**
 * Detach: sync, unmount the ext4, detach the loop device, unmount FUSE and
 * stop the server threads, end the namespace, remove the record. After
 * S0_OK the device holds a cleanly unmounted ext4 and is no longer touched.
 * Idempotent in effect: a second call returns S0_OK.
 * @retval S0_ECONFLICT reason `carrier_busy`: a process still uses the
 *         mount, or holds a copy of it in a mount namespace made from the
 *         carrier's (e.g. a sandbox not yet stopped; the message names the
 *         pids); nothing was undone, retry once it is gone.
 * @retval S0_EIO  a step failed (e.g. syncfs: a device write failed); the
 *         message names it. Everything else was still undone; only if the
 *         loop device stayed bound does the record stay, for
 *         s0__carrier_reclaim() once this process is gone.
 * @threadsafety safe; blocks for the writeback and the unmounts.
 */
int s0__carrier_detach(s0__carrier *c, s0_error **err);

/**
 * Free a carrier, detaching it first (its error is dropped: detach first
 * to see it). If the
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
	uint64_t fsyncs;       /**< FUSE fsync requests served (the loop device's cache flushes) */
	int64_t attach_us;     /**< wall time of attach, microseconds */
	int64_t detach_us;     /**< wall time of the last detach (0 before) */
	int64_t holders_us, syncfs_us, unmount_us, loop_us, fuse_us; /**< its phases: the scan
	                          for other namespaces holding the mount and syncfs (the two at
	                          the same time), unmount, loop device detach, FUSE server stop
	                          (microseconds) */
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
 * processes (this one included) are left alone. Kernel objects are
 * recognised by the tag attach gives them (the loop device's lo_file_name,
 * the FUSE mount's source: "s0c:<hash of state_dir>:<hash of id>"), so a
 * loop device a crash left before its record named it is found too. For
 * the orphans: SIGKILL every process (outside the host's and this
 * process's mount namespaces) whose mount table shows an orphan's FUSE
 * mount or loop device (they keep the dead server's mounts alive, the loop
 * device answering EIO; e.g. a sandbox that survived its server) and wait
 * until they are gone; detach the orphans' mounts from this namespace (if
 * any); detach every loop device with an orphan's tag (waiting, bounded,
 * for the release that follows the last user's exit); remove records,
 * stale temporary records and the empty mount point directories of every
 * id without a live record.
 * Blocks until the killed processes are gone (their parent reaps them; the
 * caller should be their subreaper) and the loops detached, at most about
 * 10 s each.
 * @param[out] out (nullable) what was done.
 * @retval S0_EINVAL  state_dir NULL or relative.
 * @retval S0_EIO     something could not be removed (named); the rest was.
 * A missing state_dir is S0_OK with nothing done.
 * @threadsafety safe; do not run it concurrently with an attach in the same
 *               state_dir (it may remove the new carrier's mount points).
 */
int s0__carrier_reclaim2(const char *state_dir, s0__carrier_reclaimed *out, s0_error **err);

/**
 * Terminal proof for one carrier, from the kernel's tables, never from a
 * record: no loop device carries its tag, no process's mount table
 * (/proc/PID/mountinfo, every process) shows its FUSE mount or its loop
 * device. The carrier's own namespace thread shows neither once detach
 * returned. Blocks for the scan (reads /sys/block and /proc; milliseconds).
 * @param state_dir, id  as given to s0__carrier_attach() (state_dir
 *        absolute; it may be gone).
 * @retval S0_OK           nothing of the carrier is left.
 * @retval S0_EUNAVAILABLE reason `resource_leak`, the message naming what
 *         remains ("loop3", "mount in pid 1234").
 * @retval S0_EINVAL       bad state_dir or id.
 * @threadsafety safe
 */
int s0__carrier_proof(const char *state_dir, const char *id, s0_error **err);

/** s0__carrier_reclaim2() without the counts. */
int s0__carrier_reclaim(const char *state_dir, s0_error **err);

#endif
