"""The test folders have no __init__.py, so pytest imports test modules by basename: two files
with the same name in different folders break collection of the whole suite."""

import collections
import os


def test_test_module_basenames_are_unique():
    root = os.path.dirname(os.path.abspath(__file__))
    seen = collections.defaultdict(list)
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py") and f != "conftest.py":
                seen[f].append(os.path.relpath(os.path.join(d, f), root))
    dups = {k: v for k, v in seen.items() if len(v) > 1}
    assert not dups, f"test modules share a basename: {dups}"
