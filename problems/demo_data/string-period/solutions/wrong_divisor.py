import sys

# Bug: only tries periods that divide n (confuses "period" with "repeated block").
s = sys.stdin.readline().strip()
n = len(s)
for p in range(1, n + 1):
    if n % p == 0 and s[:p] * (n // p) == s:
        print(p)
        break
