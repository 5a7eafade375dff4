#!/usr/bin/env python3
"""The product names what it is, not the history of its making.

Greps, case-insensitively, for a work history's vocabulary ("Twelfth round", "issue 13",
"probe", "last round", "since issue", "before the fix") in what a user reads:

* README.md and the documentation (docs/: the guide, the design pages, the reference's
  sources; research/ is the place for the history and is not read);
* the ``--help`` of every command of the CLI (walked from ``flynn --help``);
* every docstring of the Python package (python/flynn/*.py, read with ``ast``) and every
  string literal of the extension module's sources (python/src/*.cpp: its docstrings and
  messages);
* the installed headers (include/).

Usage (CTest runs it; so does the docs stage of scripts/test.sh):

    check_product_names.py --cli build/flynn [--root .]
    check_product_names.py --self-test
"""
import argparse
import ast
import os
import re
import subprocess
import sys

# The acceptance pattern, and the rest of the history's vocabulary.
ROUNDS = (r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
          r"thirteenth|fourteenth|fifteenth|sixteenth) round|issue [0-9]+")
HISTORY = re.compile(ROUNDS + r"|\bprobes?\b|\blast round\b|\bsince issue\b|\bbefore the fix\b", re.I)


def findings(text, where):
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in HISTORY.finditer(line):
            out.append(f"{where}:{n}: '{m.group(0)}' in: {line.strip()[:160]}")
    return out


def documentation_files(root):
    files = [os.path.join(root, "README.md")]
    for base, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs[:] = [d for d in dirs if d != "generated"]
        files += [os.path.join(base, n) for n in names if n.endswith((".md", ".rst", ".py", ".txt"))]
    return sorted(files)


def header_files(root):
    out = []
    for base, _, names in os.walk(os.path.join(root, "include")):
        out += [os.path.join(base, n) for n in names]
    return sorted(out)


def help_pages(cli):
    """{command: its --help text} for every command, walked from the top."""
    pages, todo = {}, [[]]
    while todo:
        path = todo.pop(0)
        run = subprocess.run([cli, *path, "--help"], capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            raise SystemExit(f"check_product_names: {' '.join([cli, *path])} --help failed")
        pages[" ".join(["flynn", *path])] = run.stdout
        section = None
        for line in run.stdout.splitlines():
            if re.match(r"^\S.*:$", line):
                section = line[:-1]
            elif section == "Subcommands" and re.match(r"^  \S", line):
                todo.append(path + [line.split()[0]])
    return pages


def python_docstrings(root):
    """[(where, docstring)] of every module, class and function of python/flynn."""
    out = []
    pkg = os.path.join(root, "python", "flynn")
    for name in sorted(os.listdir(pkg)):
        if not name.endswith(".py"):
            continue
        path = os.path.join(pkg, name)
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in [tree, *ast.walk(tree)]:
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    label = getattr(node, "name", "<module>")
                    out.append((f"{path} ({label})", doc))
    return out


def extension_strings(root):
    """[(where, text)] of the string literals of python/src (docstrings and messages)."""
    out = []
    src = os.path.join(root, "python", "src")
    for name in sorted(os.listdir(src)):
        if name.endswith((".cpp", ".hpp")):
            path = os.path.join(src, name)
            text = open(path, encoding="utf-8").read()
            for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
                line = text.count("\n", 0, m.start()) + 1
                out.append((f"{path}:{line}", m.group(1)))
    return out


def check(root, cli):
    found, counts = [], {}
    files = documentation_files(root)
    for path in files:
        found += findings(open(path, encoding="utf-8").read(), os.path.relpath(path, root))
    counts["README and docs files"] = len(files)
    pages = help_pages(cli)
    for command, text in pages.items():
        found += findings(text, f"`{command} --help`")
    counts["--help pages"] = len(pages)
    docs = python_docstrings(root)
    for where, doc in docs:
        found += findings(doc, os.path.relpath(where, root))
    counts["Python docstrings"] = len(docs)
    strings = extension_strings(root)
    for where, text in strings:
        found += findings(text, os.path.relpath(where, root))
    counts["extension-module strings"] = len(strings)
    headers = header_files(root)
    for path in headers:
        found += findings(open(path, encoding="utf-8").read(), os.path.relpath(path, root))
    counts["headers"] = len(headers)
    return found, counts


def self_test():
    assert findings("chosen in the Twelfth round (issue 20)", "x") and findings("a probe of", "x")
    assert findings("as ISSUE 13 said", "x") and findings("since issue 4", "x")
    assert not findings("rounded to float32; round-robin; nprobe; a masking round", "x")
    print("check_product_names: self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    self_test()
    if a.self_test:
        return 0
    if not a.cli:
        ap.error("--cli is required")
    found, counts = check(os.path.normpath(a.root), a.cli)
    print("check_product_names: read " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    for f in found:
        print("  " + f)
    if found:
        print(f"check_product_names: {len(found)} history names in the product", file=sys.stderr)
        return 1
    print("check_product_names: no history names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
