/* Helpers of the block store benchmark. */
#include "bench_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bu_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double bu_cpu_ms(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
	       (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

double bu_loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

uint64_t bu_rand(uint64_t *s)
{
	*s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* A fixed text-like dictionary the data is cut from. */
static const uint8_t *dictionary(void)
{
	static uint8_t dict[1 << 16];
	static bool ready;
	if (!ready) {
		static const char *w[] = {"static ", "int ", "return ", "struct ", "uint64_t ", "if (",
		                          ") {\n", "}\n", "for (", "size_t ", "error", "_free(",
		                          "buffer", "->", " = ", "NULL", "0x", "const ", "char *", ";\n"};
		uint64_t x = 42;
		for (size_t i = 0; i < sizeof dict;) {
			const char *s = w[bu_rand(&x) % 20];
			for (size_t k = 0; s[k] && i < sizeof dict; k++)
				dict[i++] = (uint8_t)s[k];
		}
		ready = true;
	}
	return dict;
}

void bu_fill(void *buf, size_t len, uint64_t seed)
{
	const uint8_t *dict = dictionary();
	uint8_t *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
	for (size_t i = 0; i < len; i += 256) {
		size_t n = len - i < 256 ? len - i : 256;
		uint64_t r = bu_rand(&x);
		if (r % 100 < 30) { /* incompressible run */
			for (size_t k = 0; k < n; k += 8) {
				uint64_t v = bu_rand(&x);
				memcpy(p + i + k, &v, n - k < 8 ? n - k : 8);
			}
		} else {
			memcpy(p + i, dict + (r >> 8) % (sizeof(uint8_t) * 65536 - 256), n);
		}
	}
}

bool bu_drop_caches(int level)
{
	sync();
	FILE *f = fopen("/proc/sys/vm/drop_caches", "w");
	if (!f)
		return false;
	bool ok = fprintf(f, "%d\n", level) > 0;
	return fclose(f) == 0 && ok;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bu_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t tree_total;

static int add_size(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag == FTW_F)
		tree_total += (uint64_t)sb->st_size;
	return 0;
}

uint64_t bu_tree_bytes(const char *dir)
{
	tree_total = 0;
	nftw(dir, add_size, 16, FTW_PHYS);
	return tree_total;
}

double bu_run(char *const argv[])
{
	double t0 = bu_now_ms();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return bu_now_ms() - t0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

void bu_rmrf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
