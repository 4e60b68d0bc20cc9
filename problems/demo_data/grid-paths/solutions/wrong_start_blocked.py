import sys

# Bug: seeds the start with 1 before looking at it, so a tree on (1, 1) is ignored.
MOD = 10**9 + 7
data = sys.stdin.read().split()
h, w = int(data[0]), int(data[1])
rows = data[2:2 + h]
dp = [[0] * (w + 1) for _ in range(h + 1)]
dp[1][1] = 1
for r in range(1, h + 1):
    for c in range(1, w + 1):
        if r == 1 and c == 1:
            continue
        if rows[r - 1][c - 1] == "#":
            continue
        dp[r][c] = (dp[r - 1][c] + dp[r][c - 1]) % MOD
print(dp[h][w])
