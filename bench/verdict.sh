# Sourced by bench/run.sh and bench/cluster_run.sh (POSIX sh): verdicts on a
# bench CSV against the run's A/B noise.  The noise at a size is the larger
# of |mpi_b/mpi - 1| there (the MPI library's routine timed twice in the same
# run) and its median over the CSV's rows; where the CSV has old_b_over_old
# (a copy of old loaded as a library of its own, bench --lib x4), also
# |old_b/old - 1| there and its median: two instances of one library differ
# by more than the MPI routine's two timings at some sizes.

# The awk both verdicts share: with -v column=NAME, it reads the CSV into n
# rows of what[i] (the piece and size), val[i] (column NAME), ab[i] (the
# noise at the size: |mpi_b/mpi - 1|, or with -v old_is_mpi=1 |old/mpi - 1|,
# the MPI routine's second timing being old_us beside one library) and med,
# their median; with old_b_over_old (and not old_is_mpi), lb[i] =
# |old_b/old - 1| and lmed, its median, and ab[i] and med become the larger
# of the two; it exits 2 without the columns or rows, else calls report().
_bench_noise_awk='
function abs(x) { return x < 0 ? -x : x }
NR == 1 {
    for (i = 1; i <= NF; i++) col[$i] = i
    noise = old_is_mpi && !("mpi_b_over_mpi" in col) ? "old_us" : "mpi_b_over_mpi"
    if (!(column in col) || !(noise in col)) exit 2
    twice = !old_is_mpi && ("old_b_over_old" in col)
    next
}
function median(a, n,    i, j, t, s) {
    # insertion sort of a copy: a few dozen rows
    for (i = 1; i <= n; i++) s[i] = a[i]
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
    return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}
{
    n++
    what[n] = ("piece" in col ? $col["piece"] " " : "") $col["bytes"] " B"
    pc[n] = "piece" in col ? $col["piece"] : "-"
    by[n] = $col["bytes"]
    val[n] = $col[column]
    mb[n] = abs((noise == "old_us" ? $col["old_us"] / $col["mpi_us"] : $col[noise]) - 1)
    if (twice)
        lb[n] = abs($col["old_b_over_old"] - 1)
}
END {
    if (n == 0) exit 2
    mmed = median(mb, n)
    lmed = twice ? median(lb, n) : 0
    med = mmed > lmed ? mmed : lmed
    for (i = 1; i <= n; i++)
        ab[i] = twice && lb[i] > mb[i] ? lb[i] : mb[i]
    report()
}'

# verdict NEW_NAME OLD_NAME CSV [FLAGGED]: the sizes where new is slower
# than old beyond the noise, from a CSV with new_over_old and
# mpi_b_over_mpi; with FLAGGED, those sizes are also written there (the
# file made anew, empty where none is slower), a line
# "PIECE BYTES NOISE" each (PIECE - for allreduce, NOISE the run's median
# noise as a fraction), for bench/run.sh to time them again.
verdict() {
    [ -z "${4:-}" ] || : >"$4"
    awk -F, -v new="$1" -v old="$2" -v flagged="${4:-}" -v column=new_over_old "$_bench_noise_awk"'
        function report() {
            if (twice)
                printf "%s against %s: A/B noise of this run, median %.1f%% for the MPI routine timed twice (|mpi_b/mpi - 1|), %.1f%% for %s loaded twice (|old_b/old - 1|)\n", new, old, 100 * mmed, 100 * lmed, old
            else
                printf "%s against %s: MPI A/B noise of this run (|mpi_b/mpi - 1|), median %.1f%%\n", new, old, 100 * med
            bad = 0
            for (i = 1; i <= n; i++) {
                lim = 1 + (ab[i] > med ? ab[i] : med)
                if (val[i] > lim) {
                    printf "  %s slower at %s: %s/%s %.3f, beyond the noise there (%.3f)\n", new, what[i], new, old, val[i], lim
                    if (flagged != "")
                        printf "%s %s %.6f\n", pc[i], by[i], med > flagged
                    bad++
                }
            }
            if (!bad)
                printf "  %s is no slower than %s at any of the %d sizes, within that noise\n", new, old, n
            else
                printf "  %d of %d sizes beyond the noise\n", bad, n
        }' "$3" || echo "bench/run.sh: $3: no new_over_old and mpi_b_over_mpi columns" >&2
}

