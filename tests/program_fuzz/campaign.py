"""A fuzzing run: programs ``0..n-1`` of a seed, failures grouped into classes, each class with
the first program index that found it and a shrunk reproducer.

A failure's *key* is ``mode / kind`` (``jit(grad(jit)) / structure``).  Its *class* is the key
plus the tags (ops, features, input kinds) of its shrunk program: a later failure with the
same key whose program holds all of a class's tags is counted in that class; any other is
shrunk and becomes a new class (or joins one with the same shrunk tags).

Switches (``--skip`` on the command line, ``NX_RUNE_PROGRAM_FUZZ_SKIP`` in the environment,
comma-separated):
- a mode name (``jit(grad(jit))``) or ``mode:<substring>`` (``mode:vmap`` drops every vmap
  composition);
- ``kind:<prefix>`` drops failures of that kind (``kind:alias-missing``, ``kind:donate``);
  ``kind:bits`` compares forward values within the float tolerance instead of bit for bit;
- anything else is left out of the generated programs: an op family (unary, scalar, binary,
  tie, reduce, view, matmul, identity, creation, random, concrete, const, control, inplace,
  static, scalar_arg), an op tag (``logaddexp``, ``lae_self``, ``matmul``), or a feature
  (``x64``, ``layout`` for the offset/misaligned argument layouts).
"""
import dataclasses
import multiprocessing
import os
import re
import time

from .generator import generate
from .runner import MODES, run_program
from .source import RandomSource, ReplaySource, shrink


@dataclasses.dataclass
class Options:
    modes: list
    gen_skip: frozenset
    kind_skip: tuple
    exact: bool


def parse_skip(items):
    items = [s.strip() for s in items if s and s.strip()]
    modes = list(MODES)
    gen, kinds = set(), []
    exact = True
    for s in items:
        if s in MODES:
            modes.remove(s) if s in modes else None
        elif s.startswith("mode:"):
            modes = [m for m in modes if s[5:] not in m]
        elif s.startswith("kind:"):
            kinds.append(s[5:])
            if s[5:] == "bits":
                exact = False
        else:
            gen.add(s)
    return Options(modes, frozenset(gen), tuple(kinds), exact)


def env_skip():
    return [s for s in os.environ.get("NX_RUNE_PROGRAM_FUZZ_SKIP", "").split(",") if s]


def check(prog, opts, modes=None):
    fails, _ = run_program(prog, opts.modes if modes is None else modes, exact=opts.exact)
    return [f for f in fails if not any(f.kind.startswith(k) for k in opts.kind_skip)]


def program(seed, index, opts):
    return generate(RandomSource(seed, index), opts.gen_skip)


@dataclasses.dataclass
class FailClass:
    key: str
    tags: frozenset
    first: int
    count: int
    detail: str
    reproducer: str
    choices: list
    prog: object = None


def _fails_key(choices, key, opts):
    prog = generate(ReplaySource(choices), opts.gen_skip)
    mode = key.split(" / ")[0]
    modes = [] if mode == "eager" else [mode]
    try:
        fails = check(prog, opts, modes)
    except Exception:      # noqa: BLE001 - a shrink candidate that breaks the harness: not it
        return False
    return any(f.key == key for f in fails)


def _prog_fails(prog, key, opts):
    mode = key.split(" / ")[0]
    try:
        fails = check(prog, opts, [] if mode == "eager" else [mode])
    except Exception:      # noqa: BLE001
        return None
    return next((f.detail for f in fails if f.key == key), None)


