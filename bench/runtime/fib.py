# Recursive calls: naive Fibonacci (same algorithm as fib.kt).
import sys


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main(n=25):
    return fib(n)


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 25))
