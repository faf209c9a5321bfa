# The `parallel for` of parallel.kt as a plain sequential `sum` over a generator: CPython's GIL
# keeps threads from running this CPU-bound work in parallel (a ThreadPoolExecutor only adds
# overhead), so the sequential form is the fastest CPython equivalent.
import sys


def work(seed):
    acc = seed
    for j in range(1000):
        acc = (acc * 31 + j) % 1000003
    return acc


def main(n=1000):
    return sum(work(i) for i in range(n))


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
