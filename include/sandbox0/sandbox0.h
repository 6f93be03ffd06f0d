/**
 * @file sandbox0/sandbox0.h
 * @brief Umbrella header of libsandbox0: include this one.
 *
 * libsandbox0 is a C11 client for the Sandbox0 sandbox lifecycle API
 * (pause/resume with filesystem-only and memory modes) plus an embeddable
 * local reference backend. Start with sandbox0/client.h, then
 * sandbox0/sandbox.h and sandbox0/wait.h.
 */
#ifndef SANDBOX0_SANDBOX0_H
#define SANDBOX0_SANDBOX0_H

#include "sandbox0/common.h"
#include "sandbox0/error.h"
#include "sandbox0/clock.h"
#include "sandbox0/client.h"
#include "sandbox0/sandbox.h"
#include "sandbox0/wait.h"
#include "sandbox0/files.h"
#include "sandbox0/contexts.h"
#include "sandbox0/local.h"
#include "sandbox0/keys.h"
#include "sandbox0/templates.h"
#include "sandbox0/streams.h"
#include "sandbox0/services.h"

#endif
