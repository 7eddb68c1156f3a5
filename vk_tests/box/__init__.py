"""The device suite's box device (``--device box:GPU``): the ``fdm`` cases on Mesa's turnip in
the box (:mod:`turnip_box`), judged on their command streams (:mod:`.device`)."""
