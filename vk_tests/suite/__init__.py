"""The suite's machinery, the same for every backend: what a case is (:mod:`.cases`), which
cases a run takes (:mod:`.selection`), how a run goes (:mod:`.runner`), the result bundle on
disk (:mod:`.bundle`) and its JUnit view (:mod:`.junit`).  It imports no backend."""
