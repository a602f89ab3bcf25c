#!/usr/bin/env python3
"""gputrace test runner: every test_* function in tests/test_*.py, then every
C unit test binary in build/tests/unit/. Ends with the line 'N passed, N failed'.

Usage: python3 tests/run_tests.py [SUBSTRING...] [-SUBSTRING...]
  SUBSTRING   run only tests whose name contains one of them
  -SUBSTRING  and of those, not the ones whose name contains it
"""
import importlib.util
import os
import subprocess
import sys
import time
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def wanted(name, filters):
    take = [f for f in filters if not f.startswith("-")]
    drop = [f[1:] for f in filters if f.startswith("-")]
    return (not take or any(f in name for f in take)) and not any(f in name for f in drop)


def python_tests(filters):
    for fn in sorted(os.listdir(HERE)):
        if not (fn.startswith("test_") and fn.endswith(".py")):
            continue
        path = os.path.join(HERE, fn)
        spec = importlib.util.spec_from_file_location(fn[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception:
            yield (fn[:-3] + ".<import>", None, traceback.format_exc())
            continue
        for name in sorted(dir(mod)):
            if name.startswith("test_") and callable(getattr(mod, name)):
                full = "%s.%s" % (fn[:-3], name)
                if wanted(full, filters):
                    yield (full, getattr(mod, name), None)


def unit_tests(filters):
    d = os.path.join(ROOT, "build", "tests", "unit")
    if not os.path.isdir(d):
        return
    for fn in sorted(os.listdir(d)):
        path = os.path.join(d, fn)
        if os.path.isfile(path) and os.access(path, os.X_OK) and wanted("unit." + fn, filters):
            yield ("unit." + fn, path)


def _cut(line):
    """A long line's head and tail (an assertion's 'expected ..., got ...')."""
    return line if len(line) <= 1200 else line[:400] + " [...] " + line[-800:]


def main():
    filters = sys.argv[1:]
    passed = failed = 0
    failures, skipped, whys = [], [], []
    for name, fn, err in python_tests(filters):
        t0 = time.monotonic()
        skip = None
        if err is None:
            try:
                fn()
            except unittest.SkipTest as e:
                # only for what the machine lacks (a test says which); never counted as passed
                skip = str(e)
            except Exception:
                err = traceback.format_exc()
        dt = time.monotonic() - t0
        if skip is not None:
            skipped.append(name)
            print("SKIP %s (%.1fs): %s" % (name, dt, skip), flush=True)
        elif err is None:
            passed += 1
            print("PASS %s (%.1fs)" % (name, dt), flush=True)
        else:
            failed += 1
            failures.append(name)
            whys.append((name, err))
            print("FAIL %s (%.1fs)\n%s" % (name, dt, err.rstrip()), flush=True)
    for name, path in unit_tests(filters):
        try:
            r = subprocess.run([path], capture_output=True, text=True, timeout=300)
            ok, out = r.returncode == 0, r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            ok, out = False, "timed out"
        if ok:
            passed += 1
            print("PASS %s" % name, flush=True)
        else:
            failed += 1
            failures.append(name)
            whys.append((name, out))
            print("FAIL %s\n%s" % (name, out.rstrip()), flush=True)
    if skipped:
        print("skipped (not counted): " + " ".join(skipped))
    # Each failure's last lines again, at the end, where a CI log cut to
    # its tail still shows why.
    for name, err in whys:
        tail = err.rstrip().splitlines()[-16:]
        print("why %s:\n  %s" % (name, "\n  ".join(_cut(line) for line in tail)))
    if failures:
        print("failed: " + " ".join(failures))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
