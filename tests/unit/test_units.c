// SPDX-License-Identifier: GPL-2.0
/* Sizes, durations and integers as people type them. */
#include "check.h"
#include "units.h"

#include <errno.h>

static void size_ok(const char *t, uint64_t want)
{
	uint64_t v = 0;
	int rc = pmd_parse_size(t, &v);

	CHECK(rc == 0 && v == want, "size '%s' -> %" PRIu64 " (rc %d, got %" PRIu64 ")", t, want, rc,
	      v);
}

static void size_bad(const char *t, int want)
{
	uint64_t v;

	CHECK(pmd_parse_size(t, &v) == want, "size '%s' rejected with %d", t, want);
}

static void dur_ok(const char *t, uint64_t want)
{
	uint64_t v = 0;
	int rc = pmd_parse_duration(t, &v);

	CHECK(rc == 0 && v == want, "duration '%s' -> %" PRIu64 " ns (rc %d, got %" PRIu64 ")", t,
	      want, rc, v);
}

int main(void)
{
	char buf[32];
	uint64_t v;

	size_ok("4096", 4096);
	size_ok("64K", 64ull << 10);
	size_ok("2M", 2ull << 20);
	size_ok("2m", 2ull << 20);
	size_ok("2MiB", 2ull << 20);
	size_ok("1G", 1ull << 30);
	size_ok("1T", 1ull << 40);
	size_bad("", -EINVAL);
	size_bad("M", -EINVAL);
	size_bad("12Q", -EINVAL);
	size_bad("1.5G", -EINVAL);
	size_bad("-1M", -EINVAL);
	size_bad("99999999999999999999", -ERANGE);
	size_bad("16777216T", -ERANGE);

	dur_ok("10", 10000000000ull);
	dur_ok("90s", 90000000000ull);
	dur_ok("5m", 300000000000ull);
	dur_ok("8h", 8ull * 3600 * 1000000000ull);
	dur_ok("500ms", 500000000ull);
	dur_ok("100us", 100000ull);
	dur_ok("20ns", 20);
	CHECK(pmd_parse_duration("10x", &v) == -EINVAL, "duration '10x' rejected");
	CHECK(pmd_parse_duration("s", &v) == -EINVAL, "duration 's' rejected");
	dur_ok("1.5s", 1500000000ull);
	dur_ok("1.5", 1500000000ull);
	dur_ok("0.25m", 15000000000ull);
	dur_ok("2.5ms", 2500000ull);
	dur_ok("1.000000001s", 1000000001ull);
	dur_ok("1.50us", 1500ull);
	dur_ok("0.5h", 1800ull * 1000000000ull);
	CHECK(pmd_parse_duration("1.5ns", &v) == -EINVAL, "duration '1.5ns' rejected (below 1 ns)");
	CHECK(pmd_parse_duration("1.0000000001s", &v) == -EINVAL,
	      "duration '1.0000000001s' rejected (below 1 ns)");
	CHECK(pmd_parse_duration("1.s", &v) == -EINVAL, "duration '1.s' rejected");
	CHECK(pmd_parse_duration(".5s", &v) == -EINVAL, "duration '.5s' rejected");
	CHECK(pmd_parse_duration("1.5.5s", &v) == -EINVAL, "duration '1.5.5s' rejected");
	CHECK(pmd_parse_duration("1.0000000000000000000s", &v) == -ERANGE,
	      "duration with 19 fraction digits rejected");
	CHECK(pmd_parse_duration("18446744073.709551615s", &v) == 0 && v == UINT64_MAX,
	      "duration of UINT64_MAX ns");
	CHECK(pmd_parse_duration("18446744073.709551616s", &v) == -ERANGE,
	      "duration past UINT64_MAX ns rejected");

	CHECK(pmd_parse_uint("0x1f", &v) == 0 && v == 31, "hex 0x1f");
	CHECK(pmd_parse_uint("18446744073709551615", &v) == 0 && v == UINT64_MAX, "u64 max");
	CHECK(pmd_parse_uint("18446744073709551616", &v) == -ERANGE, "u64 max + 1");
	CHECK(pmd_parse_uint("12 ", &v) == -EINVAL, "trailing space rejected");
	CHECK(pmd_parse_uint("0x", &v) == -EINVAL, "bare 0x rejected");

	pmd_format_size(2ull << 20, buf, sizeof(buf));
	CHECK_STR(buf, "2M", "format 2M");
	pmd_format_size(1536, buf, sizeof(buf));
	CHECK_STR(buf, "1536", "format 1536");
	pmd_format_size(3ull << 30, buf, sizeof(buf));
	CHECK_STR(buf, "3G", "format 3G");
	pmd_format_duration(90000000000ull, buf, sizeof(buf));
	CHECK_STR(buf, "90s", "format 90s");
	pmd_format_duration(3600000000000ull, buf, sizeof(buf));
	CHECK_STR(buf, "1h", "format 1h");
	pmd_format_duration(1500000, buf, sizeof(buf));
	CHECK_STR(buf, "1500us", "format 1500us");
	pmd_format_ns(2270, buf, sizeof(buf));
	CHECK_STR(buf, "2.27us", "format 2.27us");
	pmd_format_ns(1.5e9, buf, sizeof(buf));
	CHECK_STR(buf, "1.50s", "format 1.50s");
	pmd_format_ns(512, buf, sizeof(buf));
	CHECK_STR(buf, "512ns", "format 512ns");
	return check_done();
}
