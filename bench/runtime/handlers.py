# Requests and handlers: n calls of `tick`, each answered by the innermost handler object on an
# explicit handler stack that holds the state (same work as handlers.kt: a dynamic lookup
# through the stack, a state update, a resume with the old value).
import sys


class Ticker:
    def __init__(self):
        self.n = 0

    def tick(self):
        n = self.n
        self.n = n + 1
        return n


handlers = []


def tick():
    for h in reversed(handlers):
        clause = getattr(h, "tick", None)
        if clause is not None:
            return clause()
    raise RuntimeError("unhandled request tick")


def count(n):
    total = 0
    for _i in range(n):
        t = tick()
        total = total + t
    return total


def main(n=200000):
    ticker = Ticker()
    handlers.append(ticker)
    try:
        total = count(n)
    finally:
        handlers.pop()
    return f"{total} ticks={ticker.n}"


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200000))
