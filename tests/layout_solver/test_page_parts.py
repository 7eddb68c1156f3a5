"""layout_files encodes the page's data in JSON while the views' children work
(page.json_parts) and takes those texts for the size bound and index.html: the same page as
encoding the whole document at the end, the sweep and pictures dropped by the bound as before
(notes included), and a value replaced after json_parts encoded anew (the planted bug: a text
taken for another object would be caught)."""

from __future__ import annotations

import copy

import pytest

from layout_solver import page, tu_calc_subsampled
from layout_solver.page import (
    finish_layout_page_data,
    json_parts,
    json_text,
    layout_page_base,
    layout_page_data,
    offset_sweep,
    page_html,
)


def _doc(p):
    L = tu_calc_subsampled(p)
    views = list(range(p.scenario.fdm_layers))
    return layout_page_base(p, L, views, "summary <b>", [("framebuffer_v0", "(a) <x>")]), L, views


@pytest.mark.parametrize("soft", [None, 1000, 10])
def test_parts_give_the_same_page(plan_11_9, monkeypatch, soft):
    """The whole page, and the bound's drops (soft: the sweep dropped, then the pictures too)."""
    if soft is not None:
        monkeypatch.setattr(page, "_SOFT_BYTES", soft)
    sweep = offset_sweep(plan_11_9)
    pictures = [{"view": 0, "memory": "data:<x>", "error": "data:y"}]
    base, L, views = _doc(plan_11_9)
    parts = json_parts(base)
    parts["sweep"] = (sweep, json_text(sweep))
    got = page_html(finish_layout_page_data(base, plan_11_9, pictures, sweep=sweep, parts=parts), parts)
    want_doc = layout_page_data(plan_11_9, L, views, "summary <b>", copy.deepcopy(pictures),
                                sweep=copy.deepcopy(sweep), files=[("framebuffer_v0", "(a) <x>")])
    assert got == page_html(want_doc)
    if soft == 10:
        assert want_doc["pictures"] == [] and len(want_doc["notes"]) == 2


def test_a_replaced_value_is_encoded_anew(plan_11_9):
    base, _, _ = _doc(plan_11_9)
    parts = json_parts(base)
    base["summary"] = "another"
    assert page_html(base, parts) == page_html(base)
    # the planted bug: a text taken by key alone, whatever the value now is
    stale = {k: (base[k], text) for k, (_, text) in parts.items()}
    assert page_html(base, stale) != page_html(base)
