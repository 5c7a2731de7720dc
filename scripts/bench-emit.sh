#!/usr/bin/env bash
# Whole-process timings of `factory check` and every `factory compile --emit` form on
# generated layered workflows (testgen::layered_workflow, the benches' generator), for
# docs/performance.md. Needs hyperfine (apt-get install hyperfine).
#
# usage: scripts/bench-emit.sh [SIZES...]        default: 1000 10000 50000 100000
# env:   FACTORY=path/to/factory (default target/release/factory), RUNS (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(1000 10000 50000 100000); fi
factory=${FACTORY:-target/release/factory}
runs=${RUNS:-3}
# The default binary is built here; one given in FACTORY is measured as it is.
[ -n "${FACTORY:-}" ] || cargo build -q --release --bin factory
cargo build -q --release -p factory-compiler --features testgen --example gen_layered
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FACTORY_HOME="$work/home"
for n in "${sizes[@]}"; do
    f="$work/layered-$n.fwf"
    target/release/examples/gen_layered "$n" > "$f"
    echo "== $n nodes ($(wc -c < "$f") bytes)"
    hyperfine -N --style basic --runs "$runs" --export-json "$work/$n.json" \
        -n check "$factory check $f" \
        -n ir "$factory compile $f --emit ir -o $work/out.fwir" \
        -n ir-json "$factory compile $f --emit ir-json -o $work/out.json" \
        -n dot "$factory compile $f --emit dot -o $work/out.dot" \
        -n mermaid "$factory compile $f --emit mermaid -o $work/out.mmd" \
        -n skill "$factory compile $f --emit skill -o $work/skill" >/dev/null
    # CPU time (user + system) is what this compares: on a machine shared with other
    # builds, wall time swings with their load far more than CPU time does.
    python3 - "$work/$n.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"| {r['command']} | {r['median']:.3f} s wall | {r['user'] + r['system']:.3f} s cpu |")
PY
done
