"""A scenario as the Vulkan work the box records: the translation, and what it cannot say.

:func:`job_of` turns a parsed :class:`fdm.Scenario` into the JSON record
:mod:`turnip_box.record` builds its render pass from, or raises :class:`Unrecordable` naming
what stops it (a GPU the shim does not open, a fork's variant, a custom resolve
without a single-sampled colour attachment to read).
:func:`model_scenario` is the scenario the model plans for the comparison: the same pass with the
scenario's ``gpu`` replaced by the one asked for, a fixed ``tile_size`` dropped (turnip picks
its own; the model then follows its selection rule) and the model's reading of the box's Mesa
release (``--mesa``: :data:`fdm.variants.MESA_READINGS`) under the scenario's own ``[driver]``
variants.

Choices the scenario leaves open, fixed here (``docs/box.md``):

* the last attachment is the depth attachment unless ``depth_load_op = "none"`` (the schema's
  "colour + depth" default); colour formats by bytes per texel: 1 ``R8_UNORM``, 2 ``R8G8_UNORM``,
  4 ``R8G8B8A8_UNORM``, 8 ``R16G16B16A16_SFLOAT``, 16 ``R32G32B32A32_SFLOAT``; depth 1
  ``S8_UINT`` (no depth format has 1 byte: a stencil-only attachment, its stencil ops the
  scenario's depth ops, a stencil test that always passes and writes instead of the depth test),
  2 ``D16_UNORM``, 4 ``D32_SFLOAT``;
* turnip 26.2 has the FDM format feature on ``R16G16_SFLOAT`` and ``R32G32_SFLOAT`` only: a
  scenario stored as ``R8G8_UNORM`` is recorded as ``R32G32_SFLOAT`` holding the float32 values
  the driver would have read from the bytes (``byte * (1.0f / 255)``), so every quantity after
  the read is compared unchanged;
* one full-screen triangle per draw, a pipeline whose fragment shader reads ``gl_FragCoord``,
  depth test ``LESS`` with writes when there is depth; viewports and scissors as dynamic state
  (``static_viewport``: baked into the pipeline).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from fdm.density import unpack_density
from fdm.scenario import Scenario
from fdm.variants import SUBSAMPLED_ONLY, mesa_reading, with_reading

#: the GPU ids Mesa's freedreno noop shim opens (``FD_GPU_ID``) for the profiles the model has
SHIM_GPU_IDS = {"a618": 618, "a630": 630, "a660": 660, "a730": 730, "a740": 740, "a750": 750, "a810": 810, "a830": 830}
#: the GPUs whose streams the box decodes (turnip_box.registers.table: a6xx/a7xx and a8xx offsets)
DECODED_CHIPS = (6, 7, 8)
COLOUR_FORMATS = {1: 9, 2: 16, 4: 37, 8: 97, 16: 109}     # VkFormat by bytes per texel
DEPTH_FORMATS = {1: 127, 2: 124, 4: 126}                  # S8_UINT (stencil only), D16_UNORM, D32_SFLOAT


class Unrecordable(Exception):
    """The box cannot record this scenario as Mesa's turnip would see it (the text says why)."""


def model_scenario(sc: Scenario, gpu: str | None = None, mesa: str | None = None) -> Scenario:
    """The scenario both sides run: ``gpu`` if given, no fixed tile size, and the model's reading
    of Mesa ``mesa`` (:func:`fdm.variants.mesa_reading`; None: upstream) for every ``[driver]``
    function the scenario leaves upstream (:func:`fdm.variants.with_reading`)."""
    from fdm.gpu import get_gpu

    return attrs.evolve(sc, gpu=get_gpu(gpu) if gpu else sc.gpu, tile_size=None,
                        driver=with_reading(sc.driver, mesa_reading(mesa)))


def tu_debug_of(sc: Scenario) -> tuple[str, ...]:
    """The ``TU_DEBUG`` flags the recording process needs (one process per GPU and flag set)."""
    flags: list[str] = list(sc.tu_debug)
    if sc.bin_merging == "off":
        flags.append("nobinmerging")
    return tuple(sorted(set(flags)))


def _attachments(sc: Scenario) -> list[dict[str, Any]]:
    out = []
    n = len(sc.attachments)
    for i, a in enumerate(sc.attachments):
        depth = sc.depth_load_op != "none" and i == n - 1
        table = DEPTH_FORMATS if depth else COLOUR_FORMATS
        if a.cpp not in table:
            kind = "depth" if depth else "colour"
            raise Unrecordable(f"attachments[{i}]: no {kind} format with {a.cpp} bytes per texel "
                               f"(known: {sorted(table)})")
        load = sc.depth_load_op if depth else a.load_op
        out.append({"kind": "depth" if depth else "color", "format": table[a.cpp], "samples": a.samples,
                    "load_op": load, "store_op": a.store_op,
                    "resolve": a.resolve,
                    # VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT on this attachment's image
                    "subsampled": a.subsampled})
    return out


