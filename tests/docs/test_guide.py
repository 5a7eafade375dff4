"""Runs the user guide's examples, so that the guide cannot go stale.

Every fenced ``sh`` and ``python`` block of docs/guide/*.md runs, in the order of its page,
in a working directory of its own per page: ``sh`` blocks with bash (``-euo pipefail``)
and the build's ``flynn`` first on PATH, ``python`` blocks in a fresh namespace of this
interpreter (the installed package). Blocks shown rather than run are fenced as ``text``
(synopses with placeholders, output); a block that cannot run here is preceded by
``<!-- docs-test: skip (REASON) -->``, and the reason must say why.

On small data: the guide's Fashion-MNIST (Debian's /usr/share/datasets/fashion-mnist) is
replaced by its first 2000 training and 500 test images, ``flynn reproduce`` runs with
``--quick``, and the gRPC examples' port 50051 by a free one.

Environment: FLYNN_CLI (the flynn to run; default build/flynn of the checkout).
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import gzip
import struct
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guide"
CLI = Path(os.environ.get("FLYNN_CLI", REPO / "build" / "flynn")).resolve()
FASHION = "/usr/share/datasets/fashion-mnist"
SHARED = (REPO / ".." / "shared").resolve()
BLOCK_TIMEOUT = 600

FENCE = re.compile(r"^```(\S*)\s*$")
SKIP = re.compile(r"^<!-- docs-test: skip \((.+)\) -->$")


def blocks(page):
    """[(line, language, code, skip reason or None)] of a page's fenced blocks."""
    out, lines, i = [], page.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and not lines[i].startswith("```{"):
            start, lang, body = i + 1, m.group(1), []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            prev = next((lines[j] for j in range(start - 2, -1, -1) if lines[j].strip()), "")
            skip = SKIP.match(prev)
            out.append((start, lang, "\n".join(body) + "\n", skip.group(1) if skip else None))
        elif lines[i].startswith("```{"):
            # a MyST directive (toctree, literalinclude): not code
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
        i += 1
    return out


PAGES = sorted(GUIDE.glob("*.md"))
RUN = [(page, line, lang, code) for page in PAGES for line, lang, code, skip in blocks(page)
       if lang in ("sh", "python") and skip is None]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def small(code, fixtures):
    """The block on small data (see the module's documentation)."""
    code = code.replace(FASHION, str(fixtures / "fashion-mnist"))
    code = code.replace("../shared/", str(SHARED) + "/")
    code = re.sub(r"(flynn reproduce \w+)", r"\1 --quick", code)
    return code.replace("127.0.0.1:50051", f"127.0.0.1:{free_port()}")


def idx_subset(src, dst, n):
    """The first n items of a gzipped IDX file, as a gzipped IDX file."""
    with gzip.open(src, "rb") as f:
        magic = f.read(4)
        dims = struct.unpack(">" + "I" * magic[3], f.read(4 * magic[3]))
        item = 1
        for d in dims[1:]:
            item *= d
        body = f.read(n * item)
    with gzip.open(dst, "wb", compresslevel=1) as f:
        f.write(magic + struct.pack(">" + "I" * len(dims), n, *dims[1:]) + body)


@pytest.fixture(scope="session")
def fixtures(tmp_path_factory):
    root = tmp_path_factory.mktemp("guide-data")
    fm = root / "fashion-mnist"
    fm.mkdir()
    for name, n in (("train-images-idx3-ubyte", 2000), ("train-labels-idx1-ubyte", 2000),
                    ("t10k-images-idx3-ubyte", 500), ("t10k-labels-idx1-ubyte", 500)):
        idx_subset(Path(FASHION) / f"{name}.gz", fm / f"{name}.gz", n)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "flynn").symlink_to(CLI)
    return root


@pytest.fixture(scope="session")
def workdirs(tmp_path_factory):
    made = {}

    def workdir(page):
        if page not in made:
            made[page] = tmp_path_factory.mktemp(page.stem)
        return made[page]
    return workdir


def test_the_guide_has_examples():
    assert len(RUN) >= 30, [(p.name, l) for p, l, _, _ in RUN]
    skipped = [(p.name, line, skip) for p in PAGES for line, _, _, skip in blocks(p) if skip]
    for page, line, reason in skipped:
        assert len(reason) > 10, f"{page}:{line}: a skipped block must say why"
    print(f"{len(RUN)} blocks run; {len(skipped)} skipped with their reasons:")
    for page, line, reason in skipped:
        print(f"  {page}:{line}: {reason}")


def test_the_cli_is_built():
    assert CLI.exists(), f"{CLI} does not exist: build it (scripts/build.sh) or set FLYNN_CLI"


@pytest.mark.parametrize("page,line,lang,code", RUN, ids=[f"{p.stem}:{l}" for p, l, _, _ in RUN])
def test_guide_example(page, line, lang, code, fixtures, workdirs, monkeypatch):
    cwd = workdirs(page)
    code = small(code, fixtures)
    if lang == "sh":
        env = dict(os.environ, PATH=f"{fixtures / 'bin'}:{os.environ['PATH']}",
                   OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
        assert run.returncode == 0, (f"{page.name}:{line} exited {run.returncode}\n--- block\n{code}"
                                     f"--- stdout\n{run.stdout[-3000:]}--- stderr\n{run.stderr[-3000:]}")
    else:
        monkeypatch.chdir(cwd)
        exec(compile(code, f"{page}:{line}", "exec"), {"__name__": "__guide_example__"})


def test_readme_mpirun_example_runs_as_written(fixtures, tmp_path):
    """README's mpirun line, as written: no OMPI_* variables (this may run as root on a machine
    with fewer cores than ranks, so the flags that allow it must be in the command)."""
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun")
    text = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, l in enumerate(text) if l.startswith("mpirun "))
    command = text[start]
    while command.split("#")[0].rstrip().endswith("\\"):
        start += 1
        command += "\n" + text[start]
    digits = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
    lines = gzip.open(digits, "rt").read().splitlines(keepends=True)
    for r in range(3):
        (tmp_path / f"shard_{r}.csv").write_text("".join(lines[r::3]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_")}
    env["PATH"] = f"{fixtures / 'bin'}:{env['PATH']}"
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{command}\n--- stderr\n{run.stderr[-3000:]}"
    assert (tmp_path / "model.flynn").exists()
