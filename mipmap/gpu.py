"""Run the mipmap generators on a Vulkan device: tiled (planned dispatches), single-pass
downsampler, and the vkCmdBlitImage chain a user would otherwise write.

The image holds the format's texels; the compute shaders access it through a storage view
(R32_UINT for the 8-bit formats, four codes packed in one word, so that quantisation
happens in the shader exactly as in mipmap/formats.py). Every algorithm starts from level 0
in GENERAL layout and leaves all levels in GENERAL layout.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from turnip_base.errors import NotSupported, ScenarioError
from turnip_base.harness import Handle, Vulkan
from turnip_base.options import choice

from .formats import Format, Texels, srgb_lut, tables, unorm_lut
from .plan import (
    ALGORITHMS,
    SPD_MAX_SIZE,
    SPD_RULE,
    SPD_TILE,
    Algorithm,
    Dispatch,
    spd_handoff,
    spd_plan,
    split_groups,
    tiled_plan,
)
from .reference import level_sizes

__all__ = ["ALGORITHMS", "Algorithm", "MipImage", "MipmapRunner", "load_spv", "split_groups", "srgb_decode_exact"]

#: a pipeline of the runner: the tiled plan's two kernels and the single-pass downsampler
PipelineKernel = Literal["fast", "general", "spd"]
MAX_BINDING_LEVELS = 16
PUSH_BYTES = 16  # common.glsl's Push: tailLevels, handoff, width, height
NO_HANDOFF = MAX_BINDING_LEVELS  # pc.handoff when no level is shared between workgroups
SPD_MAIN_LEVELS = 6  # levels of SPD's main pass: a 64 x 64 tile per workgroup
#: a pipeline: kernel, MAIN_LEVELS and HAS_TAIL (common.glsl's specialisation constants 1, 2)
PipelineKey = tuple[PipelineKernel, int, bool, int, bool]
#: what :meth:`MipmapRunner.pipeline_statistics` asks the driver through
STATISTICS_EXTENSION = "VK_KHR_pipeline_executable_properties"
IMAGE_CREATE_EXTENDED_USAGE_BIT = 0x100  # Vulkan 1.1 core; the binding leaves this name None


def load_spv(name: str) -> bytes:
    return resources.files("mipmap").joinpath("spv").joinpath(name).read_bytes()


def storage_view_flags(ctx: Vulkan, fmt_id: int, view_id: int) -> int:
    """Image create flags for storage access through a ``view_id`` view of a ``fmt_id`` image:
    MUTABLE_FORMAT when they differ, and EXTENDED_USAGE when the image format itself has no
    storage support (sRGB, read through a UINT view)."""
    vk = ctx.vk
    if view_id == fmt_id:
        return 0
    flags = int(vk.VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT)
    if not ctx.format_features(fmt_id) & vk.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT:
        flags |= IMAGE_CREATE_EXTENDED_USAGE_BIT
    return flags


class MipImage:
    def __init__(self, runner: MipmapRunner, width: int, height: int):
        ctx, vk, fmt = runner.ctx, runner.vk, runner.fmt
        self.runner = runner
        self.sizes = level_sizes(width, height)
        self.width, self.height, self.levels = width, height, len(self.sizes)
        fmt_id, view_id = getattr(vk, fmt.vk_format_name), getattr(vk, fmt.vk_view_format_name)
        flags = storage_view_flags(ctx, fmt_id, view_id)
        usage = (vk.VK_IMAGE_USAGE_STORAGE_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
                 | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
        usage |= vk.VK_IMAGE_USAGE_SAMPLED_BIT  # bindings 4 (sRGB) and 5 (below)
        self.image = ctx.image(width, height, self.levels, fmt_id, view_id, usage, flags)
        table = tables(max(width, height))
        self.tables = ctx.buffer(table.nbytes, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host_visible=True)
        self.tables.write(table)
        # device-local (one atomic per workgroup); zeroed once here, then the last workgroup
        # of each hand-off resets it (common.glsl, arriveLast)
        self.counter = ctx.buffer(4, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        counter = self.counter

        def zero(cb: Handle) -> None:
            vk.vkCmdFillBuffer(cb, counter.handle, 0, 4, 0)
            ctx.memory_barrier(cb, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                               vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT,
                               vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)

        ctx.run(zero)
        self.set = ctx.allocate_set(runner.desc_pool, runner.set_layout)
        infos = [vk.VkDescriptorImageInfo(imageView=self.image.views[min(i, self.levels - 1)],
                                          imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL) for i in range(MAX_BINDING_LEVELS)]
        tinfo = vk.VkDescriptorBufferInfo(buffer=self.tables.handle, offset=0, range=0xFFFFFFFFFFFFFFFF)
        cinfo = vk.VkDescriptorBufferInfo(buffer=self.counter.handle, offset=0, range=0xFFFFFFFFFFFFFFFF)
        writes = [
            vk.VkWriteDescriptorSet(dstSet=self.set, dstBinding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                                    pImageInfo=infos),
            vk.VkWriteDescriptorSet(dstSet=self.set, dstBinding=1, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                    pBufferInfo=[tinfo]),
            vk.VkWriteDescriptorSet(dstSet=self.set, dstBinding=2, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                    pBufferInfo=[cinfo]),
            # binding 3: the same views, declared coherent (levels handed between workgroups)
            vk.VkWriteDescriptorSet(dstSet=self.set, dstBinding=3, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                                    pImageInfo=infos),
        ]
        def sampled(binding: int, view_format: int) -> Handle:
            """Every level through a sampled ``view_format`` view with the runner's nearest sampler."""
            view = ctx.image_view(self.image.handle, view_format, levels=self.levels,
                                  usage=vk.VK_IMAGE_USAGE_SAMPLED_BIT)
            info = vk.VkDescriptorImageInfo(sampler=runner.sampler, imageView=view,
                                            imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL)
            return vk.VkWriteDescriptorSet(dstSet=self.set, dstBinding=binding,
                                           descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                           pImageInfo=[info])

        # binding 4: the image's own sRGB format (common.glsl, HW_SRGB_DECODE); binding 5: the
        # storage views' format (TEX_INPUT). Declared by every kernel of the format, so written
        # even where the constant leaves them unread
        if fmt.srgb:
            writes.append(sampled(4, fmt_id))
        writes.append(sampled(5, view_id))
        vk.vkUpdateDescriptorSets(ctx.device, len(writes), writes, 0, None)

    def level_bytes(self) -> list[int]:
        bpt = self.runner.fmt.bytes_per_texel
        return [w * h * bpt for w, h in self.sizes]


