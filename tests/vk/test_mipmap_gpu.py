"""Mip chains made on the device, compared level by level with the models (validation layer on)."""
import numpy as np
import pytest

from mipmap.compare import compare_chain
from mipmap.formats import FORMATS, random_level0
from mipmap.gpu import (
    MipmapRunner,
    dispatch_grid,
    dispatch_key,
    fma_rounds_once,
    spd_handoff,
    spd_keys,
    srgb_decode_exact,
    texel_fetch_input,
    tile_loop,
)
from mipmap.plan import SPD_RULE, tiled_plan
from mipmap.reference import stored_chain
from mipmap.spd_model import spd_reference
from turnip_base.errors import NotSupported, ScenarioError

# each size exercises a distinct plan: fast M = 6; fast M = 3 then general M = 2; general only
# (3-tap everywhere); a 1-wide image; a non-square power of two (SPD's edge case); a mixed plan;
# three 64 x 64 tiles side by side (the fast M = 6 pass over several workgroups); four tiles
# whose last workgroup makes level 7 (the default plan's hand-off by the single pass's kernel)
SIZES = [(64, 64), (24, 40), (63, 37), (1, 7), (128, 32), (300, 200), (192, 64), (128, 128)]

pytestmark = pytest.mark.vulkan


@pytest.fixture(scope="module")
def runners(vk_ctx):
    return {}


def runner_for(vk, runners, fmt_name, shuffle, tex_input=False):
    key = (fmt_name, shuffle, tex_input)
    if key not in runners:
        r = MipmapRunner(vk, FORMATS[fmt_name], shuffle=None if shuffle else False, tex_input=tex_input)
        if shuffle and not r.shuffle:
            pytest.skip("device has no subgroup shuffle")
        runners[key] = r
    return runners[key]


# every format on the device's own path; the forced shared-memory path for three formats
# (rgba8: its tile passes exchange packed codes, a path of their own)
CASES = [(f, True) for f in sorted(FORMATS)] + [("r32f", False), ("srgba8", False), ("rgba8", False)]


@pytest.mark.parametrize("fmt_name,shuffle", CASES, ids=[f"{f}-{'shuffle' if s else 'shared'}" for f, s in CASES])
@pytest.mark.parametrize("algorithm", ["tiled", "spd", "spd-split"])
def test_device_matches_model(vk, runners, fmt_name, algorithm, shuffle):
    assert_chains_match(runner_for(vk, runners, fmt_name, shuffle), fmt_name, algorithm, seed_scale=31)


def assert_chains_match(runner, fmt_name, algorithm, seed_scale):
    """Every size of SIZES generated with ``algorithm`` on ``runner``: each level the model's
    (SPD's rule or the box filter), level 0 as uploaded."""
    fmt = FORMATS[fmt_name]
    for w, h in SIZES:
        level0 = random_level0(w, h, fmt, seed=w * seed_scale + h)
        got = runner.generate(algorithm, level0)
        model = spd_reference(level0, fmt) if algorithm in SPD_RULE else stored_chain(level0, fmt)
        cmp = compare_chain(got, model, fmt)
        assert cmp.ok, f"{algorithm} {w}x{h} {fmt_name}: per-level worst {cmp.per_level}"
        assert np.array_equal(got[0], level0)


@pytest.mark.parametrize("fmt_name", ["r32f", "srgba8", "rgba16f"])
def test_last_workgroup_continuation_matches_the_model(vk, runners, fmt_name):
    """tiled_plan(tail=True): the fast and the general kernel each hand the last levels to their
    last workgroup (coherent levels, counter reset by that workgroup: two chains in a row)."""
    fmt = FORMATS[fmt_name]
    runner = runner_for(vk, runners, fmt_name, True)
    for w, h in [(256, 256), (63, 37), (300, 200)]:  # fast M = 6 + 2; general M = 2 + 3; fast M = 2 + 6
        plan = tiled_plan(w, h, tail=True)
        assert plan[-1].tail_levels > 0
        level0 = random_level0(w, h, fmt, seed=w + h)
        with vk.scope():
            img = runner.make_image(w, h)
            for _ in range(2):
                runner.upload(img, level0)
                vk.run(lambda cb, img=img, plan=plan: runner.record_tiled(cb, img, plan=plan))
                cmp = compare_chain(runner.readback(img), stored_chain(level0, fmt), fmt)
                assert cmp.max_error == 0, f"{w}x{h} {fmt_name}: per-level worst {cmp.per_level}"


