import sys

MOD = 10**9 + 7


def main():
    data = sys.stdin.read().split()
    h, w = int(data[0]), int(data[1])
    rows = data[2:2 + h]
    prev = [0] * w
    for r in range(h):
        row = rows[r]
        cur = [0] * w
        left = 0
        for c in range(w):
            if row[c] == "#":
                left = 0
            elif r == 0 and c == 0:
                left = 1
            else:
                left = (left + prev[c]) % MOD
            cur[c] = left
        prev = cur
    print(prev[w - 1])


main()
