"""The ``replay`` backend: turnip's per-bin FDM scheme replayed with ordinary Vulkan on any device
(docs/replay.md).

* :mod:`.scene` — the scene and its plan; :mod:`.render` — the per-bin scheme
  (:class:`~vk_tests.replay.render.Replayer`); :mod:`.judge` — the large-fragment oracle;
* the variants, each a replayer subclass with its oracle and judge: :mod:`.depth` (depth and
  LRZ), :mod:`.msaa` (4× MSAA resolve), :mod:`.subsampled` (the subsampled image),
  :mod:`.shared_viewport` (``gl_ViewportIndex`` written);
* :mod:`.cases` — the backend's cases.
"""
