"""The import layers of the project, checked over the import graph of the source (every
``import`` statement, module level or inside a function):

* ``fdm`` imports no other project package;
* ``layout_solver`` imports only ``fdm``;
* ``mipmap`` imports only ``fdm.errors`` / ``fdm.options`` (the error contract), and only its
  ``gpu`` and ``cli`` modules reach ``vk_tests``;
* ``vk_tests`` imports the models (``fdm``, ``layout_solver``), never the shell;
* renderings and command lines (modules named ``report``, ``pictures``, ``draw``, ``page``, ``diff``, ``cli``) sit
  above the models: no model module imports one;
* only ``vk_tests`` and the ``gpu`` modules import ``vulkan``;
* nothing imports ``turnip_fdm``, and ``turnip_fdm`` reaches every other package.

``./dev lint`` and the suite run this file; ``test_checker_catches_planted_violations`` shows
each rule can fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("fdm", "layout_solver", "mipmap", "vk_tests", "turnip_fdm")
PRESENTATION = {"report", "pictures", "draw", "cli", "page", "diff"}
#: what each package may import from the other project packages (prefix match)
ALLOWED: dict[str, tuple[str, ...]] = {
    "fdm": (),
    "layout_solver": ("fdm",),
    "mipmap": ("fdm.errors", "fdm.options"),
    "vk_tests": ("fdm", "layout_solver"),
    "turnip_fdm": ("fdm", "layout_solver", "mipmap", "vk_tests"),
}
#: modules beyond the package rule that may import vk_tests (the GPU runner and its command)
MAY_IMPORT_VK_TESTS = ("mipmap.gpu", "mipmap.cli")

Edge = tuple[str, str]  # (importing module, imported module)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(module: str, path: Path) -> Iterator[str]:
    """Absolute names imported by one source file (relative imports resolved)."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            yield prefix
            for a in node.names:
                yield f"{prefix}.{a.name}"


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> list[Edge]:
    edges = []
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            mod = module_name(root, path)
            edges += [(mod, imp) for imp in imports_of(mod, path)]
    return edges


def _top(name: str) -> str:
    return name.split(".")[0]


def _is_presentation(name: str) -> bool:
    return name.split(".")[-1] in PRESENTATION


def _under(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def violations(edges: list[Edge], packages: Iterable[str] = PACKAGES) -> list[str]:
    """Every broken rule, as ``importer -> imported: rule``."""
    pkgs = set(packages)
    out = []
    for src, dst in edges:
        s, d = _top(src), _top(dst)
        if d == "vulkan" and s != "vk_tests" and src.split(".")[-1] != "gpu":
            out.append(f"{src} -> {dst}: only vk_tests and the gpu modules import vulkan")
        if d not in pkgs or d == s:
            if d == s and _is_presentation(dst) and not _is_presentation(src) and s != "turnip_fdm" \
                    and src != s:  # a package's __init__ may re-export; model modules may not
                out.append(f"{src} -> {dst}: models do not import renderings or command lines")
            continue
        if d == "turnip_fdm":
            out.append(f"{src} -> {dst}: nothing imports the command-line shell")
            continue
        if d == "vk_tests" and _under(src, MAY_IMPORT_VK_TESTS):
            continue
        if not _under(dst, ALLOWED.get(s, ())) and not any(dst == p.rsplit(".", 1)[0] for p in ALLOWED.get(s, ())):
            out.append(f"{src} -> {dst}: {s} may import only {', '.join(ALLOWED.get(s, ())) or 'no other package'}")
        elif _is_presentation(dst) and not _is_presentation(src) and s != "turnip_fdm":
            out.append(f"{src} -> {dst}: models do not import renderings or command lines")
    return sorted(set(out))


def reached_packages(edges: list[Edge], start: str) -> set[str]:
    """Project packages reachable from ``start`` through imports (module granularity)."""
    by_src: dict[str, set[str]] = {}
    for s, d in edges:
        by_src.setdefault(s, set()).add(d)
    seen, todo = set(), [m for m in by_src if _top(m) == start]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for d in by_src.get(m, ()):
            # an imported name may be a module or an attribute of one: follow both
            todo += [d, d.rsplit(".", 1)[0]]
    return {_top(m) for m in seen if _top(m) in PACKAGES}


def test_project_layers() -> None:
    bad = violations(import_graph(ROOT))
    assert not bad, "import layers broken:\n" + "\n".join(bad)


def test_shell_reaches_every_package() -> None:
    assert reached_packages(import_graph(ROOT), "turnip_fdm") == set(PACKAGES)


def test_fdm_never_names_layout_solver() -> None:
    # the acceptance check of the house issue, as grep would do it
    for path in (ROOT / "fdm").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import layout_solver" not in text and "from layout_solver" not in text, path


PLANTED = [
    ("fdm/turnip.py", "from layout_solver import solver\n", "fdm may import only no other package"),
    ("fdm/plan.py", "import mipmap.reference\n", "fdm may import only"),
    ("layout_solver/solver.py", "def f():\n    from mipmap import reference\n", "layout_solver may import only fdm"),
    ("layout_solver/solver.py", "from .report import write\n", "models do not import renderings"),
    ("fdm/plan.py", "from .cli import main\n", "models do not import renderings"),
    ("mipmap/reference.py", "import vk_tests.harness\n", "mipmap may import only"),
    ("mipmap/reference.py", "import vulkan\n", "only vk_tests and the gpu modules import vulkan"),
    ("layout_solver/metadata.py", "import turnip_fdm.cli\n", "nothing imports the command-line shell"),
]


@pytest.mark.parametrize(("path", "line", "rule"), PLANTED)
def test_checker_catches_planted_violations(tmp_path: Path, path: str, line: str, rule: str) -> None:
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    for rel, text in [("fdm/turnip.py", ""), ("fdm/plan.py", "from .turnip import x\n"),
                      ("layout_solver/solver.py", "from fdm.plan import y\n"), ("layout_solver/report.py", ""),
                      ("layout_solver/metadata.py", ""), ("fdm/cli.py", "from .report import z\n"),
                      ("fdm/report.py", ""), ("mipmap/reference.py", "from fdm.errors import ScenarioError\n"),
                      ("mipmap/gpu.py", "import vk_tests.harness\n"), ("vk_tests/harness.py", "import vulkan\n")]:
        (tmp_path / rel).write_text(text)
    assert violations(import_graph(tmp_path)) == []
    with open(tmp_path / path, "a") as f:
        f.write(line)
    found = violations(import_graph(tmp_path))
    assert any(rule in v for v in found), found
