import sys


def main():
    data = sys.stdin.read().split()
    t = int(data[0])
    out = []
    for k in range(1, t + 1):
        n = int(data[k])
        if n == 1:
            out.append("-1")
        else:
            # Everyone passes to the next guest in a circle.
            out.append(" ".join(map(str, range(2, n + 1))) + " 1")
    print("\n".join(out))


main()
