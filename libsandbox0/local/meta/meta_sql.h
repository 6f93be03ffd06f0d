/* Statement helpers shared by the meta_*.c files. Call with the lock held. */
#ifndef S0_META_SQL_H
#define S0_META_SQL_H

#include <sqlite3.h>
#include <stdio.h>

#include "local/meta/meta.h"

int s0__sql_prepare(s0__meta *m, const char *sql, sqlite3_stmt **st, s0_error **err);
/* Step once (expecting DONE or ROW) and finalize. */
int s0__sql_done(s0__meta *m, sqlite3_stmt *st, s0_error **err);
/* Copy a text column into a fixed buffer (NULL reads as ""). */
void s0__sql_text(sqlite3_stmt *st, int col, char *dst, size_t n);
/* Step through rows collecting column 0 as malloc'd strings; finalizes st. */
int s0__sql_collect_ids(s0__meta *m, sqlite3_stmt *st, char ***ids, size_t *n, s0_error **err);

#endif
