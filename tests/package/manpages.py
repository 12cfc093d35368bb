#!/usr/bin/env python3
"""manpages.py — the test package.manpages: the manual pages (docs/man) and the programs'
--help must not drift apart.

What is compared, as sets of long options (--word), in both directions:
  convgpud.8         OPTIONS section  <->  convgpud --help
  convgpud.conf.5    KEYS section     <->  convgpud --help, less --config/--foreground/
                                          --check-config/--version/--routes/--settings-doc/--help
  convgpu.1          OPTIONS section  <->  convgpu --help
                     each `.SS convgpu WORDS` subsection of COMMANDS  <->  convgpu WORDS --help,
                     and the subsections' first words  <->  the commands `convgpu --help` lists
  convgpu-runtime.8  OPTIONS section  <->  convgpu-runtime --help
                     HOOKS section    <->  convgpu-runtime hook --help (and its two hook names)
  convgpu-sample.1   OPTIONS section  <->  convgpu-sample --help
  convgpu-scheduler-extender.8  OPTIONS section  <->  convgpu-scheduler-extender --help
  convgpu-device-plugin.8  OPTIONS section  <->  convgpu-device-plugin --help (where it is built)
  convgpu-dra-driver.8, convgpu-webhook.8  OPTIONS  <->  their --help (where they are built)
                     the nested commands a command's usage lists (convgpu tenant set,
                     profile interference, ...): each answers its own --help, and its options
                     are in the command's subsection
  EXIT STATUS        the exit statuses a page's EXIT STATUS section names  <->  those of the
                     "Exit status" paragraph of the program's --help (a page without the section
                     goes with a --help without the paragraph)
  convgpu-runtime.8  SYNOPSIS names every hook of `hook --help`; DESCRIPTION names exactly the
                     environment variables and annotations `convgpu-runtime --help` lists
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


def exit_codes(text):
    return set(re.findall(r"(?<![\w.-])\d{1,3}(?![\w.])", text))


def help_exit_section(help_text):
    """The "Exit status" paragraph of a --help: from its heading to the next blank line."""
    m = re.search(r"^Exit status:?(.*?)(?:\n\n|\Z)", help_text, re.S | re.M | re.I)
    return m.group(1) if m else None


def compare_exit(page, help_text):
    man = sections(page, "SH").get("EXIT STATUS")
    hlp = help_exit_section(help_text)
    if man is None and hlp is None:
        return
    if man is None or hlp is None:
        problems.append(f"{page} EXIT STATUS: " + ("the page has the section, --help does not"
                        if hlp is None else "--help states exit statuses, the page has no section"))
        return
    in_man, in_help = exit_codes(man), exit_codes(hlp)
    for c in sorted(in_help - in_man, key=int):
        problems.append(f"{page} EXIT STATUS: --help names exit status {c}, the page does not")
    for c in sorted(in_man - in_help, key=int):
        problems.append(f"{page} EXIT STATUS: the page names exit status {c}, --help does not")


def nested_commands(command, help_text):
    """The nested commands a command's usage lists: `convgpu tenant set ...` -> {"set"}."""
    return set(re.findall(r"convgpu(?: \[--runtime-dir DIR\])? %s ([a-z][a-z0-9-]+)" % command,
                          help_text)) - {"rm"}


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
            options(daemon_help, ("--config", "--foreground", "--check-config", "--version",
                                  "--routes", "--settings-doc", "--help")))

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
        command_help = run_help("convgpu", *words, "--help")
        compare(f"convgpu.1 {title}", options(body, ("--help",)),
                options(command_help, ("--help",)))
        if len(words) > 1:
            continue
        for sub in sorted(nested_commands(words[0], command_help)):
            if f"convgpu {words[0]} {sub}" in subsections:
                continue  # compared in its own subsection
            for o in sorted(options(run_help("convgpu", words[0], sub, "--help"), ("--help",))
                            - options(body)):
                problems.append(f"convgpu.1 {title}: convgpu {words[0]} {sub} --help has {o}, "
                                "the page does not")
    compare_exit("convgpu.1", cli_help)

    compare("convgpu-runtime.8 OPTIONS", options(page_section("convgpu-runtime.8", "OPTIONS")),
            options(run_help("convgpu-runtime", "--help")))
    hook_help = run_help("convgpu-runtime", "hook", "--help")
    hooks = page_section("convgpu-runtime.8", "HOOKS")
    compare("convgpu-runtime.8 HOOKS", options(hooks), options(hook_help))
    for name in ("create-runtime", "poststop", "cdi-create-runtime"):
        if name not in hook_help or f"hook {name}" not in hooks:
            problems.append(f"convgpu-runtime.8 HOOKS: hook {name} is not in both")
    synopsis = page_section("convgpu-runtime.8", "SYNOPSIS")
    for name in re.findall(r"^\s+([a-z][a-z-]+)\s", hook_help.split("\n\n", 1)[-1], re.M):
        if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), synopsis):
            problems.append(f"convgpu-runtime.8 SYNOPSIS: hook {name} (hook --help) is missing")
    runtime_help = run_help("convgpu-runtime", "--help")
    names = re.compile(r"\bCONVGPU_[A-Z_]+\b|\bcom\.(?:convgpu|nvidia)\.[a-z.-]*[a-z]")
    described = set(names.findall(page_section("convgpu-runtime.8", "DESCRIPTION")))
    helped = set(names.findall(runtime_help.split("\n\n")[1] if "\n\n" in runtime_help else ""))
    for n in sorted(helped - described):
        problems.append(f"convgpu-runtime.8 DESCRIPTION: --help names {n}, the page does not")
    for n in sorted(described - helped):
        problems.append(f"convgpu-runtime.8 DESCRIPTION: the page names {n}, --help does not")
    compare_exit("convgpu-runtime.8", runtime_help)

    sample_help = run_help("convgpu-sample", "--help")
    compare("convgpu-sample.1 OPTIONS", options(page_section("convgpu-sample.1", "OPTIONS")),
            options(sample_help, ("--help",)))
    compare_exit("convgpu-sample.1", sample_help)
    compare_exit("convgpud.8", daemon_help)
    extender_help = run_help("convgpu-scheduler-extender", "--help")
    compare("convgpu-scheduler-extender.8 OPTIONS",
            options(page_section("convgpu-scheduler-extender.8", "OPTIONS")),
            options(extender_help))
    compare_exit("convgpu-scheduler-extender.8", extender_help)
    if os.path.exists(os.path.join(BUILD, "bin", "convgpu-device-plugin")):
        plugin_help = run_help("convgpu-device-plugin", "--help")
        compare("convgpu-device-plugin.8 OPTIONS",
                options(page_section("convgpu-device-plugin.8", "OPTIONS")),
                options(plugin_help))
        compare_exit("convgpu-device-plugin.8", plugin_help)
    for prog in ("convgpu-dra-driver", "convgpu-webhook"):
        if os.path.exists(os.path.join(BUILD, "bin", prog)):
            help_text = run_help(prog, "--help")
            compare(f"{prog}.8 OPTIONS", options(page_section(f"{prog}.8", "OPTIONS")),
                    options(help_text))
            compare_exit(f"{prog}.8", help_text)

    for p in problems:
        print("FAIL:", p)
    print(f"package.manpages: {len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
