import sys
from collections import Counter


def main():
    lines = sys.stdin.read().split("\n")
    t = int(lines[0])
    out = []
    for s in lines[1:1 + t]:
        odd = sum(1 for c in Counter(s).values() if c % 2)
        out.append("YES" if odd <= 1 else "NO")
    print("\n".join(out))


main()
