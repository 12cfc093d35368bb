#!/usr/bin/env python3
"""prom_check.py — validates Prometheus text exposition (format 0.0.4) read on stdin: every
sample line is `name{labels} value`, its family is declared by # HELP / # TYPE before it,
label values are properly quoted and escaped, and histograms have monotonic buckets ending in
+Inf equal to _count. Exits non-zero with the first problem."""
import re
import sys

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(rf'^({NAME})(\{{(?:{LABEL})(?:,{LABEL})*\}})? (\S+)$')

def fail(msg):
    print(f"invalid exposition: {msg}")
    sys.exit(1)

types = {}
helped = set()
buckets = {}
counts = {}
for n, line in enumerate(sys.stdin.read().splitlines(), 1):
    if line.startswith('# HELP '):
        helped.add(line.split()[2])
        continue
    if line.startswith('# TYPE '):
        parts = line.split()
        if len(parts) != 4 or parts[3] not in ('counter', 'gauge', 'histogram', 'summary', 'untyped'):
            fail(f"line {n}: bad TYPE line")
        types[parts[2]] = parts[3]
        continue
    if line.startswith('#') or not line:
        continue
    m = SAMPLE.match(line)
    if not m:
        fail(f"line {n}: not a sample: {line!r}")
    name, labels, value = m.groups()
    try:
        float(value)
    except ValueError:
        fail(f"line {n}: bad value {value!r}")
    family = re.sub(r'_(bucket|sum|count)$', '', name) if name not in types else name
    if family not in types or family not in helped:
        fail(f"line {n}: {name} has no HELP/TYPE before it")
    if name.endswith('_bucket'):
        le = re.search(r'le="([^"]*)"', labels or '')
        if not le:
            fail(f"line {n}: bucket without le")
        buckets.setdefault(family, []).append((le.group(1), float(value)))
    if name.endswith('_count') and types.get(family) == 'histogram':
        counts[family] = float(value)
for family, bs in buckets.items():
    values = [v for _, v in bs]
    if values != sorted(values):
        fail(f"{family}: buckets not cumulative")
    if bs[-1][0] != '+Inf' or bs[-1][1] != counts.get(family):
        fail(f"{family}: +Inf bucket must end the list and equal _count")
print(f"ok: {len(types)} families")
