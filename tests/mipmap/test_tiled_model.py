"""The invocation-level model of the tiled kernels against the reference and its own index maths."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mipmap.formats import FORMATS, random_level0
from mipmap.plan import tiled_plan
from mipmap.reference import stored_chain
from mipmap.tiled_model import Device, morton_decode, tiled_chain

DEVICES = st.sampled_from([Device(8, True), Device(32, True), Device(64, True), Device(32, False), Device(4, True)])
SIDE = st.one_of(st.integers(1, 70), st.sampled_from([64, 96, 128, 192, 256, 320]))


def bits(a):
    return a if a.dtype == np.uint8 else a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def test_morton_is_a_bijection_onto_16x16():
    x, y = morton_decode(np.arange(256))
    assert len(set(zip(x.tolist(), y.tolist(), strict=True))) == 256
    assert x.max() == 15 and y.max() == 15
    # lanes i, i^1, i^2, i^3 form a 2x2 block with i at its top-left, for every power-of-4 step
    for step in (1, 4, 16, 64):
        i = np.arange(0, 256, 4 * step)
        x0, y0 = morton_decode(i // step)
        for k, (dx, dy) in zip((1, 2, 3), ((1, 0), (0, 1), (1, 1)), strict=True):
            xk, yk = morton_decode((i ^ (k * step)) // step)
            assert np.all(xk == x0 + dx) and np.all(yk == y0 + dy)


@settings(max_examples=60, deadline=None)
@given(SIDE, SIDE, st.sampled_from(sorted(FORMATS)), DEVICES, st.integers(0, 2**31), st.booleans(), st.booleans())
def test_tiled_model_equals_reference_bit_for_bit(w, h, fmt_name, device, seed, tail, split):
    fmt = FORMATS[fmt_name]
    level0 = random_level0(w, h, fmt, seed)
    got, _ = tiled_chain(level0, fmt, device, tail=tail, split=split)
    want = stored_chain(level0, fmt)
    assert len(got) == len(want)
    for g, r in zip(got, want, strict=True):
        assert np.array_equal(bits(g), bits(r))


@settings(max_examples=40, deadline=None)
@given(SIDE, SIDE, DEVICES, st.booleans())
def test_invocations_cover_every_output_texel(w, h, device, tail):
    fmt = FORMATS["r32f"]
    _, tr = tiled_chain(random_level0(w, h, fmt), fmt, device, trace=True, tail=tail)
    for d in tiled_plan(w, h, tail=tail):
        first, last = d.input_level + 1, d.input_level + d.levels
        gx, gy = d.grid
        for level in range(last + 1, last + d.tail_levels + 1):
            # the continuation: every texel once, all by the grid's last workgroup
            assert tr.writes[level].min() == 1 and tr.writes[level].max() == 1
            assert set(np.unique(tr.writer[level] // d.local_size)) == {gx * gy - 1}
        for level in range(first, last + 1):
            writes, writer = tr.writes[level], tr.writer[level]
            assert writes.min() >= 1
            assert writer.min() >= 0 and writer.max() < d.invocations
            if d.kernel == "fast" or level == last:
                assert writes.max() == 1  # exactly once
            else:
                # general M = 2: L+1 texels on the seams of the 16-texel tiles are made twice
                yy, xx = np.nonzero(writes > 1)
                assert np.all((xx % 16 == 0) | (yy % 16 == 0))
                assert writes.max() <= 4
        if d.kernel == "fast":
            # each input texel is read by exactly one invocation
            assert tr.reads[d.input_level].min() == 1 and tr.reads[d.input_level].max() == 1
            # one level-L+1 texel per invocation (p = 1) or a 2x2 per invocation (p = 2)
            per = 4 if d.levels == 6 else 1
            counts = np.bincount(tr.writer[first].ravel(), minlength=d.invocations)
            assert set(np.unique(counts)) <= {0, per}
            if d.levels == 6:
                # the 64 x 64 tile pass: every invocation makes exactly one level-L+2 texel
                counts = np.bincount(tr.writer[first + 1].ravel(), minlength=d.invocations)
                assert counts.min() == 1 and counts.max() == 1


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([64, 128, 192]), st.sampled_from([64, 128]), DEVICES)
def test_tile64_stages(w, h, device):
    """The 64 x 64 pass: L+2 from the lanes of a group of four, L+3 over l ^ 4, 8, 12, the
    L+3 tile gathered in shared memory; then, with shuffles in subgroups of 16 or more,
    L+5 and L+6 by xor stages among 16 lanes, otherwise from shared memory (levels 2..6
    of the first dispatch here)."""
    fmt = FORMATS["r32f"]
    _, tr = tiled_chain(random_level0(w, h, fmt), fmt, device, trace=True)
    first = [s for s in tr.stages if s[0] <= 6]
    one_subgroup = device.uses_shuffle(4)
    tail = [(5, (1, 2, 3)), (6, (4, 8, 12))] if one_subgroup else [(5, (0, 0, 0)), (6, (0, 0, 0))]
    assert [(lv, masks) for lv, _, masks in first] == [(2, (1, 2, 3)), (3, (4, 8, 12)), (4, (0, 0, 0))] + tail
    assert first[2][1] == "gather"
    for lv, mech, masks in first[:2] + first[3:]:
        if lv <= 3 or one_subgroup:
            assert (mech == "shuffle") == device.uses_shuffle(masks[0])
        else:
            assert mech == "gather"
