/* Interim: the files endpoints answer 501 in the fake-engine router build. */
#include "local/api/api_internal.h"

void s0__ep_files_read(s0__rctx *c) { s0__ep_not_implemented(c); }
void s0__ep_files_write(s0__rctx *c) { s0__ep_not_implemented(c); }
void s0__ep_files_delete(s0__rctx *c) { s0__ep_not_implemented(c); }
void s0__ep_files_stat(s0__rctx *c) { s0__ep_not_implemented(c); }
void s0__ep_files_list(s0__rctx *c) { s0__ep_not_implemented(c); }
void s0__ep_files_move(s0__rctx *c) { s0__ep_not_implemented(c); }