@pytest.mark.parametrize("fmt_name", sorted(FORMATS))
def test_split_first_level_matches_the_model(vk, runners, fmt_name):
    """tiled_plan(split=True): level 1 in a fast M = 1 dispatch of its own, then nvpro's rule."""
    fmt = FORMATS[fmt_name]
    runner = runner_for(vk, runners, fmt_name, True)
    for w, h in [(256, 256), (128, 32), (300, 200), (240, 136)]:   # nvpro's first: M = 6, 2, 2, 3
        plan = tiled_plan(w, h, split=True)
        assert plan[0].kernel == "fast" and plan[0].levels == 1 and tiled_plan(w, h)[0].levels > 1
        level0 = random_level0(w, h, fmt, seed=w * 3 + h)
        with vk.scope():
            img = runner.make_image(w, h)
            runner.upload(img, level0)
            vk.run(lambda cb, img=img, plan=plan: runner.record_tiled(cb, img, plan=plan))
            cmp = compare_chain(runner.readback(img), stored_chain(level0, fmt), fmt)
            assert cmp.max_error == 0, f"{w}x{h} {fmt_name}: per-level worst {cmp.per_level}"


def test_fused_decode_only_where_fma_rounds_once(vk):
    """The 8-bit decode as one fma is exact only where fma rounds once (gpu.fma_rounds_once).
    Where the probe says it does, the runner uses it and matches the model; where it does
    not (lavapipe rounds twice), forcing it on must break the chain: the guard matters.
    63 x 63: the general kernel decodes (the tile passes' RGBA8 box never does: it sums codes)."""
    fmt = FORMATS["rgba8"]
    level0 = random_level0(63, 63, fmt, seed=9)
    want = stored_chain(level0, fmt)
    fused = fma_rounds_once(vk)
    runner = MipmapRunner(vk, fmt)
    assert runner.fused_decode == fused
    assert compare_chain(runner.generate("tiled", level0), want, fmt).max_error == 0
    forced = MipmapRunner(vk, fmt, fused_decode=True).generate("tiled", level0)
    assert (compare_chain(forced, want, fmt).max_error == 0) == fused
    assert MipmapRunner(vk, FORMATS["r32f"], fused_decode=None).fused_decode is False


def test_sampler_srgb_decode_only_where_exact(vk):
    """The sRGB kernels read their input level through the sampler's decode only where it gives
    formats.srgb_lut's float32 for every code (gpu.srgb_decode_exact). Where the probe says it
    does, the runner uses it and matches the model; where not (lavapipe's decode is off by up to
    ~4e5 ulp), forcing it must break the chain: the guard matters. Both the tiled plan and SPD
    (whose hand-off level must not be read through the sampler) are run, 64 x 64 and 63 x 63."""
    fmt = FORMATS["srgba8"]
    exact = srgb_decode_exact(vk)
    runner = MipmapRunner(vk, fmt)
    assert runner.hw_srgb == exact
    forced = MipmapRunner(vk, fmt, hw_srgb=True)
    assert forced.hw_srgb
    for w, h in [(64, 64), (63, 63), (128, 72)]:
        level0 = random_level0(w, h, fmt, seed=w + 7 * h)
        for alg, model in (("tiled", stored_chain(level0, fmt)), ("spd", spd_reference(level0, fmt))):
            assert compare_chain(runner.generate(alg, level0), model, fmt).max_error == 0
            assert (compare_chain(forced.generate(alg, level0), model, fmt).max_error == 0) == exact
    assert MipmapRunner(vk, FORMATS["rgba8"], hw_srgb=None).hw_srgb is False


def test_r32f_is_bit_exact_on_both_paths(vk, runners):
    fmt = FORMATS["r32f"]
    level0 = random_level0(96, 80, fmt, seed=5)  # fast M = 4 (two shuffle stages) then general
    want = stored_chain(level0, fmt)
    for shuffle in (True, False):
        got = runner_for(vk, runners, "r32f", shuffle).generate("tiled", level0)
        for g, r in zip(got, want, strict=True):
            assert np.array_equal(g.view(np.uint32), r.view(np.uint32))


