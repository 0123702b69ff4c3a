#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS (default 60),
# seeded from fuzz/seeds, tests/data/malformed and the built-in scenes. New inputs go to
# $BUILD_DIR/corpus-<target>, never into the repository. Exit status != 0 on any finding
# (the crashing input is left as $BUILD_DIR/crash-* / oom-* / timeout-*).
#   bash fuzz/run.sh [SECONDS] [target ...]     e.g. bash fuzz/run.sh 30 fuzz_ply
# Environment: BUILD_DIR (default build-fuzz), JOBS (default 2).
set -euo pipefail
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_ply fuzz_vtk fuzz_scene fuzz_obj fuzz_cli fuzz_simulation)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-fuzz}
JOBS=${JOBS:-2}

CXX=${CXX:-clang++}
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX" \
    -DOCTO_FUZZ=ON -DOCTO_BUILD_GUI=OFF -DOCTO_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS" --target "${TARGETS[@]}" >/dev/null

seeds() { # target -> seed folders/files
    case $1 in
    fuzz_ply) echo "$ROOT/fuzz/seeds/ply" "$ROOT"/tests/data/malformed/*.ply ;;
    fuzz_vtk) echo "$ROOT/fuzz/seeds/vtk" "$ROOT"/tests/data/malformed/*.vtk ;;
    fuzz_scene) echo "$ROOT"/resources/scenes/*.json "$ROOT"/tests/data/malformed/*.json ;;
    fuzz_obj) echo "$ROOT/fuzz/seeds/obj" "$ROOT"/tests/data/malformed/*.obj ;;
    fuzz_cli) echo "$ROOT/fuzz/seeds/cli" ;;
    fuzz_simulation) echo "$ROOT/fuzz/seeds/simulation" "$ROOT"/resources/scenes/*.json "$ROOT"/tests/data/malformed/*.json ;;
    esac
}

status=0
for t in "${TARGETS[@]}"; do
    corpus="$BUILD_DIR/corpus-$t"
    mkdir -p "$corpus"
    for s in $(seeds "$t"); do
        if [ -d "$s" ]; then cp -n "$s"/* "$corpus"/ 2>/dev/null || true; else cp -n "$s" "$corpus"/; fi
    done
    echo "== $t: ${SECONDS_EACH}s, $(ls "$corpus" | wc -l) inputs in the corpus"
    # 1 MiB inputs at most; an allocation above 512 MiB or 2 GiB RSS or 10 s for one input is a finding.
    if ! (cd "$BUILD_DIR" && "./fuzz/$t" "$corpus" -max_total_time="$SECONDS_EACH" -max_len=1048576 \
        -malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 2>&1 | tail -n 12); then
        echo "== $t: FINDING (see $BUILD_DIR for the input)"
        status=1
    fi
done
exit $status
