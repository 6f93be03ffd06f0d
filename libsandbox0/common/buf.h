/* A growable byte buffer, always NUL-terminated (the NUL is not counted). */
#ifndef S0_BUF_H
#define S0_BUF_H

#include <stddef.h>

typedef struct s0__buf {
	char *data;
	size_t len;
	size_t cap;
} s0__buf;

#define S0__BUF_INIT {0, 0, 0}

/* Append; return 0 or -1 when out of memory (the buffer is unchanged). */
int s0__buf_put(s0__buf *b, const void *data, size_t len);
int s0__buf_puts(s0__buf *b, const char *s);
int s0__buf_printf(s0__buf *b, const char *fmt, ...);
/* Make room for extra bytes; return 0 or -1. */
int s0__buf_grow(s0__buf *b, size_t extra);
/* Take the data (caller frees), leaving the buffer empty. Never NULL unless OOM. */
char *s0__buf_detach(s0__buf *b, size_t *len_out);
void s0__buf_reset(s0__buf *b);
void s0__buf_free(s0__buf *b);

#endif
