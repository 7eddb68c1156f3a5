"""Colour targets of the graphics cases on top of the harness (:mod:`turnip_base.harness`).

* :func:`color_image` (:class:`ColorTarget`): a single-level colour image usable as a render
  target and as a transfer source and destination (RGBA16_UINT / RGBA32_UINT for integer
  outputs, RGBA8_UNORM for a gradient) that knows its layout; each command helper of
  :mod:`vk_tests.graphics.passes` moves it to the optimal layout behind a full barrier.
* :func:`require_graphics`: NotSupported unless the device can render and blit the format.
* :func:`read_image`: the whole image read back as ``(height, width, channels)``.
* :class:`LayeredImage`: an image of several array layers with one view of all of them, in a
  tracked layout (the FDM passes' colour attachments and density maps).

Every image is created by the harness's one factory (:meth:`turnip_base.harness.Vulkan.create_image`)
and owned by the context (destroyed on ``close`` or at the end of the enclosing ``ctx.scope()``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from turnip_base.errors import NotSupported
from turnip_base.harness import Handle, Vulkan

__all__ = ["FORMATS", "ColorTarget", "LayeredImage", "Rect", "color_image", "read_image", "require_graphics",
           "subresource_layers", "vk_format"]

#: x, y, width, height (half-open, framebuffer pixels)
Rect = tuple[int, int, int, int]

#: name -> (VkFormat attribute, channels, numpy dtype, clear-value kind)
FORMATS: dict[str, tuple[str, int, Any, str]] = {
    "rgba16ui": ("VK_FORMAT_R16G16B16A16_UINT", 4, np.uint16, "uint32"),
    "rgba32ui": ("VK_FORMAT_R32G32B32A32_UINT", 4, np.uint32, "uint32"),
    "rgba8": ("VK_FORMAT_R8G8B8A8_UNORM", 4, np.uint8, "float32"),
}


#: Vulkan 1.1 core format features the binding leaves as None
FORMAT_FEATURE_TRANSFER_SRC = 0x4000
FORMAT_FEATURE_TRANSFER_DST = 0x8000


def vk_format(ctx: Vulkan, fmt: str) -> int:
    return int(getattr(ctx.vk, FORMATS[fmt][0]))


def require_graphics(ctx: Vulkan, fmt: str, blit: bool = True) -> None:
    """NotSupported unless the queue does graphics and ``fmt`` is a colour attachment (and a
    blit source and destination when ``blit``) with optimal tiling."""
    vk = ctx.vk
    if not ctx.info.queue_graphics:
        raise NotSupported(f"device {ctx.info.name}: no queue family with VK_QUEUE_GRAPHICS_BIT")
    need = vk.VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT | FORMAT_FEATURE_TRANSFER_SRC | FORMAT_FEATURE_TRANSFER_DST
    what = "COLOR_ATTACHMENT, TRANSFER_SRC and TRANSFER_DST"
    if blit:
        need |= vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT | vk.VK_FORMAT_FEATURE_BLIT_DST_BIT
        what += ", BLIT_SRC and BLIT_DST"
    ctx.require_format(vk_format(ctx, fmt), need, what)


class ColorTarget:
    """A single-level colour image usable as a render target and a transfer source and
    destination, with the layout it is in.  :meth:`use` moves it to the layout the next
    command needs behind a full barrier (every earlier access happens-before the next one), so
    the helpers below need no other synchronisation and every layout is the optimal one (the
    validation layer warns about ``GENERAL``)."""

    def __init__(self, ctx: Vulkan, width: int, height: int, fmt: str):
        vk = ctx.vk
        self.ctx, self.fmt, self.width, self.height = ctx, fmt, width, height
        f = vk_format(ctx, fmt)
        usage = (vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
                 | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
        self.image = ctx.image(width, height, 1, f, f, usage)
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    @property
    def handle(self) -> Handle:
        return self.image.handle

    def use(self, cb: Handle, layout: int) -> None:
        vk = self.ctx.vk
        acc = (vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT
               | vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT)
        src = 0 if self.layout == vk.VK_IMAGE_LAYOUT_UNDEFINED else acc
        all_stages = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        self.image.barrier(cb, self.layout, layout, src, acc, all_stages, all_stages)
        self.layout = layout


def color_image(ctx: Vulkan, width: int, height: int, fmt: str) -> ColorTarget:
    """A render target + transfer source/destination (content undefined until cleared)."""
    return ColorTarget(ctx, width, height, fmt)


def subresource_layers(vk: Any, base_layer: int = 0, layers: int = 1, aspect: int | None = None) -> Handle:
    """``VkImageSubresourceLayers`` of mip level 0 (colour aspect unless ``aspect``)."""
    return vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT if aspect is None else aspect,
                                       mipLevel=0, baseArrayLayer=base_layer, layerCount=layers)


def read_back(ctx: Vulkan, handle: Handle, use: Callable[[Handle, int], None], subresource: Handle,
              width: int, height: int, nbytes: int) -> NDArray[np.uint8]:
    """The bytes of one ``width`` x ``height`` subresource of image ``handle``, copied to a
    host-visible buffer (``use`` moves the image to ``TRANSFER_SRC_OPTIMAL``; submits and waits)."""
    vk = ctx.vk
    with ctx.scope():
        buf = ctx.buffer(nbytes, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT, host_visible=True)
        region = vk.VkBufferImageCopy(bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                                      imageSubresource=subresource, imageOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                      imageExtent=vk.VkExtent3D(width=width, height=height, depth=1))

        def record(cb: Handle) -> None:
            use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
            vk.vkCmdCopyImageToBuffer(cb, handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf.handle, 1, [region])
            ctx.memory_barrier(cb, vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT,
                               vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT)

        ctx.run(record)
        raw: NDArray[np.uint8] = buf.read(nbytes)
    return raw


def read_image(ctx: Vulkan, target: ColorTarget) -> NDArray[Any]:
    """The whole image as ``(height, width, channels)`` of the format's dtype (submits and
    waits)."""
    image = target.image
    _, channels, dtype, _ = FORMATS[target.fmt]
    nbytes = image.width * image.height * channels * np.dtype(dtype).itemsize
    raw = read_back(ctx, image.handle, target.use, subresource_layers(ctx.vk), image.width, image.height, nbytes)
    return raw.view(dtype).reshape(image.height, image.width, channels).copy()


class LayeredImage:
    """A single-level 2D image of ``layers`` array layers with one view of all of them
    (2D_ARRAY when ``array_view`` or ``layers > 1``), ``samples`` samples and ``aspect`` (colour
    by default), in a tracked layout: the FDM passes' attachments and density maps."""

    def __init__(self, ctx: Vulkan, size: tuple[int, int], layers: int, fmt: int, usage: int, flags: int = 0,
                 array_view: bool = False, view_flags: int = 0, samples: int = 1, aspect: int | None = None):
        vk = ctx.vk
        self.ctx, self.size, self.layers, self.format = ctx, size, layers, fmt
        self.aspect = vk.VK_IMAGE_ASPECT_COLOR_BIT if aspect is None else aspect
        self.handle = ctx.create_image(size, fmt, usage, layers=layers, samples=samples, flags=flags)
        vtype = vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY if (array_view or layers > 1) else vk.VK_IMAGE_VIEW_TYPE_2D
        self.view = ctx.image_view(self.handle, fmt, view_type=vtype, aspect=self.aspect, layers=layers,
                                   flags=view_flags)
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    def range(self) -> Handle:
        vk = self.ctx.vk
        return vk.VkImageSubresourceRange(aspectMask=self.aspect, baseMipLevel=0, levelCount=1,
                                          baseArrayLayer=0, layerCount=self.layers)

    def barrier(self, cb: Handle, layout: int, src_access: int, dst_access: int, src_stage: int,
                dst_stage: int) -> None:
        vk = self.ctx.vk
        b = vk.VkImageMemoryBarrier(srcAccessMask=src_access, dstAccessMask=dst_access, oldLayout=self.layout,
                                    newLayout=layout, srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=self.handle,
                                    subresourceRange=self.range())
        vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, None, 0, None, 1, [b])
        self.layout = layout
