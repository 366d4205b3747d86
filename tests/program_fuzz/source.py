"""Choice sources: where a generated program's random decisions come from.

The generator asks a source for small integers only (``below(n)``), so one program is fully
described by the list of integers it drew (its *choice sequence*).  Three sources:

- ``RandomSource(seed, index)``: program ``index`` of the run with ``seed`` (a seeded generator:
  the same index gives the same program on every machine and every run);
- ``ReplaySource(choices)``: replays a recorded sequence, answering 0 past its end (0 is every
  decision's simplest option, so a shorter sequence is a simpler program);
- ``HypothesisSource(data)``: draws from hypothesis's ``st.data()``, so hypothesis can shrink.

``shrink(choices, still_fails)`` is a small choice-sequence shrinker in the style of
Hypothesis/minithesis: it deletes runs of choices and lowers single choices while the failure
persists.
"""
import random


class Source:
    def __init__(self):
        self.record = []

    def below(self, n):
        """An integer in [0, n); 0 is the simplest option."""
        if n <= 1:
            return 0
        v = self._draw(n)
        self.record.append(v)
        return v

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, percent):
        """True with probability percent/100; the shrunk answer (0) is False."""
        return self.below(100) >= 100 - percent

    def weighted(self, items):
        """items: [(weight, value)], first the simplest."""
        total = sum(w for w, _ in items)
        r = self.below(total)
        for w, v in items:
            if r < w:
                return v
            r -= w
        return items[-1][1]


class RandomSource(Source):
    def __init__(self, seed, index):
        super().__init__()
        self._rng = random.Random(f"nx-program-fuzz:{seed}:{index}")

    def _draw(self, n):
        return self._rng.randrange(n)


class ReplaySource(Source):
    def __init__(self, choices):
        super().__init__()
        self._choices = list(choices)
        self._i = 0

    def _draw(self, n):
        if self._i < len(self._choices):
            v = self._choices[self._i]
            self._i += 1
            return v % n
        return 0


class HypothesisSource(Source):
    def __init__(self, data):
        super().__init__()
        from hypothesis import strategies as st
        self._data = data
        self._st = st

    def _draw(self, n):
        return self._data.draw(self._st.integers(0, n - 1))


def shrink(choices, still_fails, max_tries=400):
    """Shrink a failing choice sequence; ``still_fails(choices) -> bool``.  Returns the
    smallest sequence found (shorter first, then lexicographically smaller)."""
    best = list(choices)
    tries = [0]

    def attempt(cand):
        if tries[0] >= max_tries:
            return False
        tries[0] += 1
        if still_fails(cand):
            return True
        return False

    improved = True
    while improved and tries[0] < max_tries:
        improved = False
        # delete runs of choices, long runs first
        for k in (16, 8, 4, 2, 1):
            i = len(best) - k
            while i >= 0 and tries[0] < max_tries:
                cand = best[:i] + best[i + k:]
                if attempt(cand):
                    best = cand
                    improved = True
                i -= 1
        # zero, then lower, single choices
        for i in range(len(best)):
            if tries[0] >= max_tries:
                break
            if best[i] == 0:
                continue
            cand = best[:i] + [0] + best[i + 1:]
            if attempt(cand):
                best = cand
                improved = True
                continue
            lo, hi = 0, best[i]
            while lo + 1 < hi and tries[0] < max_tries:
                mid = (lo + hi) // 2
                cand = best[:i] + [mid] + best[i + 1:]
                if attempt(cand):
                    best, hi = cand, mid
                    improved = True
                else:
                    lo = mid
    return best
