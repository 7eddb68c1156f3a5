"""The ``fdm`` backend: real ``VK_EXT_fragment_density_map`` render passes (docs/fdm-backend.md).

* :mod:`.scene` — the scene's ``"fdm"`` options; :mod:`.device` — what the device must have and
  the device with it enabled; :mod:`.expected` — what turnip must produce;
* the passes, each on :class:`vk_tests.graphics.fdm_pass.FdmPass`: :mod:`.render` (the core
  scenes), :mod:`.geometry` (depth and MSAA), :mod:`.sampling` (B18's apron sampling), each with
  its run and, for the last two, its judge; :mod:`.judge` — the core scenes' judge;
* :mod:`.cases` — the backend's cases and the replay twins of its scenes.
"""
