import sys

# Bug: allows up to two letters with odd counts.
data = sys.stdin.read().split()
t = int(data[0])
res = []
for s in data[1:1 + t]:
    odd = sum(s.count(c) % 2 for c in set(s))
    res.append("YES" if odd <= 2 else "NO")
print("\n".join(res))
