"""The committed SPIR-V of ``vk_tests/spv`` (built from ``vk_tests/shaders`` by
``python -m vk_tests.build_spirv``; the device machines have no shader compiler)."""

from __future__ import annotations

from importlib import resources


def load_spv(name: str) -> bytes:
    """A committed SPIR-V module of ``vk_tests/spv`` (e.g. ``fullscreen.vert.spv``)."""
    return resources.files("vk_tests").joinpath("spv").joinpath(name).read_bytes()
