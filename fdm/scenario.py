"""Scenario files: what a render pass looks like to the driver, validated field by field.

A scenario is TOML or JSON (schema in docs/scenario.md).  :func:`parse_scenario` turns the
decoded mapping into a frozen :class:`Scenario` or raises :class:`~turnip_base.errors.ScenarioError`
naming the first offending field and the rule it breaks.  Nothing is computed from a scenario
that did not validate completely.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NoReturn

import attrs
import numpy as np

from turnip_base.errors import ScenarioError

from .density import DensityMap, constant_layer, encode_layer, radial_layer
from .geometry import Rect
from .gpu import GpuProfile, get_gpu
from .lrz import DEPTH_LOAD_OPS, DepthLoadOp
from .options import DENSITY_FORMATS, MERGING_VARIANTS, MergingVariant, choice
from .render_mode import LOAD_OPS, STORE_OPS, LoadOp, StoreOp
from .turnip import MAX_VIEWPORT_SIZE, MAX_VIEWS, TU_FDM_OFFSET_GRANULARITY
from .variants import UPSTREAM, DriverVariants, apply_variant_flags, parse_driver_variants

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - Python 3.10
    import tomli as _toml

MAX_FDM_TEXEL_SIZE = 1024

#: the TU_DEBUG flags a scenario may set (``tu_debug = ["sysmem"]``)
TuDebugFlag = Literal["sysmem", "gmem"]
TU_DEBUG_FLAGS: tuple[TuDebugFlag, ...] = ("sysmem", "gmem")

# ---------------------------------------------------------------------------------------------
# Limits of the schema (docs/scenario.md, "Limits").  Each is checked before anything of that
# size is allocated, so that no input can cost gigabytes of memory or a traceback.

#: largest scenario file read (bytes): JSON (decoded in C)
MAX_SCENARIO_BYTES = 16 << 20
#: largest TOML scenario file (bytes): tomllib decodes in Python, about 100 times slower than json
MAX_TOML_BYTES = 1 << 20
#: most commas in a JSON scenario (about its values), counted before decoding so that a refusal
#: is quick: an inline density map of up to about 2^17 [x, y] texels; a larger one is an image
MAX_JSON_COMMAS = 1 << 18
#: most commas and line breaks in a TOML scenario (its values and keys), counted before decoding
MAX_TOML_ITEMS = 1 << 16
#: most parts of one dotted TOML key (``a.b.c``): tomllib's time and memory grow with the
#: square of it; a key cannot nest deeper than the data (:data:`MAX_NESTING`)
MAX_TOML_KEY_PARTS = 8
#: deepest nesting of arrays/tables in a scenario (a density map of [x, y] pairs needs 5)
MAX_NESTING = 8
#: largest density-map image or generator size per axis (texels)
MAX_FDM_AXIS = 4096
#: most texels in one density-map layer (1024 x 1024: 32-pixel texels over a 32768^2 surface)
MAX_FDM_TEXELS = 1 << 20
#: largest density-map image or .npy file read (bytes)
MAX_IMAGE_BYTES = 64 << 20
#: integers anywhere in a scenario lie in the int32 range
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
#: VkPhysicalDeviceLimits::viewportBoundsRange of turnip (INT16_MIN, INT16_MAX)
VIEWPORT_BOUNDS = (-32768.0, 32767.0)
#: most entries in a list of attachments / scissors / radii
MAX_LIST = 64
#: longest scenario name (characters)
MAX_NAME = 200


@attrs.frozen
class Viewport:
    """``VkViewport`` (floats, as the application passes them)."""

    x: float
    y: float
    w: float
    h: float
    min_depth: float = 0.0
    max_depth: float = 1.0


@attrs.frozen
class Attachment:
    """What tile-size selection, ``tu_render_pass_disable_fdm`` and the sysmem/GMEM decision
    need to know of a GMEM attachment (:mod:`fdm.render_mode`)."""

    cpp: int
    samples: int = 1
    #: ``VkAttachmentLoadOp`` (``clear``, ``load``, ``dont_care``, ``none``)
    load_op: LoadOp = "clear"
    #: ``VkAttachmentStoreOp`` (``store``, ``dont_care``, ``none``)
    store_op: StoreOp = "store"
    #: the attachment is the source of a resolve (``pResolveAttachments``): ``will_be_resolved``
    resolve: bool = False
    #: the image was created with ``VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT``: turnip sets the pass-wide
    #: ``fdm_subsampled`` and stores every bin into the subsampled layout (:mod:`layout_solver`)
    subsampled: bool = False


@attrs.frozen(eq=False, kw_only=True)
class Scenario:
    """One FDM render pass, as the driver sees it at ``vkCmdEndRenderPass``."""

    gpu: GpuProfile
    framebuffer: tuple[int, int]
    views: int
    density: DensityMap
    tile_size: tuple[int, int] | None = None
    #: default: two 4-byte single-sampled attachments (colour + depth)
    attachments: tuple[Attachment, ...] = (Attachment(4), Attachment(4))
    fdm_offset_create_flag: bool = False
    fdm_offsets: tuple[tuple[int, int], ...] | None = None
    writes_viewport_index: bool = False
    #: the pipeline bakes its viewports and scissors (``pViewports``/``pScissors``, no dynamic
    #: state): turnip 26.2.2 and later patch them per bin like dynamic ones (the model's rule)
    static_viewport: bool = False
    multiview_per_view_viewports: bool = False
    render_areas: tuple[Rect, ...] = ()
    bin_merging: MergingVariant = "upstream"
    #: the depth attachment's load op (``none``: no depth attachment), for ``tu_lrz_init_state``
    depth_load_op: DepthLoadOp = "clear"
    #: which reading of the functions that differ between turnip revisions/forks (``[driver]``)
    driver: DriverVariants = UPSTREAM
    #: TU_DEBUG flags that change how the pass renders: "sysmem" forces sysmem rendering, "gmem"
    #: forces GMEM when binning is impossible (use_sysmem_rendering)
    tu_debug: tuple[TuDebugFlag, ...] = ()
    #: framebuffer layers of a non-multiview pass (VK_VALVE_fragment_density_map_layered)
    layers: int = 1
    #: VK_RENDER_PASS_CREATE_PER_LAYER_FRAGMENT_DENSITY_BIT_VALVE: layer i reads density layer i
    fdm_per_layer: bool = False
    #: VkPipelineFragmentDensityMapLayeredCreateInfoVALVE::maxFragmentDensityMapLayers
    max_fdm_layers: int = 1
    #: the pass ends with a custom-resolve subpass (VK_EXT_custom_resolve) writing the subsampled
    #: image: ``turnip-fdm layout --json`` adds what that subpass programs per tile
    custom_resolve: bool = False
    #: draw calls recorded in the pass (``rp_state->drawcall_count``): the autotuner leaves passes
    #: with fewer than 5 in sysmem when the FDM is off (:func:`fdm.render_mode.autotune_render_mode`)
    draws: int = 1

    @property
    def fdm_layers(self) -> int:
        """``tu_fdm_num_layers`` (tu_cmd_buffer.h): the views of a multiview pass, else the
        framebuffer layers of a per-layer (VALVE) pass, else 1.  Everything per view in the model
        (density layers, frag areas, bins, offsets) has this many entries."""
        if self.views > 1:
            return self.views
        return self.layers if self.fdm_per_layer else 1

    @property
    def subsampled(self) -> bool:
        """``cmd->state.fdm_subsampled`` (``tu_renderpass_begin``, tu_cmd_buffer.cc): some attachment
        image has ``VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT``; pass-wide, it selects the subsampled store
        path, metadata and aprons of every stored attachment."""
        return any(a.subsampled for a in self.attachments)

    @property
    def gmem_layers(self) -> int:
        """``MAX2(num_views, fb->layers)``: the layers GMEM holds and HW bin scaling counts."""
        return max(self.views, self.layers)
    viewports: tuple[Viewport, ...] = ()
    scissors: tuple[Rect, ...] = ()
    name: str = "scenario"


# --------------------------------------------------------------------------------------------
# field readers: each raises ScenarioError(field, rule)

def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(v: Any, field: str, lo: int | None = None, hi: int | None = None) -> int:
    if not _is_int(v):
        raise ScenarioError(field, f"must be an integer, got {type(v).__name__}")
    if not INT32_MIN <= v <= INT32_MAX:
        # also keeps 400-digit integers from reaching numpy (OverflowError) or f-strings
        raise ScenarioError(field, f"must lie in the int32 range [{INT32_MIN}, {INT32_MAX}]")
    if lo is not None and v < lo:
        raise ScenarioError(field, f"must be >= {lo}, got {v}")
    if hi is not None and v > hi:
        raise ScenarioError(field, f"must be <= {hi}, got {v}")
    return int(v)


def _num(v: Any, field: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ScenarioError(field, f"must be a number, got {type(v).__name__}")
    if isinstance(v, int) and not INT32_MIN <= v <= INT32_MAX:
        raise ScenarioError(field, f"must lie in the int32 range [{INT32_MIN}, {INT32_MAX}]")
    if not math.isfinite(v):
        raise ScenarioError(field, f"must be finite, got {v}")
    return float(v)


def _bool(v: Any, field: str) -> bool:
    if not isinstance(v, bool):
        raise ScenarioError(field, f"must be true or false, got {type(v).__name__}")
    return v


def _list(v: Any, field: str, n: int | None = None, min_len: int = 0, max_len: int = MAX_LIST) -> list[Any]:
    if not isinstance(v, (list, tuple)):
        raise ScenarioError(field, f"must be an array, got {type(v).__name__}")
    if len(v) > max_len:
        raise ScenarioError(field, f"must have at most {max_len} elements, got {len(v)}")
    if n is not None and len(v) != n:
        raise ScenarioError(field, f"must have exactly {n} elements, got {len(v)}")
    if len(v) < min_len:
        raise ScenarioError(field, f"must have at least {min_len} elements, got {len(v)}")
    return list(v)


def _pair(v: Any, field: str, lo: int | None = None, hi: int | None = None) -> tuple[int, int]:
    a, b = _list(v, field, 2)
    return (_int(a, f"{field}[0]", lo, hi), _int(b, f"{field}[1]", lo, hi))


def _table(v: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise ScenarioError(field, f"must be a table/object, got {type(v).__name__}")
    return v


def _check_keys(d: Mapping[str, Any], field: str, allowed: Sequence[str]) -> None:
    for k in d:
        if k not in allowed:
            prefix = f"{field}." if field else ""
            raise ScenarioError(f"{prefix}{k}", f"unknown field; allowed: {', '.join(allowed)}")


def _rect(v: Any, field: str, fb: tuple[int, int]) -> Rect:
    x, y, w, h = _list(v, field, 4)
    x = _int(x, f"{field}[0]", 0)
    y = _int(y, f"{field}[1]", 0)
    w = _int(w, f"{field}[2]", 1)
    h = _int(h, f"{field}[3]", 1)
    if x + w > fb[0] or y + h > fb[1]:
        raise ScenarioError(field, f"must lie inside the {fb[0]}x{fb[1]} framebuffer, got {[x, y, w, h]}")
    return Rect(x, y, w, h)


def _scissor(v: Any, field: str) -> Rect:
    x, y, w, h = _list(v, field, 4)
    # VUID-vkCmdSetScissor-x-00595: offsets must not be negative; extents are uint32
    return Rect(_int(x, f"{field}[0]", 0, MAX_VIEWPORT_SIZE), _int(y, f"{field}[1]", 0, MAX_VIEWPORT_SIZE),
                _int(w, f"{field}[2]", 0, MAX_VIEWPORT_SIZE), _int(h, f"{field}[3]", 0, MAX_VIEWPORT_SIZE))


def _viewport(v: Any, field: str) -> Viewport:
    items = _list(v, field)
    if len(items) not in (4, 6):
        raise ScenarioError(field, f"must be [x, y, width, height] or [x, y, width, height, minDepth, "
                                   f"maxDepth], got {len(items)} elements")
    vals = [_num(a, f"{field}[{i}]") for i, a in enumerate(items)]
    if vals[2] <= 0:
        raise ScenarioError(f"{field}[2]", f"viewport width must be > 0 (VUID-VkViewport-width-01770), got {vals[2]}")
    if vals[3] == 0:
        raise ScenarioError(f"{field}[3]", "viewport height must not be 0")
    if abs(vals[2]) > MAX_VIEWPORT_SIZE or abs(vals[3]) > MAX_VIEWPORT_SIZE:
        raise ScenarioError(field, f"viewport extent must be <= maxViewportDimensions {MAX_VIEWPORT_SIZE}")
    lo, hi = VIEWPORT_BOUNDS
    x, y, w, h = vals[:4]
    # VUID-VkViewport-x-01774/-01232, -y-01775/-01776, -height-01777: inside viewportBoundsRange
    if not (lo <= x and x + w <= hi):
        raise ScenarioError(f"{field}[0]", f"x and x + width must lie in viewportBoundsRange [{lo:g}, {hi:g}], "
                                           f"got x = {x:g}, width = {w:g}")
    if not (lo <= y <= hi and lo <= y + h <= hi):
        raise ScenarioError(f"{field}[1]", f"y and y + height must lie in viewportBoundsRange [{lo:g}, {hi:g}], "
                                           f"got y = {y:g}, height = {h:g}")
    for i in (4, 5):
        if i < len(vals) and not 0.0 <= vals[i] <= 1.0:
            # VUID-VkViewport-minDepth-01234 / maxDepth-01235 (no VK_EXT_depth_range_unrestricted)
            raise ScenarioError(f"{field}[{i}]", f"depth must lie in [0, 1], got {vals[i]:g}")
    return Viewport(*vals)


# --------------------------------------------------------------------------------------------
# density map

def _check_density_leaves(v: Any, field: str) -> None:
    """Every leaf of nested arrays is a number (not a string, a boolean or a table), there are at
    most ``2 * MAX_FDM_TEXELS`` of them, nesting is at most 3 deep; iterative, so that no input
    reaches numpy's converters (which accept strings and booleans) or the recursion limit.  A row
    of plain numbers is checked at C speed (the types of its items as a set)."""
    stack: list[tuple[Any, int]] = [(v, 0)]
    leaves = 0
    while stack:
        x, depth = stack.pop()
        if not isinstance(x, (list, tuple)):
            _check_density_leaf(x, field)
            leaves += 1
        elif depth >= 3:
            raise ScenarioError(field, "densities nest at most 3 deep (rows of [x, y] pairs)")
        elif set(map(type, x)) <= _PLAIN_NUMBERS:
            _check_int_densities(x, field)
            leaves += len(x)
        else:
            stack.extend((y, depth + 1) for y in x)
        if leaves > 2 * MAX_FDM_TEXELS:
            raise ScenarioError(field, f"at most {MAX_FDM_TEXELS} texels of [x, y] densities")


#: the item types of a row checked at once by :func:`_check_density_leaves`
_PLAIN_NUMBERS = frozenset((int, float))


def _check_density_leaf(x: Any, field: str) -> None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ScenarioError(field, f"densities must be numbers, got {type(x).__name__}")
    if isinstance(x, int) and not 0 <= x <= 1:
        raise ScenarioError(field, f"density must lie in [0, 1], got {x}")


def _check_int_densities(row: Sequence[Any], field: str) -> None:
    """The integers of a row of plain numbers are 0 or 1 (before numpy turns a huge one into inf)."""
    for x in (y for y in row if type(y) is int and not 0 <= y <= 1):
        raise ScenarioError(field, f"density must lie in [0, 1], got {x}")


def _densities(v: Any, field: str) -> np.ndarray:
    """Densities: a number, a pair, or nested arrays ending in pairs; all in [0, 1]."""
    if not isinstance(v, np.ndarray):
        _check_density_leaves(v, field)
    try:
        arr = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ScenarioError(field, "must be numbers or arrays of numbers of one shape") from None
    if arr.dtype == object:
        raise ScenarioError(field, "must be numbers or arrays of numbers")
    if np.isnan(arr).any():
        raise ScenarioError(field, "density must not be NaN")
    if (arr < 0).any() or (arr > 1).any():
        bad = arr[(arr < 0) | (arr > 1)].flat[0]
        raise ScenarioError(field, f"density must lie in [0, 1], got {bad}")
    return arr


def _density_pair(v: Any, field: str) -> tuple[float, float]:
    """One density: a number (isotropic) or an [x, y] pair."""
    arr = _densities(v, field)
    if arr.ndim == 0:
        return (float(arr), float(arr))
    if arr.shape == (2,):
        return (float(arr[0]), float(arr[1]))
    raise ScenarioError(field, "must be a density or an [x, y] density pair")


def _density_pairs(v: Any, field: str, n: int) -> np.ndarray:
    """Exactly ``n`` densities, each a number or an [x, y] pair."""
    items = _list(v, field, n)
    return np.array([_density_pair(x, f"{field}[{i}]") for i, x in enumerate(items)], dtype=np.float64)


def _fdm_size(v: Any, field: str, fb: tuple[int, int]) -> tuple[int, int]:
    w, h = _pair(v, field, 1, MAX_FDM_AXIS)
    if w * h > MAX_FDM_TEXELS:
        raise ScenarioError(field, f"a density-map layer has at most {MAX_FDM_TEXELS} texels, got {w}x{h}")
    need = (-(-fb[0] // MAX_FDM_TEXEL_SIZE), -(-fb[1] // MAX_FDM_TEXEL_SIZE))
    if w < need[0] or h < need[1]:
        raise ScenarioError(field, f"the map must cover the framebuffer with texels of at most "
                                   f"{MAX_FDM_TEXEL_SIZE} px: need at least {need[0]}x{need[1]}, got {w}x{h}")
    return (w, h)


def _check_file(path: str, field: str, limit: int) -> None:
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError) as e:
        raise ScenarioError(field, f"cannot read {path!r}: {_os_reason(e)}") from None
    if not os.path.isfile(path):
        raise ScenarioError(field, f"{path!r} is not a regular file")
    if size > limit:
        raise ScenarioError(field, f"{path!r} has {size} bytes, more than the limit {limit}")


def _os_reason(e: BaseException) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror else str(e)


def _check_layer_shape(w: int, h: int, path: str, field: str) -> None:
    if w > MAX_FDM_AXIS or h > MAX_FDM_AXIS or w * h > MAX_FDM_TEXELS:
        raise ScenarioError(field, f"{path!r} is {w}x{h} texels; a density-map layer has at most "
                                   f"{MAX_FDM_AXIS} per axis and {MAX_FDM_TEXELS} in all")


def _load_npy(path: str, field: str, fmt: str) -> np.ndarray:
    """An (h, w, 2) ``.npy`` array: the header is read and checked (shape, dtype, size) before
    the data is allocated; only real integer or floating dtypes are read."""
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version in ((2, 0), (3, 0)):
                shape, _fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
    except (OSError, ValueError, SyntaxError, TypeError) as e:
        raise ScenarioError(field, f"cannot read {path!r}: {_os_reason(e)}") from None
    if len(shape) != 3 or shape[2] != 2:
        raise ScenarioError(field, f"{path!r} must hold an (h, w, 2) array, got shape {tuple(shape)}")
    _check_layer_shape(int(shape[1]), int(shape[0]), path, field)
    if dtype.kind not in "uif" or dtype.hasobject:
        raise ScenarioError(field, f"{path!r} must hold real integer or floating texels, got {dtype}")
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise ScenarioError(field, f"cannot read {path!r}: {_os_reason(e)}") from None
    if fmt == "R8G8_UNORM":
        if arr.dtype != np.uint8:
            raise ScenarioError(field, f"{path!r} must hold uint8 texels for R8G8_UNORM, got {arr.dtype}")
        return np.asarray(arr, dtype=np.uint8)
    return encode_layer(_densities(arr, field), fmt)


def _load_image(path: str, field: str, fmt: str) -> np.ndarray:
    _check_file(path, field, MAX_IMAGE_BYTES)
    if path.endswith(".npy"):
        return _load_npy(path, field, fmt)
    try:
        from PIL import Image
    except ImportError:
        raise ScenarioError(field, "reading image files needs Pillow (pip install turnip-fdm[image])") from None
    unreadable = (OSError, ValueError, SyntaxError, Image.DecompressionBombError, EOFError)
    # Image.open reads the header only: the size is checked before any pixel is decoded (a
    # 68-byte PNG may claim 60000 x 100000 pixels).  Pillow's own decompression-bomb refusal
    # (at 2 x 89 M pixels, in open) is off for the open: the layer limit, far lower, says it.
    saved_limit = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None
    try:
        im = Image.open(path)
    except unreadable as e:
        raise ScenarioError(field, f"cannot read image {path!r}: {_os_reason(e)}") from None
    finally:
        Image.MAX_IMAGE_PIXELS = saved_limit
    with im:
        _check_layer_shape(im.size[0], im.size[1], path, field)
        try:
            rgb = np.asarray(im.convert("RGB"), dtype=np.uint8)
        except unreadable as e:
            raise ScenarioError(field, f"cannot read image {path!r}: {_os_reason(e)}") from None
    texels = np.ascontiguousarray(rgb[..., :2])
    if fmt == "R8G8_UNORM":
        return texels
    return encode_layer(texels.astype(np.float64) / 255.0, fmt)


def _density_layer(v: Any, field: str, fb: tuple[int, int], fmt: str, base_dir: str) -> np.ndarray:
    d = _table(v, field)
    kinds = [k for k in ("values", "image", "generator") if k in d]
    if len(kinds) != 1:
        raise ScenarioError(field, "give exactly one of 'values', 'image' or 'generator'")
    kind = kinds[0]
    if kind == "values":
        _check_keys(d, field, ["values"])
        arr = _densities(d["values"], f"{field}.values")
        if arr.ndim == 2:
            arr = np.stack([arr, arr], axis=-1)
        if arr.ndim != 3 or arr.shape[2] != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
            raise ScenarioError(f"{field}.values", "must be rows of densities or of [x, y] density pairs")
        _fdm_size([arr.shape[1], arr.shape[0]], f"{field}.values", fb)
        return encode_layer(arr, fmt)
    if kind == "image":
        _check_keys(d, field, ["image"])
        path = d["image"]
        if not isinstance(path, str):
            raise ScenarioError(f"{field}.image", "must be a file path string")
        full = path if os.path.isabs(path) else os.path.join(base_dir, path)
        layer = _load_image(full, f"{field}.image", fmt)
        _fdm_size([layer.shape[1], layer.shape[0]], f"{field}.image", fb)
        return layer
    gen = d["generator"]
    if gen == "constant":
        _check_keys(d, field, ["generator", "size", "density"])
        if "size" not in d:
            _missing(f"{field}.size")
        size = _fdm_size(d["size"], f"{field}.size", fb)
        if "density" not in d:
            _missing(f"{field}.density")
        return encode_layer(constant_layer(size, _density_pair(d["density"], f"{field}.density")), fmt)
    if gen == "radial":
        _check_keys(d, field, ["generator", "size", "center", "radii", "densities"])
        for k in ("size", "center", "radii", "densities"):
            if k not in d:
                _missing(f"{field}.{k}")
        size = _fdm_size(d["size"], f"{field}.size", fb)
        cx, cy = _list(d["center"], f"{field}.center", 2)
        center = (_num(cx, f"{field}.center[0]"), _num(cy, f"{field}.center[1]"))
        radii = [_num(r, f"{field}.radii[{i}]") for i, r in enumerate(_list(d["radii"], f"{field}.radii", min_len=1))]
        if any(r <= 0 for r in radii) or any(b <= a for a, b in zip(radii, radii[1:], strict=False)):
            raise ScenarioError(f"{field}.radii", "must be positive and strictly increasing")
        dens = _density_pairs(d["densities"], f"{field}.densities", len(radii) + 1)
        return encode_layer(radial_layer(fb, size, center, radii, [tuple(p) for p in dens]), fmt)
    raise ScenarioError(f"{field}.generator", f"unknown generator {gen!r}; known: constant, radial")


def _missing(field: str) -> NoReturn:
    raise ScenarioError(field, "is required")


def _density_map(v: Any, field: str, fb: tuple[int, int], views: int, base_dir: str) -> DensityMap:
    d = _table(v, field)
    _check_keys(d, field, ["format", "views", "image_layers"])
    fmt = choice(f"{field}.format", d.get("format", "R8G8_UNORM"), DENSITY_FORMATS)
    if "views" not in d:
        _missing(f"{field}.views")
    layers_in = _list(d["views"], f"{field}.views", min_len=1)
    if len(layers_in) not in (1, views):
        raise ScenarioError(f"{field}.views", f"must have 1 entry (shared by all views) or one per view "
                                              f"({views}), got {len(layers_in)}")
    layers = [_density_layer(lv, f"{field}.views[{i}]", fb, fmt, base_dir) for i, lv in enumerate(layers_in)]
    if len(layers) == 1:
        layers = layers * views
    shapes = {lay.shape for lay in layers}
    if len(shapes) != 1:
        raise ScenarioError(f"{field}.views", f"every layer must have the same size (one image), got "
                                              f"{sorted(s[:2] for s in shapes)}")
    image_layers = None
    if "image_layers" in d:
        image_layers = _int(d["image_layers"], f"{field}.image_layers", 1, MAX_VIEWS)
        if len(layers_in) > image_layers:
            raise ScenarioError(f"{field}.image_layers", f"must be at least the {len(layers_in)} entries of "
                                                         f"{field}.views, got {image_layers}")
    return DensityMap(format=fmt, layers=tuple(layers), image_layers=image_layers)


# --------------------------------------------------------------------------------------------

TOP_LEVEL = ("name", "gpu", "framebuffer", "views", "tile_size", "attachments", "fdm_offset_create_flag",
             "fdm_offsets", "writes_viewport_index", "multiview_per_view_viewports", "render_areas",
             "bin_merging", "viewports", "scissors", "density", "expect", "depth_load_op",
             "driver", "tu_debug", "layers", "fdm_per_layer", "max_fdm_layers",
             "custom_resolve", "draws", "static_viewport")


def parse_scenario(data: Any, base_dir: str = ".") -> Scenario:
    """Validate a decoded scenario mapping (the file schema of docs/scenario.md, as nested
    dicts/lists or tuples) and build the :class:`Scenario`.  Relative image paths are read from
    ``base_dir``.  Raises :class:`~turnip_base.errors.ScenarioError` naming the first offending field."""
    _check_nesting(data)
    d = _table(data, "scenario")
    _check_keys(d, "", TOP_LEVEL)
    for k in ("gpu", "framebuffer", "density"):
        if k not in d:
            _missing(k)
    if not isinstance(d["gpu"], str):
        raise ScenarioError("gpu", f"must be a GPU name string, got {type(d['gpu']).__name__}")
    gpu = get_gpu(d["gpu"])
    fb = _pair(d["framebuffer"], "framebuffer", 1, MAX_VIEWPORT_SIZE)
    views = _int(d.get("views", 1), "views", 1, MAX_VIEWS)
    # VK_VALVE_fragment_density_map_layered: maxFragmentDensityMapLayers = MAX_VIEWS (tu_device.cc)
    fb_layers = _int(d.get("layers", 1), "layers", 1, MAX_VIEWS)
    if fb_layers > 1 and views > 1:
        raise ScenarioError("layers", "a multiview pass has one framebuffer layer per view: give views or layers")
    per_layer = _bool(d.get("fdm_per_layer", False), "fdm_per_layer")
    max_fdm_layers = _int(d.get("max_fdm_layers", fb_layers), "max_fdm_layers", 1, MAX_VIEWS)
    # layer i of a per-layer pass reads density layer i and has its own frag area, bins and offset
    fdm_views = views if views > 1 else (fb_layers if per_layer else 1)

    tile_size = None
    if "tile_size" in d:
        tile_size = _pair(d["tile_size"], "tile_size", 1)
        if tile_size[0] % gpu.tile_align_w or tile_size[1] % gpu.tile_align_h:
            raise ScenarioError("tile_size", f"must be a multiple of the {gpu.name} tile_align "
                                             f"{gpu.tile_align_w}x{gpu.tile_align_h}, got "
                                             f"{tile_size[0]}x{tile_size[1]}")
        if tile_size[0] > gpu.tile_max_w or tile_size[1] > gpu.tile_max_h:
            raise ScenarioError("tile_size", f"must be at most the {gpu.name} tile_max "
                                             f"{gpu.tile_max_w}x{gpu.tile_max_h}, got {tile_size[0]}x{tile_size[1]}")

    attachments: tuple[Attachment, ...] = (Attachment(4), Attachment(4))
    if "attachments" in d:
        items = _list(d["attachments"], "attachments", min_len=1)
        out = []
        for i, a in enumerate(items):
            a = _table(a, f"attachments[{i}]")
            _check_keys(a, f"attachments[{i}]", ["cpp", "samples", "load_op", "store_op", "resolve", "subsampled"])
            if "cpp" not in a:
                _missing(f"attachments[{i}].cpp")
            cpp = _int(a["cpp"], f"attachments[{i}].cpp", 1, 16)
            samples = _int(a.get("samples", 1), f"attachments[{i}].samples", 1, 8)
            if samples & (samples - 1):
                raise ScenarioError(f"attachments[{i}].samples", f"must be a power of two, got {samples}")
            load_op = choice(f"attachments[{i}].load_op", a.get("load_op", "clear"), LOAD_OPS)
            store_op = choice(f"attachments[{i}].store_op", a.get("store_op", "store"), STORE_OPS)
            resolve = _bool(a.get("resolve", False), f"attachments[{i}].resolve")
            if resolve and samples == 1:
                # VUID-VkSubpassDescription2-pResolveAttachments-03067: a resolve source is multisampled
                raise ScenarioError(f"attachments[{i}].resolve", "a resolve source must be multisampled "
                                                                 "(samples > 1), got samples = 1")
            subsampled = _bool(a.get("subsampled", False), f"attachments[{i}].subsampled")
            if subsampled and samples != 1:
                raise ScenarioError(f"attachments[{i}].subsampled", "a subsampled attachment must be "
                                                                    f"single-sampled, got samples = {samples}")
            out.append(Attachment(cpp, samples, load_op=load_op, store_op=store_op, resolve=resolve,
                                  subsampled=subsampled))
        attachments = tuple(out)

    create_flag = _bool(d.get("fdm_offset_create_flag", False), "fdm_offset_create_flag")
    offsets = None
    if "fdm_offsets" in d:
        items = _list(d["fdm_offsets"], "fdm_offsets")
        if len(items) != 0:
            if len(items) != fdm_views:
                raise ScenarioError("fdm_offsets", f"must have one [x, y] offset per view or per-layer FDM layer "
                                                   f"({fdm_views}), got {len(items)}")
            offs = []
            for i, o in enumerate(items):
                u = _pair(o, f"fdm_offsets[{i}]", -MAX_VIEWPORT_SIZE, MAX_VIEWPORT_SIZE)
                for c in (0, 1):
                    if u[c] % TU_FDM_OFFSET_GRANULARITY:
                        raise ScenarioError(f"fdm_offsets[{i}][{c}]", f"must be a multiple of "
                                            f"fragmentDensityOffsetGranularity {TU_FDM_OFFSET_GRANULARITY}, got {u[c]}")
                offs.append(u)
            offsets = tuple(offs)
            if not create_flag:
                raise ScenarioError("fdm_offsets", "offsets need fdm_offset_create_flag = true "
                                                   "(the FDM image must be created with "
                                                   "FRAGMENT_DENSITY_MAP_OFFSET_BIT_EXT)")

    writes_vpi = _bool(d.get("writes_viewport_index", False), "writes_viewport_index")
    qcom_pvv = _bool(d.get("multiview_per_view_viewports", False), "multiview_per_view_viewports")
    if qcom_pvv and views < 2:
        raise ScenarioError("multiview_per_view_viewports", "needs a multiview pass (views >= 2)")

    full = Rect(0, 0, fb[0], fb[1])
    render_areas: tuple[Rect, ...] = (full,)
    if "render_areas" in d:
        items = _list(d["render_areas"], "render_areas", min_len=1)
        if len(items) not in (1, views):
            raise ScenarioError("render_areas", f"must have 1 entry or one per view ({views}), got {len(items)}")
        render_areas = tuple(_rect(r, f"render_areas[{i}]", fb) for i, r in enumerate(items))

    merging = choice("bin_merging", d.get("bin_merging", "upstream"), MERGING_VARIANTS)
    depth_load_op = choice("depth_load_op", d.get("depth_load_op", "clear"), DEPTH_LOAD_OPS)
    if depth_load_op != "none":
        # the depth attachment is the last one; its load op is depth_load_op (one name for one op)
        last = len(attachments) - 1
        given = d["attachments"][last].get("load_op") if "attachments" in d else None
        if given is not None and given != depth_load_op:
            raise ScenarioError(f"attachments[{last}].load_op", f"the last attachment is the depth attachment, "
                                                                f"whose load op is depth_load_op "
                                                                f"({depth_load_op!r}), got {given!r}")
        if attachments[last].subsampled:
            raise ScenarioError(f"attachments[{last}].subsampled", "the last attachment is the depth attachment; "
                                                                  "only a colour attachment is subsampled here")
        attachments = attachments[:last] + (attrs.evolve(attachments[last], load_op=depth_load_op),)
    driver = parse_driver_variants(d["driver"]) if "driver" in d else UPSTREAM
    tu_debug = tuple(choice(f"tu_debug[{i}]", f, TU_DEBUG_FLAGS)
                     for i, f in enumerate(_list(d.get("tu_debug", []), "tu_debug", max_len=len(TU_DEBUG_FLAGS))))

    n_slots = views if (qcom_pvv and not writes_vpi) else None
    viewports: tuple[Viewport, ...] = (Viewport(0.0, 0.0, float(fb[0]), float(fb[1])),)
    if "viewports" in d:
        items = _list(d["viewports"], "viewports", min_len=1)
        if len(items) > 16:
            raise ScenarioError("viewports", f"at most 16 viewports (maxViewports), got {len(items)}")
        viewports = tuple(_viewport(v, f"viewports[{i}]") for i, v in enumerate(items))
    scissors: tuple[Rect, ...] = (full,)
    if "scissors" in d:
        items = _list(d["scissors"], "scissors", min_len=1)
        scissors = tuple(_scissor(s, f"scissors[{i}]") for i, s in enumerate(items))
    if len(scissors) != len(viewports):
        raise ScenarioError("scissors", f"must have as many entries as viewports ({len(viewports)}), got "
                                        f"{len(scissors)}")
    if n_slots is not None and len(viewports) < n_slots:
        raise ScenarioError("viewports", f"multiview_per_view_viewports needs one viewport per view "
                                         f"({views}), got {len(viewports)}")

    if "expect" in d:
        # expectations of a shipped finding (docs/findings/*.toml): read by the findings test,
        # never by the model
        _table(d["expect"], "expect")
    density = _density_map(d["density"], "density", fb, fdm_views, base_dir)
    name = d.get("name", "scenario")
    if not isinstance(name, str):
        raise ScenarioError("name", "must be a string")
    if len(name) > MAX_NAME or not name.isprintable():
        raise ScenarioError("name", f"must be at most {MAX_NAME} printable characters")
    return Scenario(gpu=gpu, framebuffer=fb, views=views, density=density, tile_size=tile_size,
                    attachments=attachments, fdm_offset_create_flag=create_flag, fdm_offsets=offsets,
                    writes_viewport_index=writes_vpi, multiview_per_view_viewports=qcom_pvv,
                    render_areas=render_areas, bin_merging=merging, depth_load_op=depth_load_op, driver=driver,
                    tu_debug=tu_debug, layers=fb_layers, fdm_per_layer=per_layer, max_fdm_layers=max_fdm_layers,
                    custom_resolve=_bool(d.get("custom_resolve", False), "custom_resolve"),
                    draws=_int(d.get("draws", 1), "draws", 0),
                    static_viewport=_bool(d.get("static_viewport", False), "static_viewport"),
                    viewports=viewports, scissors=scissors,
                    name=name)


def make_scenario(**fields: Any) -> Scenario:
    """Build a :class:`Scenario` in Python without a file: the keyword arguments are the
    top-level fields of the file schema (docs/scenario.md) with the same names, values and
    rules; tuples may stand for arrays and dicts for tables.  For example::

        make_scenario(gpu="a750", framebuffer=(1920, 1920), views=2,
                      density={"views": [{"generator": "constant", "size": [60, 60], "density": 0.5}]})
    """
    return parse_scenario(fields)


#: the leaf types of decoded JSON and TOML, skipped at C speed by :func:`_check_nesting`
_LEAVES = (str, int, float, type(None))


def _check_nesting(data: Any) -> None:
    """Refuse data nested deeper than :data:`MAX_NESTING` (iteratively, without recursion; only
    containers are pushed, so a long array of numbers costs one list comprehension)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        x, depth = stack.pop()
        if isinstance(x, Mapping):
            children: Sequence[Any] = list(x.values())
        elif isinstance(x, (list, tuple)):
            children = x
        else:
            continue
        if children and depth >= MAX_NESTING:  # its children sit one level deeper than the limit
            raise ScenarioError("scenario", f"arrays and tables nest at most {MAX_NESTING} deep")
        stack.extend((y, depth + 1) for y in [y for y in children if not isinstance(y, _LEAVES)])


