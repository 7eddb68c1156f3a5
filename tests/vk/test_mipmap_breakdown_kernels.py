"""The reference kernels of bench/mipmap_breakdown.py on the device: shaders/mix.comp moves a
chain's read/write mix, and shaders/mixsync.comp adds a single pass's least hand-off (each
workgroup's word, one atomic each, the last workgroup's dependent round of loads)."""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest

pytestmark = pytest.mark.vulkan

@pytest.fixture(scope="module")
def bd(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("mipmap_breakdown")


@pytest.mark.parametrize("spv,handoff,fanin", [("mix.spv", False, 0), ("mixsync.spv", True, 0),
                                                ("mixsync.spv", True, 64), ("mixsync.spv", True, 7)])
def test_the_mix_kernels_move_the_mix_and_hand_off(vk, bd: ModuleType, spv: str, handoff: bool,
                                                   fanin: int) -> None:
    """dst = the three streams xor'ed (every word read and written); with the hand-off, twice in
    a row: the counter back at 0 each time (the last workgroup reset it, so every arrival was
    counted), each workgroup's word the xor of its invocation 0's first words, and the last
    workgroup's result the xor of every workgroup's word (it read them all after they arrived).
    ``fanin``: the two-level hand-off, in teams of 64 (768 workgroups: 12 whole teams) and of 7
    (109 teams, the last of 5)."""
    nbytes = 3 << 20                                  # 196,608 words of 16 bytes: 768 workgroups
    with vk.scope():
        s = bd.Streamer(vk, nbytes, spv, reads=3, handoff=handoff, host_visible=True, fanin=fanin)
        count = nbytes // 4 // 16
        rng = np.random.default_rng(7)
        src = rng.integers(0, 2**32, size=(3 * count, 4), dtype=np.uint32)
        s.a.write(src)
        groups = max(1, min(-(-count // 256), bd.MAX_GROUPS))
        want = src[:count] ^ src[count:2 * count] ^ src[2 * count:]
        for _ in range(2 if handoff else 1):
            s.b.write(np.zeros((count, 4), np.uint32))
            vk.run(lambda cb: s.record(cb, nbytes))
            got = s.b.read(count * 16).view(np.uint32).reshape(count, 4)
            assert np.array_equal(got, want)
            if handoff:
                assert not s.buffers[2].read(s.buffers[2].size).view(np.uint32).any()
                words = s.buffers[3].read(4 * (groups + 1)).view(np.uint32)
                # invocation 0 of workgroup g handles words g * 256, g * 256 + stride, ...
                for g in (0, 1, groups - 1):
                    assert words[g] == np.bitwise_xor.reduce(want[g * 256::groups * 256, 0])
                assert words[groups] == np.bitwise_xor.reduce(words[:groups])
