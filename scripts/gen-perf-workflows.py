#!/usr/bin/env python3
"""Writes the IR text workflows docs/performance.md measures the executor with.

usage: scripts/gen-perf-workflows.py OUT_DIR [CHAIN_LEN ...]
  chain-N.fwir   N `fn` nodes running `true`, one after another
  fork4.fwir     a fork of 4 branches, each `sleep $FACTORY_SLEEP`, and their join
"""
import os
import sys


def chain(n):
    lines = ["fwir 1", f"workflow chain{n}", "node end end", "node start start"]
    lines += [f'node n{i:06} fn run="true"' for i in range(n)]
    lines.append("edge start -> n000000")
    lines += [f"edge n{i:06} -> n{i + 1:06}" for i in range(n - 1)]
    lines.append(f"edge n{n - 1:06} -> end")
    return "\n".join(lines) + "\n"


def fork4():
    lines = ["fwir 1", "workflow fork4", "node end end", "node f fork", "node j join", "node start start"]
    lines += [f'node b{i} fn run="sleep ${{FACTORY_SLEEP:-1}}"' for i in range(4)]
    lines += ["edge start -> f", "edge j -> end"]
    lines += [f"edge f -> b{i}" for i in range(4)]
    lines += [f"edge b{i} -> j" for i in range(4)]
    return "\n".join(lines) + "\n"


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for n in [int(a) for a in sys.argv[2:]] or [1000]:
        with open(os.path.join(out, f"chain-{n}.fwir"), "w") as f:
            f.write(chain(n))
    with open(os.path.join(out, "fork4.fwir"), "w") as f:
        f.write(fork4())


if __name__ == "__main__":
    main()