def _float16_extremes(w: int, h: int, seed: int) -> np.ndarray:
    """RGBA16F texels over the whole finite range, bits drawn at random: both signs, zeros,
    subnormals (exponent 0), the largest finite values; no inf or nan."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 16, size=(h, w, 4), dtype=np.uint32).astype(np.uint16)
    bits[(bits & 0x7C00) == 0x7C00] &= 0xBFFF            # exponent 31 (inf, nan) -> exponent 15
    sub = rng.random((h, w, 4)) < 0.3                     # many subnormals and zeros, whose means
    bits[sub] &= 0x83FF                                   # round on the 2^-24 grid
    bits[rng.random((h, w, 4)) < 0.05] = 0x7BFF           # 65504, the largest: sums stay finite
    return bits.view(np.float16)


@pytest.mark.parametrize("fmt_name", sorted(FORMATS))
@pytest.mark.parametrize("algorithm", ["tiled", "spd", "spd-split"])
def test_input_level_by_texel_fetch_matches_the_model(vk, runners, fmt_name, algorithm):
    """tex_input=True: every dispatch reads its input level through the sampled view (binding 5)
    by texelFetch; the chains are the models', level for level, as through imageLoad."""
    assert_chains_match(runner_for(vk, runners, fmt_name, True, tex_input=True), fmt_name, algorithm, seed_scale=37)


@pytest.mark.parametrize("fmt_name", sorted(FORMATS))
def test_small_dispatch_handoff_by_the_single_pass_matches_the_model(vk, runners, fmt_name):
    """tiled_plan(tail_groups=N): a fast M = 6 dispatch of whole tiles whose sides halve evenly
    hands off in the single-pass kernel (spd_handoff), others in the fast kernel's tailChain;
    every level is the box filter's either way (two chains in a row: the counter is reset)."""
    fmt = FORMATS[fmt_name]
    runner = runner_for(vk, runners, fmt_name, True)
    # (size, tail_groups, split, spd_handoff of each dispatch that hands off): one level, six
    # levels, from level 1 (a second dispatch: its continuation starts past level 6), a 3 x 1
    # level (odd: the fast kernel's continuation), no hand-off at all
    cases = [((128, 128), 4, False, [True]), ((4096, 256), 256, False, [True]), ((256, 256), 4, True, [True]),
             ((192, 64), 4, False, [False]), ((256, 256), 4, False, [])]
    for (w, h), groups, split, handoffs in cases:
        plan = tiled_plan(w, h, tail_groups=groups, split=split)
        assert [spd_handoff(d) for d in plan if d.tail_levels] == handoffs
        level0 = random_level0(w, h, fmt, seed=w * 5 + h)
        want = stored_chain(level0, fmt)
        for _ in range(2):
            with vk.scope():
                img = runner.make_image(w, h)
                runner.upload(img, level0)
                vk.run(lambda cb, img=img, plan=plan: runner.record_tiled(cb, img, plan=plan))
                cmp = compare_chain(runner.readback(img), want, fmt)
            assert cmp.ok, f"{w}x{h} {fmt_name} tail_groups={groups}: per-level worst {cmp.per_level}"


def test_pipelines_and_grids_of_the_plans():
    """What record_tiled and record_spd bind and dispatch (dispatch_key, dispatch_grid, spd_keys:
    also what bench/mipmap_occupancy.py asks the driver about), for the table's sizes."""
    keys = [(dispatch_key(d), dispatch_grid(d)) for d in tiled_plan(8192, 8192)]
    # the small last dispatch: the single pass's kernel with its hand-off, a 2 x 2 grid of tiles
    assert keys == [(("fast", 6, False, 0, False), (16384, 1)), (("spd", 6, True, 6, True), (2, 2))]
    assert [dispatch_key(d) for d in tiled_plan(4096, 4096)] == [("fast", 6, False, 0, False),
                                                                 ("fast", 6, False, 6, False)]
    assert [dispatch_key(d)[:2] for d in tiled_plan(1920, 1080)] == [("fast", 3)] + [("general", 2)] * 3 + \
        [("general", 1)]
    assert spd_keys(4096, 4096, False) == [("spd", 6, True, 0, True)]
    assert spd_keys(4096, 4096, True) == [("spd", 6, False, 0, True), ("spd", 6, False, 6, False)]
    assert spd_keys(1920, 1080, True) == [("spd", 6, False, 0, False), ("spd", 4, False, 6, False)]
    assert spd_keys(64, 64, True) == [("spd", 6, False, 0, True)]
    assert spd_keys(1, 1, False) == []


