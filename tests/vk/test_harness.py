"""The Vulkan harness on the CI device (lavapipe) with the validation layer on."""
import sys

import numpy as np
import pytest

from turnip_base import errors, harness
from turnip_base.errors import NotSupported
from turnip_base.harness import open_device, parse_selector, select_device


def test_not_supported_is_the_project_refusal():
    assert NotSupported is errors.NotSupported
    e = NotSupported("no Vulkan loader (libvulkan.so.1)")
    assert str(e) == "no Vulkan loader (libvulkan.so.1)" and e.label == "not supported"


def test_selector_parsing_and_selection():
    assert parse_selector(None) is None and parse_selector("") is None
    assert parse_selector("1") == 1 and parse_selector("llvm") == "llvm"
    names = ["NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 15.0.6, 256 bits)"]
    assert select_device(names, None) == 0
    assert select_device(names, "LLVMpipe") == 1
    assert select_device(names, "1") == 1
    with pytest.raises(NotSupported, match="no device name contains 'amd'"):
        select_device(names, "amd")
    with pytest.raises(NotSupported, match="index 2 out of range"):
        select_device(names, 2)
    with pytest.raises(NotSupported, match="no Vulkan physical device"):
        select_device([], None)


@pytest.mark.vulkan
def test_device_properties(vk):
    info = vk.info
    assert info.name and info.api_version.startswith("1.")
    assert info.subgroup_size >= 1 and info.subgroup_size & (info.subgroup_size - 1) == 0
    assert info.max_image_dimension_2d >= 4096
    assert info.timestamp_period > 0 and info.timestamp_valid_bits > 0
    assert info.name in info.describe()


@pytest.mark.vulkan
def test_device_chosen_by_environment(monkeypatch, vk_ctx):
    monkeypatch.setenv(harness.DEVICE_ENV, vk_ctx.info.name[:5])
    with open_device() as ctx:
        assert ctx.info.name == vk_ctx.info.name
    monkeypatch.setenv(harness.DEVICE_ENV, "no-such-gpu")
    with pytest.raises(NotSupported, match="no-such-gpu"):
        open_device()


def test_missing_loader_is_not_supported(monkeypatch):
    monkeypatch.setitem(sys.modules, "vulkan", None)  # import vulkan -> ImportError
    with pytest.raises(NotSupported, match="vulkan"):
        harness.import_vulkan()


@pytest.mark.vulkan
def test_missing_format_feature_is_named(vk):
    v = vk.vk
    with pytest.raises(NotSupported, match="VK_FORMAT_R8G8B8A8_SRGB lacks VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT"):
        if vk.format_features(v.VK_FORMAT_R8G8B8A8_SRGB) & v.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT:
            pytest.skip("this device can store to sRGB images")
        vk.require_format(v.VK_FORMAT_R8G8B8A8_SRGB, v.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT,
                          "VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT")


@pytest.mark.vulkan
def test_buffer_round_trip_and_fill(vk):
    v = vk.vk
    data = np.arange(1024, dtype=np.uint32)
    with vk.scope():
        host = vk.buffer(data.nbytes, v.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | v.VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         host_visible=True)
        dev = vk.buffer(data.nbytes, v.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | v.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        host.write(data)
        region = v.VkBufferCopy(srcOffset=0, dstOffset=0, size=data.nbytes)

        def record(cb):
            v.vkCmdCopyBuffer(cb, host.handle, dev.handle, 1, [region])
            vk.memory_barrier(cb, v.VK_ACCESS_TRANSFER_WRITE_BIT, v.VK_ACCESS_TRANSFER_WRITE_BIT,
                              v.VK_PIPELINE_STAGE_TRANSFER_BIT, v.VK_PIPELINE_STAGE_TRANSFER_BIT)
            v.vkCmdFillBuffer(cb, dev.handle, 0, 16, 7)
            vk.memory_barrier(cb, v.VK_ACCESS_TRANSFER_WRITE_BIT, v.VK_ACCESS_TRANSFER_READ_BIT,
                              v.VK_PIPELINE_STAGE_TRANSFER_BIT, v.VK_PIPELINE_STAGE_TRANSFER_BIT)
            v.vkCmdCopyBuffer(cb, dev.handle, host.handle, 1, [region])

        vk.run(record)
        back = host.read(data.nbytes).view(np.uint32)
    assert np.array_equal(back[4:], data[4:]) and np.all(back[:4] == 7)


@pytest.mark.vulkan
def test_timestamps_are_ordered(vk):
    v = vk.vk
    with vk.scope():
        pool = vk.query_pool(3)

        def record(cb):
            v.vkCmdResetQueryPool(cb, pool, 0, 3)
            for i in range(3):
                v.vkCmdWriteTimestamp(cb, v.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, i)

        vk.run(record)
        ts = vk.timestamps_ns(pool, 3)
    assert np.all(np.diff(ts) >= 0)


@pytest.mark.vulkan
def test_scope_destroys_what_it_created(vk):
    v = vk.vk
    before = len(vk._owned)
    with vk.scope():
        vk.buffer(64, v.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT)
        assert len(vk._owned) > before
    assert len(vk._owned) == before


@pytest.mark.vulkan
def test_extension_and_feature_queries(vk):
    exts = vk.device_extensions()
    assert exts and all(e.startswith("VK_") for e in exts)
    vk.require_extension(sorted(exts)[0])
    with pytest.raises(NotSupported, match="extension VK_NOT_a_real_extension is not supported"):
        vk.require_extension("VK_NOT_a_real_extension")
    feats = vk.features()
    assert feats.shaderStorageImageWriteWithoutFormat in (0, 1)
    missing = [n for n in ("shaderStorageImageArrayDynamicIndexing", "sparseBinding", "shaderFloat64",
                           "geometryShader", "robustBufferAccess") if not getattr(feats, n)]
    if missing:  # the message names the feature
        with pytest.raises(NotSupported, match=f"feature {missing[0]} is not supported"):
            vk.require_feature(missing[0])
