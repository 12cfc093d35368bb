/* interfere_report.c — the reports of `convgpu interfere` (interfere.h): the terminal table, the
 * CSV and the SVG heatmap, from measured wall times. Files are written beside their final name
 * and renamed, so a reader never sees half of one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interfere.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double interfere_median(const double *v, unsigned n)
{
    double s[INTERFERE_MAX_RUNS];
    if (n == 0 || n > INTERFERE_MAX_RUNS)
        return NAN;
    memcpy(s, v, n * sizeof *v);
    qsort(s, n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double interfere_slowdown(const interfere_results *r, unsigned fg, unsigned bg)
{
    double alone = interfere_median(r->alone[fg], r->runs);
    return alone > 0 ? interfere_median(r->together[fg][bg], r->runs) / alone : NAN;
}

static void range(const double *v, unsigned n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (unsigned i = 1; i < n; i++) {
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
}

void interfere_print_table(FILE *f, const interfere_results *r)
{
    fprintf(f, "workloads (wall time alone, median of %u [min..max]; key: command):\n", r->runs);
    for (unsigned i = 0; i < r->n; i++) {
        double lo, hi;
        range(r->alone[i], r->runs, &lo, &hi);
        fprintf(f, "  W%-3u %8.3f s [%.3f..%.3f]  %s: %s\n", i + 1,
                interfere_median(r->alone[i], r->runs), lo, hi, r->key[i], r->cmd[i]);
    }
    fprintf(f, "\nslowdown of the foreground (row) with the background (column) beside it:\n      ");
    for (unsigned j = 0; j < r->n; j++)
        fprintf(f, " %7s%-2u", "W", j + 1);
    fputc('\n', f);
    for (unsigned i = 0; i < r->n; i++) {
        fprintf(f, "  W%-3u", i + 1);
        for (unsigned j = 0; j < r->n; j++)
            fprintf(f, " %9.3f", interfere_slowdown(r, i, j));
        fputc('\n', f);
    }
}

static void csv_field(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Opens PATH.tmp for writing; *tmp gets its name. */
static FILE *open_tmp(const char *path, char *tmp, size_t len)
{
    if ((size_t)snprintf(tmp, len, "%s.tmp", path) >= len)
        return NULL;
    return fopen(tmp, "w");
}

static int close_rename(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

int interfere_write_csv(const char *path, const interfere_results *r)
{
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f)
        return -1;
    fprintf(f, "foreground,background,runs,alone_median_s,together_median_s,slowdown,"
               "foreground_command,background_command,foreground_key,background_key\n");
    for (unsigned i = 0; i < r->n; i++)
        for (unsigned j = 0; j < r->n; j++) {
            fprintf(f, "W%u,W%u,%u,%.6f,%.6f,%.6f,", i + 1, j + 1, r->runs,
                    interfere_median(r->alone[i], r->runs),
                    interfere_median(r->together[i][j], r->runs), interfere_slowdown(r, i, j));
            csv_field(f, r->cmd[i]);
            fputc(',', f);
            csv_field(f, r->cmd[j]);
            fputc(',', f);
            csv_field(f, r->key[i]);
            fputc(',', f);
            csv_field(f, r->key[j]);
            fputc('\n', f);
        }
    return close_rename(f, tmp, path);
}

static void xml_text(FILE *f, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            /* XML 1.0 allows no control characters but tab, newline and return. */
            fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
        }
    }
    if (*s)
        fputs("...", f);
}

/* White at no slowdown, deepening to red at the largest (at least 2x). */
static void cell_colour(double slowdown, double top, char out[8])
{
    double t = isnan(slowdown) ? 0 : (slowdown - 1) / (top - 1);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    int g = (int)lround(255 * (1 - 0.85 * t));
    snprintf(out, 8, "#ff%02x%02x", g, g);
}

int interfere_write_svg(const char *path, const interfere_results *r)
{
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f)
        return -1;
    const double cell = 64, L = 80, T = 70;
    double top = 2;
    for (unsigned i = 0; i < r->n; i++)
        for (unsigned j = 0; j < r->n; j++) {
            double s = interfere_slowdown(r, i, j);
            if (!isnan(s))
                top = fmax(top, s);
        }
    double grid = cell * r->n, W = fmax(L + grid + 40, 640), H = T + grid + 50 + 18.0 * r->n;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
            "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"13\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%.0f\" y=\"24\" font-size=\"16\">Slowdown of the foreground (row) with "
            "the background (column), median of %u</text>\n"
            "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">background</text>\n"
            "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" "
            "text-anchor=\"middle\">foreground</text>\n",
            W, H, L, r->runs, L + grid / 2, T - 26, T + grid / 2, T + grid / 2);
    for (unsigned j = 0; j < r->n; j++)
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">W%u</text>\n",
                L + cell * j + cell / 2, T - 8, j + 1);
    for (unsigned i = 0; i < r->n; i++) {
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">W%u</text>\n", L - 8,
                T + cell * i + cell / 2 + 5, i + 1);
        for (unsigned j = 0; j < r->n; j++) {
            double s = interfere_slowdown(r, i, j);
            char colour[8];
            cell_colour(s, top, colour);
            fprintf(f,
                    "<rect class=\"cell\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
                    "fill=\"%s\" stroke=\"#888\"><title>W%u beside W%u: %.3f</title></rect>\n"
                    "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%.2f</text>\n",
                    L + cell * j, T + cell * i, cell, cell, colour, i + 1, j + 1, s,
                    L + cell * j + cell / 2, T + cell * i + cell / 2 + 5, s);
        }
    }
    for (unsigned i = 0; i < r->n; i++) {
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">W%u: ", L, T + grid + 30 + 18.0 * i, i + 1);
        xml_text(f, r->cmd[i], 90);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    return close_rename(f, tmp, path);
}
