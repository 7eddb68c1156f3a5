"""The ``host`` backend: the model against independent readings of the spec, on the host only
(oracles A1-A3, docs/host-oracles.md).

* :mod:`.oracles` — the oracles themselves (no Vulkan);
* :mod:`.cases` — each oracle as a case, and its judge.
"""
