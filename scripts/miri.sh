#!/usr/bin/env bash
# Runs the core crate's tests under Miri (undefined-behaviour checker): the lib
# unit tests and the integration tests (doc tests with MIRI_DOCTESTS=1), split
# between a pass with the default features and one with `--features serde`
# (see "The two passes" below; MIRI_ALL_TESTS=1 runs all of them in both).
# Then the entity-component store's (handlekit-ecs, with its `serde`
# feature), its test files split between the two lanes (see "The ECS
# crate" below).
#
#   scripts/miri.sh                       # both passes
#   scripts/miri.sh stale                 # extra arguments go to the test harness: a filter on test
#                                         # names (not file names), e.g. `stale`
#   MIRI_FEATURE_SETS=serde scripts/miri.sh    # only the serde pass (then over every test file)
#   MIRI_DOCTESTS=1 scripts/miri.sh       # also the doc tests (slow: one build per example)
#   MIRI_JOBS=1 scripts/miri.sh           # run the passes one after the other
#   MIRI_TOOLCHAIN=nightly-2026-05-01 scripts/miri.sh
#   MIRI_ECS=0 scripts/miri.sh            # leave out handlekit-ecs
#   MIRI_REPORT_TIME=0 scripts/miri.sh    # no per-test times in the log
#
# Needs a nightly toolchain with the miri and rust-src components:
#   rustup toolchain install nightly --profile minimal
#   rustup component add --toolchain nightly miri rust-src
#
# The tests scale themselves down under cfg(miri). Miri interprets a program on
# one host thread, so with two or more cores the passes run side by side, each
# in its own target directory; the output of the second is printed when it ends.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

toolchain="${MIRI_TOOLCHAIN:-nightly}"
# Strict provenance: pointers must not be conjured from integers.
# Isolation stays on: the tests touch neither the file system nor the clock
# (proptest runs with failure_persistence: None).
#
# The default-features pass also checks alignment symbolically (against what
# the allocation guarantees, not the address Miri happened to pick). The serde
# pass cannot: serde_json's error paths call memchr, whose aligned SIMD loads
# after address arithmetic are a known false positive of that check.
# Setting MIRIFLAGS overrides all of this for every pass.
base_flags="-Zmiri-strict-provenance"
symbolic_alignment="-Zmiri-symbolic-alignment-check"
# The data race detector, for the test files that start no thread of their
# own: libtest runs each test on a thread of its own, so the detector is on
# and keeps its clocks on every memory access, but with one thread doing
# the work it can find no race. Off there, a test file ran in 0.8x the
# time (the ECS's `batch`: 26.6 s against 32.6 s, Miri's start included).
# A file that starts threads (`thread::spawn` or `thread::scope` in it) runs
# with the detector on, in an invocation of its own. (No pass enables the
# `rayon` feature, so no thread pool starts.)
no_race_detector="-Zmiri-disable-data-race-detector"
user_flags="${MIRIFLAGS-}"

# Whether a test target starts threads: a test file that names
# `thread::spawn` or `thread::scope` outside a comment (for `--lib`, any
# file of the crate's `src`).
starts_threads() {
    local crate_dir=$1 target=$2
    local files
    if [[ "$target" == --lib ]]; then
        files=("$crate_dir"/src)
    else
        files=("$crate_dir/tests/$target.rs")
    fi
    local uses
    uses="$(grep -rhE 'thread::(spawn|scope)' "${files[@]}" | grep -vE '^\s*//' || true)"
    [[ -n "$uses" ]]
}

read -r -a feature_sets <<<"${MIRI_FEATURE_SETS:-default serde}"
jobs="${MIRI_JOBS:-$(nproc 2>/dev/null || echo 1)}"

