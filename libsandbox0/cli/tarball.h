/* A directory tree as a tar archive in memory (libarchive), for `s0 template build --from-dir`. */
#ifndef S0_CLI_TARBALL_H
#define S0_CLI_TARBALL_H

#include <stddef.h>

/*
 * Archive the tree under dir (not following symbolic links; the names are
 * relative to dir) as a pax tar into *out (malloc'd, *len bytes). Files,
 * directories and symbolic links are archived as they are; anything else
 * (device nodes, FIFOs, sockets) is archived too and left for the server
 * to refuse. Returns 0, or -1 with a message in *why (malloc'd).
 */
int tarball_from_dir(const char *dir, char **out, size_t *len, char **why);

#endif