#: fma_rounds_once per open device (a property of the device: probed once, not per runner)
_FMA_ROUNDS_ONCE: weakref.WeakKeyDictionary[Vulkan, bool] = weakref.WeakKeyDictionary()


def fma_rounds_once(ctx: Vulkan) -> bool:
    """Whether the device's fma() gives the fused decode of every 8-bit code exactly
    (shaders/probe.comp against formats.unorm_lut: fma may round twice under Vulkan's rules)."""
    if ctx not in _FMA_ROUNDS_ONCE:
        _FMA_ROUNDS_ONCE[ctx] = _probe_fma(ctx)
    return _FMA_ROUNDS_ONCE[ctx]


def _run_probe(ctx: Vulkan, spv: str, out_bytes: int, inputs: Sequence[tuple[int, Any]] = (),
               before: Callable[[Handle], None] | None = None) -> NDArray[np.uint8]:
    """Run a one-workgroup probe shader: descriptors ``inputs`` (type, info) at bindings 0.., then a
    host-visible storage buffer of ``out_bytes`` at the next binding, which is read back; ``before``
    records what the probe needs first (an upload)."""
    vk = ctx.vk
    sb = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
    out = ctx.buffer(out_bytes, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host_visible=True)
    types = [t for t, _ in inputs] + [sb]
    set_layout = ctx.descriptor_set_layout([(i, t, 1) for i, t in enumerate(types)])
    layout = ctx.pipeline_layout(set_layout, 0)
    pipe = ctx.compute_pipeline(load_spv(spv), layout)
    dset = ctx.allocate_set(ctx.descriptor_pool([(t, types.count(t)) for t in dict.fromkeys(types)], 1), set_layout)
    infos = [info for _, info in inputs] + [vk.VkDescriptorBufferInfo(buffer=out.handle, offset=0, range=out_bytes)]
    writes = [vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=i, descriptorType=t,
                                      **({"pBufferInfo": [info]} if t == sb else {"pImageInfo": [info]}))
              for i, (t, info) in enumerate(zip(types, infos, strict=True))]
    vk.vkUpdateDescriptorSets(ctx.device, len(writes), writes, 0, None)

    def record(cb: Handle) -> None:
        if before is not None:
            before(cb)
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [dset], 0, None)
        vk.vkCmdDispatch(cb, 1, 1, 1)
        ctx.memory_barrier(cb, vk.VK_ACCESS_SHADER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT,
                           vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT)

    ctx.run(record)
    return out.read(out_bytes)