def shrink_program(prog, key, opts, max_tries=200):
    """Statement-level shrinking of a program: drop statements and outputs, make its inputs
    plain (C layout, values anywhere), drop the arguments no statement uses."""
    tries = 0

    def ok(cand):
        nonlocal tries
        tries += 1
        return _prog_fails(cand, key, opts) is not None

    changed = True
    while changed and tries < max_tries:
        changed = False
        for i in reversed(range(len(prog.body))):
            if tries >= max_tries:
                break
            cand = dataclasses.replace(prog, body=prog.body[:i] + prog.body[i + 1:],
                                       line_tags=prog.line_tags[:i] + prog.line_tags[i + 1:])
            if ok(cand):
                prog, changed = cand, True
        # replace a statement's expression by one of the values it reads (keeps later names)
        for i in reversed(range(len(prog.body))):
            m = re.match(r"^(v\d+) = (.*)$", prog.body[i])
            if not m or tries >= max_tries:
                continue
            for name in dict.fromkeys(re.findall(r"\b(?:v|x|C)\d+\b", m.group(2))):
                if name == m.group(2):
                    break
                body = list(prog.body)
                body[i] = f"{m.group(1)} = {name}"
                cand = dataclasses.replace(prog, body=body)
                if ok(cand):
                    prog, changed = cand, True
                    break
        # and a plain copy `vK = name` by that name everywhere
        for i in reversed(range(len(prog.body))):
            m = re.match(r"^(v\d+) = ((?:v|x|C)\d+)$", prog.body[i])
            if not m or tries >= max_tries:
                continue
            sub = re.compile(r"\b%s\b" % m.group(1))
            cand = dataclasses.replace(
                prog, body=prog.body[:i] + [sub.sub(m.group(2), b) for b in prog.body[i + 1:]],
                line_tags=prog.line_tags[:i] + prog.line_tags[i + 1:],
                outputs=list(dict.fromkeys(sub.sub(m.group(2), o) for o in prog.outputs)))
            if ok(cand):
                prog, changed = cand, True
        if len(prog.outputs) > 1:
            for o in prog.outputs:
                cand = dataclasses.replace(prog, outputs=[o])
                if ok(cand):
                    prog, changed = cand, True
                    break
        for j, spec in enumerate(prog.inputs):
            for field, plain in (("layout", "c"), ("values", "normal")):
                if getattr(spec, field) != plain and tries < max_tries:
                    ins = list(prog.inputs)
                    ins[j] = dataclasses.replace(spec, **{field: plain})
                    cand = dataclasses.replace(prog, inputs=ins)
                    if ok(cand):
                        prog, changed = cand, True
        text = "\n".join(prog.body + prog.outputs)
        for j in reversed(range(len(prog.inputs))):
            if len(prog.inputs) > 1 and not _uses(text, f"x{j}") and tries < max_tries:
                cand = _drop_input(prog, j)
                if ok(cand):
                    prog, changed = cand, True
                    text = "\n".join(prog.body + prog.outputs)
        for field, name in (("scalar", "a"), ("static", "s"), ("key", "key")):
            if getattr(prog, field) not in (None, False) and not _uses(text, name):
                cand = dataclasses.replace(prog, **{field: False if field == "key" else None})
                if ok(cand):
                    prog, changed = cand, True
    return prog


def _drop_input(prog, j):
    """The program without its unused argument x<j> (the later ones renumbered)."""
    import re

    def ren(line):
        return re.sub(r"\bx(\d+)\b",
                      lambda m: f"x{int(m.group(1)) - 1}" if int(m.group(1)) > j else m.group(0),
                      line)
    ins = prog.inputs[:j] + prog.inputs[j + 1:]
    if ins and ins[0].values == "same":
        ins[0] = dataclasses.replace(ins[0], values="normal")
    return dataclasses.replace(prog, inputs=ins, body=[ren(b) for b in prog.body],
                               outputs=[ren(o) for o in prog.outputs])


def _uses(text, name):
    import re
    return re.search(r"\b%s\b" % re.escape(name), text) is not None


def shrink_failure(choices, key, opts, max_tries=300):
    small = shrink(choices, lambda c: _fails_key(c, key, opts), max_tries=max_tries)
    prog = generate(ReplaySource(small), opts.gen_skip)
    prog = shrink_program(prog, key, opts)
    detail = _prog_fails(prog, key, opts) or ""
    return prog, detail


def _worker(args):
    seed, lo, hi, opts, known, cap = args
    out_counts = {}
    raw = []
    n_invalid = 0
    per_key = {}
    for i in range(lo, hi):
        prog = program(seed, i, opts)
        fails, invalid = run_program(prog, opts.modes, exact=opts.exact)
        if invalid:
            n_invalid += 1
        for f in fails:
            if any(f.kind.startswith(k) for k in opts.kind_skip):
                continue
            hit = next((j for j, (k, t) in enumerate(known) if k == f.key and t <= prog.tags),
                       None)
            if hit is not None:
                out_counts[hit] = out_counts.get(hit, 0) + 1
            elif per_key.get(f.key, 0) < cap:
                per_key[f.key] = per_key.get(f.key, 0) + 1
                raw.append((i, f.key, f.detail, frozenset(prog.tags), prog.choices))
    return out_counts, raw, n_invalid, hi - lo


