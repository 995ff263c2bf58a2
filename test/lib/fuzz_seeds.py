"""Writes COUNT files of SIZE fresh random bytes into DIR: a seed corpus for
attn-gen-fuzzer, whose every choice reads bytes (an empty corpus would
start from the all-smallest program)."""
import os
import sys


def main():
    if len(sys.argv) != 4:
        raise SystemExit("usage: fuzz_seeds.py DIR COUNT SIZE")
    directory, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(directory, exist_ok=True)
    for i in range(count):
        with open(os.path.join(directory, "seed%d" % i), "wb") as f:
            f.write(os.urandom(size))


if __name__ == "__main__":
    main()
