/* treeduce-tune's rules that need no MPI: the pruning, the noise, the
 * check's verdict (tune_rules.h). */
#include "tune_rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wisdom.h"

int tune_prune_init(tune_prune *pr, int ncands)
{
    pr->ncands = ncands;
    pr->slow = calloc((size_t)(ncands > 0 ? ncands : 1), sizeof *pr->slow);
    pr->last = calloc((size_t)(ncands > 0 ? ncands : 1), sizeof *pr->last);
    if (!pr->slow || !pr->last) {
        tune_prune_free(pr);
        return -1;
    }
    return 0;
}

void tune_prune_free(tune_prune *pr)
{
    free(pr->slow);
    free(pr->last);
    pr->slow = NULL;
    pr->last = NULL;
}

int tune_prune_keep(const tune_prune *pr, const double *model, int i, size_t bytes)
{
    if (pr->slow[i] < TUNE_SLOW_SIZES || pr->last[i] == 0)
        return 1;
    if ((double)bytes >= TUNE_RETIME_FACTOR * (double)pr->last[i])
        return 1;
    if (isnan(model[i]))
        return 1;
    /* the model's best prediction, and how many candidates it puts before i */
    double best = INFINITY;
    int before = 0;
    for (int k = 0; k < pr->ncands; k++) {
        if (isnan(model[k]))
            continue;
        best = fmin(best, model[k]);
        before += k != i && (model[k] < model[i] || (model[k] == model[i] && k < i));
    }
    if (isfinite(model[i]) && before < TUNE_MODEL_TOP)
        return 1;
    return !(model[i] > TUNE_MODEL_REACH * best);
}

void tune_prune_update(tune_prune *pr, const int *idx, int n, const double *us, size_t bytes)
{
    double best = INFINITY;
    for (int i = 0; i < n; i++)
        best = fmin(best, us[i]);
    for (int i = 0; i < n; i++) {
        if (!isfinite(us[i]))
            continue;
        pr->last[idx[i]] = bytes;
        pr->slow[idx[i]] = us[i] > TUNE_SLOW_FACTOR * best ? pr->slow[idx[i]] + 1 : 0;
    }
}

/* The candidates of gidx[g * cap ..] that are not dead, into idx. */
static int live(const int *gidx, const int *gn, int cap, const int *dead, int g, int *idx)
{
    int n = 0;
    for (int i = 0; i < gn[g]; i++)
        if (!dead[gidx[(size_t)g * (size_t)cap + (size_t)i]])
            idx[n++] = gidx[(size_t)g * (size_t)cap + (size_t)i];
    return n;
}

int tune_first_pass(tune_prune *pr, const size_t *grid, int ngrid, const double *model,
                    const int *dead, int *gidx, int *gn, int cap, tune_time_fn time_fn, void *arg,
                    int *ndone)
{
    int *idx = malloc((size_t)cap * sizeof *idx), rc = 0;
    size_t *before = malloc((size_t)(pr->ncands > 0 ? pr->ncands : 1) * sizeof *before);
    double *us = malloc((size_t)cap * sizeof *us);
    *ndone = 0;
    if (!idx || !before || !us) {
        rc = -1;
        goto out;
    }
    for (int g = 0; g < ngrid; g++) {
        int *row = gidx + (size_t)g * (size_t)cap;
        memcpy(before, pr->last, (size_t)pr->ncands * sizeof *before);
        gn[g] = 0;
        for (int i = 0; i < pr->ncands; i++)
            if (!dead[i] && tune_prune_keep(pr, model + (size_t)g * (size_t)cap, i, grid[g]))
                row[gn[g]++] = i;
        int n = live(gidx, gn, cap, dead, g, idx);
        if ((rc = time_fn(arg, g, idx, n, us)) != 0)
            goto out;
        *ndone = g + 1;
        tune_prune_update(pr, idx, n, us, grid[g]);
        double best = INFINITY;
        for (int i = 0; i < n; i++)
            best = fmin(best, us[i]);
        /* a candidate back within reach after skipping sizes: timed there */
        int back[n > 0 ? n : 1], nback = 0;
        for (int i = 0; i < n && g > 0; i++)
            if (us[i] <= TUNE_SLOW_FACTOR * best && before[idx[i]] < grid[g - 1])
                back[nback++] = idx[i];
        for (int h = g - 1; nback && h >= 0; h--) {
            int *hrow = gidx + (size_t)h * (size_t)cap, added = 0;
            for (int b = 0; b < nback; b++) {
                int c = back[b], k = 0;
                if (grid[h] <= before[c])
                    continue;
                while (k < gn[h] && hrow[k] != c)
                    k++;
                if (k == gn[h]) {
                    hrow[gn[h]++] = c;
                    added = 1;
                }
            }
            if (!added)
                continue;
            int hn = live(gidx, gn, cap, dead, h, idx);
            if ((rc = time_fn(arg, h, idx, hn, us)) != 0)
                goto out;
        }
    }
out:
    free(idx);
    free(before);
    free(us);
    return rc;
}

