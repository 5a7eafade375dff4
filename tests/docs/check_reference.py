#!/usr/bin/env python3
"""Fails when the built documentation lacks an entry for something the product has.

What must have an entry, each read from the product itself, not from the pages' generator:

* every command of the CLI and every flag of it, from the commands' ``--help`` (walked
  from ``flynn --help``): an option entry of that command (Sphinx's ``std:cmdoption``);
* every row of the settings tables, from the library through the Python module
  (``flynn._flynn.hyper_param_names()``, ``flynn._flynn.federated.dp_param_fields()``):
  a ``setting-<flag>`` label on the settings page;
* every public Python name: ``flynn.__all__``, ``flynn.federated.__all__``,
  ``flynn.dask.__all__`` and the methods and properties FlyNNClassifier defines: a ``py:``
  entry;
* every declaration of the public headers (include/flynn), from Doxygen's parse of them:
  a ``cpp:`` (or ``c:`` for macros) entry, and a page for each namespace;
* and no page fetches a script, image, stylesheet or font from the network.

The entries are read from the site's ``objects.inv``, which lists every object the pages
define. Usage (scripts/docs.sh runs it):

    check_reference.py --html build/docs/html --cli build/flynn --doxygen-xml build/docs/doxygen/xml
    check_reference.py --self-test     # the check fails on a reference with an entry removed
"""
import argparse
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def load_inventory(html_dir):
    """{(domain:role, name)} of the site's objects.inv."""
    from sphinx.util.inventory import InventoryFile
    with open(os.path.join(html_dir, "objects.inv"), "rb") as f:
        inv = InventoryFile.load(f, "", lambda base, path: path)
    return {(role, name) for role, entries in inv.items() for name in entries}


# ---- the CLI, from its own --help

