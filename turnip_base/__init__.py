"""The bottom layer every turnip-fdm package shares; it imports no other project package.

* :mod:`turnip_base.errors` — the error contract (four refusals, one line each);
* :mod:`turnip_base.outputs` — :func:`~turnip_base.outputs.write_bytes`,
  :func:`~turnip_base.outputs.write_text`, :func:`~turnip_base.outputs.make_dir`: a user-given
  output path that cannot be written becomes a one-line ``ScenarioError`` naming the flag;
* :mod:`turnip_base.options` — :func:`~turnip_base.options.choice`, the one validation of a
  string option;
* :mod:`turnip_base.harness` — the Vulkan harness (device selection, the validation layer,
  buffers, images, compute pipelines, one-shot submissions) that ``vk_tests`` and
  ``mipmap.gpu`` build on.
"""