class Campaign:
    def __init__(self, seed, opts, shrink_tries=300, log=print, jsonl=None, no_shrink=False):
        self.seed, self.opts, self.shrink_tries, self.log = seed, opts, shrink_tries, log
        self.jsonl, self.no_shrink = jsonl, no_shrink
        self.classes = []
        self.invalid = 0
        self.done = 0

    def _absorb(self, i, key, detail, tags, choices):
        if self.jsonl is not None:
            import json
            self.jsonl.write(json.dumps({"index": i, "key": key, "detail": detail[:300],
                                         "tags": sorted(tags), "choices": choices}) + "\n")
            self.jsonl.flush()
        if self.no_shrink:
            for c in self.classes:
                if c.key == key:
                    c.count += 1
                    return
            prog = generate(ReplaySource(choices), self.opts.gen_skip)
            self.classes.append(FailClass(key, frozenset(tags), i, 1, detail, prog.describe(),
                                          choices, prog))
            self.log(f"[program {i}] new failure key {key} (not shrunk)")
            return
        for c in self.classes:
            if c.key == key and c.tags <= tags:
                c.count += 1
                c.first = min(c.first, i)
                return
        # a shrunk reproducer of the same failure kind found under another mode often shows
        # this one too (one defect seen through several compositions): reuse it
        kind = key.split(" / ")[1]
        for c in list(self.classes):
            if c.key.split(" / ")[1] == kind and c.prog is not None and c.tags <= tags:
                d = _prog_fails(c.prog, key, self.opts)
                if d is not None:
                    self.classes.append(FailClass(key, c.tags, i, 1, d, c.reproducer,
                                                  c.choices, c.prog))
                    return
        prog, sdetail = shrink_failure(choices, key, self.opts, self.shrink_tries)
        stags = frozenset(prog.tags)
        for c in self.classes:
            if c.key == key and c.tags == stags:
                c.count += 1
                c.first = min(c.first, i)
                return
        c = FailClass(key, stags, i, 1, sdetail or detail, prog.describe(), prog.choices, prog)
        self.classes.append(c)
        self.log(f"[program {i}] new failure class {key}\n{_indent(c.reproducer)}\n"
                 f"    -> {c.detail[:400]}")

    def run(self, n, jobs=1, chunk=200, start=0):
        t0 = time.time()
        if jobs <= 1:
            for lo in range(start, start + n, chunk):
                hi = min(lo + chunk, start + n)
                self._merge(_worker((self.seed, lo, hi, self.opts, self._known(), self._cap())))
        else:
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(jobs) as pool:
                ranges = [(lo, min(lo + chunk, start + n)) for lo in range(start, start + n, chunk)]
                # results come back in order, so the first index of each class is exact
                args = ((self.seed, lo, hi, self.opts, self._known(), self._cap())
                        for lo, hi in ranges)
                for res in pool.imap(_worker, args):
                    self._merge(res)
                    if self.done % (chunk * jobs * 10) == 0:
                        self.log(f"  {self.done} programs, {len(self.classes)} classes, "
                                 f"{time.time() - t0:.0f} s")
        return self.classes

    def _known(self):
        # with a log of every failing program, workers attribute nothing themselves
        return [] if self.jsonl is not None else [(c.key, c.tags) for c in self.classes]

    def _cap(self):
        return 10 ** 9 if self.jsonl is not None else 8

    def _merge(self, res):
        counts, raw, n_invalid, n = res
        known = self._known()
        for j, k in counts.items():
            key, tags = known[j]
            for c in self.classes:
                if c.key == key and c.tags == tags:
                    c.count += k
        for i, key, detail, tags, choices in raw:
            self._absorb(i, key, detail, tags, choices)
        self.invalid += n_invalid
        self.done += n


def _indent(text):
    return "\n".join("    " + ln for ln in text.splitlines())


def report(classes):
    """The classes, those with one shrunk reproducer and failure kind together (one defect
    seen through several modes), in the order they were first found."""
    groups = {}
    for c in sorted(classes, key=lambda c: c.first):
        kind = c.key.split(" / ")[1]
        groups.setdefault((kind, c.reproducer), []).append(c)
    lines = []
    for (kind, repro), cs in sorted(groups.items(), key=lambda kv: kv[1][0].first):
        first = min(c.first for c in cs)
        modes = ", ".join(f"{c.key.split(' / ')[0]} (#{c.first}, {c.count})" for c in cs)
        lines.append(f"== {kind}: first found by program {first}; modes (first program, "
                     f"programs failing): {modes}")
        lines.append(f"   shrunk program's tags: {sorted(cs[0].tags)}")
        lines.append(_indent(repro))
        lines.append("    -> " + cs[0].detail.replace("\n", "\n       ")[:700])
    return "\n".join(lines)
