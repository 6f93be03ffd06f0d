/* The in-process streams (stream_local.c) for the local facade and transport. */
#ifndef S0_API_STREAM_LOCAL_H
#define S0_API_STREAM_LOCAL_H

#include "common/internal.h"
#include "sandbox0/streams.h"

typedef struct s0__engine s0__engine;

/*
 * A stream of sandbox0/streams.h on engine e as team (both borrowed; they
 * outlive the stream): what s0_local_stream_open() and s0_stream_open() on an
 * in-process client return. Errors as s0_local_stream_open().
 */
int s0__stream_local_open(s0__engine *e, const char *team, const s0_stream_options *opts,
                          s0_stream **out, s0_error **err);

#endif
