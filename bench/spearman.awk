# Spearman's rank correlation for the bench scripts' awk programs
# (bench/model_vs_measured.sh, bench/scale_summary.sh, bench/three_way.sh):
# put before a program's own text, awk "$(cat bench/spearman.awk)"'...'.

# r[1..n]: the ranks of x[1..n], 1 the smallest; tied values share the
# average of the places they take (two tied for 2nd and 3rd: 2.5 each).
function avg_ranks(n, x, r,    i, j) {
    for (i = 1; i <= n; i++) {
        r[i] = 1
        for (j = 1; j <= n; j++)
            if (x[j] < x[i]) r[i]++; else if (j != i && x[j] == x[i]) r[i] += 0.5
    }
}

# Spearman's rho of x[1..n] and y[1..n]: Pearson's correlation of their
# average ranks, which ties do not bias as 1 - 6 sum d^2 / (n (n^2 - 1))
# does; 0 when either is constant.
function spearman(n, x, y,    i, rx, ry, mx, my, sxy, sxx, syy) {
    avg_ranks(n, x, rx); avg_ranks(n, y, ry)
    for (i = 1; i <= n; i++) { mx += rx[i] / n; my += ry[i] / n }
    for (i = 1; i <= n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my); sxx += (rx[i] - mx) ^ 2; syy += (ry[i] - my) ^ 2
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0
}
