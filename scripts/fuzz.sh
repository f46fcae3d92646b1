#!/usr/bin/env bash
# Runs every cargo-fuzz target (or the ones named) for N seconds each.
#
#   scripts/fuzz.sh              # every target, 60 s each
#   scripts/fuzz.sh 600          # every target, 10 min each
#   scripts/fuzz.sh 300 id_table # one target
#
# Extra libFuzzer flags can be passed in FUZZ_ARGS, e.g. FUZZ_ARGS="-jobs=2".
# Needs nightly and cargo-fuzz (installed here if missing). Crashes land in
# fuzz/artifacts/<target>/; the corpus grows in fuzz/corpus/<target>/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-60}"
shift || true
toolchain="${FUZZ_TOOLCHAIN:-nightly}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo "+$toolchain" fuzz list)
fi

failed=()
for target in "${targets[@]}"; do
    echo
    echo "=== fuzz: $target for ${seconds}s ==="
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    if ! cargo "+$toolchain" fuzz run "$target" -- -max_total_time="$seconds" ${FUZZ_ARGS:-}; then
        failed+=("$target")
    fi
done

echo
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "=== fuzz: FAILED: ${failed[*]} (reproducers in fuzz/artifacts/) ==="
    exit 1
fi
echo "=== fuzz: no crash in ${targets[*]} ==="
