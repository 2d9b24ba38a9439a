#!/usr/bin/env python3
"""Prints what each failing test said in a `go test -v` log: the lines
under its own === RUN/NAME/CONT headers, up to 60 lines a test."""
import re
import sys

head = re.compile(r"^=== (?:RUN|NAME|CONT|PAUSE)\s+(\S+)")
fail = re.compile(r"^\s*--- FAIL: (\S+)")
said, failed, cur = {}, [], None
for line in open(sys.argv[1], errors="replace"):
    m = head.match(line)
    if m:
        cur = m.group(1)
        continue
    m = fail.match(line)
    if m:
        failed.append(m.group(1))
        continue
    if line.startswith("--- ") or line.startswith("    --- ") or re.match(r"^(ok|FAIL|PASS)\b", line):
        cur = None
        continue
    if cur is not None:
        said.setdefault(cur, []).append(line.rstrip("\n"))
for name in failed:
    lines = said.get(name, [])
    print(f"== {name} ({len(lines)} lines)")
    for line in lines[:60]:
        print(line)