# speedups NEW_NAME CSV: new's speed-up over the MPI library at each size,
# the least, and the sizes where it is below 1 beyond the noise; the MPI
# routine's second timing is mpi_b_us beside two libraries, old_us beside one.
speedups() {
    awk -F, -v new="$1" -v column=speedup -v old_is_mpi=1 "$_bench_noise_awk"'
        function report() {
            for (i = 1; i <= n; i++) {
                if (min == "" || val[i] < min) { min = val[i]; at = what[i] }
                lim = 1 - (ab[i] > med ? ab[i] : med)
                if (val[i] < lim) {
                    printf "  %s slower than the MPI library at %s: speed-up %.3f, beyond the noise there (%.3f)\n", new, what[i], val[i], lim
                    bad++
                }
            }
            printf "%s over the MPI library: speed-up %.3f at least (%s); %d of %d sizes below 1 beyond the noise (median %.1f%%)\n", new, min, at, bad, n, 100 * med
        }' "$2" || echo "bench/cluster_run.sh: $2: no speedup and MPI A/B columns" >&2
}

# confirm_verdict WHAT NOISE NEW_NAME OLD_NAME SAME_CSV SWAPPED_CSV [STRICT]:
# a size that verdict flagged (WHAT, e.g. "reduce 64 B"; NOISE the run's
# median noise as a fraction), timed again alone in two fresh launches, NEW
# loaded first (SAME_CSV) and OLD loaded first (SWAPPED_CSV, whose
# new_over_old is OLD's over NEW's).  The geometric mean of the two NEW/OLD
# cancels the order of loading; the size is slower where it exceeds 1 by
# more than NOISE and each launch's own noise at the size (the larger of
# |mpi_b/mpi - 1| and |old_b/old - 1|).  With STRICT 1 (recheck), NEW must
# be faster: "not faster" wherever the mean is not below 1.  Prints a line;
# returns 0 where slower (not faster) or a launch wrote no row, else 1.
confirm_verdict() {
    awk -F, -v what="$1" -v med="$2" -v new="$3" -v old="$4" -v strict="${7:-0}" '
        function abs(x) { return x < 0 ? -x : x }
        function noise(m, o,    n) {
            n = abs(m - 1) > abs(o - 1) ? abs(m - 1) : abs(o - 1)
            return n > med ? n : med
        }
        FNR == 1 { split("", col); for (i = 1; i <= NF; i++) col[$i] = i; f++; next }
        f <= 2 && ("new_over_old" in col) && $col["new_over_old"] + 0 > 0 {
            r[f] = f == 1 ? $col["new_over_old"] : 1 / $col["new_over_old"]
            z[f] = noise($col["mpi_b_over_mpi"], $col["old_b_over_old"])
        }
        END {
            if (!(1 in r) || !(2 in r)) {
                printf "  %s: a launch timed no row, counted as slower\n", what
                exit 0
            }
            g = sqrt(r[1] * r[2])
            z0 = z[1] > z[2] ? z[1] : z[2]
            bad = strict ? g >= 1 : g > 1 + z0
            printf "  %s: %s/%s %.3f%s, %.3f swapped, %.3f both (noise %.1f%%): %s\n", what, new, old, r[1], strict ? "" : " again", r[2], g, 100 * z0, strict ? (bad ? "not faster" : "faster") : (bad ? "slower" : "within the noise")
            exit !bad
        }' "$5" "$6"
}

