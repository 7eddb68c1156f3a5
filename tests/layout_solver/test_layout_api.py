"""The public API of ``layout_solver``: what ``__all__`` promises exists, importing the package
loads only the models (not the pictures, reports or the command line), the reconstruction
package re-exports its names, and string options are refused with one ScenarioError line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import layout_solver
import layout_solver.reconstruct as reconstruct
from layout_solver import options, tu_calc_subsampled
from layout_solver.solver import solver_bin_offsets
from turnip_base.errors import ScenarioError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("module", [layout_solver, reconstruct])
def test_all_names_exist(module):
    assert module.__all__ and sorted(set(module.__all__)) == sorted(module.__all__)
    assert [n for n in module.__all__ if not hasattr(module, n)] == []


def test_import_loads_no_presentation_module():
    code = ("import sys, layout_solver\n"
            "bad = [m for m in sys.modules if m.startswith('layout_solver.') and m.split('.')[-1] in "
            "('pictures', 'report', 'draw', 'cli')]\n"
            "print(','.join(bad))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                       env=dict(os.environ, PYTHONPATH=REPO), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


def test_option_literals_and_their_validation():
    assert options.APRON_REVISIONS == ("newest", "older")
    assert options.OFFSET_MODES == ("null", "real")
    assert options.FILTERS == ("nearest", "linear")
    assert options.ADDRESSING == ("clamp_to_edge", "clamp_to_border")
    assert reconstruct.FILTERS is options.FILTERS and reconstruct.ADDRESSING is options.ADDRESSING
    for check, field in ((options.as_apron_revision, "revision"),
                         (options.as_offsets_mode, "offsets_under_shared_viewport"),
                         (options.as_filter, "filter"), (options.as_addressing, "addressing")):
        with pytest.raises(ScenarioError) as e:
            check("bogus")
        assert e.value.field == field and "\n" not in str(e.value)
        with pytest.raises(ScenarioError):
            check(None)


def test_bad_offsets_mode_is_refused(make_plan):
    p = make_plan(constant=0.5)
    with pytest.raises(ScenarioError, match="^offsets_under_shared_viewport: must be one of null, real"):
        tu_calc_subsampled(p, offsets_under_shared_viewport="sometimes")
    with pytest.raises(ScenarioError):
        solver_bin_offsets(p, "NULL")