#: a TOML key part: bare, "basic" or 'literal'
_TOML_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
#: a dotted key of more than MAX_TOML_KEY_PARTS parts where a key stands: at the start of a line,
#: in a table header or an inline table, and followed by ``=`` or ``]``
_TOML_LONG_KEY = re.compile(rf"(?:^|(?<=[\[{{,]))[ \t]*{_TOML_KEY_PART}"
                            rf"(?:[ \t]*\.[ \t]*{_TOML_KEY_PART}){{{MAX_TOML_KEY_PARTS},}}[ \t]*[=\]]", re.MULTILINE)


def check_scenario_text(text: str, fmt: str, field: str = "scenario") -> None:
    """The limits a scenario's text must meet before it is decoded (docs/scenario.md, "Limits"):
    counted in C over the text, so that a file far too big is refused in milliseconds, not after
    the decoder has built millions of objects."""
    if fmt == "json":
        commas = text.count(",")
        if commas > MAX_JSON_COMMAS:
            raise ScenarioError(field, f"a JSON scenario has at most {MAX_JSON_COMMAS} commas (values), got {commas}")
        return
    if len(text) > MAX_TOML_BYTES:
        raise ScenarioError(field, f"a TOML scenario has at most {MAX_TOML_BYTES} characters, got {len(text)} "
                                   "(a large density map: JSON or an image)")
    items = text.count(",") + text.count("\n")
    if items > MAX_TOML_ITEMS:
        raise ScenarioError(field, f"a TOML scenario has at most {MAX_TOML_ITEMS} commas and line breaks "
                                   f"(values and keys), got {items} (a large density map: JSON or an image)")
    if _TOML_LONG_KEY.search(text):
        raise ScenarioError(field, f"a dotted key has at most {MAX_TOML_KEY_PARTS} parts "
                                   f"(arrays and tables nest at most {MAX_NESTING} deep)")


