# A counted loop with a mutable accumulator (same work as loop.kt).
import sys


def main(n=1000000):
    total = 0
    for i in range(n):
        total += i
    return total


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000000))
