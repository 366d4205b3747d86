"""python -m tests.program_fuzz [-n N] [--seed S] [--jobs J] [--skip a,b] [--show-index I]

Runs programs 0..N-1 of the seed and prints, for each failure class, the first program index
that found it, how many programs it failed, and a shrunk reproducer.  ``--show-index I``
prints program I's source.  Skips: see campaign.py (also NX_RUNE_PROGRAM_FUZZ_SKIP)."""
import argparse
import sys

from .campaign import Campaign, env_skip, parse_skip, program, report


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.program_fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--skip", "--skip-class", action="append", default=[],
                    help="comma-separated: mode, mode:<substr>, kind:<prefix>, family/op/feature")
    ap.add_argument("--shrink-tries", type=int, default=300)
    ap.add_argument("--show-index", type=int, default=None)
    ap.add_argument("--no-shrink", action="store_true",
                    help="one class per failure key, unshrunk (fast survey)")
    ap.add_argument("--jsonl", default=None,
                    help="write every failing program (index, key, detail, tags, choices)")
    a = ap.parse_args(argv)
    skips = env_skip() + [s for item in a.skip for s in item.split(",")]
    opts = parse_skip(skips)
    if a.show_index is not None:
        p = program(a.seed, a.show_index, opts)
        print(p.describe())
        return 0
    jsonl = open(a.jsonl, "w") if a.jsonl else None
    camp = Campaign(a.seed, opts, a.shrink_tries, jsonl=jsonl, no_shrink=a.no_shrink)
    classes = camp.run(a.programs, jobs=a.jobs, chunk=a.chunk, start=a.start)
    print(f"\n{camp.done} programs (seed {a.seed}), {len(classes)} failure classes, "
          f"{camp.invalid} invalid programs; skipped: {sorted(skips) or 'nothing'}\n")
    print(report(classes))
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
