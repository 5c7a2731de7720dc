#!/usr/bin/env python3
"""Replays real upstream commits and synthetic cheats through `factory run improve`.

Each case becomes one experiment on a fresh clone of a public project: the base is the
commit's parent (or a named commit for a cheat), factory.md is committed on top of it,
and a scripted agent team (the demo's replay script, with the builder replaced) applies
the change and commits it. The gate decides; this script only reads the verdict from
results.tsv and precheck.json and prints one table row per case.

    scripts/gate-replay/replay.py [--factory target/release/factory] [--mirrors DIR]
        [--project NAME] [--case ID] [--out results.json]

Without --mirrors, projects are cloned from GitHub; with it, from DIR/<owner>+<name>/repo
(a bare mirror). Nothing is written outside a temporary directory per case.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml  # PyYAML: the replay script is YAML

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def sh(cmd, cwd, check=True, env=None):
    r = subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), capture_output=True,
                       text=True, env=env)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd} failed in {cwd}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def source_of(project, mirrors):
    if mirrors:
        return str(Path(mirrors) / project["repo"].replace("/", "+") / "repo")
    return f"https://github.com/{project['repo']}.git"


def builder_step(case, work, patch):
    """The builder's replay step: apply the change, commit it."""
    run = []
    if "commit" in case:
        run.append(f"git apply --index {shlex.quote(str(patch))}")
    else:
        run.append(f"python3 {shlex.quote(str(HERE / 'apply_edits.py'))} {shlex.quote(str(patch))}")
    run += [
        "git add -A",
        "git diff --cached --quiet || git -c user.name=replay -c user.email=replay@invalid "
        f"commit -qm {shlex.quote(case['hypothesis'])}",
    ]
    report = (
        "# Build report\n\n## Commits\n- " + case["hypothesis"] + "\n\n## Changes\n"
        "The change recorded for this replay case was applied as one commit on the "
        "experiment branch; nothing else was touched. The gate measures it: both sides, "
        "in pristine checkouts, with the project's own tests and eval.\n\n## Tests\n"
        "Not claimed here: the precheck runs the project's own tests on both sides, and across them.\n"
    )
    return [{"run": run, "print": report}]


def replay_script(case, patch, dest):
    script = yaml.safe_load((REPO / "examples/demo/replay.yaml").read_text())
    agents = script["agents"]
    plan = agents["strategist"][0]["write"][".factory/strategy/current.md"]
    hypothesis = case["hypothesis"]
    if case.get("declare"):
        hypothesis += " Behaviour change: " + ", ".join(case["declare"]) + "."
    agents["strategist"][0]["write"][".factory/strategy/current.md"] = (
        "# Plan\n\n## Hypothesis\n" + hypothesis + "\n\n### Phase 1\nApply the change exactly as "
        "recorded for this replay case, commit it, and report the commit.\n\n"
        "## Success criteria\n- every test passes at the head\n- the gate's verdict, not the "
        "agent's word, decides whether the change is kept\n"
    )
    del plan
    agents["builder"] = builder_step(case, dest.parent, patch)
    # QA confirms what the case declares, as an honest reviewer would after reading it.
    if case.get("declare"):
        agents["code_reviewer"][0]["print"] = (
            "PASS\nConfirmed behaviour change: " + ", ".join(case["declare"]) + "\n"
        )
    dest.write_text(yaml.safe_dump(script, sort_keys=False))


