"""The suite's Vulkan layer for graphics, on the harness of :mod:`turnip_base.harness`:

* :mod:`.shaders` — the committed SPIR-V (:func:`~vk_tests.graphics.shaders.load_spv`);
* :mod:`.targets` — colour targets, layered images, readback, the graphics requirement;
* :mod:`.passes` — render passes, framebuffers, the full-screen pipeline and the commands;
* :mod:`.fdm_pass` — the base of every real FDM pass (the map, the colour attachments, the
  render pass 2 / dynamic-rendering begin and end, the readback).

It imports no backend; every backend imports it.
"""