def test_record_binds_what_the_keys_say(vk, runners):
    """record_tiled / record_spd bind exactly dispatch_key's / spd_keys' pipelines, in order."""
    runner = runner_for(vk, runners, "r32f", True)
    bound = []
    real_bind = runner._bind
    runner._bind = lambda cb, key, img: (bound.append(key), real_bind(cb, key, img))
    try:
        for (w, h), alg in [((128, 128), "tiled"), ((300, 200), "tiled"), ((192, 64), "spd"),
                            ((192, 64), "spd-split")]:
            bound.clear()
            runner.generate(alg, random_level0(w, h, FORMATS["r32f"], seed=3))
            want = ([dispatch_key(d) for d in tiled_plan(w, h)] if alg == "tiled"
                    else spd_keys(w, h, alg == "spd-split"))
            # consecutive equal keys are bound once
            assert bound == [k for i, k in enumerate(want) if i == 0 or want[i - 1] != k], (w, h, alg)
    finally:
        del runner._bind


def test_pipeline_statistics_need_the_extension_and_the_flag(vk, runners):
    runner = runner_for(vk, runners, "r32f", True)
    with pytest.raises(NotSupported, match="VK_KHR_pipeline_executable_properties"):
        runner.pipeline_statistics(("fast", 6, False, 0, False))


def test_tile_loop_by_default_only_in_the_rgba16f_single_pass():
    """The loop form of the 64 x 64 passes (fewer registers for RGBA16F's single pass on the H100)
    only where it measured faster: RGBA16F's single pass with its hand-off."""
    for name, fmt in FORMATS.items():
        for kernel in ("fast", "general", "spd"):
            for tail in (False, True):
                want = name == "rgba16f" and kernel == "spd" and tail
                assert tile_loop(fmt, kernel, tail) == want, (name, kernel, tail)


# r32f and rgba16f on both paths; rgba8's tile passes carry packed codes (a path of their own)
LOOP_CASES = [("r32f", True), ("r32f", False), ("rgba8", True), ("rgba16f", True), ("rgba16f", False)]


@pytest.mark.parametrize("fmt_name,shuffle", LOOP_CASES, ids=[f"{f}-{'shuffle' if s else 'shared'}"
                                                              for f, s in LOOP_CASES])
def test_persistent_workgroups_match_the_model(vk, fmt_name, shuffle):
    """Every 64 x 64 pass as 3 persistent workgroups (tiles g, g + 3, ...; the hand-off counts 3
    arrivals), twice in a row on one image (the counter reset): every level the model's, in the
    fast M = 6 pass (256 x 256: 16 tiles, then the hand-off by the single pass's kernel), the
    single pass (300 x 200: 5 x 4 tiles with edges; 192 x 64: 3 tiles) and spd-split. A stride
    or a tile order that skips or repeats a tile leaves a sentinel or a stale level behind."""
    fmt = FORMATS[fmt_name]
    runner = MipmapRunner(vk, fmt, shuffle=None if shuffle else False, persistent=3)
    if shuffle and not runner.shuffle:
        pytest.skip("device has no subgroup shuffle")
    for (w, h), algorithms in [((256, 256), ("tiled", "spd")), ((300, 200), ("spd", "spd-split")),
                               ((192, 64), ("spd",))]:
        level0 = random_level0(w, h, fmt, seed=w * 5 + h)
        for alg in algorithms:
            model = spd_reference(level0, fmt) if alg in SPD_RULE else stored_chain(level0, fmt)
            with vk.scope():
                img = runner.make_image(w, h)
                for _ in range(2):
                    runner.upload(img, level0)
                    vk.run(lambda cb, img=img, alg=alg: runner.record(cb, runner.check_algorithm(alg), img))
                    cmp = compare_chain(runner.readback(img), model, fmt)
                    assert cmp.ok and cmp.max_error == 0, f"{alg} {w}x{h} {fmt_name}: {cmp.per_level}"
    with pytest.raises(ScenarioError, match="persistent"):
        MipmapRunner(vk, fmt, persistent=-1)


