import sys


def main():
    s = sys.stdin.readline().strip()
    n = len(s)
    # Z-function: p is a period iff z[p] == n - p.
    z = [0] * n
    l = r = 0
    for i in range(1, n):
        if i < r:
            z[i] = min(r - i, z[i - l])
        while i + z[i] < n and s[z[i]] == s[i + z[i]]:
            z[i] += 1
        if i + z[i] > r:
            l, r = i, i + z[i]
    for p in range(1, n):
        if z[p] == n - p:
            print(p)
            return
    print(n)


main()