def _probe_fma(ctx: Vulkan) -> bool:
    with ctx.scope():
        got = _run_probe(ctx, "probe.spv", 256 * 4).view(np.uint32)
    return bool(np.array_equal(got, unorm_lut().view(np.uint32)))


#: srgb_decode_exact per open device
_SRGB_EXACT: weakref.WeakKeyDictionary[Vulkan, bool] = weakref.WeakKeyDictionary()


def srgb_decode_exact(ctx: Vulkan) -> bool:
    """Whether the device's sampler decodes every R8G8B8A8_SRGB code to formats.srgb_lut's
    float32, bit for bit, and gives alpha back within half a code (shaders/probe_srgb.comp):
    only then may the sRGB kernels read their input level through it (HW_SRGB_DECODE)."""
    if ctx not in _SRGB_EXACT:
        vk = ctx.vk
        fmt = vk.VK_FORMAT_R8G8B8A8_SRGB
        usable = bool(ctx.format_features(fmt) & vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT)
        _SRGB_EXACT[ctx] = usable and _probe_srgb(ctx)
    return _SRGB_EXACT[ctx]


def texel_fetch_input(fmt: Format, kernel: PipelineKernel, tail: bool) -> bool:
    """Whether a pipeline reads its input level by texelFetch (common.glsl, TEX_INPUT) by
    default: where that measured faster on the H100 than imageLoad, in one call against the
    code before (bench/results/h100.experiments.md, fifth round; medians in µs):

    * RGBA16F, every kernel: 4096² tiled 82.9 -> 75.5, spd 87.3 -> 77.1, spd-split 82.4 ->
      74.8; 8192² tiled 259.1 -> 251.1; 4095² spd-split 82.9 -> 75.5; 1920x1080 spd 20.7 ->
      20.2, spd-split 22.3 -> 20.7 (the float16 widening done by the texture path);
    * the other formats, the single-pass downsampler with its hand-off (``spd``): 4096² r32f
      49.9 -> 44.0, rgba8 49.9 -> 44.8; 4095² r32f 50.7 -> 45.1; 1920x1080 r32f 13.3 -> 12.0;
    * elsewhere (their tiled kernels and spd-split) within 1 % either way, and one cell slower
      (1920x1080 sRGBA8 spd-split 19.2 -> 30.7): imageLoad stays."""
    return fmt.name == "rgba16f" or (kernel == "spd" and tail)


def tile_loop(fmt: Format, kernel: PipelineKernel, tail: bool) -> bool:
    """Whether a pipeline places its 64 x 64 tiles by a loop over the workgroup's flat index
    (common.glsl, PERSISTENT; with one workgroup per tile the loop runs once, on the tile the
    grid gives it) by default: the single pass with its hand-off in RGBA16F, where the NVIDIA
    compiler then fits the kernel in 64 registers an invocation instead of 80 (and 4,100 bytes
    of shared memory instead of 7,184), so that 4 workgroups of 256 fit an SM instead of 3:
    1920x1080's 510 tiles run as one wave on the H100's 132 SMs instead of two. Same call,
    twice (bench/results/h100.experiments.md, seventh round; medians in µs): 1920x1080 20.2 ->
    18.7 and 20.2 -> 18.7; in the final runs before and after, 4096² 77.6 -> 74.5 and 4095²
    79.6 -> 78.1. The other formats' single pass stays at 40-46 registers either way, and their
    timings did not gain; the loop in the fast M = 6 kernel was slower (8192² RGBA8 133.6 ->
    137.7)."""
    return fmt.name == "rgba16f" and kernel == "spd" and tail


def dispatch_key(d: Dispatch) -> PipelineKey:
    """The pipeline :meth:`MipmapRunner.record_tiled` runs tiled dispatch ``d`` with: its kernel,
    or the single pass's where :func:`~mipmap.plan.spd_handoff` holds."""
    if spd_handoff(d):
        return ("spd", d.levels, True, d.input_level, True)
    return (d.kernel, d.levels, d.tail_levels > 0, d.input_level, False)


def dispatch_grid(d: Dispatch) -> tuple[int, int]:
    """Its workgroup grid: the single pass places its tiles by a 2D grid of them."""
    return (d.width >> 6, d.height >> 6) if spd_handoff(d) else d.grid


