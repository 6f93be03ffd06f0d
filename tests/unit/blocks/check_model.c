/*
 * Model-based test: random reads, writes, zeroing, seals, publishes (with
 * and without continuing), attaches, forks, frees, GCs and store reopens,
 * compared after every step against a plain byte array per branch and per
 * recorded generation. A divergence fails with the seed to replay:
 *   S0_TEST_SEED=<seed> S0_TEST_ITERATIONS=<runs> ./check_blocks
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blktest.h"
#include "objenv.h"
#include "check_main.h"

#define MAX_BR 6
#define MAX_GEN 8

typedef struct mbranch {
	s0__branch *b;
	uint8_t *img;
	bool sealed;
} mbranch;

typedef struct mgen {
	s0__genid id;
	uint8_t *img;
} mgen;

typedef struct model {
	uint64_t seed, x;
	long step;
	blk_env e;
	uint64_t size;
	uint32_t cs;
	mbranch br[MAX_BR];
	int nbr;
	mgen gen[MAX_GEN];
	int ngen;
	uint8_t *buf;
} model;

#define MCHECK(m, cond, ...)                                                            \
	do {                                                                                \
		if (!(cond)) {                                                                  \
			char msg_[256];                                                             \
			snprintf(msg_, sizeof msg_, __VA_ARGS__);                                   \
			ck_abort_msg("model diverged: seed %llu step %ld: %s (replay with "         \
			             "S0_TEST_SEED=%llu S0_TEST_ITERATIONS=1)",                      \
			             (unsigned long long)(m)->seed, (m)->step, msg_,                 \
			             (unsigned long long)(m)->seed);                                 \
		}                                                                               \
	} while (0)

#define MOK(m, call)                                                                    \
	do {                                                                                \
		s0_error *err_ = NULL;                                                          \
		int rc_ = (call);                                                               \
		MCHECK(m, rc_ == S0_OK, "%s: %s", #call,                                        \
		       err_ ? s0_error_message(err_) : s0_code_name(rc_));                      \
		s0_error_free(err_);                                                            \
	} while (0)

static uint64_t rnd(model *m)
{
	m->x ^= m->x >> 12;
	m->x ^= m->x << 25;
	m->x ^= m->x >> 27;
	return m->x * 0x2545f4914f6cdd1dull;
}

static uint64_t below(model *m, uint64_t n)
{
	return n ? rnd(m) % n : 0;
}

/* A random range [off, off + len) inside the volume, biased to chunk edges. */
static void pick_range(model *m, uint64_t *off, uint64_t *len)
{
	uint64_t cs = m->cs;
	switch (below(m, 5)) {
	case 0: /* small, anywhere */
		*len = 1 + below(m, 100);
		break;
	case 1: /* whole chunks */
		*len = cs * (1 + below(m, 3));
		break;
	case 2: /* around a chunk boundary */
		*len = cs / 2 + below(m, cs);
		break;
	default:
		*len = 1 + below(m, 3 * cs);
	}
	if (*len > m->size)
		*len = m->size;
	*off = below(m, m->size - *len + 1);
	if (below(m, 3) == 0)
		*off -= *off % cs;
	if (*off + *len > m->size)
		*off = m->size - *len;
}

static void fill(model *m, uint8_t *dst, uint64_t len, const uint8_t *img, uint64_t off)
{
	switch (below(m, 6)) {
	case 0: /* zeros */
		memset(dst, 0, len);
		break;
	case 1: /* what is there already: elided */
		memcpy(dst, img + off, len);
		break;
	case 2: /* one of a few patterns: dedupe across chunks */
		blk_fill(dst, len, below(m, 3));
		break;
	case 3: /* mostly what is there, one byte changed */
		memcpy(dst, img + off, len);
		dst[below(m, len)] ^= (uint8_t)(1 + below(m, 255));
		break;
	default:
		for (uint64_t i = 0; i < len; i++)
			dst[i] = (uint8_t)rnd(m);
	}
}

static int add_branch(model *m, s0__branch *b, const uint8_t *img)
{
	mbranch *mb = &m->br[m->nbr++];
	mb->b = b;
	mb->img = malloc(m->size);
	memcpy(mb->img, img, m->size);
	mb->sealed = false;
	return m->nbr - 1;
}

static void drop_branch(model *m, int i)
{
	s0__branch_free(m->br[i].b);
	free(m->br[i].img);
	m->br[i] = m->br[--m->nbr];
}

