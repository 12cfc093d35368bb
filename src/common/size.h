/* size.h — parsing and printing of byte sizes ("512MiB", "1.5GiB", "1G", "4096"). */
#ifndef CONVGPU_SIZE_H
#define CONVGPU_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Parses a size. Suffixes (case-insensitive): none or B = bytes; K, KB, KiB = 2^10; M, MB, MiB =
 * 2^20; G, GB, GiB = 2^30; T, TB, TiB = 2^40 (binary, as Docker reads them). A decimal fraction is
 * allowed when the result is a whole number of bytes ("1.5GiB"). Returns 0 on success, -1 on a
 * malformed, fractional-byte or overflowing size; then *err (if not NULL) says why. */
int cg_parse_size(const char *text, uint64_t *out, const char **err);

/* Formats bytes compactly and exactly when possible: "5GiB", "1.5GiB", "66MiB", "1000B";
 * otherwise with two decimals ("1.23GiB"). Returns buf. */
char *cg_format_size(uint64_t bytes, char *buf, size_t len);

#define CG_SIZE_BUFLEN 32

#endif
