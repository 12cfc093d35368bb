/* test_size.c — size parsing accepts every documented form and rejects everything else. */
#include "size.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void ok(const char *text, uint64_t want)
{
    uint64_t got = 0;
    const char *err = NULL;
    if (cg_parse_size(text, &got, &err) != 0 || got != want) {
        fprintf(stderr, "FAIL parse(%s): got %llu (%s), want %llu\n", text,
                (unsigned long long)got, err ? err : "ok", (unsigned long long)want);
        failures++;
    }
}

static void bad(const char *text)
{
    uint64_t got = 12345;
    const char *err = NULL;
    if (cg_parse_size(text, &got, &err) == 0 || got != 12345 || !err || !*err) {
        fprintf(stderr, "FAIL parse(%s) should fail without touching output\n", text);
        failures++;
    }
}

static void fmt(uint64_t v, const char *want)
{
    char buf[CG_SIZE_BUFLEN];
    cg_format_size(v, buf, sizeof buf);
    if (strcmp(buf, want) != 0) {
        fprintf(stderr, "FAIL format(%llu) = %s, want %s\n", (unsigned long long)v, buf, want);
        failures++;
    }
}

int main(void)
{
    ok("0", 0);
    ok("4096", 4096);
    ok("4096B", 4096);
    ok("512MiB", 512ULL << 20);
    ok("512mib", 512ULL << 20);
    ok("1GiB", 1ULL << 30);
    ok("1G", 1ULL << 30);
    ok("1gb", 1ULL << 30);
    ok("1.5GiB", 3ULL << 29);
    ok("0.5K", 512);
    bad("2x");
    ok("16TiB", 16ULL << 40);
    ok("16777215TiB", 16777215ULL << 40);
    ok("18446744073709551615", UINT64_MAX);
    bad("");
    bad("MiB");
    bad("-1");
    bad(" 1GiB");
    bad("1 GiB");
    bad("1.GiB");
    bad("1.3B");
    bad("0.1KiB");
    bad("18446744073709551616");
    bad("16777216TiB");
    bad("1e9");
    bad("1PiB");
    fmt(0, "0B");
    fmt(1000, "1000B");
    fmt(66ULL << 20, "66MiB");
    fmt(5ULL << 30, "5GiB");
    fmt(3ULL << 29, "1.5GiB");
    fmt((1ULL << 30) + 1, "1.00GiB");
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    puts("size: all passed");
    return 0;
}