static void drop_gen(model *m, int i)
{
	free(m->gen[i].img);
	m->gen[i] = m->gen[--m->ngen];
}

static void sync_roots(model *m)
{
	m->e.n_roots = m->ngen;
	for (int i = 0; i < m->ngen; i++)
		m->e.roots[i] = m->gen[i].id;
}

static void op_write(model *m, mbranch *mb, bool zero)
{
	uint64_t off, len;
	pick_range(m, &off, &len);
	if (zero)
		memset(m->buf, 0, len);
	else
		fill(m, m->buf, len, mb->img, off);
	s0_error *err = NULL;
	int rc = zero ? s0__branch_zero(mb->b, off, len, &err)
	              : s0__branch_write(mb->b, off, m->buf, len, &err);
	if (mb->sealed) {
		MCHECK(m, rc == S0_ECONFLICT, "write to a sealed branch gave %s", s0_code_name(rc));
	} else {
		MCHECK(m, rc == S0_OK, "write %llu+%llu: %s", (unsigned long long)off,
		       (unsigned long long)len, err ? s0_error_message(err) : "?");
		memcpy(mb->img + off, m->buf, len);
	}
	s0_error_free(err);
}

static void op_read(model *m, mbranch *mb)
{
	uint64_t off, len;
	pick_range(m, &off, &len);
	MOK(m, s0__branch_read(mb->b, off, m->buf, len, &err_));
	MCHECK(m, !memcmp(m->buf, mb->img + off, len), "read %llu+%llu differs",
	       (unsigned long long)off, (unsigned long long)len);
}

static void verify_all(model *m, s0__branch *b, const uint8_t *img, const char *what)
{
	MOK(m, s0__branch_read(b, 0, m->buf, m->size, &err_));
	for (uint64_t i = 0; i < m->size; i++)
		MCHECK(m, m->buf[i] == img[i], "%s: byte %llu is %u, want %u", what,
		       (unsigned long long)i, m->buf[i], img[i]);
}

static void op_publish(model *m, int i)
{
	mbranch *mb = &m->br[i];
	bool cont = below(m, 2);
	s0__genid g;
	s0_error *err = NULL;
	int rc = s0__branch_publish(mb->b, cont ? S0__PUBLISH_CONTINUE : 0, &g, &err);
	if (mb->sealed && rc == S0_ECONFLICT) { /* published before */
		s0_error_free(err);
		return;
	}
	MCHECK(m, rc == S0_OK, "publish: %s", err ? s0_error_message(err) : "?");
	s0_error_free(err);
	mb->sealed = !cont;
	if (m->ngen == MAX_GEN)
		drop_gen(m, (int)below(m, MAX_GEN));
	mgen *mg = &m->gen[m->ngen++];
	mg->id = g;
	mg->img = malloc(m->size);
	memcpy(mg->img, mb->img, m->size);
	sync_roots(m); /* recorded... */
	s0__bstore_unref(m->e.bs, &g); /* ...then unpinned */
}

static void op_seal(model *m, mbranch *mb)
{
	MOK(m, s0__branch_seal(mb->b, &err_));
	mb->sealed = true;
}

static void op_attach(model *m)
{
	if (!m->ngen || m->nbr == MAX_BR)
		return;
	mgen *mg = &m->gen[below(m, m->ngen)];
	s0__branch *b;
	MOK(m, s0__bstore_attach(m->e.bs, &mg->id, &b, &err_));
	add_branch(m, b, mg->img);
}

static void op_fork(model *m, int i)
{
	if (m->nbr == MAX_BR)
		return;
	s0__branch *b;
	MOK(m, s0__branch_fork(m->br[i].b, &b, &err_));
	add_branch(m, b, m->br[i].img);
}

static void op_gc(model *m)
{
	while (m->ngen > 1 && below(m, 2))
		drop_gen(m, (int)below(m, m->ngen));
	sync_roots(m);
	MOK(m, s0__bstore_gc(m->e.bs, NULL, &err_));
	if (m->ngen) {
		mgen *mg = &m->gen[below(m, m->ngen)];
		s0__branch *b;
		MOK(m, s0__bstore_attach(m->e.bs, &mg->id, &b, &err_));
		verify_all(m, b, mg->img, "generation after GC");
		s0__branch_free(b);
	}
}

static void op_reopen(model *m)
{
	while (m->nbr)
		drop_branch(m, 0);
	blk_reopen(&m->e);
	if (below(m, 2))
		MOK(m, s0__bstore_gc(m->e.bs, NULL, &err_));
	op_attach(m);
}

