/* svg.c — line plots like the paper's Figures 7 and 8: y (seconds) against the number of
 * containers, one coloured line per resume policy, the paper's measurements dashed in the same
 * colour, with a title, labelled and ticked axes and a legend; and grouped bars like seed 001's
 * Figures 15 and 16, ours filled, the paper's hollow beside them. Plain SVG 1.1, no scripts. */
#include <math.h>
#include <stdio.h>

#include "sim.h"

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b", "#e377c2", "#7f7f7f"};
#define NCOLOURS (sizeof colours / sizeof *colours)

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about `want` ticks over span. */
static double tick_step(double span, int want)
{
    double raw = span / want, mag = pow(10, floor(log10(raw)));
    double r = raw / mag;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

/* The document's head, its title, and the horizontal grid with the y tick labels. */
static void frame(FILE *f, const char *title, double W, double H, double L, double pw, double T,
                  double ph, double ytop, double ystep)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"13\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%.0f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" "
               "font-weight=\"bold\">%s</text>\n",
            W, H, W, H, L + pw / 2, title);
#define GRID_Y(v) (T + ph * (1.0 - (v) / ytop))
    for (double y = 0; y <= ytop + ystep / 2; y += ystep)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                L, GRID_Y(y), L + pw, GRID_Y(y), L - 6, GRID_Y(y) + 4, y);
#undef GRID_Y
}

static double value(const sim_point *p, bool finished)
{
    return finished ? p->finished : p->avg_suspended;
}

int sim_svg_write(const char *path, const char *title, const char *ylabel,
                  const sim_point *pts, size_t npts, bool finished, bool with_paper)
{
    const double W = 760, H = 480, L = 70, R = 190, T = 50, B = 60;
    double pw = W - L - R, ph = H - T - B;
    unsigned xmin = ~0u, xmax = 0;
    double ymax = 0;
    for (size_t i = 0; i < npts; i++) {
        xmin = pts[i].containers < xmin ? pts[i].containers : xmin;
        xmax = pts[i].containers > xmax ? pts[i].containers : xmax;
        ymax = fmax(ymax, value(&pts[i], finished));
        int col = sim_paper_col(pts[i].containers);
        if (with_paper && col >= 0 && pts[i].policy < 4)
            ymax = fmax(ymax, (finished ? sim_paper_finished : sim_paper_suspended)[pts[i].policy][col]);
    }
    if (npts == 0 || xmax == xmin)
        xmax = xmin + 1;
    double ystep = tick_step(ymax > 0 ? ymax : 1, 6);
    double ytop = ceil((ymax > 0 ? ymax : 1) / ystep) * ystep;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
#define X(v) (L + pw * ((double)(v) - xmin) / (double)(xmax - xmin))
#define Y(v) (T + ph * (1.0 - (v) / ytop))
    /* Title, grid, ticks and tick labels. */
    frame(f, title, W, H, L, pw, T, ph, ytop, ystep);
    unsigned xstep = (xmax - xmin) > 20 ? 4 : (xmax - xmin) > 8 ? 2 : 1;
    for (unsigned x = xmin; x <= xmax; x += xstep)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%u</text>\n",
                X(x), T + ph, X(x), T + ph + 5, X(x), T + ph + 20, x);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"black\"/>\n"
               "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">Number of containers</text>\n"
               "<text transform=\"translate(20 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
            L, T, pw, ph, L + pw / 2, H - 18, T + ph / 2, ylabel);
    /* One line per policy (points arrive grouped by policy, in N order). */
    unsigned legend = 0;
    for (size_t i = 0; i < npts;) {
        size_t j = i;
        while (j < npts && pts[j].policy == pts[i].policy && pts[j].placement == pts[i].placement &&
               pts[j].share == pts[i].share && pts[j].workload == pts[i].workload)
            j++;
        const char *c = colours[pts[i].policy % NCOLOURS];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
        for (size_t k = i; k < j; k++)
            fprintf(f, "%.1f,%.1f ", X(pts[k].containers), Y(value(&pts[k], finished)));
        fprintf(f, "\"/>\n");
        for (size_t k = i; k < j; k++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
                    X(pts[k].containers), Y(value(&pts[k], finished)), c);
        double ly = T + 10 + 20.0 * legend++;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\">%s (sim)</text>\n",
                L + pw + 15, ly, L + pw + 40, ly, c, L + pw + 46, ly + 4,
                cg_resume_policy_name(pts[i].policy));
        if (with_paper && pts[i].policy < 4) {
            const double *row = (finished ? sim_paper_finished : sim_paper_suspended)[pts[i].policy];
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" "
                       "stroke-dasharray=\"5,4\" points=\"", c);
            for (size_t k = i; k < j; k++) {
                int col = sim_paper_col(pts[k].containers);
                if (col >= 0)
                    fprintf(f, "%.1f,%.1f ", X(pts[k].containers), Y(row[col]));
            }
            fprintf(f, "\"/>\n");
            ly = T + 10 + 20.0 * legend++;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                       "stroke-dasharray=\"5,4\"/><text x=\"%.1f\" y=\"%.1f\">%s (paper)</text>\n",
                    L + pw + 15, ly, L + pw + 40, ly, c, L + pw + 46, ly + 4,
                    cg_resume_policy_name(pts[i].policy));
        }
        i = j;
    }
