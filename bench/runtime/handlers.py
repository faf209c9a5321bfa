# Requests and handlers: n calls of `tick` on a counter object that holds the state (the work of
# handlers.kt, written as a Python programmer would: the handler's `var` state is an attribute,
# its clause a method, and the code that performs `tick` receives the object).
import sys


class Counter:
    def __init__(self):
        self.n = 0

    def tick(self):
        n = self.n
        self.n += 1
        return n


def count(n, counter):
    total = 0
    for _i in range(n):
        total += counter.tick()
    return total


def main(n=200000):
    counter = Counter()
    total = count(n, counter)
    return f"{total} ticks={counter.n}"


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200000))
