#!/usr/bin/env python3
"""settings_doc.py — the test docs.settings: the daemon's settings are written in one place, the
rows of src/daemon/settings.def, and every page that describes them is printed from it.

What is checked:
  stale     docs/man/convgpud.8, docs/man/convgpud.conf.5, docs/OPERATIONS.md and
            packaging/convgpud.conf.example (the installed /etc/convgpu/convgpud.conf) are exactly what
            `convgpud --settings-doc FILE` makes of them (their generated regions written again
            from the table); a difference fails with the command that fixes it, `make docs`
  installed the man pages the build installs (build/man, cmake_install.cmake) are those the
            table writes, not the committed files
  rows      every row of the table (`--settings-doc tsv`: name, argument, default, values) is in
            every output (convgpud.8's entry with --NAME, convgpud.conf.5's with NAME =,
            OPERATIONS.md's table row and synopsis; the example file's #NAME = line) with its
            default and its values (the example: its key), so a row
            added to the table shows in all of them at once
  by hand   no setting is described outside a generated region: convgpud.8's OPTIONS entries
            outside it are exactly the program's own options (not settings), convgpud.conf.5's
            KEYS has no entry outside it, OPERATIONS.md has no settings row or convgpud synopsis
            outside it, the example file no key outside it
Exit status: 0 when all hold, 1 with every problem printed.
"""
import difflib
import os
import re
import subprocess
import sys

BUILD = os.environ["CONVGPU_BUILD_DIR"]
SRC = os.environ["CONVGPU_SOURCE_DIR"]
DAEMON = os.path.join(BUILD, "bin", "convgpud")
PAGES = ("docs/man/convgpud.8", "docs/man/convgpud.conf.5", "docs/OPERATIONS.md",
         "packaging/convgpud.conf.example")
OWN = {"config", "foreground", "check-config", "version", "routes", "settings-doc", "help"}  # not settings
BEGIN = re.compile(r"generated: convgpud --settings-doc ([a-z0-9]+)")
problems = []