# recheck_sizes WISDOM NODES PPN: the sizes at which the tuned library of
# WISDOM runs other code than the untuned one, in its tables of NODES x PPN,
# a line "LINE COLL BYTES ALG MODEL" each, in ascending order per range (on
# line LINE, choosing ALG, not "model"): its check sizes where the model's
# choice MODEL is another, and the sizes of treeduce-tune's default grid
# (powers of 2 from 8 B, all of which its check pass timed; the wisdom keeps
# four a range) between two such check sizes with the same MODEL.
recheck_sizes() {
    awk -v nodes="$2" -v ppn="$3" '
        function flush(    k, p) {
            for (k = 1; k <= nc; k++) {
                if (k > 1 && cm[k - 1] == cm[k] && cm[k] != alg)
                    for (p = 8; p < cb[k]; p *= 2)
                        if (p > cb[k - 1]) print line, coll, p, alg, cm[k]
                if (cm[k] != alg) print line, coll, cb[k], alg, cm[k]
            }
            nc = 0
        }
        /^[ \t]*#/ { next }
        $1 == "check" { if (take) { nc++; cb[nc] = $2 + 0; cm[nc] = $5 } next }
        { flush() }
        $1 == "range" { line = NR; take = $3 == nodes && $4 == ppn && $7 != "model"; coll = $2; alg = $7 }
        END { flush() }' "$1"
}

