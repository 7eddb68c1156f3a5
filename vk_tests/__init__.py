"""The FDM device suite (docs/device-suite.md), by job:

* :mod:`vk_tests.suite` — the machinery every backend shares: cases and verdicts, selection,
  the runner, the result bundle, JUnit;
* :mod:`vk_tests.registry` — the one table of every backend's ``cases()``;
  :mod:`vk_tests.cli` — ``turnip-fdm vk list|run|check``;
* :mod:`vk_tests.graphics` — the Vulkan layer for graphics cases on the harness of
  :mod:`turnip_base.harness` (targets, passes, the FDM pass base), with the committed SPIR-V
  of ``shaders/`` in ``spv/``;
* :mod:`vk_tests.scenes` — the scene builders; :mod:`vk_tests.spec` — the spec formulas the
  oracles and judges share;
* one package per backend: :mod:`vk_tests.host`, :mod:`vk_tests.replay`, :mod:`vk_tests.fdm`,
  :mod:`vk_tests.fsr` (and ``vk_tests/box``, turnip itself under a DRM shim).
"""
