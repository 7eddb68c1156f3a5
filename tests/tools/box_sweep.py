"""A generated sweep through the box, its differences grouped: ``python tests/tools/box_sweep.py N SEED
[--mesa V]`` prints the outcome counts and, per group (FDM on/off, chip, the fields that differ; or
the not-supported reason), how many (scenario, GPU) pairs and the first one's name.  The figures of
docs/box.md's sweep come from it; ``turnip-fdm box check --generated N --seed S`` runs the same
scenarios with one line per difference."""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from turnip_box.check import check, items_of  # noqa: E402
from turnip_box.generate import generated_scenarios  # noqa: E402
from turnip_box.root import DEFAULT_MESA, find_box  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("n", type=int)
    ap.add_argument("seed", type=int)
    ap.add_argument("--mesa", default=DEFAULT_MESA)
    a = ap.parse_args()
    t0 = time.perf_counter()
    out = check(find_box(a.mesa), items_of(generated_scenarios(a.n, a.seed), []))
    counts = collections.Counter(o.status for o in out)
    bins = sum(len(o.driver.bins) for o in out if o.driver is not None)
    compared = sum(o.compared for o in out)
    print(f"{a.n} scenarios (seed {a.seed}), Mesa {a.mesa}: {dict(counts)}; {bins} bins, {compared} values compared; "
          f"{time.perf_counter() - t0:.0f} s")
    groups: collections.Counter[tuple[object, ...]] = collections.Counter()
    first: dict[tuple[object, ...], str] = {}
    for o in out:
        if o.status == "differ":
            fields = tuple(sorted({d.field for d in o.differences}))
            fdm_on = "fdm" if getattr(o.plan, "fdm_enabled", True) else "no fdm"
            key: tuple[object, ...] = ("differ", fdm_on, f"a{o.item.scenario.gpu.chip}xx", fields)
        elif o.status in ("error", "not supported"):
            key = (o.status, o.why[:100])
        else:
            continue
        groups[key] += 1
        first.setdefault(key, o.item.name)
    for k, v in groups.most_common():
        print(f"{v:6d}  {' | '.join(map(str, k))}  (e.g. {first[k]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
