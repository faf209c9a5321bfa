# Data values and `match`: builds shapes as dataclasses, turns each into a dict via a `match`
# statement with class patterns, then sums the dicts' fields and prints the result as compact
# JSON, as katari prints a record (same work as shapes.kt).
import json
import sys
from dataclasses import dataclass


@dataclass
class Circle:
    radius: int


@dataclass
class Rect:
    width: int
    height: int


@dataclass
class Square:
    side: int


def make(i):
    match i % 3:
        case 0:
            return Circle(radius=i % 10)
        case 1:
            return Rect(width=i % 7, height=i % 5)
        case _:
            return Square(side=i % 9)


def area(s):
    match s:
        case Circle(radius=r):
            return 3 * r * r
        case Rect(width=width, height=height):
            return width * height
        case Square(side=side):
            return side * side


def main(n=100000):
    shapes = [make(i) for i in range(n)]
    summaries = []
    for s in shapes:
        match s:
            case Circle():
                corners = 0
            case _:
                corners = 4
        summaries.append({"area": area(s), "corners": corners})
    total = 0
    corners = 0
    for r in summaries:
        total += r["area"]
        corners += r["corners"]
    return json.dumps({"count": len(summaries), "total": total, "corners": corners}, separators=(",", ":"))


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100000))