# recheck_rewrite WISDOM VERDICTS [MAX_RANGES]: WISDOM on stdout with the
# verdicts of VERDICTS applied (lines "LINE BYTES VERDICT TEXT": the range
# on line LINE at BYTES, VERDICT "kept" or "model"; several lines of one
# size say "model" where any of them does).  A range is cut where
# the verdicts of its sizes (those of VERDICTS and its check sizes, which
# keep the range's choice without one) change, at the geometric middle
# between the two sizes in whole doubles (as treeduce-tune cuts its ranges),
# each part with the check lines inside it; a part whose sizes say "model"
# is given to the model (its algorithm "model").  Each verdict's TEXT
# follows its check line, or its place among them, as a comment
# ("# recheck: TEXT").  Where the parts would make a table (a collective
# and shape) hold more than MAX_RANGES (default 32, what treeduce-gen
# reads) ranges, its ranges are not cut and one "model" verdict gives a
# whole range to the model.
recheck_rewrite() {
    awk -v max="${3:-32}" '
        function middle(a, b,    u, v, m) {
            u = a / 8; v = b / 8
            m = int(sqrt(u * v) + 0.5)
            return (m > u ? m : u + 1) * 8
        }
        NR == FNR {
            t = $0
            sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+/, "", t)
            if (!(($1 SUBSEP $2) in verdict)) {
                vlist[$1] = vlist[$1] " " $2
                verdict[$1, $2] = $3
                note[$1, $2] = "# recheck: " t
            } else {
                if ($3 == "model") verdict[$1, $2] = $3
                note[$1, $2] = note[$1, $2] "\n# recheck: " t
            }
            if ($3 == "model") revert[$1] = 1
            next
        }
        { line[FNR] = $0; first[FNR] = $1; n = FNR }
        # range i: the last line of its block (its check lines and comments)
        # into E, its sizes ascending into S[1..K] with their check lines
        # CL (0: none), verdicts V and the comments after them X (X[0]:
        # before the first), and the number of its parts into P
        function sizes(i,    j, c, k, m, t, b, nb, known) {
            split("", S); split("", CL); split("", V); split("", X); split("", known)
            K = 0; X[0] = ""
            for (j = i + 1; j <= n && (first[j] == "check" || first[j] ~ /^#/ || first[j] == ""); j++) {
                if (first[j] == "check") {
                    split(line[j], c)
                    K++; S[K] = c[2] + 0; CL[K] = j; X[K] = ""; known[c[2] + 0] = 1
                } else
                    X[K] = X[K] line[j] "\n"
            }
            E = j - 1
            nb = split(vlist[i], b)
            for (m = 1; m <= nb; m++)
                if (!((b[m] + 0) in known)) {
                    K++; S[K] = b[m] + 0; CL[K] = 0; X[K] = ""; known[b[m] + 0] = 1
                }
            # insertion sort by size, X staying with its check line
            for (k = 2; k <= K; k++)
                for (m = k; m > 1 && S[m - 1] > S[m]; m--) {
                    t = S[m]; S[m] = S[m - 1]; S[m - 1] = t
                    t = CL[m]; CL[m] = CL[m - 1]; CL[m - 1] = t
                    t = X[m]; X[m] = X[m - 1]; X[m - 1] = t
                }
            P = 1
            for (k = 1; k <= K; k++) {
                V[k] = ((i SUBSEP S[k]) in verdict) ? verdict[i, S[k]] : "kept"
                if (k > 1 && V[k] != V[k - 1]) P++
            }
        }
        function range_line(f, nf, from, below, alg,    t, m) {
            t = "range " f[2] " " f[3] " " f[4] " " from " " below " " alg
            for (m = 8; m <= nf; m++) t = t " " f[m]
            return t
        }
        function size_lines(i, k) {
            if (CL[k]) print line[CL[k]]
            if ((i SUBSEP S[k]) in note) print note[i, S[k]]
            printf "%s", X[k]
        }
        # range i and its block, cut where the verdicts change
        function emit(i,    f, nf, j, m, start, from, below) {
            nf = split(line[i], f)
            sizes(i)
            if (count[tkey[i]] > max) {
                print range_line(f, nf, f[5], f[6], (i in revert) ? "model" : f[7])
                printf "%s", X[0]
                for (m = 1; m <= K; m++) size_lines(i, m)
                return E
            }
            start = 1; from = f[5]
            for (j = 1; j <= K; j++) {
                if (j < K && V[j + 1] == V[j]) continue
                below = j == K ? f[6] : sprintf("%.0f", middle(S[j], S[j + 1]))
                print range_line(f, nf, from, below, V[start] == "model" ? "model" : f[7])
                if (start == 1) printf "%s", X[0]
                for (m = start; m <= j; m++) size_lines(i, m)
                from = below; start = j + 1
            }
            return E
        }
        END {
            # the ranges per table once those with a "model" verdict are cut
            for (i = 1; i <= n; i++) {
                if (first[i] != "range") continue
                split(line[i], f)
                tkey[i] = f[2] SUBSEP f[3] SUBSEP f[4]
                P = 1
                if (i in revert) sizes(i)
                count[tkey[i]] += P
            }
            for (i = 1; i <= n; i++) {
                if (first[i] == "range" && (i in vlist)) {
                    i = emit(i)
                    continue
                }
                print line[i]
            }
        }' "$2" "$1"
}

# machine_of LIB: the machine of a generated library, from its file name
# (libtreeduce_local_tuned.so: local_tuned).
machine_of() {
    m=${1##*/libtreeduce_}
    echo "${m%.so}"
}

# same_code LOG NEW_MACHINE OLD_MACHINE: whether the two libraries ran the
# same algorithms in a launch at one size, from their TREEDUCE_VERBOSE=2
# notes in LOG ("treeduce[MACHINE]: MPI_Bcast runs binomial"); prints them.
# Returns 1 where they differ, where a library said nothing, or where the
# two machines have one name (two builds of one machine cannot be told
# apart by their notes).
same_code() {
    [ "$2" != "$3" ] || return 1
    awk -v a="treeduce[$2]: " -v b="treeduce[$3]: " '
        index($0, a) == 1 && / runs / { ra[substr($0, length(a) + 1)] = 1; na++ }
        index($0, b) == 1 && / runs / { rb[substr($0, length(b) + 1)] = 1; nb++ }
        END {
            if (!na || !nb) exit 1
            for (k in ra) if (!(k in rb)) exit 1
            for (k in rb) if (!(k in ra)) exit 1
            for (k in ra) t = t (t == "" ? "" : ", ") k
            print t
        }' "$1"
}