def help_text(cli, path):
    run = subprocess.run([cli, *path, "--help"], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        raise SystemExit(f"check_reference: {cli} {' '.join(path)} --help failed: {run.stderr.strip()}")
    return run.stdout


def parse_help(text):
    """(subcommand names, option long names) of one CLI11 help page."""
    subcommands, options = [], []
    section = None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
            continue
        if section == "Subcommands":
            m = re.match(r"^  (\S+)", line)
            if m:
                subcommands.append(m.group(1))
        else:
            m = re.match(r"^  (-[\w-]*(?:,-[\w-]+)*)", line)
            if m:
                names = m.group(1).split(",")
                longs = [n for n in names if n.startswith("--")]
                name = longs[0] if longs else names[0]
                if name not in ("--help", "-h"):
                    options.append(name)
    return subcommands, options


def cli_items(cli):
    """[(program, option or None)] for every command and flag, walking the help pages."""
    items, todo = [], [[]]
    while todo:
        path = todo.pop(0)
        subs, options = parse_help(help_text(cli, path))
        program = " ".join(["flynn", *path])
        if path:
            items.append((program, None))
        items += [(program, o) for o in options]
        todo += [path + [s] for s in subs]
    return items


def cli_missing(items, inventory):
    missing = []
    for program, option in items:
        if option is None:
            label = "cli-" + program[len("flynn "):].replace(" ", "-")
            if ("std:label", label) not in inventory:
                missing.append(f"command '{program}' has no page (label {label})")
        elif ("std:cmdoption", f"{program.replace(' ', '-')}.{option}") not in inventory:
            missing.append(f"flag {option} of '{program}' has no entry")
    return missing


# ---- the settings tables, from the library

def setting_names():
    import flynn._flynn as core
    names = [str(n) for n in core.hyper_param_names()]
    names += [str(row["name"]) for row in core.federated.dp_param_fields()]
    return names


def settings_missing(names, inventory):
    # Sphinx keeps labels in lower case.
    return [f"setting {n} has no entry on the settings page (label setting-{n.replace('_', '-')})"
            for n in names if ("std:label", "setting-" + n.replace("_", "-").lower()) not in inventory]


# ---- the Python API, from the package

def python_items():
    """[(qualified names that may document it, what)] for every public name."""
    import flynn
    import flynn.dask
    import flynn.federated
    items = []
    for module in (flynn, flynn.federated, flynn.dask):
        for name in module.__all__:
            obj = getattr(module, name)
            if obj is flynn.federated and module is flynn:
                items.append(({"flynn.federated"}, "module flynn.federated"))
                continue
            own = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            names = {f"{module.__name__}.{name}", f"flynn.{name}"}
            if own[0] and own[1] and not own[0].startswith("flynn._"):
                names.add(f"{own[0]}.{own[1]}")
            items.append((names, f"{module.__name__}.{name}"))
    items.append(({"flynn.dask"}, "module flynn.dask"))
    cls = flynn.FlyNNClassifier
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if callable(value) or isinstance(value, (property, classmethod, staticmethod)):
            items.append(({f"flynn.FlyNNClassifier.{name}"}, f"FlyNNClassifier.{name}"))
    items.append(({"flynn.federated.PartyCounts.privatize", "flynn.PartyCounts.privatize"},
                  "PartyCounts.privatize"))
    return items


def python_missing(items, inventory):
    documented = {name for role, name in inventory if role.startswith("py:")}
    return [f"Python name {what} has no entry" for names, what in items if not names & documented]


# ---- the C++ API, from Doxygen's parse of the headers

SKIPPED_KINDS = {"friend", "namespace", "file", "dir", "page", "example", "slot", "signal"}


def cpp_items(xml_dir, include_prefix="flynn/"):
    """[(qualified name, kind, header)] of every declaration in the public headers, and the
    namespaces that hold them."""
    items, namespaces = [], set()
    for name in os.listdir(xml_dir):
        if not name.endswith(".xml") or name in ("index.xml", "Doxyfile.xml"):
            continue
        root = ET.parse(os.path.join(xml_dir, name)).getroot()
        for compound in root.iter("compounddef"):
            kind = compound.get("kind")
            if compound.get("prot") in ("private", "protected"):
                continue  # a class nested in a class's private part: not public API
            cname = compound.findtext("compoundname") or ""
            location = compound.find("location")
            header = location.get("file") if location is not None else ""
            if kind in ("class", "struct", "union") and header.startswith(include_prefix):
                items.append((cname, kind, header))
                namespaces.add(cname.rsplit("::", 1)[0])
            for member in compound.iter("memberdef"):
                mkind = member.get("kind")
                if mkind in SKIPPED_KINDS or member.get("prot") not in (None, "public"):
                    continue
                mloc = member.find("location")
                mheader = mloc.get("file") if mloc is not None else ""
                if not mheader.startswith(include_prefix):
                    continue
                mname = member.findtext("name") or ""
                if mkind == "define":
                    items.append((mname, mkind, mheader))
                    continue
                if kind == "file":
                    continue  # namespace members are listed under their namespace compound
                qualified = f"{cname}::{mname}" if cname else mname
                if kind == "namespace":
                    namespaces.add(cname)
                if mname.startswith("operator"):
                    continue  # operators are documented with their class, not as entries
                items.append((qualified, mkind, mheader))
                if mkind == "enum":
                    for value in member.iter("enumvalue"):
                        items.append((f"{qualified}::{value.findtext('name')}", "enumvalue", mheader))
    # A class nested in a class lives on its namespace's page.
    namespaces = {n for n in namespaces if not any(c == n and k in ("class", "struct", "union")
                                                   for c, k, _ in items)}
    return sorted(set(items)), sorted(namespaces)


def cpp_missing(items, namespaces, inventory):
    documented = {name for role, name in inventory if role.startswith(("cpp:", "c:"))}
    # Sphinx's C++ domain names template parameters and function parameters as entries too;
    # a declaration is present when its qualified name is.
    missing = [f"C++ {kind} {name} ({header}) has no entry" for name, kind, header in items
               if name not in documented]
    pages = {name for role, name in inventory if role == "std:doc"}
    for namespace in namespaces:
        page = "reference/generated/cpp/" + namespace.replace("::", "-")
        if page not in pages:
            missing.append(f"namespace {namespace} has no page ({page})")
    return missing


# ---- nothing fetched from the network when a page is opened

def external_resources(html_dir):
    """[(page, url)] of scripts, images, stylesheets and fonts a page would fetch."""
    pattern = re.compile(r'<(?:script|img|iframe)[^>]*\ssrc="(https?:)?//[^"]*"|'
                         r'<link[^>]*rel="(?:stylesheet|preload|icon)"[^>]*href="(https?:)?//[^"]*"|'
                         r'url\([\'"]?(https?:)?//[^)]*\)|@import\s+[\'"]https?:')
    found = []
    for base, _, names in os.walk(html_dir):
        for name in names:
            if name.endswith((".html", ".css")):
                path = os.path.join(base, name)
                for m in pattern.finditer(open(path, encoding="utf-8", errors="replace").read()):
                    found.append(f"{os.path.relpath(path, html_dir)} fetches {m.group(0)[:100]}")
    return found


# ---- main

def report(kind, total, missing):
    status = "ok" if not missing else f"{len(missing)} MISSING"
    print(f"check_reference: {kind}: {total} entries, {status}")
    for m in missing[:50]:
        print(f"  {m}")
    if len(missing) > 50:
        print(f"  ... and {len(missing) - 50} more")


def check(html, cli, xml_dir):
    inventory = load_inventory(html)
    failures = 0
    items = cli_items(cli)
    missing = cli_missing(items, inventory)
    report("CLI commands and flags", len(items), missing)
    failures += len(missing)
    names = setting_names()
    missing = settings_missing(names, inventory)
    report("settings", len(names), missing)
    failures += len(missing)
    py = python_items()
    missing = python_missing(py, inventory)
    report("Python names", len(py), missing)
    failures += len(missing)
    cpp, namespaces = cpp_items(xml_dir)
    missing = cpp_missing(cpp, namespaces, inventory)
    report(f"C++ declarations ({len(namespaces)} namespaces)", len(cpp), missing)
    failures += len(missing)
    fetched = external_resources(html)
    report("pages fetching from the network", 0, fetched)
    failures += len(fetched)
    return failures


def self_test():
    """The check must fail when an entry is taken away, for each kind."""
    inventory = {("std:label", "cli-train"), ("std:cmdoption", "flynn-train.--data"),
                 ("std:label", "setting-m"), ("py:class", "flynn.FlyNNClassifier"),
                 ("cpp:class", "flynn::FlyNN"), ("std:doc", "reference/generated/cpp/flynn")}
    items = [("flynn train", None), ("flynn train", "--data")]
    cpp = [("flynn::FlyNN", "class", "flynn/classifier.hpp")]
    namespaces = ["flynn"]
    py = [({"flynn.FlyNNClassifier"}, "flynn.FlyNNClassifier")]
    assert not cli_missing(items, inventory) and not settings_missing(["m"], inventory)
    assert not python_missing(py, inventory) and not cpp_missing(cpp, namespaces, inventory)
    for entry in sorted(inventory):
        less = inventory - {entry}
        found = (cli_missing(items, less) + settings_missing(["m"], less) + python_missing(py, less)
                 + cpp_missing(cpp, namespaces, less))
        assert found, f"removing {entry} went unnoticed"
    sample = ("Usage: flynn train [OPTIONS]\n\nOptions:\n  -h,--help  Print\n  --data TEXT REQUIRED  x\n"
              "  -q,--quiet  No progress\n\nHyper-parameters:\n  --m UINT  m\n\nSubcommands:\n"
              "  sub  A sub\n")
    assert parse_help(sample) == (["sub"], ["--data", "--quiet", "--m"]), parse_help(sample)
    assert external_resources.__doc__
    print(f"check_reference: self-test passed ({len(inventory)} removals noticed)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html")
    ap.add_argument("--cli")
    ap.add_argument("--doxygen-xml")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return 0
    if not (a.html and a.cli and a.doxygen_xml):
        ap.error("--html, --cli and --doxygen-xml are required")
    failures = check(a.html, a.cli, a.doxygen_xml)
    if failures:
        print(f"check_reference: {failures} entries missing from the reference", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