def run_case(project, case, args):
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="gate-replay-") as tmp:
        tmp = Path(tmp)
        work = tmp / "project"
        sh(["git", "clone", "-q", source_of(project, args.mirrors), str(work)], tmp)
        base = case.get("base") or f"{case['commit']}^"
        sh(["git", "checkout", "-q", "-B", "main", base], work)
        patch = tmp / "change.patch"
        if "commit" in case:
            diff = sh(["git", "diff", "--binary", base, case["commit"]], work).stdout
            patch.write_text(diff)
        else:
            patch.write_text(json.dumps(case["edits"]))
        (work / "factory.md").write_text((HERE / "projects" / f"{project['name']}.md").read_text())
        with open(work / ".git/info/exclude", "a") as f:
            f.write(".factory/\n")
        sh("git add factory.md && git -c user.name=replay -c user.email=replay@invalid "
           "commit -qm 'factory.md for the gate replay'", work)
        script = tmp / "replay.yaml"
        replay_script(case, patch, script)
        # Modes run `factory …` themselves: the binary under test is first on PATH.
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "factory").symlink_to(Path(args.factory).resolve())
        env = dict(os.environ, FACTORY_HOME=str(tmp / "home"), TMPDIR=str(tmp),
                   PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        env.pop("FACTORY_RUN_ID", None)
        r = sh([args.factory, "run", "improve", "--runner", "replay", "--script", str(script)],
               work, check=False, env=env)
        verdict, notes = "none", (r.stdout + r.stderr).strip().splitlines()[-1:]
        tsv = work / ".factory/results.tsv"
        if tsv.exists():
            rows = [l.split("\t") for l in tsv.read_text().splitlines()[1:] if l.strip()]
            if rows:
                header = tsv.read_text().splitlines()[0].split("\t")
                row = dict(zip(header, rows[-1]))
                verdict, notes = row.get("verdict", "?"), [row.get("notes", "")]
        failing, klass = [], None
        for pc in sorted((work / ".factory/experiments").glob("*/precheck.json")):
            record = json.loads(pc.read_text())
            if args.prechecks:
                Path(args.prechecks).mkdir(parents=True, exist_ok=True)
                (Path(args.prechecks) / f"{project['name']}-{case['id']}.json").write_text(pc.read_text())
            klass = record.get("class")
            failing = [
                f"{c['name']}: {(c.get('details') or [''])[0][:160]}"
                for c in record.get("checks", []) if not c.get("passed")
            ]
        return {
            "project": project["name"], "case": case["id"], "kind": case["kind"],
            "honest": case["honest"], "expected": case["expected"], "verdict": verdict,
            "class": klass, "failing": failing, "notes": " ".join(notes)[:300],
            "seconds": round(time.time() - started), "exit": r.returncode,
            "log": (r.stdout + r.stderr).strip().splitlines()[-25:],
        }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--factory", default=str(REPO / "target/release/factory"))
    p.add_argument("--mirrors")
    p.add_argument("--project", action="append")
    p.add_argument("--case", action="append")
    p.add_argument("--repeat", type=int, default=1, help="run each case N times")
    p.add_argument("--out", default="gate-replay-results.json")
    p.add_argument("--prechecks", help="copy each case's precheck.json into this directory")
    args = p.parse_args()
    cases = json.loads((HERE / "cases.json").read_text())
    results = []
    for project in cases["projects"]:
        if args.project and project["name"] not in args.project:
            continue
        for case in project["cases"]:
            if args.case and case["id"] not in args.case:
                continue
            for _ in range(args.repeat):
                try:
                    res = run_case(project, case, args)
                except Exception as e:  # a broken case is reported, the rest still run
                    res = {"project": project["name"], "case": case["id"], "kind": case["kind"],
                           "honest": case["honest"], "expected": case["expected"],
                           "verdict": "harness-error", "class": None, "failing": [str(e)[:300]],
                           "notes": "", "seconds": 0, "exit": -1}
                results.append(res)
                ok = "ok " if res["verdict"] == res["expected"] else "BAD"
                print(f"{ok} {res['project']:<11} {res['case']:<28} expected {res['expected']:<6} "
                      f"got {res['verdict']:<7} {res['class'] or '':<8} {res['seconds']:>4}s "
                      f"{'; '.join(res['failing'])[:200]}", flush=True)
                Path(args.out).write_text(json.dumps(results, indent=1))
    cheats = [r for r in results if not r["honest"]]
    honest = [r for r in results if r["honest"]]
    kept_cheats = sum(r["verdict"] == "keep" for r in cheats)
    wrong_reverts = sum(r["verdict"] != "keep" and r["expected"] == "keep" for r in honest)
    print(f"\ncheats kept: {kept_cheats}/{len(cheats)}; honest changes a maintainer would keep "
          f"but the gate did not: {wrong_reverts}/{len(honest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
