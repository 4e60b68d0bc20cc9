import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, x = int(data[0]), int(data[1])
    a = data[2:2 + n]
    first = {}
    for j in range(n):
        v = int(a[j])
        i = first.get(x - v)
        if i is not None:
            print(i + 1, j + 1)
            return
        if v not in first:
            first[v] = j
    print(-1)


main()
