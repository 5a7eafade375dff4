"""Every ```python block of docs/guide/python.md runs, each in a fresh namespace."""
import re

import pytest

from conftest import REPO

DOC = REPO / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_doc_has_examples():
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index):
    code = BLOCKS[index]
    exec(compile(code, f"{DOC}:block{index + 1}", "exec"), {"__name__": "__doc_example__"})
