#!/usr/bin/env python3
"""layer-check.py OBJDIR... — the daemon's shape, checked from what its objects use (`nm`): which
file calls which (an edge from A to B when A's object uses a symbol B's object defines).

Fails (exit 1) when:
  - a file below the control API uses anything the API files define (api.c, api_*.c): the API
    is the top layer and lower files report through notices (notice.h), never by calling it;
  - a file below the control API includes an API header (api.h, api_*.h): a type both need
    belongs below (interference.h, tenant.h's tenant_request), so that a lower layer compiles
    without the upper one (read from src/daemon's sources, beside this script);
  - a cycle of files (a strongly connected set) is larger than MAX_CYCLE, 3 (issue 36). The
    daemon has none today (it had 14 files in one, then 7, then decide.c and swap.c, until
    swap.c's part of a decision reached decide.c through the ops it is given: docs/DESIGN.md,
    "Layers").
Prints every cycle of more than one file, and each layer breach with the symbol that makes it.
"""
import collections
import glob
import os
import re
import subprocess
import sys

MAX_CYCLE = 3
API = lambda f: f == "api" or f.startswith("api_")
ABOVE_API = {"main"}  # may call into the API: it starts and stops it
# May include API headers: main, and /metrics, an edge beside the API that shows the control
# socket's connection counts (api_conn.h's struct api_conns).
INCLUDES_API = ABOVE_API | {"metrics"}
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "daemon")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)\.h"')


def objects(objdirs):
    """Each file's object; where a build directory keeps an older one of the same file (a file
    that moved between convgpud and its library), the newest."""
    newest = {}
    for o in (o for d in objdirs for o in glob.glob(os.path.join(d, "*.c.o"))):
        f = os.path.basename(o)[:-4]
        if f not in newest or os.path.getmtime(o) > os.path.getmtime(newest[f]):
            newest[f] = o
    return sorted(newest.items())


def graph(objdirs):
    defs, uses = {}, collections.defaultdict(set)
    for f, o in objects(objdirs):
        out = subprocess.run(["nm", "-g", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRC":
                defs[p[2]] = f
            elif len(p) == 2 and p[0] == "U":
                uses[f].add(p[1])
    edges = collections.defaultdict(dict)
    for f, syms in uses.items():
        for s in sorted(syms):
            g = defs.get(s)
            if g and g != f:
                edges[f].setdefault(g, s)
    return set(defs.values()) | set(uses), edges


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    dirs = sys.argv[1:]
    if not dirs or not all(glob.glob(os.path.join(d, "*.c.o")) for d in dirs):
        print("usage: layer-check.py OBJDIR... (the object directories of convgpud and of "
              "convgpud_below, the library of everything below its API)")
        return 2
    nodes, edges = graph(dirs)
    bad = 0
    for f in sorted(edges):
        if API(f) or f in ABOVE_API:
            continue
        for g, sym in sorted(edges[f].items()):
            if API(g):
                print(f"FAIL: {f}.c calls up into the API: {sym} ({g}.c)")
                bad += 1
    for path in sorted(glob.glob(os.path.join(SRC, "*.[ch]"))):
        f = os.path.basename(path)[:-2]
        if API(f) or f in INCLUDES_API:
            continue
        with open(path, encoding="utf-8") as src:
            for n, line in enumerate(src, 1):
                m = INCLUDE.match(line)
                if m and API(m.group(1)):
                    print(f"FAIL: {os.path.basename(path)}:{n} includes the API's {m.group(1)}.h")
                    bad += 1
    largest = 0
    for comp in sccs(nodes, edges):
        if len(comp) > 1:
            print(f"cycle of {len(comp)} files: {' '.join(comp)}")
        largest = max(largest, len(comp))
    if largest > MAX_CYCLE:
        print(f"FAIL: the largest cycle spans {largest} files; at most {MAX_CYCLE}")
        bad += 1
    print(f"{len(nodes)} files; largest cycle {largest} (limit {MAX_CYCLE}); "
          f"{bad} breach(es)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
