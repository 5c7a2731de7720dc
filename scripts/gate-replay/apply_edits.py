#!/usr/bin/env python3
"""Applies a cheat's edits: a JSON list of {file, find, replace} (each `find` must occur)
or {file, write} (the whole file). Used by the gate replay's scripted builder."""

import json
import sys
from pathlib import Path

for edit in json.loads(Path(sys.argv[1]).read_text()):
    path = Path(edit["file"])
    if "write" in edit:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit["write"])
        continue
    if edit.get("delete"):
        path.unlink()
        continue
    text = path.read_text()
    if edit["find"] not in text:
        sys.exit(f"{path}: `{edit['find']}` not found")
    path.write_text(text.replace(edit["find"], edit["replace"], edit.get("count", 1)))
