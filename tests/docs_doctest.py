"""Run the examples of one documentation page: ``python tests/docs_doctest.py PAGE.md
[--pycon-only]``.

Every ```pycon block (``>>>`` prompts) runs as a doctest, its printed output checked; every
```python block runs as a script.  One namespace per page, in order, so a page's examples
build on each other.  ``--pycon-only`` skips the python blocks (for a page whose python
blocks are fragments, such as docs/distributed.md's).  Exit status 1 and a report of each
failure when one fails.  tests/test_docs_examples.py runs it once per page, each in a fresh
interpreter (pages register primitives and change settings).
"""
import doctest
import pathlib
import re
import sys
import traceback

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))       # this checkout's nx_rune, whatever else is installed

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
BLOCK = re.compile(r"^```(pycon|python)\n(.*?)^```", re.S | re.M)


def run_page(path, scripts=True):
    text = pathlib.Path(path).read_text()
    globs = {"__name__": "__docs__"}
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    parser = doctest.DocTestParser()
    failures, examples = [], 0
    for m in BLOCK.finditer(text):
        lang, body = m.groups()
        line = text[:m.start()].count("\n") + 2
        if lang == "pycon":
            test = parser.get_doctest(body, globs, f"{path}:{line}", str(path), line - 1)
            examples += len(test.examples)
            out = []
            result = runner.run(test, out=out.append, clear_globs=False)
            globs = test.globs          # the next block sees this one's names
            if result.failed:
                failures.append("".join(out))
        elif scripts:
            examples += 1
            try:
                exec(compile(body, f"{path}:{line}", "exec"), globs)
            except Exception:
                failures.append(f"{path}, the python block at line {line}:\n"
                                + traceback.format_exc())
    return examples, failures


if __name__ == "__main__":
    n, failed = run_page(sys.argv[1], scripts="--pycon-only" not in sys.argv[2:])
    print(f"{sys.argv[1]}: {n} examples, {len(failed)} failing blocks")
    for f in failed:
        print(f)
    sys.exit(1 if failed else 0)
