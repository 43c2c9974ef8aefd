#!/bin/sh
# bench/plot.sh on the CSVs under tests/data/plot: a PNG from each good one
# (bench_allreduce's with the model's predictions; bench_pieces' with its
# copy floors), and for each malformed one its exact message, exit status 1
# and no PNG.
#   tests/cli/check_plot.sh PLOT_SH DATA_DIR WORK_DIR
set -u
plot=$1 data=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0

sh "$plot" --predict "$data/predict.csv" "$data/allreduce.csv" "$work/allreduce.png" || fail=1
sig=$(od -An -tx1 -N8 "$work/allreduce.png" 2>/dev/null | tr -d ' \n')
if [ "$sig" != 89504e470d0a1a0a ]; then
    echo "FAIL: $work/allreduce.png has no PNG signature (got '$sig')"
    fail=1
elif [ "$(wc -c <"$work/allreduce.png")" -lt 10000 ]; then
    echo "FAIL: $work/allreduce.png is only $(wc -c <"$work/allreduce.png") bytes"
    fail=1
fi

# bench_pieces' CSV, with the tight loops' columns and each piece's copy floor
sh "$plot" "$data/pieces.csv" "$work/pieces.png" || fail=1
sig=$(od -An -tx1 -N8 "$work/pieces.png" 2>/dev/null | tr -d ' \n')
if [ "$sig" != 89504e470d0a1a0a ]; then
    echo "FAIL: $work/pieces.png has no PNG signature (got '$sig')"
    fail=1
fi

bad() { # name expected-message
    sh "$plot" "$data/$1.csv" "$work/$1.png" 2>"$work/$1.err" >/dev/null
    rc=$?
    if [ $rc -ne 1 ]; then
        echo "FAIL: $1.csv: exit status $rc, expected 1"
        fail=1
    fi
    if [ "$(cat "$work/$1.err")" != "$data/$2" ]; then
        echo "FAIL: $1.csv: expected the message"
        echo "  $data/$2"
        echo "got"
        sed 's/^/  /' "$work/$1.err"
        fail=1
    fi
    if [ -e "$work/$1.png" ]; then
        echo "FAIL: $1.csv: $work/$1.png written"
        fail=1
    fi
}
bad malformed "malformed.csv:4: error: expected 18 fields as in the header, got 17"
bad bad_number 'bad_number.csv:4:24: error: expected a positive number in column treeduce_us, got "12x.767"'
[ $fail -eq 0 ] && echo "plot: PNGs written, 2 malformed CSVs refused"
exit $fail
