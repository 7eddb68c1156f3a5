"""Mesa's real turnip, run without hardware, as the model's oracle (``turnip-fdm box``).

:mod:`.root` builds and finds the box's Debian root; :mod:`.record` runs inside it and records
one render pass per scenario on turnip; :mod:`.rd`, :mod:`.pm4`, :mod:`.registers` and
:mod:`.decode` read the command streams back; :mod:`.jobs` translates scenarios;
:mod:`.compare` and :mod:`.check` compare the two sides; :mod:`.cli` is ``turnip-fdm box``.
docs/box.md says what the box is and where it stops.
"""
