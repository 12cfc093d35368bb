#!/usr/bin/env python3
"""manpages.py — the test package.manpages: the manual pages (docs/man) and the programs'
--help must not drift apart.

What is compared, as sets of long options (--word), in both directions:
  convgpud.8         OPTIONS section  <->  convgpud --help
  convgpud.conf.5    KEYS section     <->  convgpud --help, less --config/--foreground/--version/--help
  convgpu.1          OPTIONS section  <->  convgpu --help
                     each `.SS convgpu WORDS` subsection of COMMANDS  <->  convgpu WORDS --help,
                     and the subsections' first words  <->  the commands `convgpu --help` lists
  convgpu-runtime.8  OPTIONS section  <->  convgpu-runtime --help
                     HOOKS section    <->  convgpu-runtime hook --help (and its two hook names)
  convgpu-sample.1   OPTIONS section  <->  convgpu-sample --help
  convgpu-scheduler-extender.8  OPTIONS section  <->  convgpu-scheduler-extender --help
  convgpu-device-plugin.8  OPTIONS section  <->  convgpu-device-plugin --help (where it is built)
--help itself is left out of the subcommands' comparison: every command takes it, and the page
says so once. Exit status: 0 when everything matches, 1 with every difference printed.
"""
import os
import re
import subprocess
import sys

BUILD = os.environ["CONVGPU_BUILD_DIR"]
MAN = os.path.join(os.environ["CONVGPU_SOURCE_DIR"], "docs", "man")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
problems = []


def run_help(*argv):
    out = subprocess.run([os.path.join(BUILD, "bin", argv[0]), *argv[1:]], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        problems.append(f"{' '.join(argv)} exited {out.returncode}")
    return out.stdout + out.stderr


def troff_text(line):
    """A troff line as a reader sees its words: escapes for dashes and fonts removed."""
    line = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\c", "", line)
    return line.replace("\\-", "-").replace("\\(em", " ")


def sections(page, level):
    """{title: text} for the .SH (level 'SH') or .SS sections of a page."""
    out, title = {}, None
    with open(os.path.join(MAN, page), encoding="utf-8") as f:
        for raw in f:
            if raw.startswith(".\\\""):
                continue
            line = troff_text(raw.rstrip("\n"))
            m = re.match(r"\.(SH|SS)\s+\"?([^\"]*)\"?\s*$", line)
            if m and m.group(1) == level:
                title = m.group(2).strip()
                out[title] = ""
            elif m and level == "SS":
                title = None  # an .SH ends the subsections
            elif title is not None:
                out[title] += line + "\n"
    return out


def options(text, drop=()):
    return set(OPTION.findall(text)) - set(drop)


def compare(what, in_man, in_help):
    for o in sorted(in_help - in_man):
        problems.append(f"{what}: --help has {o}, the man page does not")
    for o in sorted(in_man - in_help):
        problems.append(f"{what}: the man page has {o}, --help does not")


def page_section(page, title):
    s = sections(page, "SH")
    if title not in s:
        problems.append(f"{page}: no {title} section")
    return s.get(title, "")


# Other programs' options that a --help quotes in an example: not the command's own.
QUOTED = ("--unix-socket",)  # convgpud --help: `curl --unix-socket DIR/control.sock ...`


def main():
    daemon_help = run_help("convgpud", "--help")
    for quoted in QUOTED:
        daemon_help = daemon_help.replace(quoted, "")
    compare("convgpud.8 OPTIONS", options(page_section("convgpud.8", "OPTIONS")),
            options(daemon_help))
    # The configuration keys are written without dashes: `.BI key " = VALUE"`.
    keys = {"--" + k for k in re.findall(r"^\.BI\s+([a-z][a-z0-9-]*)\s+\" = ",
                                         page_section("convgpud.conf.5", "KEYS"), re.M)}
    compare("convgpud.conf.5 KEYS", keys,
            options(daemon_help, ("--config", "--foreground", "--version", "--help")))

    cli_help = run_help("convgpu", "--help")
    compare("convgpu.1 OPTIONS", options(page_section("convgpu.1", "OPTIONS")),
            options(cli_help))
    listed = re.search(r"^Commands:\n(.*?)\n\n", cli_help, re.S | re.M)
    commands = set(re.findall(r"^  ([a-z][a-z0-9]*)\s", listed.group(1), re.M)) if listed else set()
    if not commands:
        problems.append("convgpu --help lists no commands")
    subsections = {t: body for t, body in sections("convgpu.1", "SS").items()
                   if t.startswith("convgpu ")}
    documented = {t.split()[1] for t in subsections}
    for c in sorted(commands - documented):
        problems.append(f"convgpu.1: command {c} (in convgpu --help) has no .SS convgpu {c}")
    for c in sorted(documented - commands):
        problems.append(f"convgpu.1: .SS convgpu {c} names no command of convgpu --help")
    for title, body in sorted(subsections.items()):
        words = title.split()[1:]
        if words[0] not in commands:
            continue
        compare(f"convgpu.1 {title}", options(body, ("--help",)),
                options(run_help("convgpu", *words, "--help"), ("--help",)))

    compare("convgpu-runtime.8 OPTIONS", options(page_section("convgpu-runtime.8", "OPTIONS")),
            options(run_help("convgpu-runtime", "--help")))
    hook_help = run_help("convgpu-runtime", "hook", "--help")
    hooks = page_section("convgpu-runtime.8", "HOOKS")
    compare("convgpu-runtime.8 HOOKS", options(hooks), options(hook_help))
    for name in ("create-runtime", "poststop"):
        if name not in hook_help or f"hook {name}" not in hooks:
            problems.append(f"convgpu-runtime.8 HOOKS: hook {name} is not in both")

    compare("convgpu-sample.1 OPTIONS", options(page_section("convgpu-sample.1", "OPTIONS")),
            options(run_help("convgpu-sample", "--help"), ("--help",)))
    compare("convgpu-scheduler-extender.8 OPTIONS",
            options(page_section("convgpu-scheduler-extender.8", "OPTIONS")),
            options(run_help("convgpu-scheduler-extender", "--help")))
    if os.path.exists(os.path.join(BUILD, "bin", "convgpu-device-plugin")):
        compare("convgpu-device-plugin.8 OPTIONS",
                options(page_section("convgpu-device-plugin.8", "OPTIONS")),
                options(run_help("convgpu-device-plugin", "--help")))

    for p in problems:
        print("FAIL:", p)
    print(f"package.manpages: {len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
