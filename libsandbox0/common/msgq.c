/* A queue of text messages (msgq.h). */
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "common/msgq.h"

int s0__smsgq_push(s0__smsgq *q, const char *data, size_t len)
{
	s0__smsg *m = malloc(sizeof *m + len + 1);
	if (!m)
		return -1;
	m->next = NULL;
	m->len = len;
	memcpy(m->data, data, len);
	m->data[len] = '\0';
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	q->bytes += len;
	q->count++;
	return 0;
}

void s0__smsgq_move(s0__smsgq *to, s0__smsgq *from)
{
	if (!from->head)
		return;
	if (to->tail)
		to->tail->next = from->head;
	else
		to->head = from->head;
	to->tail = from->tail;
	to->bytes += from->bytes;
	to->count += from->count;
	*from = (s0__smsgq){0};
}

s0__smsg *s0__smsgq_pop(s0__smsgq *q)
{
	s0__smsg *m = q->head;
	if (!m)
		return NULL;
	q->head = m->next;
	if (!q->head)
		q->tail = NULL;
	q->bytes -= m->len;
	q->count--;
	m->next = NULL;
	return m;
}

void s0__smsgq_clear(s0__smsgq *q)
{
	s0__smsg *m;
	while ((m = s0__smsgq_pop(q)))
		free(m);
}

int s0__smsgq_take(s0__smsgq *q, char **msg_out, size_t *len_out, s0_error **err)
{
	s0__smsg *m = s0__smsgq_pop(q);
	if (!m)
		return 0;
	char *text = s0__strndup(m->data, m->len);
	size_t n = m->len;
	free(m);
	if (!text)
		return s0__error_nomem(err);
	*msg_out = text;
	if (len_out)
		*len_out = n;
	return 1;
}