def spd_keys(width: int, height: int, split: bool) -> list[PipelineKey]:
    """The pipelines of :meth:`MipmapRunner.record_spd` (``split``: spd-split's two dispatches)."""
    plan = spd_plan(width, height)
    if plan.mips == 0:
        return []
    whole = width % SPD_TILE == 0 and height % SPD_TILE == 0
    handoff = plan.tail_levels > 0 and not split
    keys: list[PipelineKey] = [("spd", plan.main_levels, handoff, 0, whole)]
    if split and plan.tail_levels:
        keys.append(("spd", plan.tail_levels, False, SPD_MAIN_LEVELS, False))
    return keys


def _statistic_value(vk: Any, st: Handle) -> int | float | bool:
    """A VkPipelineExecutableStatisticKHR's value, by its format."""
    if st.format == vk.VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        return bool(st.value.b32)
    if st.format == vk.VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        return int(st.value.i64)
    if st.format == vk.VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        return int(st.value.u64)
    return float(st.value.f64)


def statistics_setup(ctx: Vulkan) -> tuple[list[str], Handle]:
    """A :data:`~turnip_base.harness.DeviceSetup` enabling ``VK_KHR_pipeline_executable_properties``
    (for :meth:`MipmapRunner.pipeline_statistics`) where the device has it; nothing otherwise."""
    vk = ctx.vk
    if STATISTICS_EXTENSION not in ctx.device_extensions():
        return [], None
    feat = vk.VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR(pipelineExecutableInfo=vk.VK_TRUE)
    ctx.keep.append(feat)
    return [STATISTICS_EXTENSION], vk.VkPhysicalDeviceFeatures2(pNext=feat)


def nearest_sampler(ctx: Vulkan) -> Handle:
    """An owned sampler for texelFetch (no filtering, every level reachable)."""
    vk = ctx.vk
    edge = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
    info = vk.VkSamplerCreateInfo(magFilter=vk.VK_FILTER_NEAREST, minFilter=vk.VK_FILTER_NEAREST,
                                  mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST, addressModeU=edge,
                                  addressModeV=edge, addressModeW=edge, maxLod=float(MAX_BINDING_LEVELS))
    sampler = vk.vkCreateSampler(ctx.device, info, None)
    ctx.own(lambda: vk.vkDestroySampler(ctx.device, sampler, None))
    return sampler


def _probe_srgb(ctx: Vulkan) -> bool:
    vk = ctx.vk
    with ctx.scope():
        fmt = vk.VK_FORMAT_R8G8B8A8_SRGB
        img = ctx.image(16, 16, 1, fmt, fmt, vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
        codes = np.repeat(np.arange(256, dtype=np.uint8), 4)
        staging = ctx.buffer(codes.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host_visible=True)
        staging.write(codes)
        iinfo = vk.VkDescriptorImageInfo(sampler=nearest_sampler(ctx), imageView=img.views[0],
                                         imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)

        def upload(cb: Handle) -> None:
            img.barrier(cb, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                        vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                        vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
            sub = vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0,
                                              baseArrayLayer=0, layerCount=1)
            region = vk.VkBufferImageCopy(bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                                          imageSubresource=sub, imageOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                          imageExtent=vk.VkExtent3D(width=16, height=16, depth=1))
            vk.vkCmdCopyBufferToImage(cb, staging.handle, img.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                                      [region])
            img.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                        vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_SHADER_READ_BIT,
                        vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)

        raw = _run_probe(ctx, "probe_srgb.spv", 256 * 16,
                         [(vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, iinfo)], before=upload)
    got = raw.view(np.float32).reshape(256, 4)
    colour = np.ascontiguousarray(got[:, :3]).view(np.uint32)
    want = np.repeat(srgb_lut().view(np.uint32)[:, None], 3, axis=1)
    return bool(np.array_equal(colour, want) and np.array_equal(got[:, 3], np.arange(256, dtype=np.float32)))


