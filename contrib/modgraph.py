#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Copyright (c) 2026 The vigil authors
"""The module graph of vigild: which supervisord/ file calls which.

    contrib/modgraph.py [--dot] [--check] [TOP]

An arrow A -> B means A.c names a function that B.c exports (defined at
the start of a line, not static), outside comments and strings; a
function-like macro of a supervisord/ header names the function its
expansion calls.  A ~> B: A calls through a member of a table of
function pointers (x.m( or x->m() that some initializer sets to a
function of B (.m = fn), or through a global pointer set to one (by the
member's name: a guess, as a reader would make it).  Prints one line per
file with its arrows and its size, then the two-way pairs, then the
pairs only pointers make two-way.  --dot prints a Graphviz graph of the
arrows instead.  --check prints the two-way pairs and the broken rules,
and exits 1 if any pair of files calls each other (->) or a rule is
broken.  The rules: a function of lib/ that only one daemon file may
call (SOLE: the lifecycle's step is instance.c's alone; everything else
feeds it events through inst_feed); no header of supervisord/ is
included, directly or through another, by more than half of the
daemon's files (HALF; but the loop's and the child registry's: every
module that waits on something uses them, as it uses log.h).
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


# A table's member set to a function (.m = fn, in an initializer), a global
# pointer set to one (name = fn;), a call through a member (x.m( or x->m().
SLOT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s*[,}]")
GLOBAL_SET = re.compile(
    r"^\t*([a-z_][a-z0-9_]*)\s*=\s*([a-z_][a-z0-9_]*)\s*;", re.M)
THROUGH = re.compile(r"(?:\.|->)([A-Za-z_][A-Za-z0-9_]*)\s*\(")


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


# Headers every module that waits on something uses (HALF's exceptions):
# evloop.h, the loop; child.h, the child registry (struct run holds its
# entry, so it comes with jobs.h).
HALF_EXEMPT = {"evloop.h", "child.h"}
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def half_broken(top, files):
    """The headers of supervisord/ more than half the daemon's files
    include (through other headers too)."""
    daemon = [f for f in files if not os.path.basename(f).startswith("vigilctl")]
    local = os.path.join(top, "supervisord")

    def closure(path, seen):
        for h in INCLUDE.findall(open(path, errors="replace").read()):
            p = os.path.join(local, h)
            if h not in seen and os.path.exists(p):
                seen.add(h)
                closure(p, seen)
        return seen

    count = {}
    for f in daemon:
        for h in closure(f, set()):
            count[h] = count.get(h, 0) + 1
    return [f"{h} is included by {n} of the {len(daemon)} daemon files"
            for h, n in sorted(count.items())
            if 2 * n > len(daemon) and h not in HALF_EXEMPT]


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
    return (files, calls, sole_broken(files, code) + half_broken(top, files),
            pointer_calls(files, code))


def pointer_calls(files, code):
    """Calls through tables of function pointers: A ~> B when A calls
    through a member (x.m( or x->m() that some table sets to a function of
    B (.m = fn), or through a global pointer set to B's function."""
    defined = {}
    for f in files:
        for m in DEF.finditer(code[f]):
            defined.setdefault(m.group(1), f)
    member, glob_ptr = {}, {}
    for f in files:
        for m in SLOT.finditer(code[f]):
            if m.group(2) in defined:
                member.setdefault(m.group(1), set()).add(defined[m.group(2)])
        for m in GLOBAL_SET.finditer(code[f]):
            if m.group(2) in defined and m.group(1) not in defined:
                glob_ptr.setdefault(m.group(1), set()).add(
                    defined[m.group(2)])
    via = {}
    for f in files:
        to = set()
        for m in THROUGH.finditer(code[f]):
            to |= member.get(m.group(1), set())
        for name, owners in glob_ptr.items():
            if re.search(r"(?<![.>\w])" + name + r"\s*\(", code[f]):
                to |= owners
        via[f] = sorted(to - {f})
    return via


def main(argv):
    top = next((a for a in argv if not a.startswith("--")), ".")
    files, calls, broken, via = graph(top)
    name = lambda f: os.path.basename(f)[:-2]
    pairs = sorted({tuple(sorted((a, b))) for a in files for b in calls[a]
                    if a in calls[b]})
    both = {f: set(calls[f]) | set(via[f]) for f in files}
    hidden = sorted({tuple(sorted((a, b))) for a in files for b in both[a]
                     if a in both[b]} - set(pairs))
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
                  (" ".join(name(t) for t in calls[f]) or "(nothing)") +
                  "".join(f" ~> {name(t)}" for t in via[f]
                          if t not in calls[f]))
    if "--dot" not in argv:
        print("two-way: " + (", ".join(f"{name(a)}<->{name(b)}"
                                       for a, b in pairs) or "none"))
        print("two-way through pointers: " +
              (", ".join(f"{name(a)}<~>{name(b)}" for a, b in hidden)
               or "none"))
    if "--check" in argv:
        for b in broken:
            print("rule: " + b)
    return 1 if "--check" in argv and (pairs or broken) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