def test_texel_fetch_by_default_where_it_measured_faster():
    """RGBA16F everywhere; the other formats only in the single pass with its hand-off."""
    for name, fmt in FORMATS.items():
        for kernel in ("fast", "general", "spd"):
            for tail in (False, True):
                want = name == "rgba16f" or (kernel == "spd" and tail)
                assert texel_fetch_input(fmt, kernel, tail) == want, (name, kernel, tail)


@pytest.mark.parametrize("tex_input", [False, True], ids=["image-load", "texel-fetch"])
@pytest.mark.parametrize("shuffle", [True, False], ids=["shuffle", "shared"])
@pytest.mark.parametrize("algorithm", ["tiled", "spd", "spd-split"])
def test_rgba16f_bits_over_the_whole_range(vk, runners, algorithm, shuffle, tex_input):
    """Every level bit for bit the model's on signed values, zeros, subnormals and the largest
    finite values (the random inputs of the other cases lie in [0.05, 0.95)): the loads'
    float16 -> float32 conversion keeps subnormals and signs, and toHalf's values are stored
    without a second rounding.  (Planted: toHalf rounding subnormals down instead of to
    nearest even fails every case here and none of the other rgba16f cases.)"""
    fmt = FORMATS["rgba16f"]
    runner = runner_for(vk, runners, "rgba16f", shuffle, tex_input)
    for w, h in [(64, 64), (63, 37), (128, 32), (300, 200)]:
        level0 = _float16_extremes(w, h, seed=w * 7 + h)
        got = runner.generate(algorithm, level0)
        want = spd_reference(level0, fmt) if algorithm in SPD_RULE else stored_chain(level0, fmt)
        for k, (g, r) in enumerate(zip(got, want, strict=True)):
            assert np.array_equal(g.view(np.uint16), r.view(np.uint16)), f"{algorithm} {w}x{h} level {k}"


def test_blit_chain_runs_and_is_a_box_filter_only_for_even_sizes(vk, runners):
    fmt = FORMATS["r32f"]
    runner = runner_for(vk, runners, "r32f", True)
    pot = random_level0(32, 16, fmt, seed=1)
    got = runner.generate("blit", pot)
    for g, r in zip(got, stored_chain(pot, fmt), strict=True):
        assert np.allclose(g, r, rtol=0, atol=1e-6)
    npot = random_level0(7, 5, fmt, seed=1)
    got = runner.generate("blit", npot)
    assert not all(np.allclose(g, r, atol=1e-3) for g, r in zip(got, stored_chain(npot, fmt), strict=True))


def test_stale_levels_cannot_pass(vk, runners):
    """Levels 1.. are cleared to -1 before a run, so a kernel that skipped a texel would fail."""
    fmt = FORMATS["r32f"]
    runner = runner_for(vk, runners, "r32f", True)
    with vk.scope():
        img = runner.make_image(9, 6)
        runner.upload(img, random_level0(9, 6, fmt))
        levels = runner.readback(img)
    assert all(np.all(lvl == -1.0) for lvl in levels[1:])


def test_size_and_algorithm_errors(vk, runners):
    runner = runner_for(vk, runners, "r32f", True)
    with pytest.raises(ScenarioError, match="size: width and height must be >= 1"):
        runner.check_size(0, 4, "tiled")
    lim = vk.info.max_image_dimension_2d
    with pytest.raises(ScenarioError, match="maxImageDimension2D"):
        runner.check_size(lim + 1, 4, "tiled")
    with pytest.raises(ScenarioError, match="at most 4096x4096"):
        runner.check_size(4097, 4, "spd")
    with pytest.raises(ScenarioError, match="algorithm"):
        runner.check_algorithm("bogus")
