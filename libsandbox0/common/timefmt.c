/* RFC 3339 timestamps and Retry-After values. */
#include "common/json.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int s0__time_parse_rfc3339(const char *s, int64_t *out)
{
	int Y, M, D, h, m, sec;
	if (strlen(s) < 20 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) ||
	    s[7] != '-' || digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &m) || s[16] != ':' ||
	    digits(s + 17, 2, &sec))
		return -1;
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || (M == 2 && D == 29 && !leap) ||
	    h > 23 || m > 59 || sec > 60)
		return -1;
	const char *p = s + 19;
	int64_t frac_ms = 0;
	if (*p == '.') {
		p++;
		int nd = 0;
		while (isdigit((unsigned char)*p)) {
			if (nd < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
			nd++;
			p++;
		}
		if (!nd)
			return -1;
		for (; nd < 3; nd++)
			frac_ms *= 10;
	}
	int64_t off_min = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return -1;
		off_min = (int64_t)(oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	if (Y == 1 && M == 1 && D == 1 && h == 0 && m == 0 && sec == 0 && !frac_ms) {
		*out = 0; /* Go zero time: "not set" */
		return 0;
	}
	/* days from civil (Howard Hinnant) */
	int y = Y - (M <= 2);
	int era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (unsigned)((153 * (M + (M > 2 ? -3 : 9)) + 2) / 5 + D - 1);
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = (int64_t)era * 146097 + (int64_t)doe - 719468;
	int64_t secs = days * 86400 + h * 3600 + m * 60 + sec - off_min * 60;
	*out = secs * 1000 + frac_ms;
	return 0;
}

void s0__time_format_rfc3339(int64_t unix_ms, char *buf, size_t n)
{
	/* RFC 3339 covers years 0001..9999: clamp, so the text is always valid
	 * (gmtime_r fails beyond its range and left struct tm unset). */
	if (unix_ms < S0__RFC3339_MIN_MS)
		unix_ms = S0__RFC3339_MIN_MS;
	if (unix_ms > S0__RFC3339_MAX_MS)
		unix_ms = S0__RFC3339_MAX_MS;
	int64_t days = unix_ms / 86400000, rem = unix_ms % 86400000;
	if (rem < 0) {
		rem += 86400000;
		days--;
	}
	int ms = (int)(rem % 1000), secs = (int)(rem / 1000);
	/* civil from days (Howard Hinnant) */
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	if (ms)
		snprintf(buf, n, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", (int)y, m, d, secs / 3600,
		         secs / 60 % 60, secs % 60, ms);
	else
		snprintf(buf, n, "%04d-%02u-%02uT%02d:%02d:%02dZ", (int)y, m, d, secs / 3600,
		         secs / 60 % 60, secs % 60);
}

/* Longest delay believed, either form: a year (anything longer is a bogus header). */
#define RETRY_AFTER_MAX_MS (86400LL * 365 * 1000)

int64_t s0__retry_after_parse(const char *v, int64_t now_unix_ms)
{
	if (!v)
		return -1;
	while (isspace((unsigned char)*v))
		v++;
	if (!*v)
		return -1;
	if (isdigit((unsigned char)*v)) {
		char *end;
		unsigned long long secs = strtoull(v, &end, 10);
		while (isspace((unsigned char)*end))
			end++;
		if (*end || secs > (unsigned long long)RETRY_AFTER_MAX_MS / 1000)
			return -1;
		return (int64_t)secs * 1000;
	}
	/* HTTP-date (RFC 9110 §10.2.3): libcurl's parser handles all three forms */
	time_t t = curl_getdate(v, NULL);
	if (t == (time_t)-1)
		return -1;
	/* compared in seconds first: a date far in the future (curl_getdate
	 * takes any year) would overflow the milliseconds */
	if ((int64_t)t > now_unix_ms / 1000 + RETRY_AFTER_MAX_MS / 1000 + 1)
		return -1;
	int64_t d = (int64_t)t * 1000 - now_unix_ms;
	if (d > RETRY_AFTER_MAX_MS)
		return -1;
	return d < 0 ? 0 : d;
}
