#!/usr/bin/env python3
"""Writes a copy of a tuning cache with fields of every entry replaced, for
the tests of how attnc treats entries it must not use.

    edit_tuning_cache.py IN OUT FIELD=JSON [FIELD=JSON ...]

sets FIELD (a key of the entry, or sizes.KEY) to the JSON value in every
entry of IN and writes the result to OUT."""
import json
import sys


def main():
    source, target, *edits = sys.argv[1:]
    with open(source) as f:
        cache = json.load(f)
    if not cache.get("entries"):
        sys.exit(f"{source} has no entries to edit")
    for entry in cache["entries"]:
        for edit in edits:
            field, value = edit.split("=", 1)
            where = entry
            *path, last = field.split(".")
            for part in path:
                where = where[part]
            where[last] = json.loads(value)
    with open(target, "w") as f:
        json.dump(cache, f, indent=2)


if __name__ == "__main__":
    main()