class MipmapRunner:
    """Pipelines of one format on one device."""

    def __init__(self, ctx: Vulkan, fmt: Format, shuffle: bool | None = None,
                 fused_decode: bool | None = None, hw_srgb: bool | None = None, tex_input: bool | None = None,
                 capture_statistics: bool = False, persistent: int | None = None):
        """shuffle: None picks the subgroup-shuffle path when the device supports it; False forces
        the shared-memory path. fused_decode (8-bit formats): None uses the one-operation
        decode where :func:`fma_rounds_once`, False never, True always (tests: what the probe
        guards against). hw_srgb (sRGB): None reads the input level through the sampler's
        decode where :func:`srgb_decode_exact`, False never, True always (tests, likewise).
        tex_input: the main pass reads its input level by texelFetch (binding 5) instead of
        imageLoad: None where :func:`texel_fetch_input` says (what measured faster), False
        never, True always. capture_statistics: pipelines made with
        VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR (for :meth:`pipeline_statistics`; the device
        opened with :func:`statistics_setup`). persistent: None places tiles by a loop only where
        :func:`tile_loop` says (one workgroup per tile), 0 nowhere, N > 0 runs every 64 x 64 pass (the
        single pass, the fast M = 6 kernel) as at most N workgroups, each making every N-th tile
        (tests; ``mipmap_bench --persistent``); a negative N is a :class:`ScenarioError`."""
        self.ctx, self.vk, self.fmt = ctx, ctx.vk, fmt
        self.capture_statistics = capture_statistics
        if persistent is not None and persistent < 0:
            raise ScenarioError("persistent", f"must be >= 0 workgroups (0: never a tile loop), got {persistent}")
        self.persistent = persistent
        vk = self.vk
        info = ctx.info
        if not info.subgroup_compute:
            raise NotSupported(f"device {info.name}: subgroup operations in compute shaders")
        view_id = getattr(vk, fmt.vk_view_format_name)
        ctx.require_format(view_id, vk.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT, "VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT")
        self.shuffle = info.subgroup_shuffle and info.subgroup_size >= 4 and shuffle is not False
        self.fused_decode = fmt.quantised_8bit and (fused_decode if fused_decode is not None
                                                     else fma_rounds_once(ctx))
        self.hw_srgb = fmt.srgb and (hw_srgb if hw_srgb is not None else srgb_decode_exact(ctx))
        self.tex_input = tex_input
        cis = vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER
        self.set_layout = ctx.descriptor_set_layout([
            (0, vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, MAX_BINDING_LEVELS),
            (1, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1),
            (2, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1),
            (3, vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, MAX_BINDING_LEVELS)]
            + ([(4, cis, 1)] if fmt.srgb else []) + [(5, cis, 1)])
        self.layout = ctx.pipeline_layout(self.set_layout, PUSH_BYTES)
        self.desc_pool = ctx.descriptor_pool([(vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 2 * MAX_BINDING_LEVELS * 8),
                                              (vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 16), (cis, 16)], 8)
        self.sampler = nearest_sampler(ctx)
        # modules now, outside any ctx.scope(), so that they live as long as the runner; the
        # pipelines (one per kernel, level count and continuation) on first use, owned by the
        # runner (a ctx.scope() open at that moment must not destroy them)
        kernels: tuple[PipelineKernel, ...] = ("fast", "general", "spd")
        self._modules = {kernel: ctx.shader_module(load_spv(self.variant(kernel))) for kernel in kernels}
        self._pipelines: dict[PipelineKey, Handle] = {}
        ctx.own(self._destroy_pipelines)

    def _destroy_pipelines(self) -> None:
        for pipe in self._pipelines.values():
            self.vk.vkDestroyPipeline(self.ctx.device, pipe, None)
        self._pipelines.clear()

    def variant(self, kernel: str) -> str:
        from .build_spirv import variant_name
        return variant_name(kernel, self.fmt.name, self.shuffle)

    def pipeline(self, kernel: PipelineKernel, levels: int, tail: bool, input_level: int = 0,
                 whole_tiles: bool = False) -> Handle:
        """The pipeline of `kernel` specialised for `levels` main-pass levels, a continuation or
        none, the main pass's input level and (single-pass downsampler) whether the size is a
        multiple of 64 in both axes."""
        key: PipelineKey = (kernel, levels, tail, input_level, whole_tiles)
        if key not in self._pipelines:
            vk = self.vk
            tex = self.tex_input if self.tex_input is not None else texel_fetch_input(self.fmt, kernel, tail)
            consts = [self.ctx.info.subgroup_size, levels, int(tail), input_level, int(whole_tiles),
                      int(self.fused_decode), int(self.hw_srgb), int(tex), int(self._tile_loop(key))]
            data = vk.ffi.new("uint32_t[]", consts)
            entries = [vk.VkSpecializationMapEntry(constantID=i, offset=4 * i, size=4) for i in range(len(consts))]
            spec = vk.VkSpecializationInfo(pMapEntries=entries, dataSize=4 * len(consts), pData=data)
            stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT,
                                                       module=self._modules[kernel], pName="main",
                                                       pSpecializationInfo=spec)
            flags = vk.VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR if self.capture_statistics else 0
            info = vk.VkComputePipelineCreateInfo(stage=stage, layout=self.layout, flags=flags)
            self._pipelines[key] = vk.vkCreateComputePipelines(self.ctx.device, vk.VK_NULL_HANDLE, 1, [info],
                                                               None)[0]
        return self._pipelines[key]

    def _tile_loop(self, key: PipelineKey) -> bool:
        """Whether the pipeline of ``key`` places its 64 x 64 tiles by the loop (common.glsl,
        PERSISTENT): by default where :func:`tile_loop` says; with :attr:`persistent` = N > 0
        every single-pass and fast M = 6 pipeline, 0 none."""
        kernel, levels, tail = key[0], key[1], key[2]
        if self.persistent is None:
            return tile_loop(self.fmt, kernel, tail)
        return self.persistent > 0 and (kernel == "spd" or (kernel == "fast" and levels == 6))

    def _grid(self, key: PipelineKey, grid: tuple[int, int]) -> tuple[int, int]:
        """The workgroups of a dispatch of ``key`` over ``grid`` tiles: one per tile, or with
        :attr:`persistent` = N > 0 at most N in a row, each making every N-th tile."""
        if not self.persistent or not self._tile_loop(key):
            return grid
        return min(self.persistent, grid[0] * grid[1]), 1

    def pipeline_statistics(self, key: PipelineKey) -> dict[str, int | float | bool]:
        """The driver's statistics of pipeline ``key``'s executables (VK_KHR_pipeline_executable_properties:
        on NVIDIA "Register Count", "Shared Memory Size", "Binary Size", ...), by name; several
        executables: the names prefixed with the executable's index. :class:`NotSupported` unless the
        device was opened with :func:`statistics_setup` and the runner made with ``capture_statistics``."""
        vk = self.vk
        if STATISTICS_EXTENSION not in self.ctx.enabled_extensions or not self.capture_statistics:
            raise NotSupported(f"device {self.ctx.info.name}: {STATISTICS_EXTENSION} not enabled "
                               "(open it with statistics_setup, the runner with capture_statistics)")
        pipe = self.pipeline(*key)
        get_props = vk.vkGetDeviceProcAddr(self.ctx.device, "vkGetPipelineExecutablePropertiesKHR")
        get_stats = vk.vkGetDeviceProcAddr(self.ctx.device, "vkGetPipelineExecutableStatisticsKHR")
        execs = list(get_props(self.ctx.device, vk.VkPipelineInfoKHR(pipeline=pipe)))
        out: dict[str, int | float | bool] = {}
        for i in range(len(execs)):
            info = vk.VkPipelineExecutableInfoKHR(pipeline=pipe, executableIndex=i)
            for st in get_stats(self.ctx.device, info):
                name = st.name if isinstance(st.name, str) else vk.ffi.string(st.name).decode()
                out[name if len(execs) == 1 else f"{i}: {name}"] = _statistic_value(vk, st)
        return out

    # ---- checks -----------------------------------------------------------------------
    def check_size(self, width: int, height: int, algorithm: str) -> None:
        """:class:`ScenarioError` (field ``size``) unless the device and ``algorithm`` take the size."""
        if width < 1 or height < 1:
            raise ScenarioError("size", f"width and height must be >= 1, got {width}x{height}")
        lim = self.ctx.info.max_image_dimension_2d
        if width > lim or height > lim:
            raise ScenarioError("size", f"{width}x{height} exceeds the device limit maxImageDimension2D = {lim}")
        if algorithm in SPD_RULE and (width > SPD_MAX_SIZE or height > SPD_MAX_SIZE):
            raise ScenarioError("size", f"the single-pass downsampler takes at most {SPD_MAX_SIZE}x{SPD_MAX_SIZE}, "
                                        f"got {width}x{height}")

    def check_algorithm(self, algorithm: str) -> Algorithm:
        """``algorithm`` if it is one of ALGORITHMS (else :class:`ScenarioError`) and the device can
        run it (else :class:`NotSupported`)."""
        vk, ctx = self.vk, self.ctx
        alg = choice("algorithm", algorithm, ALGORITHMS)
        if alg == "blit":
            if not ctx.info.queue_graphics:
                raise NotSupported(f"device {ctx.info.name}: vkCmdBlitImage needs a graphics queue")
            fmt_id = getattr(vk, self.fmt.vk_format_name)
            need = (vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT | vk.VK_FORMAT_FEATURE_BLIT_DST_BIT
                    | vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT)
            ctx.require_format(fmt_id, need, "BLIT_SRC, BLIT_DST and SAMPLED_IMAGE_FILTER_LINEAR")
        return alg

    # ---- images -----------------------------------------------------------------------
    def make_image(self, width: int, height: int) -> MipImage:
        return MipImage(self, width, height)

    def upload(self, img: MipImage, level0: Texels, sentinel: float = -1.0) -> None:
        """Level 0 from stored texels, levels 1.. cleared to `sentinel`; all in GENERAL."""
        vk, ctx = self.vk, self.ctx
        with ctx.scope():
            data = np.ascontiguousarray(level0, dtype=self.fmt.storage_dtype)
            staging = ctx.buffer(data.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host_visible=True)
            staging.write(data)
            im = img.image

            def record(cb: Handle) -> None:
                im.barrier(cb, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                           vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                           vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
                if img.levels > 1:
                    color = vk.VkClearColorValue(float32=[sentinel, sentinel, sentinel, sentinel])
                    rng = im.subresource_range(1)
                    vk.vkCmdClearColorImage(cb, im.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, color, 1, [rng])
                sub = vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0,
                                                  baseArrayLayer=0, layerCount=1)
                region = vk.VkBufferImageCopy(bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                                              imageSubresource=sub, imageOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                              imageExtent=vk.VkExtent3D(width=img.width, height=img.height, depth=1))
                vk.vkCmdCopyBufferToImage(cb, staging.handle, im.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                                          [region])
                im.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, vk.VK_IMAGE_LAYOUT_GENERAL,
                           vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                           vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT
                           | vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                           vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                           vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | vk.VK_PIPELINE_STAGE_TRANSFER_BIT)

            ctx.run(record)

    def readback(self, img: MipImage) -> list[Texels]:
        vk, ctx = self.vk, self.ctx
        sizes = img.level_bytes()
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        with ctx.scope():
            buf = ctx.buffer(int(offsets[-1]), vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT, host_visible=True)
            regions = []
            for level, (w, h) in enumerate(img.sizes):
                sub = vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=level,
                                                  baseArrayLayer=0, layerCount=1)
                regions.append(vk.VkBufferImageCopy(bufferOffset=int(offsets[level]), bufferRowLength=0,
                                                    bufferImageHeight=0, imageSubresource=sub,
                                                    imageOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                                    imageExtent=vk.VkExtent3D(width=w, height=h, depth=1)))

            def record(cb: Handle) -> None:
                img.image.barrier(cb, vk.VK_IMAGE_LAYOUT_GENERAL, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                  vk.VK_ACCESS_SHADER_WRITE_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                                  vk.VK_ACCESS_TRANSFER_READ_BIT,
                                  vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                                  vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
                vk.vkCmdCopyImageToBuffer(cb, img.image.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf.handle,
                                          len(regions), regions)
                img.image.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, vk.VK_IMAGE_LAYOUT_GENERAL,
                                  vk.VK_ACCESS_TRANSFER_READ_BIT,
                                  vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT
                                  | vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                                  vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                                  vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | vk.VK_PIPELINE_STAGE_TRANSFER_BIT)

            ctx.run(record)
            raw = buf.read(int(offsets[-1]))
        out: list[Texels] = []
        for level, (w, h) in enumerate(img.sizes):
            chunk = raw[offsets[level]:offsets[level + 1]].view(self.fmt.storage_dtype)
            out.append(chunk.reshape(h, w, self.fmt.channels))
        return out

    # ---- recording --------------------------------------------------------------------
    def _push(self, cb: Handle, img: MipImage, tail: int, handoff: int) -> None:
        vk = self.vk
        data = vk.ffi.new("uint32_t[4]", [tail, handoff, img.width, img.height])
        vk.vkCmdPushConstants(cb, self.layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, PUSH_BYTES, data)

    def _bind(self, cb: Handle, key: PipelineKey, img: MipImage) -> None:
        vk = self.vk
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.pipeline(*key))
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1, [img.set], 0, None)

    def _compute_barrier(self, cb: Handle) -> None:
        vk = self.vk
        self.ctx.memory_barrier(cb, vk.VK_ACCESS_SHADER_WRITE_BIT,
                                vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT,
                                vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)

    def record_tiled(self, cb: Handle, img: MipImage, plan: Sequence[Dispatch] | None = None,
                     after_dispatch: Callable[[Handle, int], None] | None = None) -> None:
        """The plan's dispatches with a barrier between; `after_dispatch(cb, k)` e.g. writes a timestamp."""
        vk = self.vk
        current: PipelineKey | None = None
        for k, d in enumerate(tiled_plan(img.width, img.height) if plan is None else plan):
            if k:
                self._compute_barrier(cb)
            key = dispatch_key(d)
            if key != current:
                self._bind(cb, key, img)
                current = key
            handoff = d.input_level + d.levels if d.tail_levels else NO_HANDOFF
            self._push(cb, img, d.tail_levels, handoff)
            vk.vkCmdDispatch(cb, *self._grid(key, dispatch_grid(d)), 1)
            if after_dispatch is not None:
                after_dispatch(cb, k)

    def record_spd(self, cb: Handle, img: MipImage, split: bool = False) -> None:
        """The single-pass downsampler; ``split``: its levels from 6 on by the one workgroup of a
        second dispatch (after a barrier) instead of the hand-off (``spd-split``)."""
        vk = self.vk
        plan = spd_plan(img.width, img.height)
        keys = spd_keys(img.width, img.height, split)
        if not keys:
            return
        handoff = keys[0][2]
        self._bind(cb, keys[0], img)
        self._push(cb, img, plan.tail_levels if handoff else 0, plan.main_levels if handoff else NO_HANDOFF)
        vk.vkCmdDispatch(cb, *self._grid(keys[0], (plan.groups_x, plan.groups_y)), 1)
        if len(keys) > 1:
            self._compute_barrier(cb)
            # level 6 (at most 64 x 64) as one tile, read where the first dispatch stored it
            self._bind(cb, keys[1], img)
            self._push(cb, img, 0, NO_HANDOFF)
            vk.vkCmdDispatch(cb, 1, 1, 1)

    def record_blit(self, cb: Handle, img: MipImage) -> None:
        """The usual chain: level k-1 in TRANSFER_SRC, level k in TRANSFER_DST, one barrier a level."""
        vk = self.vk
        im = img.image
        if img.levels == 1:
            return
        T = vk.VK_PIPELINE_STAGE_TRANSFER_BIT
        im.barrier(cb, vk.VK_IMAGE_LAYOUT_GENERAL, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                   vk.VK_ACCESS_SHADER_WRITE_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_TRANSFER_READ_BIT,
                   vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | T, T, 0, 1)
        im.barrier(cb, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                   0, vk.VK_ACCESS_TRANSFER_WRITE_BIT, T, T, 1)
        for level in range(1, img.levels):
            (sw, sh), (dw, dh) = img.sizes[level - 1], img.sizes[level]
            src = vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=level - 1,
                                              baseArrayLayer=0, layerCount=1)
            dst = vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=level,
                                              baseArrayLayer=0, layerCount=1)
            region = vk.VkImageBlit(srcSubresource=src,
                                    srcOffsets=[vk.VkOffset3D(x=0, y=0, z=0), vk.VkOffset3D(x=sw, y=sh, z=1)],
                                    dstSubresource=dst,
                                    dstOffsets=[vk.VkOffset3D(x=0, y=0, z=0), vk.VkOffset3D(x=dw, y=dh, z=1)])
            vk.vkCmdBlitImage(cb, im.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, im.handle,
                              vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region], vk.VK_FILTER_LINEAR)
            im.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                       vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_TRANSFER_READ_BIT, T, T, level, 1)
        im.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, vk.VK_IMAGE_LAYOUT_GENERAL,
                   vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                   vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT | vk.VK_ACCESS_TRANSFER_READ_BIT
                   | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                   T, vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | T)

    def record(self, cb: Handle, algorithm: Algorithm, img: MipImage) -> None:
        if algorithm == "tiled":
            self.record_tiled(cb, img)
        elif algorithm in SPD_RULE:
            self.record_spd(cb, img, split=algorithm == "spd-split")
        else:
            self.record_blit(cb, img)

    def generate(self, algorithm: str, level0: Texels) -> list[Texels]:
        """Upload level 0, generate the chain with `algorithm`, read every level back."""
        h, w = level0.shape[:2]
        alg = self.check_algorithm(algorithm)
        self.check_size(w, h, alg)
        with self.ctx.scope():
            img = self.make_image(w, h)
            self.upload(img, level0)
            self.ctx.run(lambda cb: self.record(cb, alg, img))
            return self.readback(img)
