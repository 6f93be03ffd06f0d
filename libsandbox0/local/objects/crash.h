/*
 * Named crash points for the storage crash tests (docs/decisions.md "Manager
 * restart vs crash"). A test runs a separate crasher program with
 * S0_CRASH_AT=<point> (or <point>:<n> for the n-th time the point is
 * reached, counting from 1); when execution reaches that point the process
 * raises SIGKILL, exactly like a kill -9 at that step.
 *
 * Points used by objects/ and blocks/ (see their .c files):
 *   pack backend: objects.pack_written  objects.pack_synced
 *     objects.catalog_committed  objects.compact_written
 *     objects.compact_switched
 *   files backend: objects.files_written  objects.files_synced
 *     objects.files_renamed (after each rename)  objects.files_committed
 *   s3 backend: objects.s3_written  objects.s3_put (after each group of
 *     PUTs)  objects.s3_committed
 *   both: objects.deleted
 *   publish.fenced  publish.chunks_stored  publish.pages_stored
 *   publish.visible  gc.listed  gc.marked  gc.swept  gc.done
 *   carrier (runtime/carrier/): carrier.fuse_mounted  carrier.loop_bound
 *     carrier.mounted  carrier.unmounted
 */
#ifndef S0_CRASH_H
#define S0_CRASH_H

/**
 * SIGKILL the process if S0_CRASH_AT names point (and its count is
 * reached). The environment is read once; unset, this is one atomic load.
 * @param point  static string, e.g. "publish.visible".
 * @threadsafety safe
 */
void s0__crash_point(const char *point);

#endif
