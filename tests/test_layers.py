"""The import layers of the project, checked over the import graph of the source: every
``import`` statement, module level or inside a function, and every dynamic import
(``importlib.import_module`` / ``__import__``), which must name its module with a literal string:

* ``turnip_base`` (errors, options, the Vulkan harness) imports no other project package;
* ``fdm`` imports only ``turnip_base``'s error contract, options and output writer;
* ``layout_solver`` imports only those and ``fdm``;
* ``mipmap`` imports only ``turnip_base`` (never ``fdm`` or ``vk_tests``);
* ``turnip_box`` (the oracle: Mesa's turnip in the box) imports only ``turnip_base`` and the models;
* ``vk_tests`` imports ``turnip_base``, the models and ``turnip_box``, never the
  shell; inside it every module sits in one job layer (:data:`VK_LAYERS`): the suite machinery,
  the graphics layer, the scene builders and spec formulas import no other part of the suite; a
  backend imports those (``fdm`` and ``fsr`` also ``replay``, whose scheme and oracle they
  reuse; the box device the ``fdm`` backend, whose cases it runs); only the registry lists the
  backends, only command lines (``vk_tests.cli``, a
  backend's ``cli``) import the registry;
* renderings and command lines (modules named ``report``, ``pictures``, ``draw``, ``page``,
  ``diff``, ``cli``) sit above the models: no model module imports one;
* only ``turnip_base.harness``, ``turnip_box.record`` (the box's recorder), ``vk_tests`` and the
  ``gpu`` modules import ``vulkan``;
* nothing imports ``turnip_fdm``, and ``turnip_fdm`` reaches every other package;
* no two modules import each other, directly or round a longer cycle (a package's
  ``__init__`` re-exporting its own modules is not a dependency);
* no module is a ``_more``-style overflow of another (``*_more``, ``*_extra``, ``*_misc``).

``./dev lint`` and the suite run this file; ``test_checker_catches_planted_violations`` shows
each rule can fail.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("turnip_base", "fdm", "layout_solver", "mipmap", "turnip_box", "vk_tests", "turnip_fdm")
PRESENTATION = {"report", "pictures", "draw", "cli", "page", "diff"}
#: what each package may import from the other project packages (prefix match)
ALLOWED: dict[str, tuple[str, ...]] = {
    "turnip_base": (),
    "fdm": ("turnip_base.errors", "turnip_base.options", "turnip_base.outputs"),
    "layout_solver": ("turnip_base.errors", "turnip_base.options", "turnip_base.outputs", "fdm"),
    "mipmap": ("turnip_base",),
    "turnip_box": ("turnip_base", "fdm", "layout_solver"),
    "vk_tests": ("turnip_base", "fdm", "layout_solver", "turnip_box"),
    "turnip_fdm": ("turnip_base", "fdm", "layout_solver", "mipmap", "turnip_box", "vk_tests"),
}
_BASE = ("vk_tests.suite", "vk_tests.graphics", "vk_tests.scenes", "vk_tests.spec")
#: the job layers of vk_tests: each part and the other parts of the suite it may import
VK_LAYERS: dict[str, tuple[str, ...]] = {
    "vk_tests.suite": (),
    "vk_tests.graphics": (),
    "vk_tests.scenes": (),
    "vk_tests.spec": (),
    "vk_tests.build_spirv": (),
    "vk_tests.host": ("vk_tests.suite", "vk_tests.spec"),
    "vk_tests.replay": _BASE,
    "vk_tests.fdm": (*_BASE, "vk_tests.replay"),
    "vk_tests.fsr": (*_BASE, "vk_tests.replay"),
    # the box device runs the fdm backend's cases in its worker (it looks them up in that backend)
    "vk_tests.box": (*_BASE, "vk_tests.fdm"),
    "vk_tests.registry": ("vk_tests.suite", "vk_tests.host", "vk_tests.replay", "vk_tests.fdm", "vk_tests.fsr"),
    "vk_tests.cli": ("vk_tests.suite", "vk_tests.registry", "vk_tests.box"),
}
#: the Vulkan layers outside vk_tests: the harness, and the box's recorder (which runs inside the
#: box, on turnip, and brings its device up through the harness)
VULKAN_MODULES = ("turnip_base.harness", "turnip_box.record")
#: names of modules that are the overflow of another rather than a job of their own
OVERFLOW = re.compile(r"_(more|extra|misc)$")

Edge = tuple[str, str]  # (importing module, imported module)
DYNAMIC = "<computed>"  # the imported name of a dynamic import whose module is not a literal string


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_pkg: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    base = base[: len(base) - level + (1 if is_pkg else 0)]
    return ".".join(base + ([name] if name else []))


def _dynamic(node: ast.Call, module: str, is_pkg: bool) -> str | None:
    """The module a call to ``importlib.import_module`` / ``import_module`` / ``__import__``
    imports: its literal name (relative names resolved against ``__package__`` or a literal
    package), :data:`DYNAMIC` when the name is computed, None for any other call."""
    f = node.func
    called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if called not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return DYNAMIC
    name = arg.value
    if called == "import_module" and name.startswith("."):
        level = len(name) - len(name.lstrip("."))
        pkg = node.args[1] if len(node.args) > 1 else None
        if isinstance(pkg, ast.Constant) and isinstance(pkg.value, str):
            return ".".join([*pkg.value.split(".")[: len(pkg.value.split(".")) - level + 1], name.lstrip(".")])
        if isinstance(pkg, ast.Name) and pkg.id == "__package__":
            return _resolve(module, is_pkg, level, name.lstrip(".") or None)
        return DYNAMIC
    return name


def imports_of(module: str, path: Path) -> Iterator[str]:
    """Absolute names imported by one source file (relative imports resolved, dynamic imports
    included)."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            prefix = _resolve(module, is_pkg, node.level, node.module) if node.level else node.module or ""
            yield prefix
            for a in node.names:
                yield f"{prefix}.{a.name}"
        elif isinstance(node, ast.Call):
            target = _dynamic(node, module, is_pkg)
            if target is not None:
                yield target