# Lib unit tests and integration tests. The ~200 doc tests are examples;
# under Miri each is built and interpreted on its own, which costs minutes
# of CI time, so they run only with MIRI_DOCTESTS=1.
#
# The two passes split the integration tests so that they take about as
# long as each other (they run side by side, and the longer one is CI's
# wait). The serde pass runs the test files that use serde, and the files
# named in `second_pass_only` whether or not they use it. The default pass
# runs every other file, and then the ECS crate's tests (see below), so it
# leaves out the files of `second_pass_only`: they drive `IdTable`,
# `PackedTable`, the secondary maps, `Pool`, `IndexLists` and `VmVec`
# (whose slots are `Vec`s, `Pool`'s `Slot<T>` blocks or, under Miri, one
# heap allocation), and their code is the same with or without the
# feature. What stays in the default pass is what the symbolic alignment
# check should see: the lib's unit tests (the raw layer, both slot
# layouts), `Hive`'s split layout (alignment computed by hand), and
# `LookupTable`'s interleaved one. Measured in one run on two busy cores
# (wall time, builds included), before this split: default pass 425 s +
# ECS 493 s against the serde pass's 566 s; the files moved out of the
# default pass took about 170 s of it. `free_order` and `slot_runs` (whose
# tests all need serde: the default pass ran none of them, but built both)
# and `refill` and `packed_secondary_regressions` (a second or two each,
# over `IdTable` and `PackedTable`) went later: each file is a build and a
# start of its own under Miri; `packed_panic_safety` (no serde) came back
# to even the passes out. (The times the test harness prints under Miri
# are its virtual clock, not wall time; they still rank the files.)
# MIRI_ALL_TESTS=1, or naming a single feature set, runs every test file in
# every pass.
all_tests="${MIRI_ALL_TESTS:-0}"
if [[ ${#feature_sets[@]} -lt 2 ]]; then
    all_tests=1
fi
# `hive_model` (the model suite over `Hive`, which round-trips it with
# serde) is in `second_pass_only` too: `Hive`'s split layout meets the
# symbolic alignment check in `hive_blocks` (values of 1 to 64-byte
# alignment, zero-sized ones, `String`s), and the model suite's `u64`s add
# nothing to that. It took 32 s of Miri's clock in the default pass, whose
# lane (with the ECS's first) was the longer by 31 s in a run on
# 2026-12-01: default 261 + ECS 406 s against serde 477 + ECS 159 s.
second_pass_only=(lists_model model pool_model packed_model secondary_model keys stale_keys
    lists_misuse vm_vec vm_vec_zero packed_stale_keys
    free_order slot_runs refill packed_secondary_regressions hive_model)
# A file that uses serde and is not in `second_pass_only` runs in both
# passes, so such a file holds only tests whose code changes with serde;
# a container's tests that do not are in a file of their own
# (`hive_blocks` beside `hive_model`), which the default pass runs alone.
# (Until 2026-12 the serde pass skipped such tests by name, a list that
# had to follow every rename.)
tests_dir=crates/handlekit/tests
default_targets=(--lib)
# The lib unit tests use no serde, so the serde pass (the longer one) skips
# them unless every test runs in every pass.
serde_targets=()
if [[ $all_tests == 1 ]]; then
    serde_targets=(--lib)
fi
for file in "$tests_dir"/*.rs; do
    name="$(basename "$file" .rs)"
    uses_serde=0
    if grep -q 'feature = "serde"' "$file"; then
        uses_serde=1
    fi
    second_only=0
    if [[ " ${second_pass_only[*]} " =~ " $name " ]]; then
        second_only=1
    fi
    if [[ $all_tests == 1 || $uses_serde == 1 || $second_only == 1 ]]; then
        serde_targets+=(--test "$name")
    fi
    if [[ $all_tests == 1 || $second_only == 0 ]]; then
        default_targets+=(--test "$name")
    fi
done
if [[ "${MIRI_DOCTESTS:-0}" == 1 ]]; then
    default_targets=()
    serde_targets=()
fi

# Each test's time, after its name (the harness's `--report-time`, which
# needs `-Zunstable-options`: Miri runs on nightly). Under Miri's isolation
# it is Miri's own clock, which a busy machine does not slow, so the log
# ranks the tests by the work they make Miri do: where to look when CI's
# Miri step grows. A test without random input reads the same in every
# run; a proptest's cases can differ between two ways of starting the same
# binary (`pool_model`'s `pool_key`: 34.4 s within this script's serde pass,
# 3.8 s run alone, on 2026-12-01), so its figure is one draw. Not for the
# doc tests (MIRI_DOCTESTS=1); MIRI_REPORT_TIME=0 turns it off.
report_time=()
if [[ "${MIRI_REPORT_TIME:-1}" != 0 && "${MIRI_DOCTESTS:-0}" != 1 ]]; then
    report_time=(-Zunstable-options --report-time)
fi

start=$SECONDS
cargo "+$toolchain" miri --version

echo
echo "=== miri: cargo +$toolchain miri setup ==="
cargo "+$toolchain" miri setup

# The MIRIFLAGS of a run: the base flags, the symbolic alignment check for
# the core crate's default-features pass, the data race detector off unless
# the run's files start threads (`threaded` = 1). MIRIFLAGS set by the
# caller replaces all of it.
miri_flags() {
    local features=$1 threaded=$2
    if [[ -n "$user_flags" ]]; then
        flags="$user_flags"
        return
    fi
    flags="$base_flags"
    if [[ "$features" == default ]]; then
        flags="$flags $symbolic_alignment"
    fi
    if [[ "$threaded" != 1 ]]; then
        flags="$flags $no_race_detector"
    fi
}

# Runs `cargo miri test` over the targets of one step (`--lib` and
# `--test name` arguments, in `targets`) of package `package` in
# `crate_dir`: the files that start threads in one invocation, with the
# data race detector, the others in another without it. `features` is
# `default` (the core crate's first pass), or what `--features` gets.
# Extra arguments go to the test harness. Fails if either invocation does,
# after both ran.
run_targets() {
    local name=$1 package=$2 crate_dir=$3 features=$4
    shift 4
    local quiet=() threaded=() target status=0
    local i=0
    while [[ $i -lt ${#targets[@]} ]]; do
        target="${targets[$i]}"
        if [[ "$target" == --lib ]]; then
            if starts_threads "$crate_dir" --lib; then threaded+=(--lib); else quiet+=(--lib); fi
            i=$((i + 1))
        else
            if starts_threads "$crate_dir" "${targets[$((i + 1))]}"; then
                threaded+=(--test "${targets[$((i + 1))]}")
            else
                quiet+=(--test "${targets[$((i + 1))]}")
            fi
            i=$((i + 2))
        fi
    done
    local feature_args=()
    if [[ "$features" != default ]]; then
        feature_args=(--features "$features")
    fi
    # No targets named (MIRI_DOCTESTS=1): all of the package's tests, doc
    # tests too, in one invocation with the detector on (an example may
    # start threads).
    if [[ ${#targets[@]} -eq 0 ]]; then
        miri_flags "$features" 1
        run_step "$name" env "MIRIFLAGS=$flags" cargo "+$toolchain" miri test --no-fail-fast \
            -p "$package" "${feature_args[@]}" -- "$@"
        return
    fi
    local group
    for group in quiet threaded; do
        local -n group_targets=$group
        if [[ ${#group_targets[@]} -eq 0 ]]; then
            continue
        fi
        miri_flags "$features" "$([[ $group == threaded ]] && echo 1 || echo 0)"
        local label="$name"
        if [[ $group == threaded ]]; then
            label="$name, files that start threads"
        fi
        run_step "$label" env "MIRIFLAGS=$flags" cargo "+$toolchain" miri test --no-fail-fast \
            -p "$package" "${feature_args[@]}" "${group_targets[@]}" -- "${report_time[@]}" "$@" ||
            status=1
    done
    return "$status"
}

# The ECS crate: its lib and every test file (doc tests with
# MIRI_DOCTESTS=1), with `--features serde` so that the whole-world
# serialization and the model test's save-and-load run too. Its tests scale
# themselves down under cfg(miri) (the columns are `VmVec`s, which fall back
# to one heap allocation each under Miri). With the base flags: serde_json's
# memchr rules out the symbolic alignment check here too.
#
# Its test files are split between the two lanes, so that both take about
# as long: the files of `ecs_second_lane` run after the second pass, in the
# background (in that pass's target directory), and the lib and every other
# file after the first pass, in the foreground. Measured in one run on two
# busy cores (wall time, builds included), with the whole ECS crate after
# the first pass: first lane 366 s + ECS 980 s against the second pass's
# 835 s. With `serde`, `model` and `load_memory` in the second lane, a run
# (on cores also busy with builds) took 504 s + 427 s in the first lane
# against 912 s + 201 s in the second; `load_memory` (about 50 s) went back
# to the first. By Miri's clock (which ranks work without the noise of a
# busy machine), once the model tests checked after every third operation
# (every fifth since 2026-12-03)
# and the serde pass skipped what the default pass runs: default pass 268 s
# + ECS 446 s against the serde pass's 502 s + 140 s; `reserve` (39 s)
# moved to the second lane.
ecs_second_lane=(serde model reserve)
ecs_first=()
ecs_second=()
run_ecs=0
if [[ "${MIRI_ECS:-1}" != 0 ]]; then
    run_ecs=1
    if [[ "${MIRI_DOCTESTS:-0}" != 1 ]]; then
        ecs_first=(--lib)
        for file in crates/ecs/tests/*.rs; do
            name="$(basename "$file" .rs)"
            if [[ " ${ecs_second_lane[*]} " =~ " $name " ]]; then
                ecs_second+=(--test "$name")
            else
                ecs_first+=(--test "$name")
            fi
        done
    fi
fi

# One pass of the core crate (`default` or a feature set) over its targets.
core_pass() {
    local features=$1
    shift
    if [[ "$features" == default ]]; then
        targets=("${default_targets[@]}")
    else
        targets=("${serde_targets[@]}")
    fi
    run_targets "$features" handlekit crates/handlekit "$features" "$@"
}

# The ECS crate's tests of one lane (`first`, `second` or `all`).
ecs_pass() {
    local lane=$1
    shift
    local name=ecs
    case "$lane" in
        first) targets=("${ecs_first[@]}") ;;
        second)
            targets=("${ecs_second[@]}")
            name="ecs, second lane"
            ;;
        all) targets=("${ecs_first[@]}" "${ecs_second[@]}") ;;
    esac
    run_targets "$name" handlekit-ecs crates/ecs serde "$@"
}

bg_pid=""
bg_log=""
cleanup() {
    if [[ -n "$bg_pid" ]] && kill -0 "$bg_pid" 2>/dev/null; then
        kill "$bg_pid" 2>/dev/null || true
    fi
    # An `if`, not `[[ ]] &&`: the trap's last status would become the
    # script's exit status, failing a single-pass run that passed.
    if [[ -n "$bg_log" ]]; then
        rm -f "$bg_log"
    fi
}
trap cleanup EXIT

failed=()

# Runs one step: its command line, then how long it took. Fails as the
# command does.
run_step() {
    local name=$1
    shift
    echo
    echo "=== miri [$name]: $* ==="
    local s=$SECONDS
    "$@" || return
    echo "=== miri [$name]: finished in $((SECONDS - s))s ==="
}

if [[ "$jobs" -ge 2 && ${#feature_sets[@]} -ge 2 ]]; then
    # The last feature set runs in the background, in its own target dir so
    # that the two cargo invocations do not wait on each other's lock.
    bg_features="${feature_sets[-1]}"
    unset 'feature_sets[-1]'
    bg_log="$(mktemp)"
    echo
    echo "=== miri [$bg_features]: in the background, then the ECS's second lane ==="
    (
        export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/miri-$bg_features"
        lane_status=0
        core_pass "$bg_features" "$@" || lane_status=1
        if [[ $run_ecs == 1 && ${#ecs_second[@]} -gt 0 ]]; then
            ecs_pass second "$@" || lane_status=1
        fi
        exit "$lane_status"
    ) >"$bg_log" 2>&1 &
    bg_pid=$!
fi

for features in "${feature_sets[@]}"; do
    core_pass "$features" "$@" || failed+=("$features")
done

if [[ $run_ecs == 1 ]]; then
    # With no background lane, the ECS's second-lane files run here too.
    if [[ -z "$bg_pid" ]]; then
        ecs_pass all "$@" || failed+=(ecs)
    else
        ecs_pass first "$@" || failed+=(ecs)
    fi
fi

if [[ -n "$bg_pid" ]]; then
    echo
    echo "=== miri [$bg_features]: waiting for the background pass ==="
    status=0
    wait "$bg_pid" || status=$?
    bg_pid=""
    echo "=== miri [$bg_features]: output ==="
    cat "$bg_log"
    if [[ $status -ne 0 ]]; then
        failed+=("$bg_features")
    fi
fi

echo
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "=== miri: FAILED [${failed[*]}] after $((SECONDS - start))s ==="
    exit 1
fi
echo "=== miri: passed in $((SECONDS - start))s ==="