double tune_twin_noise(double a, double b)
{
    if (!(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b))
        return 0;
    return fabs(a - b) / fmin(a, b);
}

double tune_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    for (int i = 1; i < n; i++) /* n is small: insertion sort */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double tmp = v[j];
            v[j] = v[j - 1];
            v[j - 1] = tmp;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* t plus its margin: noise times t, at least TUNE_TIE_US. */
static double with_margin(double t, double noise)
{
    return t + fmax(noise * t, TUNE_TIE_US);
}

int tune_check_verdict(double alg_us, double model_us, double mpi_us, double noise, int same)
{
    int beats_model = same || with_margin(alg_us, noise) < model_us;
    if (beats_model && alg_us <= with_margin(mpi_us, noise))
        return TRD_WISDOM_KEPT;
    return mpi_us <= with_margin(model_us, noise) ? TRD_WISDOM_TO_MPI : TRD_WISDOM_TO_MODEL;
}

double tune_check_time(const trd_wisdom_point *p, const char *name)
{
    if (!strcmp(name, "mpi"))
        return p->mpi_us;
    if (!strcmp(name, TRD_WISDOM_MODEL) || !strcmp(name, p->model))
        return p->model_us;
    return strcmp(name, p->alg) ? INFINITY : p->alg_us;
}

void tune_check_choices(const trd_wisdom_point *p, int n, const char **who)
{
    for (int k = 0; k < n; k++) {
        const trd_wisdom_point *q = &p[k];
        who[k] = q->verdict == TRD_WISDOM_TO_MPI     ? "mpi"
                 : q->verdict == TRD_WISDOM_TO_MODEL ? TRD_WISDOM_MODEL
                                                     : q->alg;
        if (k == 0 || !strcmp(who[k - 1], who[k]))
            continue;
        double prev = tune_check_time(q, who[k - 1]);
        if (isfinite(prev) && prev <= with_margin(tune_check_time(q, who[k]), q->noise) &&
            prev <= with_margin(q->mpi_us, q->noise) && prev <= with_margin(q->model_us, q->noise))
            who[k] = who[k - 1];
    }
}

/* key[r]: rank r's place when the nodes (indices into first, each node's
 * first rank) come in the order seq[0..nn), a node's ranks consecutive in
 * their order; returns whether any rank moved. */
static int place(const int *node, int n, const int *first, const int *seq, int nn, int *key)
{
    int pos = 0, moved = 0;
    for (int j = 0; j < nn; j++)
        for (int r = first[seq[j]]; r < n; r++)
            if (node[r] == node[first[seq[j]]]) {
                moved |= r != pos;
                key[r] = pos++;
            }
    return moved;
}

int tune_shuffled_order(const int *node, const int *leaf, int n, int *key)
{
    /* first[0..nn): each node's first rank, in rank order; leaves[0..nl):
     * the leaves in the order of their first node; seq[0..nn): the nodes
     * (indices into first) in the order wanted; taken: in seq already */
    int *first = malloc((size_t)n * sizeof *first), *leaves = malloc((size_t)n * sizeof *leaves),
        *seq = calloc((size_t)n, sizeof *seq);
    char *taken = calloc((size_t)n, 1);
    int nn = 0, nl = 0, ns = 0, moved = -1;
    if (!first || !leaves || !seq || !taken)
        goto out;
    for (int r = 0; r < n; r++) {
        int k = 0;
        while (k < nn && node[first[k]] != node[r])
            k++;
        if (k == nn)
            first[nn++] = r;
    }
    for (int k = 0; k < nn; k++) {
        int j = 0;
        while (j < nl && leaves[j] != leaf[first[k]])
            j++;
        if (j == nl)
            leaves[nl++] = leaf[first[k]];
    }
    /* shuffled: one node of each leaf in turn */
    while (ns < nn)
        for (int j = 0; j < nl; j++)
            for (int k = 0; k < nn; k++)
                if (!taken[k] && leaf[first[k]] == leaves[j]) {
                    taken[k] = 1;
                    seq[ns++] = k;
                    break;
                }
    if ((moved = place(node, n, first, seq, nn, key)))
        goto out;
    /* the ranks are in that order already: tree order, the nodes by their
     * places in the ring */
    for (int j = 0; j < nn; j++) {
        int lo = -1;
        for (int k = 0; k < nn; k++)
            if (taken[k] && (lo < 0 || node[first[k]] < node[first[lo]]))
                lo = k;
        taken[lo] = 0;
        seq[j] = lo;
    }
    moved = place(node, n, first, seq, nn, key);
out:
    free(first);
    free(leaves);
    free(seq);
    free(taken);
    return moved;
}