def run(*args):
    out = subprocess.run([DAEMON, *args], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        problems.append(f"convgpud {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out.stdout


def split_regions(text):
    """(inside, outside): {format: region text} and the file's text outside the regions."""
    inside, outside, fmt = {}, [], None
    for line in text.split("\n"):
        m = BEGIN.search(line)
        if fmt is None and m:
            fmt = m.group(1)
            inside[fmt] = ""
            outside.append(line)
        elif fmt is not None and "end generated" in line:
            fmt = None
            outside.append(line)
        elif fmt is not None:
            inside[fmt] += line + "\n"
        else:
            outside.append(line)
    return inside, "\n".join(outside)


def plain(text):
    """What a reader sees of roff or Markdown: fonts, escapes and code marks gone, one space."""
    text = re.sub(r"\\f[BIRP]|\\&|\\%", "", text)
    text = text.replace("\\-", "-").replace("\\(mu", "\u00d7").replace("\\e", "\\")
    text = text.replace("\\|", "|").replace("`", "").replace("\n.br\n", " ")
    return re.sub(r"\s+", " ", text)


def roff_entries(region, dashes):
    """{name: the entry's plain text} of a region of .TP entries."""
    out = {}
    for entry in region.split(".TP\n")[1:]:
        head, _, body = entry.partition("\n")
        m = re.match(r'\.BI (?:\\-\\-)?([a-z0-9\\-]+) "', head)
        if not m or (dashes != head.startswith(".BI \\-\\-")):
            problems.append(f"an entry that names no setting: {head}")
            continue
        out[m.group(1).replace("\\-", "-")] = plain(body)
    return out


def check_stale():
    for rel in PAGES:
        path = os.path.join(SRC, rel)
        want = run("--settings-doc", path)
        have = open(path, encoding="utf-8").read()
        if want != have:
            diff = "".join(list(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                                     rel, "the table's"))[:40])
            problems.append(f"{rel} is stale: its generated regions are not what the settings "
                            f"table (src/daemon/settings.def) prints; run `make docs` (or "
                            f"`cmake --build build --target docs`) and commit it\n{diff}")


def check_installed():
    script = open(os.path.join(BUILD, "cmake_install.cmake"), encoding="utf-8").read()
    for page in ("convgpud.8", "convgpud.conf.5"):
        built = os.path.join(BUILD, "man", page)
        if not os.path.exists(built):
            problems.append(f"the build wrote no {built}")
            continue
        if open(built, encoding="utf-8").read() != run("--settings-doc",
                                                       os.path.join(SRC, "docs", "man", page)):
            problems.append(f"{built} is not the table's (the build did not write it again)")
        if built not in script or f"docs/man/{page}\"" in script:
            problems.append(f"cmake --install does not install {built} (or installs the "
                            f"committed docs/man/{page})")


def check_rows():
    rows = [l.split("\t") for l in run("--settings-doc", "tsv").splitlines()]
    if len(rows) < 40 or any(len(r) != 4 for r in rows):
        problems.append(f"--settings-doc tsv: {len(rows)} rows, not name/arg/default/values")
        return
    texts = {rel: split_regions(open(os.path.join(SRC, rel), encoding="utf-8").read())
             for rel in PAGES}
    man8 = roff_entries(texts["docs/man/convgpud.8"][0].get("man8", ""), True)
    conf5 = roff_entries(texts["docs/man/convgpud.conf.5"][0].get("conf5", ""), False)
    ops = texts["docs/OPERATIONS.md"][0]
    table = {}
    for line in ops.get("markdown", "").splitlines():
        m = re.match(r"\| `([a-z0-9-]+)` \| (.*) \|$", line)
        if m:
            table[m.group(1)] = [plain(c) for c in re.split(r"(?<!\\)\|", m.group(2))]
    synopsis = plain(ops.get("synopsis", ""))
    conf = texts["packaging/convgpud.conf.example"][0].get("conf", "")
    conf_keys = re.findall(r"^#([a-z0-9-]+) = (.*)$", conf, re.M)
    names = [r[0] for r in rows]
    for name, arg, default, values in rows:
        said = f"Default: {default}. Values: {values}."
        for page, entries in (("convgpud.8", man8), ("convgpud.conf.5", conf5)):
            if name not in entries:
                problems.append(f"{page}: no entry for the setting {name}")
            elif said not in entries[name]:
                problems.append(f"{page} {name}: no '{said}' in: {entries[name]}")
        cells = table.get(name)
        if not cells:
            problems.append(f"OPERATIONS.md: no table row for the setting {name}")
        elif [c.strip() for c in cells[:2]] != [default, values]:
            problems.append(f"OPERATIONS.md {name}: default and values {cells[:2]}, the table "
                            f"says {[default, values]}")
        if f"[--{name} {arg}]" not in synopsis:
            problems.append(f"OPERATIONS.md synopsis: no [--{name} {arg}]")
        if name not in dict(conf_keys):
            problems.append(f"convgpud.conf.example: no commented-out line for {name}")
    for page, entries in (("convgpud.8", man8), ("convgpud.conf.5", conf5),
                          ("OPERATIONS.md", table), ("convgpud.conf.example", dict(conf_keys))):
        if list(entries) != names:
            problems.append(f"{page}: the settings' entries are not the table's rows in order: "
                            f"{sorted(set(entries) ^ set(names))}")


def check_by_hand():
    _, outside = split_regions(open(os.path.join(SRC, PAGES[0]), encoding="utf-8").read())
    options = outside.split("\n.SH OPTIONS\n")[1].split("\n.SH ")[0]
    own = {m.replace("\\-", "-") for m in
           re.findall(r'^\.TP\n\.B[IR]? (?:\\-h ", " )?\\-\\-([a-z0-9\\-]+)', options, re.M)}
    if own != OWN:
        problems.append(f"convgpud.8 OPTIONS outside the generated region: {sorted(own)}, not "
                        f"the program's own options {sorted(OWN)}")
    _, outside = split_regions(open(os.path.join(SRC, PAGES[1]), encoding="utf-8").read())
    if re.search(r'^\.BI [a-z0-9\\-]+ " = ', outside, re.M):
        problems.append("convgpud.conf.5: a key described outside the generated region")
    _, outside = split_regions(open(os.path.join(SRC, PAGES[3]), encoding="utf-8").read())
    if re.search(r"^#?[a-z0-9-]+ = ", outside, re.M):
        problems.append("convgpud.conf.example: a key outside the generated region")
    _, outside = split_regions(open(os.path.join(SRC, PAGES[2]), encoding="utf-8").read())
    for line in outside.splitlines():
        if line.startswith("| setting |") or "doc-test: options convgpud " in line:
            problems.append(f"OPERATIONS.md: outside the generated regions: {line}")


def main():
    check_stale()
    check_installed()
    check_rows()
    check_by_hand()
    for p in problems:
        print("FAIL:", p)
    print(f"docs.settings: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
