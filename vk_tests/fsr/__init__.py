"""The ``fsr`` backend: the model's per-bin areas as a ``VK_KHR_fragment_shading_rate`` attachment
(docs/fsr.md): :mod:`.scene` (scene and rate arithmetic), :mod:`.device`, :mod:`.render`,
:mod:`.judge`, :mod:`.cases`.
"""