static void op_bad(model *m, mbranch *mb)
{
	uint64_t off = m->size - below(m, 3);
	uint64_t len = 4 + below(m, m->cs);
	s0_error *err = NULL;
	MCHECK(m, s0__branch_read(mb->b, off, m->buf, len, &err) == S0_EINVAL, "bad read");
	s0_error_free(err);
	err = NULL;
	int rc = s0__branch_write(mb->b, off, m->buf, len, &err);
	MCHECK(m, rc == S0_EINVAL || (mb->sealed && rc == S0_ECONFLICT), "bad write: %s",
	       s0_code_name(rc));
	s0_error_free(err);
}

static void step(model *m)
{
	if (!m->nbr) {
		op_attach(m);
		return;
	}
	int i = (int)below(m, m->nbr);
	mbranch *mb = &m->br[i];
	uint64_t r = below(m, 100);
	if (r < 40)
		op_write(m, mb, false);
	else if (r < 44)
		op_write(m, mb, true);
	else if (r < 68)
		op_read(m, mb);
	else if (r < 76)
		op_publish(m, i);
	else if (r < 78)
		op_seal(m, mb);
	else if (r < 83)
		op_attach(m);
	else if (r < 87)
		op_fork(m, i);
	else if (r < 90)
		drop_branch(m, i);
	else if (r < 92)
		op_reopen(m);
	else if (r < 95)
		op_gc(m);
	else if (r < 98)
		verify_all(m, mb->b, mb->img, "branch");
	else
		op_bad(m, mb);
}

static void run_model(uint64_t seed, long steps)
{
	model m = {.seed = seed, .x = seed * 0x9e3779b97f4a7c15ull | 1};
	static const uint32_t sizes[] = {1024, 4096, 65536};
	m.cs = sizes[below(&m, 3)];
	uint64_t nchunks = below(&m, 4) == 0 ? 16384 + 1 + below(&m, 2000) : 1 + below(&m, 400);
	if (m.cs == 65536 && nchunks > 400)
		nchunks = 130 + below(&m, 50); /* depth 2, still small */
	m.size = nchunks * m.cs - below(&m, m.cs);
	blk_open(&m.e, m.cs);
	m.e.opts.cache_bytes = below(&m, 2) ? 4 * m.cs : 0; /* tiny caches stress refetching */
	m.e.opts.page_cache_bytes = below(&m, 2) ? 8192 : 0;
	blk_reopen(&m.e);
	m.buf = malloc(m.size);
	uint8_t *zero = calloc(1, m.size);
	s0__genid g0;
	MOK(&m, s0__bstore_create(m.e.bs, m.size, &g0, &err_));
	m.gen[0].id = g0;
	m.gen[0].img = zero;
	m.ngen = 1;
	sync_roots(&m);
	s0__bstore_unref(m.e.bs, &g0);
	for (m.step = 0; m.step < steps; m.step++)
		step(&m);
	/* Final: every recorded generation reads back exactly after a reopen. */
	while (m.nbr)
		drop_branch(&m, 0);
	blk_reopen(&m.e);
	MOK(&m, s0__bstore_gc(m.e.bs, NULL, &err_));
	for (int i = 0; i < m.ngen; i++) {
		s0__branch *b;
		MOK(&m, s0__bstore_attach(m.e.bs, &m.gen[i].id, &b, &err_));
		verify_all(&m, b, m.gen[i].img, "recorded generation at the end");
		s0__branch_free(b);
	}
	while (m.ngen)
		drop_gen(&m, 0);
	free(m.buf);
	blk_close(&m.e);
}

START_TEST(test_model)
{
	const char *s = getenv("S0_TEST_SEED");
	uint64_t base = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 1000003u;
	long runs = s0_test_iterations(12);
	fprintf(stderr, "model: seeds %llu..%llu (replay one with S0_TEST_SEED=<seed> "
	                "S0_TEST_ITERATIONS=1)\n",
	        (unsigned long long)base, (unsigned long long)(base + (uint64_t)runs - 1));
	for (long r = 0; r < runs; r++)
		run_model(base + (uint64_t)r, 400);
}
END_TEST

Suite *s0_bstore_model_suite(void)
{
	Suite *s = suite_create(objenv_name("bstore_model"));
	TCase *tc = tcase_create("model");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_model);
	suite_add_tcase(s, tc);
	return s;
}
