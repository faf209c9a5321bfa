# String building: an f-string and `+` per element, str.join over the pieces, then the length and
# the tail of the result (same work as strings.kt).
import sys


def main(n=100000):
    parts = []
    for i in range(n):
        label = "item-" + str(i)
        parts.append(f"<{label}:{i % 7}>")
    text = ",".join(parts)
    size = len(text)
    return f"{size} {text[-24:]}"


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100000))
