#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Copyright (c) 2026 The vigil authors
"""The module graph of vigild: which supervisord/ file calls which.

    contrib/modgraph.py [--dot] [--check] [TOP]

An arrow A -> B means A.c names a function that B.c exports (defined at
the start of a line, not static), outside comments and strings; calls
through ops tables and hooks (struct kind_ops, claim_ops, inst_hooks) are
not arrows, which is the point of them.  Prints one line per file with
its arrows and its size, then the two-way pairs.  A function-like macro
of a supervisord/ header names the function its expansion calls.  --dot prints a Graphviz
graph instead.  --check prints only the two-way pairs and the broken
rules, and exits 1 if any pair of files calls each other or a rule is
broken.  The rules (SOLE): a function of lib/ that only one daemon file
may call; the lifecycle's step is instance.c's alone (everything else
feeds it events through inst_feed).
"""
import glob
import os
import re
import sys

DEF = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(", re.M)
# A name, not a member after "." or "->".
WORD = re.compile(r"(?<![.>])\b[A-Za-z_][A-Za-z0-9_]*\b")
MACRO = re.compile(r"^#define ([A-Za-z_][A-Za-z0-9_]*)\(([^\n]*)", re.M)
CODE = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def strip(text):
    """The text with its comments and string and char literals blanked."""
    return CODE.sub(lambda m: " " if m.group(0)[0] == "/" else '""', text)


def exported(text):
    """Names of the functions a file defines and does not keep static."""
    names = set()
    for m in DEF.finditer(text):
        start = text.rfind("\n", 0, m.start() - 1) + 1
        prev = text[start:m.start()]
        if (m.group(1) != "main" and not m.group(1).isupper() and
                not prev.startswith("static")):
            names.add(m.group(1))
    return names


# Who alone may name a function of lib/ among the daemon's files.
SOLE = {
    "life_step": "instance.c",
    "life_init": "instance.c",
}


def sole_broken(files, code):
    """The daemon files that name a SOLE function they may not."""
    broken = []
    for f in files:
        for fn, only in sorted(SOLE.items()):
            called = re.search(r"(?<![.>\w])" + fn + r"\s*\(", code[f])
            if called and os.path.basename(f) != only:
                broken.append(f"{os.path.basename(f)} calls {fn} "
                              f"(only {only} may)")
    return broken


def graph(top):
    files = sorted(glob.glob(os.path.join(top, "supervisord", "*.c")))
    code = {f: strip(open(f, errors="replace").read()) for f in files}
    owner = {}
    for f in files:
        for name in exported(code[f]):
            owner[name] = f
    # A function-like macro of a header that calls a file's function
    # (evloop_timer_in -> evloop_timer_in_) is a call of that file.
    for h in sorted(glob.glob(os.path.join(top, "supervisord", "*.h"))):
        text = strip(open(h, errors="replace").read()).replace("\\\n", " ")
        for m in MACRO.finditer(text):
            called = [owner[w] for w in WORD.findall(m.group(2))
                      if w in owner]
            if called:
                owner[m.group(1)] = called[0]
    # A name a file defines itself (a stub of another's, built instead
    # of it: cluster-absent.c) is not a call.
    calls = {}
    for f in files:
        words = set(WORD.findall(code[f])) - exported(code[f])
        calls[f] = sorted({owner[w] for w in words
                           if w in owner and owner[w] != f})
    return files, calls, sole_broken(files, code)


def main(argv):
    top = next((a for a in argv if not a.startswith("--")), ".")
    files, calls, broken = graph(top)
    name = lambda f: os.path.basename(f)[:-2]
    pairs = sorted({tuple(sorted((a, b))) for a in files for b in calls[a]
                    if a in calls[b]})
    if "--dot" in argv:
        print("digraph vigild {")
        for f in files:
            for t in calls[f]:
                print(f'  "{name(f)}" -> "{name(t)}";')
        print("}")
    elif "--check" in argv:
        pass
    else:
        for f in files:
            n = sum(1 for _ in open(f, errors="replace"))
            print(f"{name(f):14} {n:5}  -> " +
                  (" ".join(name(t) for t in calls[f]) or "(nothing)"))
    if "--dot" not in argv:
        print("two-way: " + (", ".join(f"{name(a)}<->{name(b)}"
                                       for a, b in pairs) or "none"))
    if "--check" in argv:
        for b in broken:
            print("rule: " + b)
    return 1 if "--check" in argv and (pairs or broken) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
