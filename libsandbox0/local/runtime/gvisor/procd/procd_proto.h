/*
 * The channel between the gvisor driver (gv_procd.c) and procd, the init
 * of a gVisor sandbox (procd.c): length-prefixed binary frames on procd's
 * stdin (driver → procd) and stdout (procd → driver), which are pipes the
 * driver hands to `runsc run` as the container's stdio.
 *
 * A frame is a 9-byte header — u32 length of what follows the length
 * field (5 + payload bytes), u8 type, u32 process id (the driver's number,
 * 0 for none) — then the payload; integers little-endian. Payloads of
 * output frames are at most S0__PD_CHUNK bytes; a frame is at most
 * S0__PD_FRAME_MAX bytes long.
 *
 * Driver → procd:
 *   S0__PD_SPAWN  payload: u32 flags (S0__PD_F_*), cwd NUL, u32 argc,
 *                 argc strings NUL-terminated, u32 envc, envc strings
 *                 NUL-terminated. The process leads a new session and
 *                 process group; stdin is a pipe (S0__PD_F_STDIN) or
 *                 /dev/null; stdout and stderr are pipes.
 *   S0__PD_INPUT  payload: bytes for the process's stdin; an empty
 *                 payload closes it (EOF once the queued bytes are read).
 *   S0__PD_KILL   payload: i32 signal, sent to the process's group.
 *   S0__PD_PING   empty; answered with S0__PD_PING of the same id.
 * procd → driver:
 *   S0__PD_HELLO   id 0, payload: procd's version (no NUL): once, first.
 *   S0__PD_STARTED payload: i32 PID inside the sandbox.
 *   S0__PD_FAILED  payload: i32 errno, then a message (no NUL).
 *   S0__PD_OUT / S0__PD_ERR  payload: bytes the process wrote.
 *   S0__PD_EXIT    payload: i32 wait status, sent when procd reaped the
 *                  process, after the output its pipes held then (output
 *                  of descendants that keep the pipes open may follow).
 *   S0__PD_CLOSED  empty: both output pipes reached end of file; nothing
 *                  more comes for this id once EXIT was sent as well.
 *
 * procd reaps every process (orphans too); when its stdin reaches end of
 * file (the driver is gone) it kills every process and exits.
 */
#ifndef S0_RUNTIME_GVISOR_PROCD_PROTO_H
#define S0_RUNTIME_GVISOR_PROCD_PROTO_H

/** Frame types. */
enum s0__pd_type {
	S0__PD_SPAWN = 'S',
	S0__PD_INPUT = 'I',
	S0__PD_KILL = 'K',
	S0__PD_PING = 'P',
	S0__PD_HELLO = 'H',
	S0__PD_STARTED = 'T',
	S0__PD_FAILED = 'F',
	S0__PD_OUT = 'O',
	S0__PD_ERR = 'E',
	S0__PD_EXIT = 'X',
	S0__PD_CLOSED = 'C',
};

/** S0__PD_SPAWN flags. */
#define S0__PD_F_STDIN 1u

/** Header bytes: u32 length, u8 type, u32 id. */
#define S0__PD_HDR 9
/** Largest output payload procd sends in one frame. */
#define S0__PD_CHUNK 65536
/** Largest frame (header included) either side accepts. */
#define S0__PD_FRAME_MAX (4u << 20)

/** procd's version (S0__PD_HELLO; the driver's procd_version()). */
#define S0__PD_VERSION "s0-procd/1"

#endif