def project_modules(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    return {module_name(root, p): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> list[Edge]:
    edges = []
    for mod, path in project_modules(root, packages).items():
        edges += [(mod, imp) for imp in imports_of(mod, path)]
    return edges


def _top(name: str) -> str:
    return name.split(".")[0]


def _is_presentation(name: str) -> bool:
    return name.split(".")[-1] in PRESENTATION


def _under(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _vk_part(name: str) -> str | None:
    """The job layer of a vk_tests module (the longest key of :data:`VK_LAYERS` it is under)."""
    hits = [k for k in VK_LAYERS if _under(name, [k])]
    return max(hits, key=len) if hits else None


def violations(edges: list[Edge], packages: Iterable[str] = PACKAGES) -> list[str]:
    """Every broken rule, as ``importer -> imported: rule``."""
    pkgs = set(packages)
    out = []
    for src, dst in edges:
        s, d = _top(src), _top(dst)
        if dst == DYNAMIC:
            out.append(f"{src} -> {dst}: a dynamic import names its module with a literal string")
            continue
        if d == "vulkan" and s != "vk_tests" and src.split(".")[-1] != "gpu" and src not in VULKAN_MODULES:
            out.append(f"{src} -> {dst}: only turnip_base.harness, turnip_box.record, vk_tests and the gpu modules "
                       "import vulkan")
        if d == s == "vk_tests" and src != "vk_tests":
            part, other = _vk_part(src), _vk_part(dst)
            if part is None:
                out.append(f"{src} -> {dst}: {src} is in no job layer of vk_tests (VK_LAYERS)")
            elif other is not None and other != part and not _under(other, VK_LAYERS[part]) \
                    and not (_is_presentation(src) and _under(other, VK_LAYERS["vk_tests.cli"])):
                allowed = ", ".join(VK_LAYERS[part]) or "no other part of the suite"
                out.append(f"{src} -> {dst}: {part} may import only {allowed}")
        if d not in pkgs or d == s:
            if d == s and _is_presentation(dst) and not _is_presentation(src) and s != "turnip_fdm" \
                    and src != s:  # a package's __init__ may re-export; model modules may not
                out.append(f"{src} -> {dst}: models do not import renderings or command lines")
            continue
        if d == "turnip_fdm":
            out.append(f"{src} -> {dst}: nothing imports the command-line shell")
            continue
        if not _under(dst, ALLOWED.get(s, ())) and not any(dst == p.rsplit(".", 1)[0] for p in ALLOWED.get(s, ())):
            out.append(f"{src} -> {dst}: {s} may import only {', '.join(ALLOWED.get(s, ())) or 'no other package'}")
        elif _is_presentation(dst) and not _is_presentation(src) and s != "turnip_fdm":
            out.append(f"{src} -> {dst}: models do not import renderings or command lines")
    return sorted(set(out))


def module_edges(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the project modules it imports (an imported name that is no module stands for
    the module defining it); a package's ``__init__`` importing its own modules (a re-export) is
    left out."""
    mods = project_modules(root, packages)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for src, dst in import_graph(root, packages):
        target = dst if dst in mods else dst.rsplit(".", 1)[0] if dst.rsplit(".", 1)[0] in mods else None
        if target is None or target == src:
            continue
        if mods[src].name == "__init__.py" and target.startswith(src + "."):
            continue
        graph[src].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def overflow_modules(root: Path, packages: Iterable[str] = PACKAGES) -> list[str]:
    return sorted(m for m in project_modules(root, packages) if OVERFLOW.search(m.split(".")[-1]))


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


def test_no_import_cycle() -> None:
    found = cycles(module_edges(ROOT))
    assert not found, "modules importing each other:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_overflow_modules() -> None:
    assert overflow_modules(ROOT) == []


def test_shell_reaches_every_package() -> None:
    assert reached_packages(import_graph(ROOT), "turnip_fdm") == set(PACKAGES)


def test_fdm_never_names_layout_solver() -> None:
    # the acceptance check of the house issue, as grep would do it
    for path in (ROOT / "fdm").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import layout_solver" not in text and "from layout_solver" not in text, path


def test_mipmap_never_names_fdm_or_vk_tests() -> None:
    # issue 16's acceptance check, as grep would do it
    for path in (ROOT / "mipmap").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for other in ("fdm", "vk_tests"):
            assert f"import {other}" not in text and f"from {other}" not in text, path


#: a tree without violations: every package, a module or two of each layer
CLEAN_TREE = {
    "turnip_base/errors.py": "", "turnip_base/harness.py": "import vulkan\nfrom .errors import E\n",
    "fdm/turnip.py": "from turnip_base.errors import ScenarioError\n", "fdm/plan.py": "from .turnip import x\n",
    "fdm/cli.py": "from .report import z\n", "fdm/report.py": "",
    "layout_solver/solver.py": "from fdm.plan import y\n", "layout_solver/report.py": "",
    "layout_solver/metadata.py": "",
    "mipmap/reference.py": "from turnip_base.errors import ScenarioError\n",
    "mipmap/gpu.py": "import turnip_base.harness\nimport vulkan\n",
    "vk_tests/suite/__init__.py": "", "vk_tests/suite/cases.py": "", "vk_tests/suite/runner.py":
        "from turnip_base.harness import open_device\nfrom .cases import Case\n",
    "vk_tests/graphics/__init__.py": "", "vk_tests/graphics/targets.py": "from turnip_base.harness import Vulkan\n",
    "vk_tests/scenes.py": "",
    "vk_tests/replay/__init__.py": "from . import scene\n", "vk_tests/replay/scene.py": "import fdm\n",
    "vk_tests/replay/render.py": "from ..graphics.targets import t\nfrom .scene import s\n",
    "vk_tests/replay/cases.py": "from ..scenes import b\nfrom ..suite.cases import Case\nfrom .render import r\n",
    "vk_tests/fdm/__init__.py": "", "vk_tests/fdm/render.py": "from ..replay.render import r\n",
    "vk_tests/fdm/cases.py": "import importlib\nfrom .render import run\nimportlib.import_module('.scene', "
                             "'vk_tests.replay')\n",
    "vk_tests/registry.py": "from .fdm import cases as fc\nfrom .replay import cases as rc\n",
    "vk_tests/cli.py": "from .suite import runner\n\ndef f():\n    from . import registry\n",
    "turnip_fdm/cli.py": "from fdm import cli\nfrom vk_tests import cli as v\nimport mipmap.gpu\n",
}

PLANTED = [
    ("fdm/turnip.py", "from layout_solver import solver\n", "fdm may import only turnip_base.errors"),
    ("fdm/plan.py", "import mipmap.reference\n", "fdm may import only"),
    ("fdm/plan.py", "from turnip_base import harness\n", "fdm may import only"),
    ("fdm/plan.py", "__import__('layout_solver.solver')\n", "fdm may import only"),
    ("layout_solver/solver.py", "def f():\n    from mipmap import reference\n", "layout_solver may import only"),
    ("layout_solver/solver.py", "import importlib\nM = importlib.import_module('mipmap.reference')\n",
     "layout_solver may import only"),
    ("layout_solver/solver.py", "from .report import write\n", "models do not import renderings"),
    ("fdm/plan.py", "from .cli import main\n", "models do not import renderings"),
    ("mipmap/reference.py", "import vk_tests.suite.runner\n", "mipmap may import only turnip_base"),
    ("mipmap/reference.py", "from fdm.scenario import Scenario\n", "mipmap may import only turnip_base"),
    ("mipmap/reference.py", "import vulkan\n", "import vulkan"),
    ("turnip_base/errors.py", "import fdm\n", "turnip_base may import only no other package"),
    ("layout_solver/metadata.py", "import turnip_fdm.cli\n", "nothing imports the command-line shell"),
    ("vk_tests/suite/runner.py", "from ..replay import cases\n", "vk_tests.suite may import only no other part"),
    ("vk_tests/graphics/targets.py", "from ..scenes import b\n", "vk_tests.graphics may import only"),
    ("vk_tests/replay/render.py", "from ..fdm.render import z\n", "vk_tests.replay may import only"),
    ("vk_tests/replay/cases.py", "import importlib\nfor m in ('depth',):\n    importlib.import_module(f'.{m}', "
                                 "__package__)\n", "a dynamic import names its module with a literal string"),
    ("vk_tests/replay/cases.py", "import importlib\nimportlib.import_module('..fdm.render', __package__)\n",
     "vk_tests.replay may import only"),
    ("vk_tests/newthing.py", "from .suite import cases\n", "is in no job layer of vk_tests"),
    ("vk_tests/fdm/render.py", "from .. import registry\n", "vk_tests.fdm may import only"),
]

#: (file, line appended, the modules that then form a cycle)
PLANTED_CYCLES = [
    ("vk_tests/replay/scene.py", "from . import render\n", ["vk_tests.replay.render", "vk_tests.replay.scene"]),
    ("vk_tests/fdm/render.py", "def f():\n    from .cases import g\n", ["vk_tests.fdm.cases", "vk_tests.fdm.render"]),
    ("vk_tests/fdm/render.py", "import importlib\nC = importlib.import_module('vk_tests.fdm.cases')\n",
     ["vk_tests.fdm.cases", "vk_tests.fdm.render"]),
    ("fdm/turnip.py", "from fdm import plan\n", ["fdm.plan", "fdm.turnip"]),
]


def _plant_tree(root: Path) -> None:
    for pkg in PACKAGES:
        (root / pkg).mkdir()
        (root / pkg / "__init__.py").write_text("")
    for rel, text in CLEAN_TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_clean_tree_is_clean(tmp_path: Path) -> None:
    _plant_tree(tmp_path)
    assert violations(import_graph(tmp_path)) == []
    assert cycles(module_edges(tmp_path)) == []
    assert overflow_modules(tmp_path) == []


@pytest.mark.parametrize(("path", "line", "rule"), PLANTED)
def test_checker_catches_planted_violations(tmp_path: Path, path: str, line: str, rule: str) -> None:
    _plant_tree(tmp_path)
    with open(tmp_path / path, "a") as f:
        f.write(line)
    found = violations(import_graph(tmp_path))
    assert any(rule in v for v in found), found


@pytest.mark.parametrize(("path", "line", "cycle"), PLANTED_CYCLES)
def test_checker_catches_planted_cycles(tmp_path: Path, path: str, line: str, cycle: list[str]) -> None:
    _plant_tree(tmp_path)
    with open(tmp_path / path, "a") as f:
        f.write(line)
    assert cycle in cycles(module_edges(tmp_path))


def test_checker_catches_an_overflow_module(tmp_path: Path) -> None:
    _plant_tree(tmp_path)
    (tmp_path / "vk_tests" / "fdm" / "render_more.py").write_text("from .render import r\n")
    assert overflow_modules(tmp_path) == ["vk_tests.fdm.render_more"]
