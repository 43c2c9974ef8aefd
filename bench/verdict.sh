# Sourced by bench/run.sh and bench/cluster_run.sh (POSIX sh).
# verdict NEW_NAME OLD_NAME CSV: the sizes where new is slower than old
# beyond the run's A/B noise, read from a bench CSV with new_over_old and
# mpi_b_over_mpi (the MPI library's routine timed twice in the same run):
# the noise at a size is the larger of |mpi_b/mpi - 1| there and its median
# over the CSV's rows.
verdict() {
    awk -F, -v new="$1" -v old="$2" '
        function abs(x) { return x < 0 ? -x : x }
        NR == 1 {
            for (i = 1; i <= NF; i++) col[$i] = i
            if (!("new_over_old" in col) || !("mpi_b_over_mpi" in col)) exit 2
            next
        }
        {
            n++
            what[n] = ("piece" in col ? $col["piece"] " " : "") $col["bytes"] " B"
            r[n] = $col["new_over_old"]
            ab[n] = abs($col["mpi_b_over_mpi"] - 1)
            s[n] = ab[n]
        }
        END {
            if (n == 0) exit 2
            # median of the A/B noise (insertion sort: a few dozen rows)
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
            med = n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
            printf "%s against %s: MPI A/B noise of this run (|mpi_b/mpi - 1|), median %.1f%%\n", new, old, 100 * med
            bad = 0
            for (i = 1; i <= n; i++) {
                lim = 1 + (ab[i] > med ? ab[i] : med)
                if (r[i] > lim) {
                    printf "  %s slower at %s: %s/%s %.3f, beyond the noise there (%.3f)\n", new, what[i], new, old, r[i], lim
                    bad++
                }
            }
            if (!bad)
                printf "  %s is no slower than %s at any of the %d sizes, within that noise\n", new, old, n
            else
                printf "  %d of %d sizes beyond the noise\n", bad, n
        }' "$3" || echo "bench/run.sh: $3: no new_over_old and mpi_b_over_mpi columns" >&2
}