def _density(sc: Scenario) -> dict[str, Any]:
    dm = sc.density
    w, h = dm.size
    # the image holds density.image_layers layers, else one per FDM layer (a shared entry replicated)
    n = dm.image_layers or max(len(dm.layers), sc.fdm_layers if sc.views > 1 or sc.fdm_per_layer else 1)
    layers = []
    for v in range(n):
        src = np.asarray(dm.layers[min(v, len(dm.layers) - 1)])[:h, :w, :2]
        # a map holds few distinct texels: each is unpacked once, as the driver reads it
        distinct, where = np.unique(src.reshape(-1, 2), axis=0, return_inverse=True)
        unpacked = np.array([unpack_density(dm.format, t0.item(), t1.item()) for t0, t1 in distinct],
                            dtype=np.float32)
        layers.append(unpacked[where.reshape(-1)].reshape(h, w, 2).tolist())
    return {"format": "R32G32_SFLOAT", "size": [w, h], "layers": layers}


def _custom_resolve(sc: Scenario, atts: list[dict[str, Any]]) -> dict[str, Any]:
    """The custom-resolve subpass of a ``custom_resolve`` scenario (``docs/box.md``): the pass's last
    subpass, ``VK_SUBPASS_DESCRIPTION_CUSTOM_RESOLVE_BIT_EXT``, reads colour attachment 0 as an input
    attachment and writes a destination image of its format that only this subpass uses (turnip keeps
    it out of GMEM; its store op is DONT_CARE, so it has no metadata or aprons).  The destination is
    subsampled when the scenario's pass is (``fdm_subsampled``: then turnip's custom resolve writes
    subsampled space, ``tile->subsampled_pos``; otherwise framebuffer space)."""
    colour = next((i for i, a in enumerate(atts) if a["kind"] == "color"), None)
    if colour is None:
        raise Unrecordable("custom_resolve: the pass has no colour attachment for the custom-resolve subpass to read")
    if atts[colour]["samples"] != 1:
        raise Unrecordable(f"custom_resolve: attachments[{colour}] is multisampled; the box's resolve shader "
                           "reads a single-sampled input attachment (subpassInput)")
    return {"input": colour, "format": atts[colour]["format"], "subsampled": sc.subsampled}


def job_of(sc: Scenario, name: str, out: str, mesa: str | None = None) -> dict[str, Any]:
    """The recorder's JSON record of one scenario (see the module docstring); ``mesa`` is the box's
    Mesa release, whose own reading (:data:`fdm.variants.MESA_READINGS`) is recorded."""
    if sc.gpu.name not in SHIM_GPU_IDS:
        raise Unrecordable(f"gpu: the freedreno noop shim opens {', '.join(SHIM_GPU_IDS)}, not {sc.gpu.name}")
    if sc.bin_merging == "fixed":
        raise Unrecordable("bin_merging: 'fixed' is the tencentmalos fork's adjacency, not Mesa's turnip")
    reading = mesa_reading(mesa)
    for fn, variant in attrs.asdict(sc.driver).items():
        # a variant other than the release's own reading is not the turnip the box runs; the
        # subsampled-only functions (the layout solver's offsets, the metadata's, the apron
        # adjacency) are reached only by a pass with a subsampled attachment: elsewhere they change nothing
        if variant != getattr(reading, fn) and (sc.subsampled or fn not in SUBSAMPLED_ONLY):
            raise Unrecordable(f"driver.{fn}: '{variant}' is not Mesa's turnip"
                               + (f" {mesa} (its reading: '{getattr(reading, fn)}')" if mesa else ""))
    atts = _attachments(sc)
    cr = _custom_resolve(sc, atts) if sc.custom_resolve else None
    vps = [[v.x, v.y, v.w, v.h, v.min_depth, v.max_depth] for v in sc.viewports]
    scs = [[s.x, s.y, s.w, s.h] for s in sc.scissors]
    w, h = sc.framebuffer
    areas = [[r.x, r.y, r.w, r.h] for r in sc.render_areas] or [[0, 0, w, h]]
    return {
        "name": name, "out": out, "framebuffer": [w, h], "views": sc.views, "layers": sc.layers,
        "fdm_per_layer": sc.fdm_per_layer, "max_fdm_layers": sc.max_fdm_layers,
        "attachments": atts, "density": _density(sc), "custom_resolve": cr,
        "fdm_offset_flag": sc.fdm_offset_create_flag,
        "fdm_offsets": [list(o) for o in sc.fdm_offsets] if sc.fdm_offsets else None,
        "viewports": vps, "scissors": scs, "writes_viewport_index": sc.writes_viewport_index,
        "per_view_viewports": sc.multiview_per_view_viewports, "render_areas": areas,
        "draws": sc.draws,
        # false: the pipeline bakes viewports and scissors (pViewports/pScissors, no dynamic state)
        "dynamic_viewport": not sc.static_viewport,
    }
