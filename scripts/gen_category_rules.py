#!/usr/bin/env python3
"""Copies the default kernel category rules (analyzer/trace/kernel_categories.tsv)
into the schema (schema/gputrace.sql, between `-- @category_rules` and
`-- @category_rules end`) as the rows of kernel_category_rules, so that
every version 9 trace carries the rules its `kernel_categories` view
reads. Run it after editing the .tsv file; tests/test_categories.py checks
the two agree.

  python3 scripts/gen_category_rules.py            # rewrite the schema
  python3 scripts/gen_category_rules.py --check    # exit 1 when they differ
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TSV = os.path.join(ROOT, "analyzer", "trace", "kernel_categories.tsv")
SCHEMA = os.path.join(ROOT, "schema", "gputrace.sql")
BEGIN, END = "-- @category_rules\n", "-- @category_rules end\n"


def rules(path=TSV):
    """[(pattern, category)] in order, as the analyzer parses the file."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n").rstrip("\r").rstrip(" ")
            if not line or line.startswith("#"):
                continue
            pattern, category = line.split("\t", 1)
            out.append((pattern, category.lstrip("\t")))
    return out


def block():
    def q(s):
        return "'" + s.replace("'", "''") + "'"
    rows = ["    (%d, %s, %s)" % (i + 1, q(p), q(c)) for i, (p, c) in enumerate(rules())]
    return BEGIN + "INSERT INTO kernel_category_rules (priority, pattern, category) VALUES\n" + \
        ",\n".join(rows) + ";\n" + END


def main():
    with open(SCHEMA) as f:
        text = f.read()
    a, b = text.index(BEGIN), text.index(END) + len(END)
    new = text[:a] + block() + text[b:]
    if "--check" in sys.argv:
        sys.exit(0 if new == text else 1)
    if new != text:
        with open(SCHEMA, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main()
