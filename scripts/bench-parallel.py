#!/usr/bin/env python3
"""Wall time of parallel-improve's branches (docs/performance.md).

Runs `factory run parallel-improve` with the replay runner on a copy of the counters
project (tests/fixtures/parallel/project) with four counter files, once with one
hypothesis and once with four, each hypothesis's builder taking T seconds. Prints the
wall time of the `branches` node (from its `node.finished` event) for each, and the
ratio. Everything else a branch does (QA, the precheck's evals) is the same real work
as in any run.

Usage: scripts/bench-parallel.py [T_SECONDS] [path/to/factory]
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
T = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
factory = sys.argv[2] if len(sys.argv) > 2 else str(root / "target" / "release" / "factory")
fixture = root / "tests" / "fixtures" / "parallel"
COUNTERS = ["a", "b", "c", "d"]


def script(n):
    base = (fixture / "replay.yaml").read_text()
    head, _, _ = base.partition("  strategist:")
    tail = base[base.index("  health_checker:"):]
    plan = "".join(
        f"          ## Hypothesis {i + 1}: Raise counter {c}\n"
        f"          Counter {c} adds a quarter of the score; raising it raises the composite\n"
        f"          without touching any other counter, so it can run beside the others.\n"
        f"          Files: `src/{c}.txt`\n"
        f"          Success: the score rises.\n\n"
        for i, c in enumerate(COUNTERS[:n])
    )
    out = head + "  strategist:\n    - write:\n        .factory/strategy/current.md: |\n          # Plan\n\n" + plan
    out += '      print: "Wrote the plan"\n\n'
    for i, c in enumerate(COUNTERS[:n]):
        out += f"""  builder#{i + 1}:
    - sleep_ms: {int(T * 1000)}
      write:
        src/{c}.txt: "9\\n"
      run:
        - git add -A
        - git diff --cached --quiet || git -c user.name=b -c user.email=b@factory.invalid commit -qm "Raise counter {c}"
      print: |
        # Build report

        ## Commits
        - Raise counter {c} in its own file, as hypothesis {i + 1} says, and nothing else.

        ## Changes
        - src/{c}.txt holds a higher number; the other counters are untouched, so the
          branches are independent of each other and run at the same time.

"""
    return out + tail


def run(n):
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as home:
        project = pathlib.Path(tmp) / "p"
        shutil.copytree(fixture / "project", project)
        (project / "gitignore").rename(project / ".gitignore")
        (project / "src" / "d.txt").write_text("1\n")
        (project / "eval.sh").write_text(
            "awk '{s+=$1} END {printf \"{\\\"score\\\": %.4f}\\n\", s/40}' src/*.txt\n"
        )
        md = (project / "factory.md").read_text().replace("0.15", "0.1")
        (project / "factory.md").write_text(md + f"\n## Parallel\n- parallel_hypotheses: {n}\n")
        env = {"FACTORY_HOME": home, "PATH": subprocess.os.environ["PATH"], "HOME": home}
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
        subprocess.run(["git", "add", "-A"], cwd=project, check=True)
        subprocess.run(git + ["commit", "-qm", "init"], cwd=project, check=True)
        subprocess.run([factory, "init"], cwd=project, env=env, check=True, capture_output=True)
        (project / ".factory" / "script.yaml").write_text(script(n))
        out = subprocess.run(
            [factory, "run", "parallel-improve", "--runner", "replay", "--script", ".factory/script.yaml"],
            cwd=project, env=env, capture_output=True, text=True,
        )
        if out.returncode != 0:
            sys.exit(f"the run with {n} branch(es) failed:\n{out.stdout}\n{out.stderr}")
        for line in (project / ".factory" / "events.jsonl").read_text().splitlines():
            e = json.loads(line)
            if e.get("type") == "node.finished" and e.get("node") == "branches" and "." not in e.get("run_id", "."):
                return e["duration_ms"] / 1000
        sys.exit("no node.finished event for `branches`")


one = run(1)
four = run(4)
print(f"builder step T = {T:.1f} s")
print(f"1 branch:   {one:.2f} s")
print(f"4 branches: {four:.2f} s  ({four / one:.2f}× one branch)")