def decode_scenario_text(text: str, fmt: str, field: str = "scenario") -> Any:
    """Decode a scenario's JSON or TOML text, within the limits of :func:`check_scenario_text`."""
    check_scenario_text(text, fmt, field)
    try:
        if fmt == "json":
            return json.loads(text)
        return _toml.loads(text)
    except RecursionError:
        # json and tomllib recurse per nesting level: a file nested 1,000 deep gets here
        raise ScenarioError(field, f"not valid {fmt.upper()}: nested too deep "
                                   f"(arrays and tables nest at most {MAX_NESTING} deep)") from None
    except (ValueError, _toml.TOMLDecodeError) as e:
        raise ScenarioError(field, f"not valid {fmt.upper()}: {e}") from None


def load_scenario(path: str, variants: Sequence[str] = ()) -> Scenario:
    """Read a ``.toml`` or ``.json`` scenario file and validate it; ``variants`` are
    ``NAME=VALUE`` overrides of driver variants (the ``--variant`` flag, :mod:`fdm.variants`)."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".toml", ".json"):
        raise ScenarioError("scenario", f"file must end in .toml or .json, got {path!r}")
    limit = MAX_SCENARIO_BYTES if ext == ".json" else MAX_TOML_BYTES
    _check_file(path, "scenario", limit)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(limit + 1)  # a file that grew since its size was checked: one past the limit
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ScenarioError("scenario", f"cannot read {path!r}: {_os_reason(e)}") from None
    if len(text.encode("utf-8")) > limit:
        raise ScenarioError("scenario", f"{path!r} has more than the limit {limit} bytes")
    data = apply_variant_flags(decode_scenario_text(text, ext[1:]), tuple(variants))
    return parse_scenario(data, base_dir=os.path.dirname(os.path.abspath(path)))