#undef X
#undef Y
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}

int sim_svg_bars(const char *path, const char *title, const char *ylabel, size_t ngroups,
                 const char *const *groups, size_t nseries, const char *const *series,
                 const double *values, const double *paper)
{
    const double W = 760, H = 480, L = 70, R = 190, T = 50, B = 60;
    double pw = W - L - R, ph = H - T - B;
    double ymax = 0;
    for (size_t i = 0; i < ngroups * nseries; i++) {
        ymax = fmax(ymax, values[i]);
        if (paper)
            ymax = fmax(ymax, paper[i]);
    }
    double ystep = tick_step(ymax > 0 ? ymax : 1, 6);
    double ytop = ceil((ymax > 0 ? ymax : 1) / ystep) * ystep;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
#define Y(v) (T + ph * (1.0 - (v) / ytop))
    frame(f, title, W, H, L, pw, T, ph, ytop, ystep);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"black\"/>\n"
               "<text transform=\"translate(20 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
            L, T, pw, ph, T + ph / 2, ylabel);
    /* Each group: a slot per series, holding our bar and, when the paper gives one, its bar. */
    double gw = ngroups ? pw / ngroups : pw, slot = gw * 0.8 / (nseries ? nseries : 1);
    double bw = paper ? slot * 0.45 : slot * 0.8;
    for (size_t g = 0; g < ngroups; g++) {
        double x0 = L + gw * g + gw * 0.1;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                L + gw * (g + 0.5), T + ph + 20, groups[g]);
        for (size_t k = 0; k < nseries; k++) {
            const char *c = colours[k % NCOLOURS];
            double v = values[g * nseries + k], x = x0 + slot * k;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "fill=\"%s\"/>\n", x, Y(v), bw, T + ph - Y(v), c);
            if (paper && paper[g * nseries + k] >= 0) {
                double pv = paper[g * nseries + k];
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                           "fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                           "stroke-dasharray=\"4,3\"/>\n",
                        x + bw, Y(pv), bw, T + ph - Y(pv), c);
            }
        }
    }
    for (size_t k = 0; k < nseries; k++) {
        double ly = T + 10 + 20.0 * k;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" fill=\"%s\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                L + pw + 15, ly - 5, colours[k % NCOLOURS], L + pw + 40, ly + 4, series[k]);
    }
    if (paper)
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" fill=\"none\" "
                   "stroke=\"black\" stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%.1f\">"
                   "the paper</text>\n",
                L + pw + 15, T + 5 + 20.0 * nseries, L + pw + 40, T + 14 + 20.0 * nseries);
#undef Y
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
